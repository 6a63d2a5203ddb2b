//! Drawings of fitted trees (`glassbox draw MODEL.json out.svg|png`): boxes for the branch
//! nodes with their splits in the user's units (the nonzero coefficients of an oblique
//! split, one per line, largest first; the feature and threshold of an axis split) and
//! boxes for the leaves with their class probabilities or predictions, joined by edges
//! labelled "yes" (left) and "no" (right).
//!
//! [`TreeDiagram`] is independent of any model: a list of nodes with text lines. Each tree
//! formulation turns its fitted model into one (`FittedModel::diagram`), with the helpers
//! here for complete trees and oblique splits.
//!
//! Depends on the core's plotting helpers and tree shapes.

use crate::metrics::SPARSITY_TOLERANCE;
use crate::plot::{self, Figure};
use crate::tree::TreeShape;
use crate::Result;
use nalgebra::DMatrix;
use std::path::Path;

/// Oblique splits show at most this many coefficients; the rest are counted.
pub const MAX_TERMS: usize = 8;

/// A node of a drawing.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagramNode {
    /// Text lines, the first one the node's title.
    pub lines: Vec<String>,
    /// Left and right child indices (into [`TreeDiagram::nodes`]); `None` for a leaf.
    pub children: Option<(usize, usize)>,
}

/// A tree to draw: `nodes[0]` is the root.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeDiagram {
    /// The caption.
    pub title: String,
    /// What an edge to the left child means (e.g. "yes").
    pub left_label: String,
    /// What an edge to the right child means.
    pub right_label: String,
    /// The nodes.
    pub nodes: Vec<DiagramNode>,
}

/// Where each node goes: its column (leaves in order take 0, 1, ...; a branch sits midway
/// between its children) and its level.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// (x in leaf slots, level) per node.
    pub positions: Vec<(f64, usize)>,
    /// Number of leaf slots.
    pub width: usize,
    /// Number of levels.
    pub levels: usize,
}

impl TreeDiagram {
    /// The layout: leaves left to right in order, parents centred over their children.
    pub fn layout(&self) -> Layout {
        let mut positions = vec![(0.0, 0); self.nodes.len()];
        let mut next_leaf = 0usize;
        let mut levels = 0;
        // Iterative post-order (trees from CART may be deep).
        let mut stack = vec![(0usize, 0usize, false)];
        while let Some((t, level, expanded)) = stack.pop() {
            levels = levels.max(level + 1);
            match (self.nodes[t].children, expanded) {
                (None, _) => {
                    positions[t] = (next_leaf as f64, level);
                    next_leaf += 1;
                }
                (Some((l, r)), false) => {
                    stack.push((t, level, true));
                    stack.push((r, level + 1, false));
                    stack.push((l, level + 1, false));
                }
                (Some((l, r)), true) => {
                    positions[t] = ((positions[l].0 + positions[r].0) / 2.0, level);
                }
            }
        }
        Layout {
            positions,
            width: next_leaf.max(1),
            levels: levels.max(1),
        }
    }

    /// The widest line and the most lines of any node (sizes the boxes).
    fn box_chars(&self) -> (usize, usize) {
        let w = self
            .nodes
            .iter()
            .flat_map(|n| n.lines.iter().map(|l| l.chars().count()))
            .max()
            .unwrap_or(1);
        let h = self.nodes.iter().map(|n| n.lines.len()).max().unwrap_or(1);
        (w.max(8), h.max(1))
    }

    /// The figure's size in pixels for readable text.
    pub fn size(&self) -> (u32, u32) {
        let layout = self.layout();
        let (w, h) = self.box_chars();
        // Saturating: a model read from a file may name a feature of a million characters.
        let times = |n: usize, unit: u32| u32::try_from(n).unwrap_or(u32::MAX).saturating_mul(unit);
        let slot = times(w, CHAR_W).saturating_add(2 * PAD + GAP).max(120);
        let level = times(h, LINE_H).saturating_add(2 * PAD + LEVEL_GAP);
        (
            times(layout.width, slot)
                .saturating_add(2 * MARGIN)
                .min(20_000),
            times(layout.levels, level)
                .saturating_add(TITLE_H + 2 * MARGIN)
                .min(20_000),
        )
    }

    /// Draws the tree to `path` (`.png` or `.svg`), sized to its content.
    pub fn save(&self, path: &Path) -> Result<Option<String>> {
        plot::save(self, path, self.size())
    }
}

const CHAR_W: u32 = 8;
const LINE_H: u32 = 17;
const PAD: u32 = 8;
const GAP: u32 = 24;
const LEVEL_GAP: u32 = 50;
const MARGIN: u32 = 20;
const TITLE_H: u32 = 34;

impl Figure for TreeDiagram {
    fn draw<DB: plotters::prelude::DrawingBackend>(
        &self,
        backend: DB,
        text: bool,
    ) -> std::result::Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let e = |x: &dyn std::fmt::Display| x.to_string();
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let layout = self.layout();
        let (cw, ch) = self.box_chars();
        let box_w = (cw as u32 * CHAR_W + 2 * PAD) as i32;
        let box_h = (ch as u32 * LINE_H + 2 * PAD) as i32;
        let (width, _) = root.dim_in_pixel();
        let slot = (width as i32 - 2 * MARGIN as i32) / layout.width as i32;
        let level_h = box_h + LEVEL_GAP as i32;
        // Top-left corner of a node's box.
        let corner = |t: usize| {
            let (x, level) = layout.positions[t];
            let cx = MARGIN as i32 + ((x + 0.5) * slot as f64) as i32;
            (
                cx - box_w / 2,
                (MARGIN + TITLE_H) as i32 + level as i32 * level_h,
            )
        };
        let font = ("sans-serif", 14).into_font();
        if text {
            root.draw(&Text::new(
                self.title.clone(),
                (MARGIN as i32, MARGIN as i32),
                ("sans-serif", 18).into_font(),
            ))
            .map_err(|x| e(&x))?;
        }
        for (t, node) in self.nodes.iter().enumerate() {
            let (x, y) = corner(t);
            if let Some((l, r)) = node.children {
                for (child, label) in [(l, &self.left_label), (r, &self.right_label)] {
                    let (cx, cy) = corner(child);
                    let from = (x + box_w / 2, y + box_h);
                    let to = (cx + box_w / 2, cy);
                    root.draw(&PathElement::new(vec![from, to], BLACK.stroke_width(1)))
                        .map_err(|x| e(&x))?;
                    if text {
                        let mid = ((from.0 + to.0) / 2 + 4, (from.1 + to.1) / 2 - 8);
                        root.draw(&Text::new(label.clone(), mid, font.clone().color(&BLUE)))
                            .map_err(|x| e(&x))?;
                    }
                }
            }
            let fill = if node.children.is_some() {
                RGBColor(235, 242, 252)
            } else {
                RGBColor(236, 250, 236)
            };
            root.draw(&Rectangle::new(
                [(x, y), (x + box_w, y + box_h)],
                fill.filled(),
            ))
            .map_err(|x| e(&x))?;
            root.draw(&Rectangle::new(
                [(x, y), (x + box_w, y + box_h)],
                BLACK.stroke_width(1),
            ))
            .map_err(|x| e(&x))?;
            if text {
                for (i, line) in node.lines.iter().enumerate() {
                    root.draw(&Text::new(
                        line.clone(),
                        (x + PAD as i32, y + PAD as i32 + i as i32 * LINE_H as i32),
                        font.clone(),
                    ))
                    .map_err(|x| e(&x))?;
                }
            }
        }
        root.present().map_err(|x| e(&x))?;
        Ok(())
    }
}

/// The lines of an oblique split `sum_j w_j x_j  (op)  b`: the title, the nonzero terms
/// largest first by `weight` (the scaled coefficient, so terms compare across units), at
/// most [`MAX_TERMS`], then the comparison.
pub fn oblique_lines(
    title: String,
    terms: Vec<(String, f64, f64)>,
    comparison: String,
) -> Vec<String> {
    let mut terms = terms;
    terms.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()));
    let mut lines = vec![title];
    let shown = terms.len().min(MAX_TERMS);
    for (name, w, _) in &terms[..shown] {
        lines.push(format!("{w:+.4} {name}"));
    }
    if terms.len() > shown {
        lines.push(format!("... {} more terms", terms.len() - shown));
    }
    if terms.is_empty() {
        lines.push("0 (no feature)".to_string());
    }
    lines.push(comparison);
    lines
}

/// The diagram of a complete tree of depth D in heap order: branch `t` has children
/// `2t+1` and `2t+2`; leaves follow the branches, left to right.
pub fn complete_tree(
    title: String,
    depth: usize,
    branch_lines: impl Fn(usize) -> Vec<String>,
    leaf_lines: impl Fn(usize) -> Vec<String>,
) -> TreeDiagram {
    let shape = TreeShape::new(depth);
    let branches = shape.num_branches();
    let nodes = (0..branches + shape.num_leaves())
        .map(|t| {
            if t < branches {
                DiagramNode {
                    lines: branch_lines(t),
                    children: Some((2 * t + 1, 2 * t + 2)),
                }
            } else {
                DiagramNode {
                    lines: leaf_lines(t - branches),
                    children: None,
                }
            }
        })
        .collect();
    TreeDiagram {
        title,
        left_label: "yes".to_string(),
        right_label: "no".to_string(),
        nodes,
    }
}

/// `x` with `decimals` decimals where that shows at least three significant digits and
/// stays short (|x| from 10^(2 - decimals) to below 10^7, or 0), else in exponent form
/// with `decimals` decimals: a threshold of 2.5e-7 printed as 0.000000, or one of 1e300 as
/// 301 digits, told the reader nothing.
pub fn number(x: f64, decimals: usize) -> String {
    let small = 10f64.powi(2 - decimals as i32);
    if x == 0.0 || !x.is_finite() || (x.abs() >= small && x.abs() < 1e7) {
        format!("{x:.decimals$}")
    } else {
        format!("{x:.decimals$e}")
    }
}

/// The name of feature `j`, or `x{j}` when the model has no name for it.
pub fn feature(names: &[String], j: usize) -> String {
    names.get(j).cloned().unwrap_or_else(|| format!("x{j}"))
}

/// (name, coefficient in user units, scaled coefficient) of the nonzero `a[., t]`.
pub fn nonzero_terms(
    a: &DMatrix<f64>,
    w: &DMatrix<f64>,
    t: usize,
    names: &[String],
) -> Vec<(String, f64, f64)> {
    (0..a.nrows())
        .filter(|&j| a[(j, t)].abs() > SPARSITY_TOLERANCE)
        .map(|j| (feature(names, j), w[(j, t)], a[(j, t)]))
        .collect()
}

#[cfg(test)]
mod number_tests {
    use super::number;

    #[test]
    fn numbers_keep_their_digits_at_every_scale() {
        assert_eq!(number(2.45, 6), "2.450000");
        assert_eq!(number(-1234.5, 4), "-1234.5000");
        assert_eq!(number(0.0, 6), "0.000000");
        assert_eq!(number(0.0001, 6), "0.000100");
        assert_eq!(number(2.5e-7, 6), "2.500000e-7");
        assert_eq!(number(1.55e300, 4), "1.5500e300");
        assert_eq!(number(0.005, 4), "5.0000e-3");
    }
}
