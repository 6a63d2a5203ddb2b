//! Two costs of Debian's Ipopt 3.11 and MUMPS 5.5 that neither library lets an option turn
//! off, removed in this process before the first solve, by rewriting one import slot of
//! each library (`crate::import_slots`). Neither touches a number Ipopt computes with: the
//! iterates, iterations and objectives are the same bit for bit
//! (`tests/ipopt_overheads.rs` compares runs with and without).
//!
//! - **MUMPS's save-size estimate.** MUMPS 5.5 computes, at every call (analysis,
//!   factorization, solve), how much memory a `JOB = 7` save of the instance would take
//!   (`DMUMPS_COMPUTE_MEMORY_SAVE`: a walk over the instance's 186 fields with a string
//!   `SELECT CASE` each), only to report it in `KEEP8(55:58)` and `RINFO(7:8)`. Ipopt never
//!   saves an instance nor reads those entries. The replacement reports 0 bytes.
//! - **Ipopt's CPU clock.** Ipopt 3.11 times every evaluation and linear solve
//!   (`TimedTask`) and checks `max_cpu_time` once per iteration with `getrusage`, a system
//!   call that locks the scheduler's run queue; its 3.14 option `timing_statistics` does not
//!   exist in 3.11. In libipopt's calls only, `getrusage` is replaced by the monotonic wall
//!   clock (a vDSO read): Ipopt's "CPU time" becomes wall-clock time, which is what glassbox's
//!   `time_limit` means anyway (`mod.rs`, "How options map"). Other libraries (CBC's timers)
//!   keep the real `getrusage`.
//!
//! Together they were 35-50% of the seconds of an S-ORCT solve on small data (iris, pima at
//! depth 2) and 10-15% on larger ones (sonar, german credit at depth 2), on Debian 12's
//! packages with the reference BLAS (benches/README "Ipopt's fixed costs").
//!
//! `GLASSBOX_IPOPT_OVERHEADS=keep` in the environment leaves both libraries as they are.
//! Where a library is not loaded or does not import the function (another MUMPS version,
//! another platform), nothing is rewritten and Ipopt runs as shipped.
//!
//! Depends on `crate::import_slots`.

use crate::import_slots;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::time::Instant;

/// The environment variable that keeps the libraries as shipped (value `keep`).
pub const KEEP_VARIABLE: &str = "GLASSBOX_IPOPT_OVERHEADS";

/// MUMPS's save-size estimate, as gfortran names the module procedure.
const MUMPS_SAVE_SIZE: &str = "__dmumps_save_restore_MOD_dmumps_compute_memory_save";

/// What [`remove`] did, once per process: per cost, whether its slot was rewritten, or why
/// not.
#[derive(Debug)]
pub struct Removed {
    /// MUMPS's save-size estimate.
    pub mumps_save_size: std::result::Result<(), String>,
    /// Ipopt's CPU clock.
    pub ipopt_cpu_clock: std::result::Result<(), String>,
}

static REMOVED: OnceLock<Removed> = OnceLock::new();

/// Removes both costs the first time it is called in the process (every later call returns
/// the first call's outcome). Called before every solve, after libipopt is loaded.
pub fn remove() -> &'static Removed {
    REMOVED.get_or_init(|| {
        if std::env::var(KEEP_VARIABLE).is_ok_and(|v| v == "keep") {
            let kept = || Err(format!("{KEEP_VARIABLE}=keep"));
            return Removed {
                mumps_save_size: kept(),
                ipopt_cpu_clock: kept(),
            };
        }
        // SAFETY: each replacement has the signature of the function it stands for (below),
        // and `REMOVED` runs this once, so no other thread rewrites these slots.
        unsafe {
            Removed {
                mumps_save_size: rewrite(
                    "libdmumps",
                    MUMPS_SAVE_SIZE,
                    no_save_size as *const c_void,
                ),
                ipopt_cpu_clock: rewrite(
                    "libipopt",
                    "getrusage",
                    wall_clock_usage as *const c_void,
                ),
            }
        }
    })
}

/// # Safety
/// As [`import_slots::redirect`].
unsafe fn rewrite(
    library: &str,
    symbol: &str,
    replacement: *const c_void,
) -> std::result::Result<(), String> {
    // SAFETY: the caller's.
    let done = unsafe { import_slots::redirect(library, symbol, replacement) }?;
    match done.slots() {
        0 if done.libraries.is_empty() => Err(format!("no loaded library named {library}*")),
        0 => Err(format!("{library}* imports no {symbol}")),
        _ => Ok(()),
    }
}

/// `DMUMPS_COMPUTE_MEMORY_SAVE(id, TOTAL_FILE_SIZE, TOTAL_STRUC_SIZE)`: every argument by
/// reference (gfortran), the two sizes `INTEGER(8)` outputs.
unsafe extern "C" fn no_save_size(_id: *mut c_void, file_size: *mut i64, struc_size: *mut i64) {
    // SAFETY: MUMPS passes its two INTEGER(8) variables.
    unsafe {
        *file_size = 0;
        *struc_size = 0;
    }
}

/// `getrusage(who, usage)` as Ipopt's `CpuTime` and `SysTime` read it: the user time is the
/// monotonic wall clock since the process's first Ipopt solve, the system time 0 (Ipopt only
/// takes differences of both).
unsafe extern "C" fn wall_clock_usage(_who: c_int, usage: *mut libc::rusage) -> c_int {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    if usage.is_null() {
        return -1;
    }
    let elapsed = EPOCH.get_or_init(Instant::now).elapsed();
    // SAFETY: Ipopt passes its own rusage; all-zero bytes are a valid rusage.
    unsafe {
        std::ptr::write_bytes(usage, 0, 1);
        (*usage).ru_utime.tv_sec = elapsed.as_secs() as libc::time_t;
        (*usage).ru_utime.tv_usec = elapsed.subsec_micros() as libc::suseconds_t;
    }
    0
}
