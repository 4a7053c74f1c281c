//! Per-function and per-source-line statistics of a [`StackProfile`]: self
//! and inclusive weights and shares, split by kind of code. The JSON report,
//! the GitHub annotations, the markdown summary and `compare` are views of it.
//!
//! Self weight goes to the leaf frame of each stack (the innermost inlined
//! function when the leaf was inlined); inclusive weight to every function
//! (and line) on the stack, once per stack however often it recurs. Root
//! frames (process names) are not ranked.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::model::frames::{FrameKind, Function, FunctionId};
use crate::model::stack_profile::StackProfile;

/// Self and inclusive weights.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Weights {
    /// Weight of the samples with this as the leaf.
    pub self_weight: u64,
    /// Weight of the samples with this anywhere on the stack.
    pub inclusive_weight: u64,
}

/// What the weights count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightUnit {
    /// Samples.
    Samples,
    /// The counts of folded stacks (the sum of perf's periods, or samples).
    Count,
}

impl WeightUnit {
    /// `samples` or `count`.
    pub fn name(self) -> &'static str {
        match self {
            WeightUnit::Samples => "samples",
            WeightUnit::Count => "count",
        }
    }
}

/// Statistics of one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionStatistics {
    /// The function.
    pub function: Function,
    /// All weights.
    pub weights: Weights,
    /// Weights by the kind of code the function ran in.
    pub by_kind: BTreeMap<FrameKind, Weights>,
    /// The functions it was inlined into, heaviest first.
    pub inlined_into: Vec<InlinedInto>,
}

/// A function another one ran inlined into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedInto {
    /// The function whose code it ran in.
    pub host: Function,
    /// The inclusive weight of the samples where it ran inlined there.
    pub inclusive_weight: u64,
}

/// Statistics of one source line of a function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineStatistics {
    /// The function the line is in.
    pub function: Function,
    /// The script.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// All weights.
    pub weights: Weights,
    /// Weights by the kind of code the line ran in.
    pub by_kind: BTreeMap<FrameKind, Weights>,
}

/// The statistics of a whole profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What the weights count.
    pub unit: WeightUnit,
    /// The total weight: all samples (or counts).
    pub total: u64,
    /// The perf event, when known.
    pub event: Option<String>,
    /// Functions, by self weight (heaviest first), then inclusive weight,
    /// then name.
    pub functions: Vec<FunctionStatistics>,
    /// Source lines of JavaScript functions, ordered as `functions`.
    pub lines: Vec<LineStatistics>,
}

impl Report {
    /// The share of the total a weight is (0 when the profile is empty).
    pub fn share(&self, weight: u64) -> f64 {
        if self.total == 0 { 0.0 } else { weight as f64 / self.total as f64 }
    }

    /// Computes the statistics of `profile`, counting samples (or, for
    /// profiles read from folded text, counts) by `unit`.
    pub fn new(profile: &StackProfile, unit: WeightUnit) -> Report {
        let mut functions: FxHashMap<FunctionId, FunctionAccumulator> = FxHashMap::default();
        let mut lines: FxHashMap<LineKey, LineAccumulator> = FxHashMap::default();
        let mut seen_functions = FxHashSet::default();
        let mut seen_function_kinds = FxHashSet::default();
        let mut seen_hosts = FxHashSet::default();
        let mut seen_lines = FxHashSet::default();
        let mut seen_line_kinds = FxHashSet::default();
        let mut total = 0u64;
        for stack in &profile.stacks {
            let weight = match unit {
                WeightUnit::Samples => stack.samples,
                WeightUnit::Count => stack.count,
            };
            total = total.wrapping_add(weight);
            seen_functions.clear();
            seen_function_kinds.clear();
            seen_hosts.clear();
            seen_lines.clear();
            seen_line_kinds.clear();
            for (frame_index, &location_id) in stack.locations.iter().enumerate() {
                let location = profile.location(location_id);
                // The code object's own function: what inlined frames ran in.
                let host = location.frames.last().map(|frame| frame.function);
                for (depth, frame) in location.frames.iter().enumerate() {
                    if frame.kind == FrameKind::Root {
                        continue;
                    }
                    let is_leaf = frame_index == 0 && depth == 0;
                    let accumulator = functions.entry(frame.function).or_default();
                    if is_leaf {
                        accumulator.weights.self_weight += weight;
                        accumulator.by_kind.entry(frame.kind).or_default().self_weight += weight;
                    }
                    if seen_functions.insert(frame.function) {
                        accumulator.weights.inclusive_weight += weight;
                    }
                    if seen_function_kinds.insert((frame.function, frame.kind)) {
                        accumulator.by_kind.entry(frame.kind).or_default().inclusive_weight += weight;
                    }
                    if frame.kind == FrameKind::Inlined
                        && let Some(host) = host
                        && seen_hosts.insert((frame.function, host))
                    {
                        *accumulator.inlined_into.entry(host).or_default() += weight;
                    }
                    let (Some(line), Some(_)) = (frame.line, &profile.function(frame.function).file) else {
                        continue;
                    };
                    let key = LineKey { function: frame.function, line: line.line };
                    let line_accumulator = lines.entry(key).or_default();
                    if is_leaf {
                        line_accumulator.weights.self_weight += weight;
                        line_accumulator.by_kind.entry(frame.kind).or_default().self_weight += weight;
                    }
                    if seen_lines.insert(key) {
                        line_accumulator.weights.inclusive_weight += weight;
                    }
                    if seen_line_kinds.insert((key, frame.kind)) {
                        line_accumulator.by_kind.entry(frame.kind).or_default().inclusive_weight += weight;
                    }
                }
            }
        }
        let mut function_statistics: Vec<FunctionStatistics> = functions
            .into_iter()
            .map(|(id, accumulator)| {
                let mut inlined_into: Vec<InlinedInto> = accumulator
                    .inlined_into
                    .into_iter()
                    .map(|(host, weight)| InlinedInto {
                        host: profile.function(host).clone(),
                        inclusive_weight: weight,
                    })
                    .collect();
                inlined_into.sort_by(|left, right| {
                    right.inclusive_weight.cmp(&left.inclusive_weight).then_with(|| left.host.cmp(&right.host))
                });
                FunctionStatistics {
                    function: profile.function(id).clone(),
                    weights: accumulator.weights,
                    by_kind: accumulator.by_kind,
                    inlined_into,
                }
            })
            .collect();
        function_statistics.sort_by(|left, right| {
            heaviest_first(&left.weights, &right.weights).then_with(|| left.function.cmp(&right.function))
        });
        let mut line_statistics: Vec<LineStatistics> = lines
            .into_iter()
            .map(|(key, accumulator)| {
                let function = profile.function(key.function).clone();
                LineStatistics {
                    file: function.file.clone().unwrap_or_default(),
                    function,
                    line: key.line,
                    weights: accumulator.weights,
                    by_kind: accumulator.by_kind,
                }
            })
            .collect();
        line_statistics.sort_by(|left, right| {
            heaviest_first(&left.weights, &right.weights)
                .then_with(|| left.file.cmp(&right.file))
                .then_with(|| left.line.cmp(&right.line))
                .then_with(|| left.function.cmp(&right.function))
        });
        Report { unit, total, event: profile.event.clone(), functions: function_statistics, lines: line_statistics }
    }

    /// The functions by inclusive weight, heaviest first.
    pub fn functions_by_inclusive(&self) -> Vec<&FunctionStatistics> {
        let mut functions: Vec<&FunctionStatistics> = self.functions.iter().collect();
        functions.sort_by(|left, right| {
            right
                .weights
                .inclusive_weight
                .cmp(&left.weights.inclusive_weight)
                .then_with(|| right.weights.self_weight.cmp(&left.weights.self_weight))
                .then_with(|| left.function.cmp(&right.function))
        });
        functions
    }
}

/// Orders by self weight, then inclusive weight, both descending.
fn heaviest_first(left: &Weights, right: &Weights) -> std::cmp::Ordering {
    right.self_weight.cmp(&left.self_weight).then_with(|| right.inclusive_weight.cmp(&left.inclusive_weight))
}

/// A source line of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct LineKey {
    function: FunctionId,
    line: u32,
}

#[derive(Default)]
struct FunctionAccumulator {
    weights: Weights,
    by_kind: BTreeMap<FrameKind, Weights>,
    inlined_into: FxHashMap<FunctionId, u64>,
}

#[derive(Default)]
struct LineAccumulator {
    weights: Weights,
    by_kind: BTreeMap<FrameKind, Weights>,
}

/// Formats a share as a percentage with one decimal: `12.3%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_goes_to_the_leaf_and_inclusive_counts_once_per_stack() {
        let text = "node;run;JS:*kernel /a.js:3:1_[j];JS:*square /a.js:1:1_[i] 6\n\
                    node;run;JS:*kernel /a.js:3:1_[j];JS:*kernel /a.js:3:1_[j] 3\n\
                    node;run 1\n";
        let (profile, _) = StackProfile::from_folded(text);
        let report = Report::new(&profile, WeightUnit::Count);
        assert_eq!(report.total, 10);
        let summary: Vec<(String, u64, u64)> = report
            .functions
            .iter()
            .map(|statistics| {
                (statistics.function.name.clone(), statistics.weights.self_weight, statistics.weights.inclusive_weight)
            })
            .collect();
        assert_eq!(
            summary,
            vec![("square".to_string(), 6, 6), ("kernel".to_string(), 3, 9), ("run".to_string(), 1, 10)]
        );
        let square = &report.functions[0];
        assert_eq!(square.by_kind[&FrameKind::Inlined], Weights { self_weight: 6, inclusive_weight: 6 });
        assert_eq!(
            square.inlined_into,
            vec![InlinedInto { host: report.functions[1].function.clone(), inclusive_weight: 6 }]
        );
        assert_eq!(report.share(report.functions[1].weights.inclusive_weight), 0.9);
    }
}
