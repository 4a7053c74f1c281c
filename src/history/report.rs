//! `history report`'s model: per benchmark its trend over commits and its
//! change points, each with its change, the functions whose own time moved
//! most there, and where V8 ran them otherwise from that commit on.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::change_points::{ChangePointOptions, e_divisive, student_t_interval};
use super::{Figure, FunctionEntry, FunctionKey, HistoryEntry, RanAsEntry};
use crate::output::compare::runs::RUNS_CONFIDENCE;

/// The schema the report names.
pub const REPORT_SCHEMA: &str = "v8inline-history-report/2";

/// Functions named per change point at most.
pub const FUNCTIONS_PER_CHANGE: usize = 3;

/// The least share of a function's self time that one way of running it
/// (tier and inlining) must hold, at the commit before and at the change
/// point, for a change of V8's choice to be reported.
pub const CLEAR_CHOICE: f64 = 2.0 / 3.0;

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryReport {
    /// [`REPORT_SCHEMA`].
    pub schema: String,
    /// How change points were found.
    pub method: Method,
    /// The commits, oldest first (the history's order).
    pub commits: Vec<CommitSummary>,
    /// Each benchmark's trend, in the order they first appear.
    pub benchmarks: Vec<BenchmarkTrend>,
    /// Every change point, by benchmark then commit.
    pub change_points: Vec<ReportedChange>,
}

/// The change point method and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Method {
    /// `E-divisive means`.
    pub name: String,
    /// Where it is described.
    pub source: String,
    /// The t test's significance.
    pub significance: f64,
    /// Commits per window of the split step.
    pub window: usize,
    /// The fewest commits on each side of a change.
    pub least_segment: usize,
}

/// A commit of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitSummary {
    /// The commit.
    pub commit: String,
    /// Its date.
    pub date: String,
    /// Its runtime.
    pub runtime: Option<String>,
    /// V8's version.
    pub v8: Option<String>,
    /// Its runs.
    pub runs: usize,
}

/// A benchmark over the commits that have it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkTrend {
    /// Its name.
    pub name: String,
    /// The statistic of its trend and change points: `cpu`,
    /// `samples_per_iteration`, `median` or `mean` (the first every commit
    /// has).
    pub statistic: TrendStatistic,
    /// One point per commit that has it.
    pub points: Vec<CommitPoint>,
}

/// A commit's value of a benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitPoint {
    /// The commit.
    pub commit: String,
    /// The geometric mean over its runs (ns, or samples for
    /// `samples_per_iteration`).
    pub value: f64,
    /// The 95 % interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

/// A change point of a benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedChange {
    /// The benchmark.
    pub benchmark: String,
    /// The first commit after the change.
    pub commit: String,
    /// The commit before it.
    pub previous_commit: String,
    /// The statistic.
    pub statistic: TrendStatistic,
    /// The segment before: the geometric mean of its runs' values.
    pub before: f64,
    /// The segment after (to the next change point).
    pub after: f64,
    /// The relative change and its 95 % interval, commits as the unit.
    pub change: RelativeChange,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// The functions whose own time per iteration moved most, in the
    /// change's direction.
    pub functions: Vec<MovedFunction>,
    /// Where V8 ran a function named above otherwise from this commit on.
    pub v8: Vec<V8Change>,
}

/// A relative change with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelativeChange {
    /// `after / before - 1`.
    pub relative: f64,
    /// The 95 % interval's low end (Student t, pooled variance, on the
    /// commits' logarithms: the change point's test).
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

/// A function's own time at a change point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MovedFunction {
    /// `name file:line`.
    pub function: String,
    /// Its self time per iteration before (the median over the segment's
    /// commits; 0 at a commit where it was not among the kept functions), ns.
    pub before: f64,
    /// After, ns.
    pub after: f64,
    /// `after - before`, ns.
    pub change: f64,
    /// Its share of the benchmark's change (`change` over the change of the
    /// benchmark's value), when the statistic is a time.
    pub share_of_change: Option<f64>,
}

/// V8's choice for a function, at the commit before and at the change point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct V8Change {
    /// `name file:line`.
    pub function: String,
    /// How most of its self time ran before: `inlined into X (TurboFan)`.
    pub before: String,
    /// And at the change point.
    pub after: String,
    /// `stopped being inlined into X`, `fell from TurboFan to Maglev`, ...
    pub description: String,
}

/// Which figure of its runs a benchmark's trend follows: the CPU time per
/// iteration where the profiles are kept, which counts every iteration.
/// Not the fastest timing that compare may judge a pull request by: it
/// hides a cost on some iterations only, which compare's CPU guard catches
/// (docs/compare.md, "Which statistic"), and in a history the CPU time is
/// both at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrendStatistic {
    /// The profile's CPU time per iteration.
    Cpu,
    /// Samples per iteration (no profiles kept: their count alone).
    SamplesPerIteration,
    /// The harness's median time per iteration.
    Median,
    /// Its mean.
    Mean,
}

impl TrendStatistic {
    /// In order of preference: the first every commit has.
    const PREFERRED: [TrendStatistic; 4] =
        [TrendStatistic::Cpu, TrendStatistic::SamplesPerIteration, TrendStatistic::Median, TrendStatistic::Mean];

    /// Its figure in a commit's entry.
    pub fn of(self, entry: &super::BenchmarkEntry) -> Option<&Figure> {
        let figures = &entry.figures;
        match self {
            TrendStatistic::Cpu => figures.cpu.as_ref(),
            TrendStatistic::SamplesPerIteration => figures.samples_per_iteration.as_ref(),
            TrendStatistic::Median => figures.median.as_ref(),
            TrendStatistic::Mean => figures.mean.as_ref(),
        }
    }

    /// Whether its values are times (ns), not sample counts.
    pub fn is_time(self) -> bool {
        self != TrendStatistic::SamplesPerIteration
    }

    /// `fastest time per iteration`, as a chart's axis names it.
    pub fn title(self) -> &'static str {
        match self {
            TrendStatistic::Cpu => "CPU time per iteration",
            TrendStatistic::SamplesPerIteration => "samples per iteration",
            TrendStatistic::Median => "median time per iteration",
            TrendStatistic::Mean => "mean time per iteration",
        }
    }
}

/// A benchmark's commits: the index in the history and its entry.
fn benchmark_commits<'history>(
    history: &'history [HistoryEntry],
    name: &str,
) -> Vec<(usize, &'history super::BenchmarkEntry)> {
    history
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| Some((index, entry.benchmarks.iter().find(|benchmark| benchmark.name == name)?)))
        .collect()
}

/// Each benchmark's name, in the order they first appear.
pub fn benchmark_names(history: &[HistoryEntry]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for entry in history {
        for benchmark in &entry.benchmarks {
            if !names.contains(&benchmark.name) {
                names.push(benchmark.name.clone());
            }
        }
    }
    names
}

/// The report of a history.
pub fn build_report(history: &[HistoryEntry], options: &ChangePointOptions) -> HistoryReport {
    let mut benchmarks = Vec::new();
    let mut change_points = Vec::new();
    for name in benchmark_names(history) {
        let commits = benchmark_commits(history, &name);
        let Some(statistic) = TrendStatistic::PREFERRED
            .into_iter()
            .find(|statistic| commits.iter().all(|(_, entry)| statistic.of(entry).is_some()))
        else {
            continue;
        };
        let figures: Vec<&Figure> =
            commits.iter().map(|(_, entry)| statistic.of(entry).expect("every commit has it")).collect();
        let points = commits
            .iter()
            .zip(&figures)
            .map(|((index, _), figure)| CommitPoint {
                commit: history[*index].commit.clone(),
                value: figure.value,
                low: figure.low,
                high: figure.high,
            })
            .collect();
        // Every run's value, by commit: a commit of three runs weighs three.
        let runs: Vec<Vec<f64>> = figures
            .iter()
            .map(|figure| {
                figure.runs.iter().filter(|value| value.is_finite() && **value > 0.0).map(|value| value.ln()).collect()
            })
            .collect();
        let found = e_divisive(&runs, options);
        let mut bounds: Vec<usize> = vec![0];
        bounds.extend(found.iter().map(|point| point.index));
        bounds.push(runs.len());
        for (number, point) in found.iter().enumerate() {
            let (start, end) = (bounds[number], bounds[number + 2]);
            // The change and its interval over the commits of each segment
            // (a commit's runs share its moment: not independent values).
            let values = |range: std::ops::Range<usize>| range.map(|index| figures[index].value).collect::<Vec<f64>>();
            let (before_values, after_values) = (values(start..point.index), values(point.index..end));
            // The interval of the change point's test: over the commits'
            // means of their runs' logarithms.
            let means = |range: std::ops::Range<usize>| -> Vec<f64> {
                runs[range]
                    .iter()
                    .filter(|logs| !logs.is_empty())
                    .map(|logs| logs.iter().sum::<f64>() / logs.len() as f64)
                    .collect()
            };
            // A change the t test found has at least 3 commits: an interval.
            let Some(interval) =
                student_t_interval(&means(start..point.index), &means(point.index..end), RUNS_CONFIDENCE)
            else {
                continue;
            };
            let geometric =
                |values: &[f64]| (values.iter().map(|value| value.ln()).sum::<f64>() / values.len() as f64).exp();
            let (before, after) = (geometric(&before_values), geometric(&after_values));
            let segment = |range: std::ops::Range<usize>| range.map(|index| commits[index].1).collect::<Vec<_>>();
            let (before_entries, after_entries) = (segment(start..point.index), segment(point.index..end));
            let time = statistic.is_time();
            let functions = moved_functions(
                &before_entries,
                &after_entries,
                (after - before).signum(),
                time.then_some(after - before),
            );
            let v8 = v8_changes(&before_entries, &after_entries, &functions);
            change_points.push(ReportedChange {
                benchmark: name.clone(),
                commit: history[commits[point.index].0].commit.clone(),
                previous_commit: history[commits[point.index - 1].0].commit.clone(),
                statistic,
                before: super::round(before),
                after: super::round(after),
                change: RelativeChange {
                    relative: super::round(interval.difference.exp_m1()),
                    low: super::round(interval.low.exp_m1()),
                    high: super::round(interval.high.exp_m1()),
                },
                p_value: super::round(point.p_value),
                functions: functions.into_iter().map(|(_, change)| change).collect(),
                v8,
            });
        }
        benchmarks.push(BenchmarkTrend { name, statistic, points });
    }
    HistoryReport {
        schema: REPORT_SCHEMA.to_string(),
        method: Method {
            name: "E-divisive means with a t test (Otava)".to_string(),
            source: "Matteson & James, JASA 109(505), 2014; Fleming et al., ICPE 2023; docs/history.md".to_string(),
            significance: options.significance,
            window: options.window,
            least_segment: options.least_segment,
        },
        commits: history
            .iter()
            .map(|entry| CommitSummary {
                commit: entry.commit.clone(),
                date: entry.date.clone(),
                runtime: entry.runtime.clone(),
                v8: entry.v8.clone(),
                runs: entry.runs,
            })
            .collect(),
        benchmarks,
        change_points,
    }
}

/// A function's self time per iteration at each of `entries` (0 where it
/// is not among the kept functions), or `None` when no entry timed it.
pub fn self_times(entries: &[&super::BenchmarkEntry], key: &FunctionKey) -> Vec<f64> {
    entries
        .iter()
        .map(|entry| {
            entry
                .functions
                .iter()
                .find(|function| function.key() == *key)
                .and_then(|function| function.self_per_iteration)
                .unwrap_or(0.0)
        })
        .collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    super::median(&mut values)
}

/// The functions whose median self time per iteration moved most from
/// `before` to `after` in `direction` (+1 slower, -1 faster): at most
/// [`FUNCTIONS_PER_CHANGE`], each moved in that direction.
fn moved_functions(
    before: &[&super::BenchmarkEntry],
    after: &[&super::BenchmarkEntry],
    direction: f64,
    benchmark_change: Option<f64>,
) -> Vec<(FunctionKey, MovedFunction)> {
    let mut labels: BTreeMap<FunctionKey, String> = BTreeMap::new();
    for entry in before.iter().chain(after) {
        for function in entry.functions.iter().filter(|function| function.self_per_iteration.is_some()) {
            labels.entry(function.key()).or_insert_with(|| function.label());
        }
    }
    let mut moved: Vec<(FunctionKey, MovedFunction)> = labels
        .into_iter()
        .map(|(key, label)| {
            let (was, is) = (median(self_times(before, &key)), median(self_times(after, &key)));
            let change = MovedFunction {
                function: label,
                before: super::round(was),
                after: super::round(is),
                change: super::round(is - was),
                share_of_change: benchmark_change
                    .filter(|total| *total != 0.0)
                    .map(|total| super::round((is - was) / total)),
            };
            (key, change)
        })
        .filter(|(_, change)| change.change * direction > 0.0)
        .collect();
    moved.sort_by(|left, right| {
        (right.1.change * direction).total_cmp(&(left.1.change * direction)).then_with(|| left.0.cmp(&right.0))
    });
    moved.truncate(FUNCTIONS_PER_CHANGE);
    moved
}

/// The way V8 ran most of a function's self time at an entry.
fn main_ran_as<'entry>(entry: &'entry super::BenchmarkEntry, key: &FunctionKey) -> Option<&'entry RanAsEntry> {
    entry.functions.iter().find(|function| function.key() == *key).and_then(FunctionEntry::main_ran_as)
}

/// How far a tier optimizes: TurboFan above Maglev above Sparkplug above
/// the interpreter.
fn tier_rank(tier: &str) -> u8 {
    match tier {
        "TurboFan" => 4,
        "Maglev" => 3,
        "Sparkplug" => 2,
        "interpreted" => 1,
        _ => 0,
    }
}

/// `stopped being inlined into X`, `fell from TurboFan to Maglev`, ...
pub fn describe_change(before: &RanAsEntry, after: &RanAsEntry) -> String {
    let mut parts = Vec::new();
    match (&before.inlined_into, &after.inlined_into) {
        (Some(was), None) => parts.push(format!("stopped being inlined into {was}")),
        (None, Some(is)) => parts.push(format!("became inlined into {is}")),
        (Some(was), Some(is)) if was != is => parts.push(format!("inlined into {is} instead of {was}")),
        _ => {}
    }
    let (was, is) = (tier_rank(&before.tier), tier_rank(&after.tier));
    if before.tier != after.tier {
        let verb = if is < was { "fell" } else { "rose" };
        parts.push(format!("{verb} from {} to {}", before.tier, after.tier));
    }
    parts.join(", ")
}

/// V8's choices that differ between the last commit before the change and
/// the change point's commit, for the named functions: the way that ran
/// most of a function's self time at each, each holding at least
/// [`CLEAR_CHOICE`] of it.
fn v8_changes(
    before: &[&super::BenchmarkEntry],
    after: &[&super::BenchmarkEntry],
    functions: &[(FunctionKey, MovedFunction)],
) -> Vec<V8Change> {
    let (Some(last), Some(first)) = (before.last(), after.first()) else { return Vec::new() };
    let mut seen = BTreeSet::new();
    functions
        .iter()
        .filter(|(key, _)| seen.insert(key.clone()))
        .filter_map(|(key, change)| {
            let (was, is) = (main_ran_as(last, key)?, main_ran_as(first, key)?);
            // A choice V8 made for most of the runs, not a tie between tiers
            // (a function still warming up in one run of three).
            if was.share < CLEAR_CHOICE || is.share < CLEAR_CHOICE {
                return None;
            }
            let description = describe_change(was, is);
            (!description.is_empty()).then(|| V8Change {
                function: change.function.clone(),
                before: was.describe(),
                after: is.describe(),
                description,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(tier: &str, inlined_into: Option<&str>) -> RanAsEntry {
        RanAsEntry { inlined_into: inlined_into.map(str::to_string), share: 1.0, tier: tier.to_string() }
    }

    #[test]
    fn v8_choices_are_described() {
        let inlined = ran("TurboFan", Some("walk"));
        assert_eq!(describe_change(&inlined, &ran("TurboFan", None)), "stopped being inlined into walk");
        assert_eq!(
            describe_change(&inlined, &ran("Maglev", None)),
            "stopped being inlined into walk, fell from TurboFan to Maglev"
        );
        assert_eq!(
            describe_change(&ran("Maglev", None), &inlined),
            "became inlined into walk, rose from Maglev to TurboFan"
        );
        assert_eq!(describe_change(&inlined, &inlined), "");
    }
}
