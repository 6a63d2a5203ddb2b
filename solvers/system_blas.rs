//! Keeps the native solvers on the system's BLAS and LAPACK in builds with `torch`.
//!
//! libtorch_cpu exports the BLAS and LAPACK entry points of the library it carries (`dgemm_`,
//! `dtrsm_`, `dgetrf_`, ...). As a direct dependency of the binary it precedes the system's
//! libblas / liblapack (dependencies of libipopt's MUMPS and of CBC) in the dynamic linker's
//! search order, so their calls went to libtorch's BLAS: IPOPT's iterates then differed in
//! rounding from a build without the feature and, on multimodal problems such as S-ORRT,
//! ended in other local optima from the same start (measured with
//! `examples/gradient_vs_ipopt.rs`: IPOPT's objective on 3 of the first 4 Boston starts).
//!
//! build.rs links the two system libraries right after the solvers' own, and [`pin`] makes
//! the binary itself reference one function of each, so the linker keeps them as direct
//! dependencies ahead of libtorch. libtorch's own calls do not go through the dynamic linker
//! (it has no relocations for these symbols), so torch keeps its BLAS.

#[cfg(feature = "torch")]
mod linked {
    use std::os::raw::{c_char, c_double, c_int};

    extern "C" {
        fn ddot_(
            n: *const c_int,
            x: *const c_double,
            incx: *const c_int,
            y: *const c_double,
            incy: *const c_int,
        ) -> c_double;
        // gfortran's hidden length of the character argument follows the arguments.
        fn dlamch_(cmach: *const c_char, len: usize) -> c_double;
    }

    pub(crate) fn pin() {
        let (zero, one, x) = (0, 1, [0.0f64]);
        // SAFETY: a dot product of length 0 reads nothing; dlamch_ reads one character.
        unsafe {
            ddot_(&zero, x.as_ptr(), &one, x.as_ptr(), &one);
            dlamch_(c"E".as_ptr(), 1);
        }
    }
}

/// Called before a native solve: see the module comment (nothing without `torch`).
pub(crate) fn pin() {
    #[cfg(feature = "torch")]
    linked::pin();
}

#[cfg(all(test, feature = "torch"))]
mod tests {
    use std::ffi::{c_void, CStr};
    use std::os::raw::{c_char, c_int};

    #[repr(C)]
    struct DlInfo {
        file: *const c_char,
        base: *mut c_void,
        symbol: *const c_char,
        address: *mut c_void,
    }

    extern "C" {
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        fn dladdr(address: *const c_void, info: *mut DlInfo) -> c_int;
    }

    /// The file that serves `symbol` to a library looking it up by name (RTLD_DEFAULT, the
    /// global search order that MUMPS's and CBC's calls go through).
    fn served_by(symbol: &CStr) -> String {
        // SAFETY: dlsym with RTLD_DEFAULT (a null handle on glibc) and dladdr on its result;
        // the file name is a C string owned by the dynamic linker.
        unsafe {
            let address = dlsym(std::ptr::null_mut(), symbol.as_ptr());
            assert!(!address.is_null(), "{symbol:?} is not loaded");
            let mut info = DlInfo {
                file: std::ptr::null(),
                base: std::ptr::null_mut(),
                symbol: std::ptr::null(),
                address: std::ptr::null_mut(),
            };
            assert_ne!(dladdr(address, &mut info), 0);
            CStr::from_ptr(info.file).to_string_lossy().into_owned()
        }
    }

    #[test]
    fn native_solvers_get_the_system_blas_and_lapack_not_libtorchs() {
        super::pin();
        for (symbol, library) in [(c"dgemm_", "libblas"), (c"dgetrf_", "liblapack")] {
            let file = served_by(symbol);
            assert!(
                file.contains(library) && !file.contains("torch"),
                "{symbol:?} is served by {file}"
            );
        }
    }
}
