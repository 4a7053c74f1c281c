//! The differential flame graph: head's stacks drawn in `record`'s style
//! ([`FlameGraphStyle`]), each frame red where it grew from base and blue
//! where it shrank (inferno's differential colors), base normalized to
//! head's total.

use std::io;

use rustc_hash::FxHashMap;

use crate::output::flamegraph::{FlameGraphStyle, SvgOptions, write_svg};

/// One side's folded stacks and where its project is, so that the same
/// code checked out in two directories draws as the same frames.
#[derive(Debug, Clone, Copy)]
pub struct FoldedSide<'text> {
    /// The folded stacks.
    pub folded: &'text str,
    /// The project root as it appears in frame names (`/ci/base`), if known.
    pub project_root: Option<&'text str>,
}

/// Renders head's stacks colored by their change from base. The output
/// depends only on the inputs.
pub fn differential_svg(
    base: FoldedSide<'_>,
    head: FoldedSide<'_>,
    title: &str,
    style: FlameGraphStyle,
) -> io::Result<Vec<u8>> {
    let base_stacks = stacks(base.folded);
    let head_stacks = stacks(head.folded);
    let base_total: u64 = base_stacks.values().sum();
    let head_total: u64 = head_stacks.values().sum();
    let scale = if base_total == 0 { 0.0 } else { head_total as f64 / base_total as f64 };
    // Base's frames named as head's: its project root replaced by head's.
    let renamed = |stack: &str| -> String {
        match (base.project_root, head.project_root) {
            (Some(from), Some(to)) if from != to => stack.replace(from, to),
            _ => stack.to_string(),
        }
    };
    let mut merged: FxHashMap<String, (u64, u64)> = FxHashMap::default();
    for (stack, count) in &base_stacks {
        merged.entry(renamed(stack)).or_default().0 += (*count as f64 * scale).round() as u64;
    }
    for (stack, count) in &head_stacks {
        merged.entry((*stack).to_string()).or_default().1 += count;
    }
    let mut lines: Vec<String> =
        merged.into_iter().map(|(stack, (before, after))| format!("{stack} {before} {after}")).collect();
    lines.sort_unstable();
    // One sample's weight is the smallest count: counts of 1 are samples,
    // larger ones `record`'s cpu-clock periods (the subtitle states them).
    let smallest = head_stacks.values().copied().min().unwrap_or(1).max(1);
    let options = SvgOptions {
        title: title.to_string(),
        event: (smallest > 1).then(|| "cpu-clock".to_string()),
        samples: head_total / smallest,
        total_count: head_total,
        style,
    };
    let mut svg = Vec::new();
    write_svg(lines.iter().map(String::as_str), &options, &mut svg)?;
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
