//! `GLASSBOX_IPOPT_OVERHEADS=keep` leaves Ipopt and MUMPS as shipped
//! (`solvers/ipopt/overheads.rs`). A test binary of its own: the choice is made once per
//! process, at the first solve, so the variable is set before any solve here.

use glassbox::solvers::ipopt::overheads::{self, KEEP_VARIABLE};

#[test]
fn the_libraries_are_kept_as_shipped_when_asked() {
    // SAFETY (edition 2021: safe): no other thread of this binary reads the environment.
    std::env::set_var(KEEP_VARIABLE, "keep");
    let removed = overheads::remove();
    let kept = Err(format!("{KEEP_VARIABLE}=keep"));
    assert_eq!(removed.ipopt_cpu_clock, kept, "{removed:?}");
    assert_eq!(removed.mumps_save_size, kept, "{removed:?}");
}
