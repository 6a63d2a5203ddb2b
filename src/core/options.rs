//! [`SolveOptions`]: the one options type every backend takes. Typed fields cover what all
//! backends share; `raw` passes backend-specific options through, and the registry checks
//! them against the backend's declared [`OptionSpec`]s, so none is silently dropped.
//!
//! Depends on nothing in glassbox but the error type.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A value of a raw backend option, as written in a TOML config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RawOptionValue {
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A real number.
    Float(f64),
    /// A string.
    Str(String),
}

impl RawOptionValue {
    /// The value as a number, where it is one (an integer or a real).
    pub fn as_number(&self) -> Option<f64> {
        match self {
            RawOptionValue::Int(i) => Some(*i as f64),
            RawOptionValue::Float(v) => Some(*v),
            _ => None,
        }
    }
}

impl std::fmt::Display for RawOptionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawOptionValue::Bool(b) => write!(f, "{b}"),
            RawOptionValue::Int(i) => write!(f, "{i}"),
            // "5.0", not "5": the message of an integer option given a float shows why.
            RawOptionValue::Float(x) => write!(f, "{x:?}"),
            RawOptionValue::Str(s) => write!(f, "\"{s}\""),
        }
    }
}

/// The type a raw option must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// A whole number.
    Int,
    /// A real number (integers are accepted).
    Float,
    /// One of the listed strings.
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
}

/// One raw option a backend accepts, with its type and a line of help.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    /// The option's name, as the backend spells it.
    pub name: &'static str,
    /// Its type.
    pub kind: OptionKind,
    /// What it does.
    pub help: &'static str,
}

impl OptionSpec {
    /// Checks `value` against this option's type; the message says what was expected.
    pub fn check(&self, value: &RawOptionValue) -> std::result::Result<(), String> {
        match (self.kind, value) {
            (OptionKind::Int, RawOptionValue::Int(_)) => Ok(()),
            (OptionKind::Float, RawOptionValue::Float(x)) if x.is_finite() => Ok(()),
            (OptionKind::Float, RawOptionValue::Int(_)) => Ok(()),
            (OptionKind::Bool, RawOptionValue::Bool(_)) => Ok(()),
            (OptionKind::Choice(choices), RawOptionValue::Str(s))
                if choices.contains(&s.as_str()) =>
            {
                Ok(())
            }
            (OptionKind::Choice(choices), _) => Err(format!(
                "expected one of {}, got {value}",
                choices
                    .iter()
                    .map(|c| format!("\"{c}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            (kind, _) => Err(format!("expected {}, got {value}", kind_name(kind))),
        }
    }
}

fn kind_name(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::Int => "an integer",
        OptionKind::Float => "a finite number",
        OptionKind::Bool => "true or false",
        OptionKind::Choice(_) => "a string",
    }
}

/// A starting point for a solve: the primal point and, where the backend takes them, the
/// multipliers of the constraints and of the variable bounds (as a previous
/// [`crate::SolveResult`] returns them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmStart {
    /// Primal point, one value per variable.
    pub primal: Vec<f64>,
    /// Multipliers of the general constraints.
    pub constraint_multipliers: Option<Vec<f64>>,
    /// Multipliers of the variables' lower bounds.
    pub lower_bound_multipliers: Option<Vec<f64>>,
    /// Multipliers of the variables' upper bounds.
    pub upper_bound_multipliers: Option<Vec<f64>>,
    /// Whether the point is a place to explore from (a multistart's seeded random start)
    /// rather than a solution to keep (a greedy tree, a continuation's previous stage, a
    /// user's model). A backend may move an exploring start far: on problems with general
    /// constraints the gradient backend's default `path = "auto"` tries its interior path
    /// beside the direct one from an exploring start only, since the interior path pushes a
    /// point off the bounds it sits on.
    #[serde(default)]
    pub explore: bool,
}

impl WarmStart {
    /// A warm start of the primal point only, a solution to keep.
    pub fn primal(x: Vec<f64>) -> Self {
        WarmStart {
            primal: x,
            ..Default::default()
        }
    }

    /// A primal point to explore from: a multistart's random start (see [`WarmStart::explore`]).
    pub fn exploring(x: Vec<f64>) -> Self {
        WarmStart {
            explore: true,
            ..WarmStart::primal(x)
        }
    }

    /// Checks this warm start against a problem of `n` variables and `m` constraints (named
    /// `problem` in the error): the primal point has `n` values, the constraint multipliers
    /// (if given) `m`, the bound multipliers (if given) `n`, and every value is finite.
    /// Every NLP backend that takes a warm start calls it before using one.
    pub fn check(&self, problem: &str, n: usize, m: usize) -> crate::Result<()> {
        let check = |what: &str, values: &[f64], expected: usize| {
            if values.len() != expected {
                return Err(crate::GlassboxError::InvalidProblem(format!(
                    "{problem}: the warm start's {what} has {} values, the problem needs \
                     {expected}",
                    values.len()
                )));
            }
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(crate::GlassboxError::InvalidProblem(format!(
                    "{problem}: the warm start's {what} has the non-finite value {} at \
                     index {i}",
                    values[i]
                )));
            }
            Ok(())
        };
        check("primal point", &self.primal, n)?;
        let multipliers = [
            (&self.constraint_multipliers, "constraint multipliers", m),
            (&self.lower_bound_multipliers, "lower-bound multipliers", n),
            (&self.upper_bound_multipliers, "upper-bound multipliers", n),
        ];
        for (values, what, expected) in multipliers {
            if let Some(v) = values {
                check(what, v, expected)?;
            }
        }
        Ok(())
    }
}

/// Options of one solve. Deserializes from the `[solver]` table of a config, with defaults
/// for every field; unknown fields are rejected.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolveOptions {
    /// Wall-clock limit in seconds, enforced by glassbox as well as passed to the backend.
    pub time_limit: Option<f64>,
    /// Limit on the backend's iterations.
    pub iteration_limit: Option<u64>,
    /// Convergence tolerance (the backend's main optimality tolerance).
    pub tolerance: Option<f64>,
    /// Integrality tolerance of a MILP backend: how far from a whole number an integer
    /// variable may end, and (where tighter) how far a row of a MILP solution may be off.
    /// It overrides `tolerance` for integrality; NLP backends refuse it.
    /// A formulation whose big-M rows separate by a small margin tightens it
    /// ([`SolveOptions::with_integrality_at_most`]).
    pub integrality_tolerance: Option<f64>,
    /// Relative MIP gap at which a MILP backend stops.
    pub relative_gap: Option<f64>,
    /// Absolute MIP gap at which a MILP backend stops.
    pub absolute_gap: Option<f64>,
    /// Threads the backend may use.
    pub threads: Option<usize>,
    /// Random seed of the backend.
    pub seed: Option<u64>,
    /// 0: silent; 1: a line per solve; 2 and more: the backend's own log.
    pub verbosity: u8,
    /// Starting point. Not part of a config: formulations set it.
    #[serde(skip)]
    pub warm_start: Option<WarmStart>,
    /// Backend-specific options, checked against the backend's declared options.
    pub raw: BTreeMap<String, RawOptionValue>,
    /// Set from outside (a Ctrl-C, SIGTERM) to stop the solve early: the backends that
    /// check it (IPOPT, HiGHS, lbfgs, torch, CBC) return at their next iteration with
    /// [`Limit::Interrupted`](crate::Limit::Interrupted). Not part of a config: the
    /// experiment engine sets it.
    #[serde(skip)]
    pub interrupt: Option<Interrupt>,
}

/// A shared stop request that a running solve checks once per iteration.
#[derive(Clone, Debug)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// A request that `flag` being set makes.
    pub fn new(flag: Arc<AtomicBool>) -> Self {
        Interrupt(flag)
    }

    /// Whether the stop was requested.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Two options compare equal whatever their interrupts: a stop request is not a setting.
impl PartialEq for Interrupt {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Whether `deadline` (none: no time limit) has passed: the one test every time-limited loop
/// makes.
pub fn deadline_passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

impl SolveOptions {
    /// `time_limit` as a [`Duration`]; a limit too large for one (validated finite and
    /// positive) is no limit.
    pub fn time_limit_duration(&self) -> Option<Duration> {
        self.time_limit
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
    }

    /// When `time_limit` ends if the solve started at `clock`; none without a limit (or one
    /// too far away to represent).
    pub fn deadline_from(&self, clock: Instant) -> Option<Instant> {
        self.time_limit_duration()
            .and_then(|t| clock.checked_add(t))
    }

    /// Checks the typed fields; the registry checks `raw`.
    pub fn validate(&self) -> crate::Result<()> {
        use crate::GlassboxError::Config;
        if let Some(t) = self.time_limit {
            if !(t.is_finite() && t > 0.0) {
                return Err(Config(format!(
                    "time_limit must be a positive number of seconds, got {t}"
                )));
            }
        }
        for (name, tol) in [
            ("tolerance", self.tolerance),
            ("integrality_tolerance", self.integrality_tolerance),
        ] {
            if let Some(t) = tol {
                if !(t.is_finite() && t > 0.0) {
                    return Err(Config(format!("{name} must be positive, got {t}")));
                }
            }
        }
        for (name, gap) in [
            ("relative_gap", self.relative_gap),
            ("absolute_gap", self.absolute_gap),
        ] {
            if let Some(g) = gap {
                if !(g.is_finite() && g >= 0.0) {
                    return Err(Config(format!(
                        "{name} must be a finite number >= 0, got {g}"
                    )));
                }
            }
        }
        if self.threads == Some(0) {
            return Err(Config("threads must be at least 1".into()));
        }
        Ok(())
    }

    /// The same options with an integrality tolerance of at most `bound` (none: unchanged):
    /// a tighter one the user set (`integrality_tolerance`, else `tolerance`, which a MILP
    /// backend applies to integrality too) is kept, a looser one (or none) becomes `bound`.
    pub fn with_integrality_at_most(&self, bound: Option<f64>) -> Self {
        let set = self.integrality_tolerance.or(self.tolerance);
        let integrality_tolerance = match (bound, set) {
            (Some(b), Some(t)) => Some(b.min(t)),
            (Some(b), None) => Some(b),
            (None, _) => self.integrality_tolerance,
        };
        SolveOptions {
            integrality_tolerance,
            ..self.clone()
        }
    }

    /// The same options with another warm start.
    pub fn with_warm_start(&self, warm_start: Option<WarmStart>) -> Self {
        SolveOptions {
            warm_start,
            ..self.clone()
        }
    }
}

/// Checks every raw option against a backend's declared options: an unknown name or a
/// value of the wrong type is an error naming the option and what is accepted.
pub fn check_raw_options(
    solver: &str,
    specs: &[OptionSpec],
    raw: &BTreeMap<String, RawOptionValue>,
) -> crate::Result<()> {
    for (name, value) in raw {
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
            return Err(crate::GlassboxError::InvalidOption {
                solver: solver.to_string(),
                option: name.clone(),
                message: if known.is_empty() {
                    "this solver takes no raw options".to_string()
                } else {
                    format!("unknown option; known options are {}", known.join(", "))
                },
            });
        };
        spec.check(value)
            .map_err(|message| crate::GlassboxError::InvalidOption {
                solver: solver.to_string(),
                option: name.clone(),
                message,
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(n: usize, m: usize) -> WarmStart {
        WarmStart {
            primal: vec![1.0; n],
            constraint_multipliers: Some(vec![0.5; m]),
            lower_bound_multipliers: Some(vec![0.0; n]),
            upper_bound_multipliers: Some(vec![0.0; n]),
            explore: false,
        }
    }

    /// An integer option given a float says the float as written ("5.0": "got 5" read as
    /// a whole number refused for not being one).
    #[test]
    fn a_float_for_an_integer_option_is_shown_as_a_float() {
        let spec = OptionSpec {
            name: "memory",
            kind: OptionKind::Int,
            help: "",
        };
        let e = spec.check(&RawOptionValue::Float(5.0)).unwrap_err();
        assert_eq!(e, "expected an integer, got 5.0");
        assert_eq!(RawOptionValue::Float(1e300).to_string(), "1e300");
        assert_eq!(RawOptionValue::Float(0.25).to_string(), "0.25");
    }

    #[test]
    fn warm_start_of_the_right_sizes_passes() {
        assert!(full(3, 2).check("p", 3, 2).is_ok());
        assert!(WarmStart::primal(vec![0.0; 3]).check("p", 3, 2).is_ok());
        assert!(WarmStart::primal(Vec::new()).check("p", 0, 0).is_ok());
    }

    #[test]
    fn warm_start_of_a_wrong_size_names_the_part_and_the_sizes() {
        let err = |warm: WarmStart| warm.check("toy", 3, 2).unwrap_err().to_string();
        let e = err(WarmStart::primal(vec![0.0; 4]));
        assert!(
            e.contains("toy") && e.contains("primal point has 4 values"),
            "{e}"
        );
        assert!(e.contains("needs 3"), "{e}");
        let e = err(WarmStart {
            constraint_multipliers: Some(vec![0.0; 3]),
            ..full(3, 2)
        });
        assert!(e.contains("constraint multipliers has 3 values"), "{e}");
        assert!(e.contains("needs 2"), "{e}");
        let e = err(WarmStart {
            lower_bound_multipliers: Some(vec![0.0; 2]),
            ..full(3, 2)
        });
        assert!(e.contains("lower-bound multipliers has 2 values"), "{e}");
        let e = err(WarmStart {
            upper_bound_multipliers: Some(Vec::new()),
            ..full(3, 2)
        });
        assert!(e.contains("upper-bound multipliers has 0 values"), "{e}");
    }

    #[test]
    fn warm_start_with_a_non_finite_value_names_it_and_its_index() {
        let mut warm = full(3, 2);
        warm.primal[2] = f64::NAN;
        let e = warm.check("toy", 3, 2).unwrap_err().to_string();
        assert!(
            e.contains("primal point has the non-finite value NaN at index 2"),
            "{e}"
        );
        let mut warm = full(3, 2);
        warm.upper_bound_multipliers = Some(vec![0.0, f64::INFINITY, 0.0]);
        let e = warm.check("toy", 3, 2).unwrap_err().to_string();
        assert!(
            e.contains("upper-bound multipliers has the non-finite value inf at index 1"),
            "{e}"
        );
    }

    #[test]
    fn a_time_limit_becomes_a_deadline_unless_it_is_too_far() {
        let clock = Instant::now();
        let limit = |t| SolveOptions {
            time_limit: t,
            ..Default::default()
        };
        assert_eq!(
            limit(Some(2.5)).deadline_from(clock),
            Some(clock + Duration::from_millis(2500))
        );
        assert_eq!(limit(None).deadline_from(clock), None);
        // Finite and positive (what `validate` lets through) but past any Duration.
        assert_eq!(limit(Some(1e300)).time_limit_duration(), None);
        assert_eq!(limit(Some(1e300)).deadline_from(clock), None);
        assert!(!deadline_passed(None));
        assert!(deadline_passed(Some(clock)));
        assert!(!deadline_passed(Some(clock + Duration::from_secs(3600))));
    }

    #[test]
    fn integrality_is_tightened_never_loosened() {
        let bound = Some(1e-8);
        let none = SolveOptions::default();
        assert_eq!(
            none.with_integrality_at_most(bound).integrality_tolerance,
            bound
        );
        assert_eq!(
            none.with_integrality_at_most(None).integrality_tolerance,
            None
        );
        // `tolerance` counts as the integrality tolerance when none is set of its own.
        let loose = SolveOptions {
            tolerance: Some(1e-6),
            ..Default::default()
        };
        let tightened = loose.with_integrality_at_most(bound);
        assert_eq!(tightened.integrality_tolerance, bound);
        assert_eq!(tightened.tolerance, Some(1e-6));
        let tight = SolveOptions {
            tolerance: Some(1e-6),
            integrality_tolerance: Some(1e-9),
            ..Default::default()
        };
        assert_eq!(
            tight.with_integrality_at_most(bound).integrality_tolerance,
            Some(1e-9)
        );
        let bad = SolveOptions {
            integrality_tolerance: Some(0.0),
            ..Default::default()
        };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("integrality_tolerance must be positive"), "{e}");
    }
}
