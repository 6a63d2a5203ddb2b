//! The IPOPT backend's options: the raw options it accepts ([`OPTIONS`], typed, each with
//! the range Ipopt allows), the check a solve (and the registry) runs before Ipopt sees
//! them, and how the typed [`SolveOptions`] and the raw options are set on an Ipopt problem
//! (the mapping is described in the backend's module documentation).
//!
//! Depends on the core's options and solver helpers, and on `ffi.rs`'s problem guard.

use super::ffi::ProblemGuard;
use super::{Request, NAME};
use glassbox_core::options::{check_raw_options, OptionKind, OptionSpec, RawOptionValue};
use glassbox_core::solver::refuse_milp_options;
use glassbox_core::{GlassboxError, Result, SolveOptions};
use std::ffi::c_int;

/// The barrier parameter and bound pushes of a warm start with multipliers.
const WARM_START_PUSH: f64 = 1e-9;

/// The raw options this backend accepts: a curated subset of Ipopt's options, typed.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "linear_solver",
        kind: OptionKind::Choice(&["mumps"]),
        help: "linear solver for the KKT systems (this Ipopt build has only MUMPS)",
    },
    OptionSpec {
        name: "mu_strategy",
        kind: OptionKind::Choice(&["monotone", "adaptive"]),
        help: "update strategy of the barrier parameter (default monotone)",
    },
    OptionSpec {
        name: "mu_init",
        kind: OptionKind::Float,
        help: "initial barrier parameter, > 0 (default 0.1; 1e-9 with a warm start with multipliers)",
    },
    OptionSpec {
        name: "hessian_approximation",
        kind: OptionKind::Choice(&["exact", "limited-memory"]),
        help: "exact Hessian of the Lagrangian, or L-BFGS (default: exact when the problem gives one)",
    },
    OptionSpec {
        name: "limited_memory_max_history",
        kind: OptionKind::Int,
        help: "number of L-BFGS correction pairs, >= 0 (default 6)",
    },
    OptionSpec {
        name: "acceptable_tol",
        kind: OptionKind::Float,
        help: "'acceptable' optimality tolerance, > 0 (default 1e-6)",
    },
    OptionSpec {
        name: "acceptable_iter",
        kind: OptionKind::Int,
        help: "acceptable iterates in a row before stopping as 'acceptable', >= 0 (0 disables; default 15)",
    },
    OptionSpec {
        name: "acceptable_constr_viol_tol",
        kind: OptionKind::Float,
        help: "'acceptable' absolute constraint violation, > 0 (default 0.01)",
    },
    OptionSpec {
        name: "constr_viol_tol",
        kind: OptionKind::Float,
        help: "absolute constraint violation for convergence and for 'feasible at a limit', > 0 (default 1e-4)",
    },
    OptionSpec {
        name: "dual_inf_tol",
        kind: OptionKind::Float,
        help: "absolute dual infeasibility for convergence, > 0 (default 1)",
    },
    OptionSpec {
        name: "compl_inf_tol",
        kind: OptionKind::Float,
        help: "absolute complementarity for convergence, > 0 (default 1e-4)",
    },
    OptionSpec {
        name: "bound_push",
        kind: OptionKind::Float,
        help: "absolute push of the starting point into the interior, > 0 (default 0.01)",
    },
    OptionSpec {
        name: "bound_frac",
        kind: OptionKind::Float,
        help: "relative push of the starting point into the interior, in (0, 0.5] (default 0.01)",
    },
    OptionSpec {
        name: "bound_relax_factor",
        kind: OptionKind::Float,
        help: "relative relaxation of the bounds, >= 0 (default 1e-8)",
    },
    OptionSpec {
        name: "nlp_scaling_method",
        kind: OptionKind::Choice(&["gradient-based", "none"]),
        help: "scaling of the problem (default gradient-based)",
    },
    OptionSpec {
        name: "obj_scaling_factor",
        kind: OptionKind::Float,
        help: "factor on the objective (negative maximizes), != 0 (default 1)",
    },
    OptionSpec {
        name: "print_level",
        kind: OptionKind::Int,
        help: "Ipopt's output, 0 to 12 (default: 0 at verbosity 0 and 1, 5 from verbosity 2)",
    },
    OptionSpec {
        name: "max_cpu_time",
        kind: OptionKind::Float,
        help: "Ipopt's own time limit in seconds, > 0, on its CPU clock, which reads the wall \
               clock unless GLASSBOX_IPOPT_OVERHEADS=keep (default: time_limit)",
    },
    OptionSpec {
        name: "warm_start_init_point",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "start from the given multipliers (default: yes when the warm start has multipliers)",
    },
    OptionSpec {
        name: "warm_start_bound_push",
        kind: OptionKind::Float,
        help: "absolute push of a warm start into the interior, > 0 (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_bound_frac",
        kind: OptionKind::Float,
        help: "relative push of a warm start into the interior, in (0, 0.5] (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_slack_bound_push",
        kind: OptionKind::Float,
        help: "absolute push of a warm start's slacks, > 0 (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_slack_bound_frac",
        kind: OptionKind::Float,
        help: "relative push of a warm start's slacks, in (0, 0.5] (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "warm_start_mult_bound_push",
        kind: OptionKind::Float,
        help: "push of a warm start's bound multipliers away from 0, > 0 (default 1e-9 with multipliers)",
    },
    OptionSpec {
        name: "fixed_variable_treatment",
        kind: OptionKind::Choice(&["make_parameter", "make_constraint", "relax_bounds"]),
        help: "how variables with equal bounds are handled (default make_parameter)",
    },
    OptionSpec {
        name: "jac_c_constant",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "the equality constraints are linear (Jacobian evaluated once; default no)",
    },
    OptionSpec {
        name: "jac_d_constant",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "the inequality constraints are linear (Jacobian evaluated once; default no)",
    },
    OptionSpec {
        name: "hessian_constant",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "the problem is a QP (Hessian evaluated once; default no)",
    },
    OptionSpec {
        name: "expect_infeasible_problem",
        kind: OptionKind::Choice(&["yes", "no"]),
        help: "enable heuristics that detect infeasibility quickly (default no)",
    },
    OptionSpec {
        name: "diverging_iterates_tol",
        kind: OptionKind::Float,
        help: "|x| above which iterates count as diverging (reported unbounded), > 0 (default 1e20)",
    },
    OptionSpec {
        name: "mumps_mem_percent",
        kind: OptionKind::Int,
        help: "percent increase of MUMPS's work space, >= 0 (default 1000)",
    },
    OptionSpec {
        name: "mumps_pivtol",
        kind: OptionKind::Float,
        help: "MUMPS's pivot tolerance, in [0, 1] (default 1e-6)",
    },
];

/// The range a raw option's value must lie in, so that Ipopt never rejects (and prints
/// about) a value our type check let through.
fn check_range(name: &str, value: f64) -> std::result::Result<(), String> {
    enum Range {
        Positive,
        NonNegative,
        NonZero,
        HalfOpen(f64, f64),
        Closed(f64, f64),
    }
    let range = match name {
        "limited_memory_max_history"
        | "acceptable_iter"
        | "bound_relax_factor"
        | "mumps_mem_percent" => Range::NonNegative,
        "bound_frac" | "warm_start_bound_frac" | "warm_start_slack_bound_frac" => {
            Range::HalfOpen(0.0, 0.5)
        }
        "obj_scaling_factor" => Range::NonZero,
        "print_level" => Range::Closed(0.0, 12.0),
        "mumps_pivtol" => Range::Closed(0.0, 1.0),
        _ => Range::Positive,
    };
    let ok = match range {
        Range::Positive => value > 0.0,
        Range::NonNegative => value >= 0.0,
        Range::NonZero => value != 0.0,
        Range::HalfOpen(lo, hi) => value > lo && value <= hi,
        Range::Closed(lo, hi) => (lo..=hi).contains(&value),
    };
    if ok {
        return Ok(());
    }
    let expected = match range {
        Range::Positive => "> 0".to_string(),
        Range::NonNegative => ">= 0".to_string(),
        Range::NonZero => "not 0".to_string(),
        Range::HalfOpen(lo, hi) => format!("in ({lo}, {hi}]"),
        Range::Closed(lo, hi) => format!("in [{lo}, {hi}]"),
    };
    Err(format!("must be {expected}, got {value}"))
}

/// Checks the options as a solve does, before any Ipopt call: types, the ranges of
/// [`check_range`], 32-bit integers, and no gap (a local method has no dual bound).
pub(super) fn check_options(options: &SolveOptions) -> Result<()> {
    options.validate()?;
    check_raw_options(NAME, OPTIONS, &options.raw)?;
    for (name, value) in &options.raw {
        let number = match value {
            RawOptionValue::Int(i) => Some(*i as f64),
            RawOptionValue::Float(x) => Some(*x),
            _ => None,
        };
        let invalid = |message| GlassboxError::InvalidOption {
            solver: NAME.to_string(),
            option: name.clone(),
            message,
        };
        if let (RawOptionValue::Int(i), Some(OptionKind::Int)) = (value, options_kind(name)) {
            if c_int::try_from(*i).is_err() {
                return Err(invalid(format!("{i} does not fit in a 32-bit integer")));
            }
        }
        if let Some(x) = number {
            check_range(name, x).map_err(invalid)?;
        }
    }
    refuse_milp_options(NAME, options)
}

/// Sets Ipopt's options: the mapped typed options, then the raw ones. On failure returns
/// the name of the option Ipopt refused.
pub(super) fn set_options(
    handle: &ProblemGuard,
    options: &SolveOptions,
    request: &Request,
) -> std::result::Result<(), String> {
    // Never read an `ipopt.opt` from the working directory: every option is explicit.
    handle.set_str("option_file_name", "")?;
    if options.verbosity >= 2 {
        handle.set_int("print_level", 5)?;
    } else {
        handle.set_int("print_level", 0)?;
        handle.set_str("sb", "yes")?;
    }
    if let Some(tol) = options.tolerance {
        handle.set_num("tol", tol)?;
    }
    if let Some(iterations) = options.iteration_limit {
        handle.set_int("max_iter", iterations.min(c_int::MAX as u64) as c_int)?;
    }
    if let Some(seconds) = options.time_limit {
        handle.set_num("max_cpu_time", seconds)?;
    }
    if request.hessian.is_none() {
        handle.set_str("hessian_approximation", "limited-memory")?;
    }
    if request.duals.is_some() {
        handle.set_str("warm_start_init_point", "yes")?;
        for name in [
            "mu_init",
            "warm_start_bound_push",
            "warm_start_bound_frac",
            "warm_start_slack_bound_push",
            "warm_start_slack_bound_frac",
            "warm_start_mult_bound_push",
        ] {
            handle.set_num(name, WARM_START_PUSH)?;
        }
    }
    for (name, value) in &options.raw {
        match value {
            RawOptionValue::Str(s) => handle.set_str(name, s)?,
            RawOptionValue::Bool(b) => handle.set_str(name, if *b { "yes" } else { "no" })?,
            RawOptionValue::Float(x) => handle.set_num(name, *x)?,
            RawOptionValue::Int(i) => match options_kind(name) {
                Some(OptionKind::Int) => {
                    let i = c_int::try_from(*i).map_err(|_| name.clone())?;
                    handle.set_int(name, i)?
                }
                _ => handle.set_num(name, *i as f64)?,
            },
        }
    }
    Ok(())
}

fn options_kind(name: &str) -> Option<OptionKind> {
    OPTIONS.iter().find(|s| s.name == name).map(|s| s.kind)
}
