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
//!
//! A library that none of these finds, nor the dynamic linker's cache (`ldconfig -p`), gets
//! a build warning that says what to install, before the linker's own "cannot find -lipopt"
//! (or `-lCbcSolver`, which `coin_cbc_sys` links from pkg-config's `cbc` or the default
//! path). A warning, not an error: `LIBRARY_PATH` may still point the linker to it.

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
        if dir.is_none() {
            warn_if_missing("ipopt", "ipopt", "coinor-libipopt-dev", "IPOPT_LIB_DIR");
        }
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
    if std::env::var_os("CARGO_FEATURE_CBC").is_some() && !pkg_config_knows("cbc") {
        warn_if_missing("CbcSolver", "cbc", "coinor-libcbc-dev", "PKG_CONFIG_PATH");
    }
}

fn pkg_config_knows(package: &str) -> bool {
    Command::new("pkg-config")
        .args(["--exists", package])
        .status()
        .is_ok_and(|s| s.success())
}

/// Warns when the dynamic linker's cache lists no `lib{lib}.so`; says nothing when the cache
/// cannot be read (no `ldconfig`: not Linux), since only a definite "no" is worth a warning.
fn warn_if_missing(lib: &str, feature: &str, package: &str, variable: &str) {
    let Some(cache) = ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]
        .iter()
        .find_map(|program| {
            Command::new(program)
                .arg("-p")
                .output()
                .ok()
                .filter(|o| o.status.success())
        })
    else {
        return;
    };
    let name = format!("lib{lib}.so");
    let listed = String::from_utf8_lossy(&cache.stdout)
        .lines()
        .any(|line| line.trim_start().starts_with(&name));
    if !listed {
        println!(
            "cargo:warning=glassbox's `{feature}` backend links {name}, which neither \
             {variable}, pkg-config nor the linker's cache finds: install it (Debian/Ubuntu: \
             `apt-get install {package}`; scripts/install-deps.sh installs every native \
             dependency), point {variable} to it, or build without the `{feature}` feature"
        );
    }
}
