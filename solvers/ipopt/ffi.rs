//! Ipopt's C interface (`coin/IpStdCInterface.h`, return codes from
//! `coin/IpReturnCodes_inc.h`), as Ipopt 3.11 declares it: linked at build time, or, with
//! the `torch` feature, opened at the first solve (see `dynamic`); and [`ProblemGuard`],
//! which owns an Ipopt problem, sets its options and frees it.
//!
//! Depends on nothing in glassbox but, in the torch build, `crate::dynamic_library`.

use std::ffi::{c_char, c_int, c_void, CString};

/// Declares Ipopt's C functions: an `extern` block in the default build; with the `torch`
/// feature, functions of the same names that call through pointers `dlsym`'d from libipopt
/// opened with `RTLD_DEEPBIND` (see `dynamic` below).
macro_rules! ipopt_functions {
    ($( $(#[$meta:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?; )*) => {
        #[cfg(not(feature = "torch"))]
        extern "C" {
            $( $(#[$meta])* pub fn $name($($arg: $ty),*) $(-> $ret)?; )*
        }

        /// The addresses of Ipopt's functions, looked up once.
        #[cfg(feature = "torch")]
        pub struct Functions {
            $( $name: unsafe extern "C" fn($($ty),*) $(-> $ret)?, )*
        }

        #[cfg(feature = "torch")]
        impl Functions {
            /// # Safety
            /// `library` is a live handle of libipopt.
            unsafe fn look_up(library: *mut c_void) -> Result<Self, String> {
                Ok(Functions {
                    $( $name: {
                        let name = concat!(stringify!($name), "\0");
                        let symbol = crate::dynamic_library::symbol(library, name)?;
                        // SAFETY: the symbol is Ipopt's function of this C signature.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) $(-> $ret)?>(symbol)
                        }
                    }, )*
                })
            }
        }

        $(
            #[cfg(feature = "torch")]
            $(#[$meta])*
            /// # Safety
            /// As Ipopt's C function; [`dynamic::load`] has succeeded.
            #[allow(clippy::too_many_arguments)] // the C signature's
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                let functions = dynamic::loaded().expect("ipopt: solve() loads the library first");
                // SAFETY: the caller upholds the C function's contract.
                unsafe { (functions.$name)($($arg),*) }
            }
        )*
    };
}

pub type Index = c_int;
pub type Number = f64;
pub type Int = c_int;
pub type Bool = c_int;
pub type UserDataPtr = *mut c_void;

pub const TRUE: Bool = 1;
pub const FALSE: Bool = 0;

/// Ipopt's opaque problem.
#[repr(C)]
pub struct IpoptProblemInfo {
    _private: [u8; 0],
}
pub type IpoptProblem = *mut IpoptProblemInfo;

pub type EvalF = unsafe extern "C" fn(Index, *mut Number, Bool, *mut Number, UserDataPtr) -> Bool;
pub type EvalGradF =
    unsafe extern "C" fn(Index, *mut Number, Bool, *mut Number, UserDataPtr) -> Bool;
pub type EvalG =
    unsafe extern "C" fn(Index, *mut Number, Bool, Index, *mut Number, UserDataPtr) -> Bool;
pub type EvalJacG = unsafe extern "C" fn(
    Index,
    *mut Number,
    Bool,
    Index,
    Index,
    *mut Index,
    *mut Index,
    *mut Number,
    UserDataPtr,
) -> Bool;
pub type EvalH = unsafe extern "C" fn(
    Index,
    *mut Number,
    Bool,
    Number,
    Index,
    *mut Number,
    Bool,
    Index,
    *mut Index,
    *mut Index,
    *mut Number,
    UserDataPtr,
) -> Bool;
pub type IntermediateCb = unsafe extern "C" fn(
    Index,
    Index,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Index,
    UserDataPtr,
) -> Bool;

// Linked at build time, except with `torch` (see `dynamic`): one list of functions.
ipopt_functions! {
    pub fn CreateIpoptProblem(
        n: Index,
        x_L: *mut Number,
        x_U: *mut Number,
        m: Index,
        g_L: *mut Number,
        g_U: *mut Number,
        nele_jac: Index,
        nele_hess: Index,
        index_style: Index,
        eval_f: Option<EvalF>,
        eval_g: Option<EvalG>,
        eval_grad_f: Option<EvalGradF>,
        eval_jac_g: Option<EvalJacG>,
        eval_h: Option<EvalH>,
    ) -> IpoptProblem;
    pub fn FreeIpoptProblem(ipopt_problem: IpoptProblem);
    pub fn AddIpoptStrOption(
        ipopt_problem: IpoptProblem,
        keyword: *mut c_char,
        val: *mut c_char,
    ) -> Bool;
    pub fn AddIpoptNumOption(
        ipopt_problem: IpoptProblem,
        keyword: *mut c_char,
        val: Number,
    ) -> Bool;
    pub fn AddIpoptIntOption(
        ipopt_problem: IpoptProblem,
        keyword: *mut c_char,
        val: Int,
    ) -> Bool;
    pub fn OpenIpoptOutputFile(
        ipopt_problem: IpoptProblem,
        file_name: *mut c_char,
        print_level: Int,
    ) -> Bool;
    pub fn SetIntermediateCallback(
        ipopt_problem: IpoptProblem,
        intermediate_cb: Option<IntermediateCb>,
    ) -> Bool;
    /// Returns an `enum ApplicationReturnStatus` (an `int` in the C ABI).
    pub fn IpoptSolve(
        ipopt_problem: IpoptProblem,
        x: *mut Number,
        g: *mut Number,
        obj_val: *mut Number,
        mult_g: *mut Number,
        mult_x_L: *mut Number,
        mult_x_U: *mut Number,
        user_data: UserDataPtr,
    ) -> c_int;
}

// enum ApplicationReturnStatus
pub const SOLVE_SUCCEEDED: c_int = 0;
pub const SOLVED_TO_ACCEPTABLE_LEVEL: c_int = 1;
pub const INFEASIBLE_PROBLEM_DETECTED: c_int = 2;
pub const SEARCH_DIRECTION_BECOMES_TOO_SMALL: c_int = 3;
pub const DIVERGING_ITERATES: c_int = 4;
pub const USER_REQUESTED_STOP: c_int = 5;
pub const FEASIBLE_POINT_FOUND: c_int = 6;
pub const MAXIMUM_ITERATIONS_EXCEEDED: c_int = -1;
pub const RESTORATION_FAILED: c_int = -2;
pub const ERROR_IN_STEP_COMPUTATION: c_int = -3;
pub const MAXIMUM_CPUTIME_EXCEEDED: c_int = -4;
pub const NOT_ENOUGH_DEGREES_OF_FREEDOM: c_int = -10;
pub const INVALID_PROBLEM_DEFINITION: c_int = -11;
pub const INVALID_OPTION: c_int = -12;
pub const INVALID_NUMBER_DETECTED: c_int = -13;
pub const UNRECOVERABLE_EXCEPTION: c_int = -100;
pub const NONIPOPT_EXCEPTION_THROWN: c_int = -101;
pub const INSUFFICIENT_MEMORY: c_int = -102;
pub const INTERNAL_ERROR: c_int = -199;

/// With the `torch` feature, libipopt is opened at the first solve with `RTLD_DEEPBIND`
/// instead of being linked. Why: libtorch_cpu exports the BLAS and LAPACK functions of the
/// library it carries (`dgemm_`, `dgetrf_`, ...) and, linked into the binary, comes before
/// the system's libblas in the dynamic linker's search order, so MUMPS ran on libtorch's
/// BLAS and IPOPT's iterates (on S-ORRT even its local optima) depended on the cargo
/// feature. Linking the system's libblas first instead is no fix: libtorch calls its own
/// `dgemm_` through the dynamic linker too, and torch would run on the reference BLAS.
/// `RTLD_DEEPBIND` makes libipopt and the libraries it brings (MUMPS, BLAS, LAPACK) look
/// up symbols in their own dependencies first, leaving the global order, and torch, as
/// they are.
#[cfg(feature = "torch")]
pub mod dynamic {
    use super::Functions;
    use crate::dynamic_library::{self, RTLD_DEEPBIND, RTLD_LOCAL, RTLD_NOW};
    use std::sync::OnceLock;

    static FUNCTIONS: OnceLock<Result<Functions, String>> = OnceLock::new();

    /// The library files tried in turn: the build's libdir (`IPOPT_LIB_DIR` or
    /// pkg-config's, recorded by build.rs), then the loader's search path.
    fn candidates() -> Vec<String> {
        let mut files = Vec::new();
        if let Some(dir) = option_env!("GLASSBOX_IPOPT_LIB_DIR").filter(|d| !d.is_empty()) {
            files.push(format!("{dir}/libipopt.so"));
        }
        files.extend(["libipopt.so", "libipopt.so.1", "libipopt.so.3"].map(String::from));
        files
    }

    fn open() -> Result<Functions, String> {
        let mut errors = Vec::new();
        for file in candidates() {
            match dynamic_library::open(&file, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) {
                // SAFETY: `library` is a live handle of libipopt.
                Ok(library) => return unsafe { Functions::look_up(library) },
                Err(e) => errors.push(e),
            }
        }
        Err(errors.join("; "))
    }

    /// Opens libipopt once; the error names each file tried.
    pub fn load() -> Result<&'static Functions, String> {
        FUNCTIONS.get_or_init(open).as_ref().map_err(Clone::clone)
    }

    pub(super) fn loaded() -> Option<&'static Functions> {
        FUNCTIONS.get().and_then(|f| f.as_ref().ok())
    }
}

/// Ipopt's name of a return code.
pub fn status_name(code: c_int) -> Option<&'static str> {
    Some(match code {
        SOLVE_SUCCEEDED => "Solve_Succeeded",
        SOLVED_TO_ACCEPTABLE_LEVEL => "Solved_To_Acceptable_Level",
        INFEASIBLE_PROBLEM_DETECTED => "Infeasible_Problem_Detected",
        SEARCH_DIRECTION_BECOMES_TOO_SMALL => "Search_Direction_Becomes_Too_Small",
        DIVERGING_ITERATES => "Diverging_Iterates",
        USER_REQUESTED_STOP => "User_Requested_Stop",
        FEASIBLE_POINT_FOUND => "Feasible_Point_Found",
        MAXIMUM_ITERATIONS_EXCEEDED => "Maximum_Iterations_Exceeded",
        RESTORATION_FAILED => "Restoration_Failed",
        ERROR_IN_STEP_COMPUTATION => "Error_In_Step_Computation",
        MAXIMUM_CPUTIME_EXCEEDED => "Maximum_CpuTime_Exceeded",
        NOT_ENOUGH_DEGREES_OF_FREEDOM => "Not_Enough_Degrees_Of_Freedom",
        INVALID_PROBLEM_DEFINITION => "Invalid_Problem_Definition",
        INVALID_OPTION => "Invalid_Option",
        INVALID_NUMBER_DETECTED => "Invalid_Number_Detected",
        UNRECOVERABLE_EXCEPTION => "Unrecoverable_Exception",
        NONIPOPT_EXCEPTION_THROWN => "NonIpopt_Exception_Thrown",
        INSUFFICIENT_MEMORY => "Insufficient_Memory",
        INTERNAL_ERROR => "Internal_Error",
        _ => return None,
    })
}

/// Frees the Ipopt problem when dropped.
pub(super) struct ProblemGuard(pub(super) IpoptProblem);

impl ProblemGuard {
    pub(super) fn new(handle: IpoptProblem) -> Option<Self> {
        (!handle.is_null()).then_some(ProblemGuard(handle))
    }

    pub(super) fn set_str(&self, name: &str, value: &str) -> std::result::Result<(), String> {
        let (Ok(key), Ok(val)) = (CString::new(name), CString::new(value)) else {
            return Err(name.to_string());
        };
        // SAFETY: live problem; Ipopt copies both strings and never writes through them.
        let ok = unsafe {
            AddIpoptStrOption(
                self.0,
                key.as_ptr() as *mut c_char,
                val.as_ptr() as *mut c_char,
            )
        };
        (ok != FALSE).then_some(()).ok_or_else(|| name.to_string())
    }

    pub(super) fn set_num(&self, name: &str, value: f64) -> std::result::Result<(), String> {
        let key = CString::new(name).map_err(|_| name.to_string())?;
        // SAFETY: live problem; Ipopt copies the string.
        let ok = unsafe { AddIpoptNumOption(self.0, key.as_ptr() as *mut c_char, value) };
        (ok != FALSE).then_some(()).ok_or_else(|| name.to_string())
    }

    pub(super) fn set_int(&self, name: &str, value: c_int) -> std::result::Result<(), String> {
        let key = CString::new(name).map_err(|_| name.to_string())?;
        // SAFETY: live problem; Ipopt copies the string.
        let ok = unsafe { AddIpoptIntOption(self.0, key.as_ptr() as *mut c_char, value) };
        (ok != FALSE).then_some(()).ok_or_else(|| name.to_string())
    }
}

impl Drop for ProblemGuard {
    fn drop(&mut self) {
        // SAFETY: created by CreateIpoptProblem, freed exactly once.
        unsafe { FreeIpoptProblem(self.0) }
    }
}
