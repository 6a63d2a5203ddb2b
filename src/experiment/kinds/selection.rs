//! The cross-validated choice between a randomized tree's optimized tree and its greedy start
//! (S-ORCT's and l0tree's `selection_folds`, docs/QUALITY.md "Never worse than CART"): after a
//! split's multistart, the training rows are dealt into k stratified folds; on each fold the
//! greedy starts and what the formulation's [`FoldStarts`] plan says (S-ORCT's default: the
//! split's first 14 random starts from their seeds; the trait's: the multistart's best point
//! and ceil(starts / k) - 1 random starts) are solved on the other rows, and every training
//! row is predicted by the fold's best-objective tree and by the fold's greedy trees kept
//! as they are. The most accurate greedy tree (the simpler one on a tie: CART's
//! axis-aligned tree before S-ORCT's oblique TAO tree, which `tao_start` adds) of all the
//! training rows is returned unless the optimized trees are more accurate than it by more
//! than one standard error (the formulation's `selection_margin` of them)
//! ([`clearly_better`], [`choose`]); otherwise the multistart's best objective is. A
//! greedy tree that breaks the problem's constraints on the training rows (`rho`) is no
//! candidate ([`choose_among`]): it would be no solution of the problem posed. Where the
//! objective is the fit alone (`fit_alone`: no sparsity penalty), an optimized tree that
//! fits the training rows worse than the greedy tree the choice would otherwise keep is not
//! returned: the folds judged their own solves, not the whole-data one. With
//! `selection_polished` the tree the multistart optimized from the chosen greedy start is
//! judged between the two (each fold's solve from that start gives its fold tree). Either
//! way one line is added and selected: the returned tree's, carrying the folds' accuracies
//! and their seconds.
//!
//! What each plan costs and why: `multistart::best_of_fold`, `FoldStarts`.
//!
//! Depends on the NLP classifiers' kind (`nlp_classifier.rs`) and the multistart runner.

use super::super::engine::SplitSpec;
use super::super::unit::{EngineData, UnitCarry};
use super::super::{ExperimentConfig, SolveRecord};
use super::multistart::{self, FoldPlan, Ran};
use super::nlp_classifier::{NlpClassifier, Prepared};
use crate::data::{stratified_kfold, ClassificationData};
use crate::formulation::NlpClassifierFormulation;
use crate::model::Classifier;
use crate::nlp::NlpProblem;
use crate::starts::FoldStarts;
use crate::{metrics, Result};
use std::time::Instant;

/// What the folds found: for the optimized trees and per greedy start (by origin), which
/// training rows (in fold order) they predict right, with the folds' iterations.
struct FoldVotes {
    optimized: Vec<bool>,
    greedy: Vec<GreedyVotes>,
    iterations: u64,
}

/// One greedy start's rows right in the folds: its tree kept as it is, and (with
/// `selection_polished`) the tree the fold's solve from it optimized.
struct GreedyVotes {
    origin: &'static str,
    kept: Vec<bool>,
    polished: Vec<bool>,
}

/// What the choice returns ([`choose`]): a greedy tree kept as it is, the tree optimized
/// from a greedy start, or the best objective's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kept {
    Greedy(usize),
    Polished(usize),
    Optimized,
}

impl<F> NlpClassifier<F>
where
    F: NlpClassifierFormulation + Send + Sync,
    F::Problem: 'static,
{
    /// Whether the formulation asks for the choice and has a greedy start to choose
    /// (`cart_start = false` leaves nothing to choose between): one more line per split.
    pub(super) fn chooses(&self) -> bool {
        self.0.selection_folds() >= 2 && self.0.greedy_start_count() > 0
    }

    /// The cross-validated choice (module comment) after the multistart `ran` on `split`'s
    /// training rows (`prepared`); `ran` as it is where the formulation does not choose
    /// ([`Self::chooses`]), the config decomposes, no start returned a usable tree, the
    /// unit was interrupted, or the training rows cannot be dealt into the folds.
    pub(super) fn select_by_cross_validation(
        &self,
        config: &ExperimentConfig,
        data: &EngineData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
        prepared: &Prepared<F>,
        mut ran: Ran<F::Model>,
    ) -> Result<Ran<F::Model>> {
        let f = &self.0;
        let folds = f.selection_folds();
        if !self.chooses() || config.decomposition.is_some() || ran.interrupted {
            return Ok(ran);
        }
        let Some((best_start, _)) = ran.best.as_ref() else {
            return Ok(ran);
        };
        let best_start = *best_start;
        let d = data.classification(f.name())?;
        let y: Vec<usize> = split.train.iter().map(|&i| d.y[i]).collect();
        let Ok(dealt) = stratified_kfold(&y, folds, split.seed ^ multistart::FOLD_SEED) else {
            multistart::note_too_few_rows(&mut ran, best_start, folds, split.train.len());
            return Ok(ran);
        };
        let started = Instant::now();
        let plan = FoldPlan::new(
            f.fold_starts(),
            f.fold_solves(),
            config,
            split,
            folds,
            &ran.records,
            &ran.points[best_start],
        );
        let solver = config
            .registry
            .nlp_solver(&config.solver.name, &config.solver.options)?;
        let Some(votes) = self.fold_votes(config, d, split, carry, &dealt, &plan, &*solver)? else {
            ran.interrupted = true;
            return Ok(ran);
        };
        let optimized = share(&votes.optimized);
        let greedy_right: Vec<&[bool]> = votes.greedy.iter().map(|g| &g.kept[..]).collect();
        let polished_right: Vec<&[bool]> = votes.greedy.iter().map(|g| &g.polished[..]).collect();
        let margin = f.selection_margin();
        let polished = f.selection_polished().then_some(&polished_right[..]);
        // The tree optimized from greedy start g on all the training rows: the multistart's
        // line of that start; where that solve returned nothing, the two-way choice.
        let polished_start = |g: usize| {
            ran.records.iter().position(|r| {
                r.origin.as_deref() == Some(votes.greedy[g].origin) && r.objective.is_some()
            })
        };
        let decide = |eligible: &[bool]| match choose_among(
            &votes.optimized,
            &greedy_right,
            polished,
            eligible,
            margin,
        ) {
            Kept::Polished(g) if polished_start(g).is_none() => {
                choose_among(&votes.optimized, &greedy_right, None, eligible, margin)
            }
            kept => kept,
        };
        let train = d.rows(&split.train);
        let mut eligible = vec![true; votes.greedy.len()];
        let mut kept = decide(&eligible);
        // The chosen greedy start on all the training rows (none where, as TAO may, it failed
        // there), and its tree kept as it is: kept only where it meets the problem's
        // constraints on those rows (`rho`), else the choice is made again without it.
        let mut all_rows_greedy = None;
        let mut greedy_tree = |g: usize| {
            let starts = all_rows_greedy.get_or_insert_with(|| {
                f.greedy_starts(&prepared.problem, &*solver, &config.solver.options)
            });
            let start = starts.iter().find(|s| s.origin == votes.greedy[g].origin)?;
            let model = f.greedy_model(
                &prepared.problem,
                &start.point,
                prepared.scaler.clone(),
                d.classes.clone(),
                d.encoding.clone(),
            );
            let predicted = model.predict(&train.x);
            let fits = f.meets_constraints(&prepared.problem, &predicted);
            Some((start.clone(), model, predicted, fits))
        };
        let mut kept_greedy = None;
        let mut breaking = Vec::new();
        while let Kept::Greedy(g) = kept {
            let Some((start, model, _, fits)) = greedy_tree(g) else {
                break;
            };
            if fits {
                kept_greedy = Some((g, start, model));
                break;
            }
            breaking.push(votes.greedy[g].origin);
            eligible[g] = false;
            kept = decide(&eligible);
        }
        // Without a sparsity penalty, an optimized tree that fits the training rows worse
        // than the greedy tree the choice would otherwise keep (the most accurate eligible
        // one on the folds that meets the constraints) ended in a worse basin than the
        // greedy start's (the folds judged other solves): the greedy tree is kept.
        let mut worse_fit_note = String::new();
        if let (Kept::Optimized, true, Some((_, optimized_model))) =
            (kept, f.fit_alone(&prepared.problem), ran.best.as_ref())
        {
            let none = vec![false; votes.optimized.len()];
            let optimized_fit = metrics::accuracy(&train.y, &optimized_model.predict(&train.x));
            while let Kept::Greedy(g) = choose_among(&none, &greedy_right, None, &eligible, margin)
            {
                let Some((start, greedy, predicted, fits)) = greedy_tree(g) else {
                    eligible[g] = false;
                    continue;
                };
                if !fits {
                    breaking.push(votes.greedy[g].origin);
                    eligible[g] = false;
                    continue;
                }
                let greedy_fit = metrics::accuracy(&train.y, &predicted);
                if greedy_fit > optimized_fit {
                    let origin = votes.greedy[g].origin;
                    worse_fit_note = format!(
                        "; the optimized tree fits the training rows worse than the {origin} \
                         tree ({optimized_fit:.4} against {greedy_fit:.4}), so it is not chosen"
                    );
                    kept = Kept::Greedy(g);
                    kept_greedy = Some((g, start, greedy));
                }
                break;
            }
        }
        // With each greedy tree's accuracy, the rows only the optimized trees and only it got
        // right (n_a, n_b of `clearly_better`), from which any margin can be read afterwards;
        // with `selection_polished`, the same for the tree optimized from it, against the
        // greedy tree and against the optimized trees.
        let accuracies: Vec<String> = std::iter::once(format!("optimized {optimized:.4}"))
            .chain(votes.greedy.iter().map(|g| {
                let origin = g.origin;
                let (n_a, n_b) = disagreements(&votes.optimized, &g.kept);
                let mut text = format!(
                    "{origin} {:.4} (rows only the optimized trees get right {n_a}, only {origin} {n_b})",
                    share(&g.kept)
                );
                if polished.is_some() {
                    let (p_a, p_b) = disagreements(&g.polished, &g.kept);
                    let (o_a, o_b) = disagreements(&votes.optimized, &g.polished);
                    text += &format!(
                        ", {origin} optimized {:.4} (rows only it gets right {p_a}, only {origin} {p_b}; only the optimized trees {o_a}, only it {o_b})",
                        share(&g.polished)
                    );
                }
                text
            }))
            .collect();
        let fold_starts_note = match f.fold_starts() {
            FoldStarts::BestPoint => "",
            FoldStarts::Replay => " (best random starts replayed)",
            FoldStarts::Softened => " (best point softened)",
            FoldStarts::Whole => " (whole multistart per fold)",
        };
        // What the plan spends, where the formulation set it (at most the split's starts).
        let fold_solves_note = match (f.fold_solves(), plan.solves()) {
            (None, _) => String::new(),
            (Some(_), 1) => " (1 solve a fold)".to_string(),
            (Some(_), n) => format!(" ({n} solves a fold)"),
        };
        let margin_note = if margin == 1.0 {
            String::new()
        } else {
            format!(" (margin {margin} standard errors)")
        };
        let breaking_note: String = breaking
            .iter()
            .map(|origin| {
                format!(
                    "; the {origin} tree kept as it is breaks the problem's constraints on the \
                     training rows, so it is not chosen"
                )
            })
            .collect();
        let summary = format!(
            "{folds}-fold selection{fold_starts_note}{fold_solves_note}{margin_note}, accuracy on the held-out rows: {}{breaking_note}{worse_fit_note}",
            accuracies.join(", ")
        );
        let seconds = started.elapsed().as_secs_f64();
        let (record, model) = match (kept, kept_greedy) {
            (Kept::Greedy(_), Some((g, greedy, model))) => {
                let record = SolveRecord {
                    validation_accuracy: Some(share(&votes.greedy[g].kept)),
                    ..multistart::kept_greedy_line(
                        &ran.records[best_start],
                        &summary,
                        if worse_fit_note.is_empty() {
                            multistart::NOT_BETTER
                        } else {
                            "the optimized tree fitting the training rows worse"
                        },
                        greedy.origin,
                        prepared.problem.objective(&greedy.point),
                        votes.iterations,
                        seconds,
                    )
                };
                let test = d.rows(&split.test);
                (self.measured(record, &model, &train, &test), model)
            }
            (Kept::Polished(g), _) => {
                let s = polished_start(g).expect("checked above");
                let model = self.model_at(prepared, d, &ran.points[s]);
                let origin = format!("{} optimized", votes.greedy[g].origin);
                let record = SolveRecord {
                    validation_accuracy: Some(share(&votes.greedy[g].polished)),
                    ..multistart::kept_optimized_line(
                        &ran.records[s],
                        &summary,
                        s,
                        &origin,
                        votes.iterations,
                        seconds,
                    )
                };
                (record, model)
            }
            _ => {
                let (_, model) = ran.best.take().expect("checked above");
                let record = SolveRecord {
                    validation_accuracy: Some(optimized),
                    ..multistart::kept_optimized_line(
                        &ran.records[best_start],
                        &summary,
                        best_start,
                        "optimized",
                        votes.iterations,
                        seconds,
                    )
                };
                (record, model)
            }
        };
        multistart::add_choice(&mut ran, record, model, carry);
        Ok(ran)
    }

    /// Solves the folds `dealt` (pairs of positions in `split.train`): per fold the greedy
    /// starts and `plan`'s (`multistart::best_of_fold`: by default the multistart's best
    /// point and ceil(starts / k) - 1 seeded random starts) on the fold's training rows;
    /// the best objective's tree and the greedy trees predict the held-out rows. `None`
    /// when a stop request came before or after a solve.
    #[allow(clippy::too_many_arguments)]
    fn fold_votes(
        &self,
        config: &ExperimentConfig,
        d: &ClassificationData,
        split: &SplitSpec,
        carry: &UnitCarry<'_>,
        dealt: &[(Vec<usize>, Vec<usize>)],
        plan: &FoldPlan<'_>,
        solver: &dyn crate::NlpSolver,
    ) -> Result<Option<FoldVotes>> {
        let f = &self.0;
        let mut votes = FoldVotes {
            optimized: Vec::new(),
            greedy: Vec::new(),
            iterations: 0,
        };
        let rows = |positions: &[usize]| -> Vec<usize> {
            positions.iter().map(|&k| split.train[k]).collect()
        };
        for (fit, held_out) in dealt {
            let prepared = self.prepare(d, &rows(fit))?;
            let problem = &prepared.problem;
            let held_out = d.rows(&rows(held_out));
            let right = |m: &F::Model| -> Vec<bool> {
                let predicted = m.predict(&held_out.x);
                predicted
                    .iter()
                    .zip(&held_out.y)
                    .map(|(p, y)| p == y)
                    .collect()
            };
            let greedy = f.greedy_starts(problem, solver, &config.solver.options);
            let point = plan
                .point
                .map(|(x, kind)| (f.point_on_rows(problem, x), kind));
            let plan = FoldPlan {
                point: point.as_ref().map(|(x, kind)| (&x[..], *kind)),
                seeds: plan.seeds.clone(),
            };
            let Some(best) = multistart::best_of_fold(
                config,
                carry,
                problem.num_variables(),
                &greedy,
                &plan,
                |rng| f.random_start(problem, rng),
                |options, context| f.solve_start(problem, solver, options, context),
            )?
            else {
                return Ok(None);
            };
            votes.iterations += best.iterations;
            // A fold without a usable tree counts its rows as missed by the optimized one.
            let optimized_right = |point: Option<&Vec<f64>>| match point {
                Some(x) => right(&self.model_at(&prepared, d, x)),
                None => vec![false; held_out.y.len()],
            };
            votes.optimized.extend(optimized_right(best.point.as_ref()));
            let before = votes.optimized.len() - held_out.y.len();
            for (start, solution) in greedy.iter().zip(&best.greedy_solutions) {
                let model = f.greedy_model(
                    problem,
                    &start.point,
                    prepared.scaler.clone(),
                    d.classes.clone(),
                    d.encoding.clone(),
                );
                let g = match votes.greedy.iter().position(|g| g.origin == start.origin) {
                    Some(g) => g,
                    None => {
                        votes.greedy.push(GreedyVotes {
                            origin: start.origin,
                            kept: vec![false; before],
                            polished: vec![false; before],
                        });
                        votes.greedy.len() - 1
                    }
                };
                votes.greedy[g].kept.extend(right(&model));
                if f.selection_polished() {
                    votes.greedy[g]
                        .polished
                        .extend(optimized_right(solution.as_ref()));
                }
            }
            // A greedy tree a fold could not build (TAO can fail) misses the fold's rows.
            for g in &mut votes.greedy {
                g.kept.resize(votes.optimized.len(), false);
                g.polished.resize(votes.optimized.len(), false);
            }
        }
        Ok(Some(votes))
    }
}

/// The choice among the trees the folds judged, from which training rows each got right:
/// the optimized trees (`optimized`) and the greedy ones (`greedy`, the simplest first:
/// CART's, then S-ORCT's oblique TAO tree where `tao_start` asks for it). The most accurate
/// greedy tree (the simplest on a tie) is returned unless the optimized trees are more
/// accurate than it by more than `margin` standard errors ([`clearly_better`]). The greedy
/// trees compete on accuracy alone because each fold builds them on its own rows, an honest
/// estimate; the optimized trees start by default from a point that saw the held-out rows
/// (`multistart::best_of_fold`) and must clear the margin (kept with S-ORCT's honest
/// `selection_starts` too: benches/README "What the choice's folds solve" measured them
/// with it). With CART's tree alone: CART unless the optimized trees are clearly better. With `polished` (per greedy
/// start, the rows the trees optimized from it got right: `selection_polished`), the tree
/// optimized from the chosen greedy start stands between the two: it replaces the greedy
/// tree when clearly better than it, and the optimized trees must then be clearly better
/// than it, each step by `margin` (the simpler tree stays on a close call).
fn choose(
    optimized: &[bool],
    greedy: &[&[bool]],
    polished: Option<&[&[bool]]>,
    margin: f64,
) -> Kept {
    let mut best: Option<usize> = None;
    for (g, right) in greedy.iter().enumerate() {
        if best.is_none_or(|b| share(right) > share(greedy[b])) {
            best = Some(g);
        }
    }
    let Some(g) = best else {
        return Kept::Optimized;
    };
    let (mut kept, mut kept_right) = (Kept::Greedy(g), greedy[g]);
    if let Some(polished) = polished {
        if clearly_better(polished[g], kept_right, margin) {
            (kept, kept_right) = (Kept::Polished(g), polished[g]);
        }
    }
    if clearly_better(optimized, kept_right, margin) {
        Kept::Optimized
    } else {
        kept
    }
}

/// [`choose`] among the greedy starts marked `eligible` (with the trees optimized from
/// them): the others are no candidates. With every start eligible, `choose` itself.
fn choose_among(
    optimized: &[bool],
    greedy: &[&[bool]],
    polished: Option<&[&[bool]]>,
    eligible: &[bool],
    margin: f64,
) -> Kept {
    let index: Vec<usize> = (0..greedy.len()).filter(|&g| eligible[g]).collect();
    let greedy_in: Vec<&[bool]> = index.iter().map(|&g| greedy[g]).collect();
    let polished_in: Option<Vec<&[bool]>> = polished.map(|p| index.iter().map(|&g| p[g]).collect());
    match choose(optimized, &greedy_in, polished_in.as_deref(), margin) {
        Kept::Greedy(i) => Kept::Greedy(index[i]),
        Kept::Polished(i) => Kept::Polished(index[i]),
        Kept::Optimized => Kept::Optimized,
    }
}

/// The share of `true` in `right` (an accuracy, from which rows a model got right).
fn share(right: &[bool]) -> f64 {
    right.iter().filter(|&&ok| ok).count() as f64 / right.len().max(1) as f64
}

/// Whether the model that got `a_right` right is more accurate than the one that got
/// `b_right` right by more than `margin` standard errors of the paired difference
/// (sqrt(n_a + n_b) / n, where n_a and n_b count the rows only the one or only the other
/// gets right). With 1, the one-standard-error rule of CART's authors, which keeps the
/// simpler tree unless the more complex one is clearly better.
fn clearly_better(a_right: &[bool], b_right: &[bool], margin: f64) -> bool {
    let (n_a, n_b) = disagreements(a_right, b_right);
    n_a as f64 - n_b as f64 > margin * ((n_a + n_b) as f64).sqrt()
}

/// How many rows only the model that got `a_right` right gets right, and how many only the
/// other one does.
fn disagreements(a_right: &[bool], b_right: &[bool]) -> (usize, usize) {
    let only = |x: &[bool], y: &[bool]| x.iter().zip(y).filter(|(&x, &y)| x && !y).count();
    (only(a_right, b_right), only(b_right, a_right))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<bool> {
        text.chars().map(|c| c == '1').collect()
    }

    #[test]
    fn the_optimized_tree_must_win_by_more_than_one_standard_error() {
        // Identical predictions, or one row either way: not clearly better.
        assert!(!clearly_better(&rows("1100"), &rows("1100"), 1.0));
        assert!(!clearly_better(&rows("1110"), &rows("1100"), 1.0));
        // Two rows only it gets right, none the other way: 2 > sqrt(2).
        assert!(clearly_better(&rows("1111"), &rows("1100"), 1.0));
        // Three against one: 2 > sqrt(4) fails; four against one: 3 > sqrt(5) holds.
        assert!(!clearly_better(&rows("1110"), &rows("0001"), 1.0));
        assert!(clearly_better(&rows("11110"), &rows("00001"), 1.0));
        // Never the other way round.
        assert!(!clearly_better(&rows("1100"), &rows("1111"), 1.0));
        // Another margin: two rows only it gets right clear 1.4 standard errors (2 >
        // 1.4 sqrt(2)), not 1.5; any surplus clears a margin of 0.
        assert!(clearly_better(&rows("1111"), &rows("1100"), 1.4));
        assert!(!clearly_better(&rows("1111"), &rows("1100"), 1.5));
        assert!(clearly_better(&rows("1110"), &rows("0101"), 0.0));
        assert!(!clearly_better(&rows("1100"), &rows("1100"), 0.0));
        assert_eq!(share(&rows("1100")), 0.5);
        assert_eq!(disagreements(&rows("11100"), &rows("00101")), (2, 1));
        assert_eq!(disagreements(&rows("10010"), &rows("01011")), (1, 2));
    }

    #[test]
    fn the_most_accurate_greedy_tree_stays_unless_the_optimized_one_is_clearly_better() {
        let cart = rows("1111000000");
        // CART alone: the optimized tree must be clearly better.
        assert_eq!(
            choose(&rows("1111100000"), &[&cart], None, 1.0),
            Kept::Greedy(0)
        );
        assert_eq!(
            choose(&rows("1111111000"), &[&cart], None, 1.0),
            Kept::Optimized
        );
        // A second greedy tree (TAO's) replaces CART when it is more accurate, by any
        // margin; on a tie CART stays.
        assert_eq!(
            choose(
                &rows("1111000000"),
                &[&cart, &rows("1111100000")],
                None,
                1.0
            ),
            Kept::Greedy(1)
        );
        assert_eq!(
            choose(
                &rows("1111000000"),
                &[&cart, &rows("0111100000")],
                None,
                1.0
            ),
            Kept::Greedy(0)
        );
        // The optimized tree must then be clearly better than TAO's, not only than CART's.
        let tao = rows("1111110000");
        assert_eq!(
            choose(&rows("1111111000"), &[&cart, &tao], None, 1.0),
            Kept::Greedy(1)
        );
        assert_eq!(
            choose(&rows("1111111110"), &[&cart, &tao], None, 1.0),
            Kept::Optimized
        );
        // Nothing to choose from: the optimized tree.
        assert_eq!(choose(&rows("1"), &[], None, 1.0), Kept::Optimized);
    }

    #[test]
    fn a_greedy_tree_that_is_not_eligible_is_no_candidate() {
        let cart = rows("1111100000");
        let tao = rows("1111110000");
        let optimized = rows("1111110000");
        let greedy = [&cart[..], &tao[..]];
        // Every start eligible: as `choose`.
        assert_eq!(
            choose_among(&optimized, &greedy, None, &[true, true], 1.0),
            choose(&optimized, &greedy, None, 1.0)
        );
        assert_eq!(
            choose_among(&optimized, &greedy, None, &[true, true], 1.0),
            Kept::Greedy(1)
        );
        // TAO's tree out: CART's, by its index among all the greedy starts.
        assert_eq!(
            choose_among(&optimized, &greedy, None, &[true, false], 1.0),
            Kept::Greedy(0)
        );
        // CART's out: TAO's keeps its index.
        assert_eq!(
            choose_among(&optimized, &greedy, None, &[false, true], 1.0),
            Kept::Greedy(1)
        );
        // None eligible: the optimized tree, however it compares.
        assert_eq!(
            choose_among(&rows("0000000000"), &greedy, None, &[false, false], 1.0),
            Kept::Optimized
        );
        // The tree optimized from an eligible start keeps that start's index.
        let polished = rows("1111111110");
        let polished_of = [&polished[..], &polished[..]];
        assert_eq!(
            choose_among(&optimized, &greedy, Some(&polished_of), &[false, true], 1.0),
            Kept::Polished(1)
        );
    }

    #[test]
    fn the_tree_optimized_from_the_greedy_start_stands_between_the_two() {
        let cart = rows("1111000000");
        let polished = rows("1111111000");
        let both = |optimized: &str, polished: &[bool]| {
            choose(&rows(optimized), &[&cart], Some(&[polished]), 1.0)
        };
        // Clearly better than CART (3 > sqrt(3)), and the optimized trees not clearly better
        // than it: it is returned.
        assert_eq!(both("1111111000", &polished), Kept::Polished(0));
        assert_eq!(both("1111111100", &polished), Kept::Polished(0));
        // The optimized trees clearly better than it (3 > sqrt(3)): they are returned.
        assert_eq!(both("1111111111", &polished), Kept::Optimized);
        // Not clearly better than CART (one row: 1 > sqrt(1) fails): CART stays, and the
        // optimized trees are judged against CART as without it.
        let close = rows("1111100000");
        assert_eq!(both("1111100000", &close), Kept::Greedy(0));
        assert_eq!(both("1111111000", &close), Kept::Optimized);
        // Without the polished rows, the choice is the two-way one.
        assert_eq!(
            choose(&rows("1111111100"), &[&cart], None, 1.0),
            Kept::Optimized
        );
    }
}
