//! `glassbox-ext`: glassbox's command line with the extension's formulation and backend
//! registered (`glassbox-ext run CONFIG`, `compare`, `predict`, `show`, ... as `glassbox`).

fn main() {
    glassbox::cli::main_with(glassbox_extension_example::registry())
}
