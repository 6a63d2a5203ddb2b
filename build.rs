//! Links the native solver libraries of the enabled backends.
//!
//! IPOPT: glassbox binds Ipopt's C interface itself (`solvers/ipopt.rs`), so it needs only
//! `-lipopt`; the shared library carries its own dependencies (MUMPS, BLAS, LAPACK). The
//! library folder comes from `IPOPT_LIB_DIR`, else from `pkg-config --variable=libdir ipopt`,
//! else the linker's default path. We read only `libdir` from pkg-config on purpose: Debian's
//! `ipopt.pc` lists `-lm` beside a folder that holds `libm.a`, which misleads tools that
//! guess static linking from `Libs`.
//!
//! With `torch` and a native solver, the system's libblas and liblapack are linked right
//! after the solvers' libraries, ahead of libtorch_cpu, whose exported BLAS would otherwise
//! serve MUMPS and CBC (solvers/system_blas.rs).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=IPOPT_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_IPOPT").is_some() {
        let dir = std::env::var("IPOPT_LIB_DIR").ok().or_else(|| {
            Command::new("pkg-config")
                .args(["--variable=libdir", "ipopt"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|s| !s.is_empty())
        });
        if let Some(dir) = dir {
            println!("cargo:rustc-link-search=native={dir}");
        }
        println!("cargo:rustc-link-lib=dylib=ipopt");
    }
    let native = ["IPOPT", "CBC"]
        .iter()
        .any(|f| std::env::var_os(format!("CARGO_FEATURE_{f}")).is_some());
    if native && std::env::var_os("CARGO_FEATURE_TORCH").is_some() {
        // solvers/system_blas.rs says why; its `pin` references a function of each.
        for lib in ["libblas.so.3", "liblapack.so.3"] {
            println!("cargo:rustc-link-lib=dylib:+verbatim={lib}");
        }
    }
}
