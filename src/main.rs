//! The `glassbox` binary: the CLI (`glassbox::cli`) with the built-in formulations and
//! backends.

fn main() {
    glassbox::cli::main_with(glassbox::registry::Registry::builtin());
}
