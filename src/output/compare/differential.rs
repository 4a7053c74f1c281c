//! The differential flame graph: head's stacks drawn in `record`'s style
//! ([`FlameGraphStyle`]), each frame red where it grew from base and blue
//! where it shrank (inferno's differential colors), base normalized to
//! head's total.

use std::io;

use rustc_hash::FxHashMap;

use crate::output::flamegraph::{FlameGraphStyle, FrameNote, SvgOptions, write_svg_with_note};

/// One side's folded stacks and where its project is, so that the same
/// code checked out in two directories draws as the same frames.
#[derive(Debug, Clone, Copy)]
pub struct FoldedSide<'text> {
    /// The folded stacks.
    pub folded: &'text str,
    /// The project root as it appears in frame names (`/ci/base`), if known.
    pub project_root: Option<&'text str>,
}

/// Renders head's stacks colored by their change from base, `note` added
/// to the tooltip of its frame (a benchmark's root). The output
/// depends only on the inputs.
pub fn differential_svg(
    base: FoldedSide<'_>,
    head: FoldedSide<'_>,
    title: &str,
    style: FlameGraphStyle,
    note: Option<&FrameNote>,
) -> io::Result<Vec<u8>> {
    let base_stacks = stacks(base.folded);
    let head_stacks = stacks(head.folded);
    // Counts as samples: one sample's weight is a side's smallest count
    // (1 for sample counts, the period for `record`'s cpu-clock). inferno
    // states a differential frame's change in percent of the total only
    // for counts it does not scale.
    let base_weight = base_stacks.values().copied().min().unwrap_or(1).max(1) as f64;
    let head_weight = head_stacks.values().copied().min().unwrap_or(1).max(1) as f64;
    let base_total: f64 = base_stacks.values().map(|count| *count as f64 / base_weight).sum();
    let head_total: f64 = head_stacks.values().map(|count| *count as f64 / head_weight).sum();
    let scale = if base_total == 0.0 { 0.0 } else { head_total / base_total };
    // Base's frames named as head's: its project root replaced by head's.
    let renamed = |stack: &str| -> String {
        match (base.project_root, head.project_root) {
            (Some(from), Some(to)) if from != to => stack.replace(from, to),
            _ => stack.to_string(),
        }
    };
    let mut merged: FxHashMap<String, (f64, u64)> = FxHashMap::default();
    for (stack, count) in &base_stacks {
        merged.entry(renamed(stack)).or_default().0 += *count as f64 / base_weight * scale;
    }
    for (stack, count) in &head_stacks {
        merged.entry((*stack).to_string()).or_default().1 += (*count as f64 / head_weight).round() as u64;
    }
    let mut lines: Vec<String> = merged
        .into_iter()
        .map(|(stack, (before, after))| format!("{stack} {} {after}", before.round() as u64))
        .collect();
    lines.sort_unstable();
    let samples = head_total.round() as u64;
    let options =
        SvgOptions { title: title.to_string(), event: None, samples, total_count: samples, style, differential: true };
    let mut svg = Vec::new();
    write_svg_with_note(lines.iter().map(String::as_str), &options, note, &mut svg)?;
    Ok(svg)
}

/// The stacks of folded text and their counts (bad lines left out: the
/// comparison has named them already).
fn stacks(folded: &str) -> FxHashMap<&str, u64> {
    let mut stacks: FxHashMap<&str, u64> = FxHashMap::default();
    for line in folded.lines() {
        if let Some((stack, count)) = line.trim_end().rsplit_once(' ')
            && let Ok(count) = count.parse::<u64>()
        {
            *stacks.entry(stack).or_default() += count;
        }
    }
    stacks
}
