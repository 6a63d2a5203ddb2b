//! Links the native solver libraries of the enabled backends.
//!
//! IPOPT: glassbox binds Ipopt's C interface itself (`solvers/ipopt/ffi.rs`), so it needs only
//! `-lipopt`; the shared library carries its own dependencies (MUMPS, BLAS, LAPACK). The
//! library folder comes from `IPOPT_LIB_DIR`, else from `pkg-config --variable=libdir ipopt`,
//! else the linker's default path. We read only `libdir` from pkg-config on purpose: Debian's
//! `ipopt.pc` lists `-lm` beside a folder that holds `libm.a`, which misleads tools that
//! guess static linking from `Libs`. With the `torch` feature libipopt is not linked but
//! opened at run time (`dlopen` with `RTLD_DEEPBIND`, see `dynamic` in
//! solvers/ipopt/ffi.rs), from the same folder.

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
        if std::env::var_os("CARGO_FEATURE_TORCH").is_some() {
            // With torch, libipopt is opened at run time with RTLD_DEEPBIND, so that MUMPS
            // keeps the system's BLAS (solvers/ipopt/ffi.rs, `dynamic`, says why).
            println!(
                "cargo:rustc-env=GLASSBOX_IPOPT_LIB_DIR={}",
                dir.unwrap_or_default()
            );
            println!("cargo:rustc-link-lib=dylib=dl");
        } else {
            if let Some(dir) = dir {
                println!("cargo:rustc-link-search=native={dir}");
            }
            println!("cargo:rustc-link-lib=dylib=ipopt");
        }
    }
}
