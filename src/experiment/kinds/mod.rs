//! How the experiment engine runs each kind of formulation: one [`super::Formulation`]
//! implementation per problem kind, generic over the formulation's typed trait, all going
//! through the one runner of `multistart`. What differs per kind is here and nowhere else:
//! how a split's problem is built and solved from a start, whether solutions carry along a
//! warm path, MIP starts, and which metrics a line holds. The formulation registry
//! (`registry/formulations.rs`) wraps each formulation's config in its kind.

mod learner;
mod milp_classifier;
mod multistart;
mod nlp_classifier;
mod nlp_regressor;
mod regression_selection;
mod risk_score;
mod selection;

pub use learner::Learner;
pub use milp_classifier::MilpClassifier;
pub use nlp_classifier::NlpClassifier;
pub use nlp_regressor::NlpRegressor;
pub use risk_score::RiskScore;
