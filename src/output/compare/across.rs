//! Several runs per side (`v8inline bench` writes them; docs/compare.md
//! states the model): the benchmark's change is judged with the run as the
//! unit ([`super::runs::judge_runs`]), and each function by the **own-time
//! rule**: its own CPU time per iteration, run by run, added to the
//! benchmark's base time, judged the same way against the run-to-run
//! spread, and the pooled samples' Poisson z against [`SHARE_Z`]. Where the
//! runs of a side disagree on how V8 ran a function ([`RunChoices`]), a
//! change that the runs which agree do not show is V8's choice, not the
//! code's.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::noise::{SHARE_Z, Statistic, Timing, Verdict};
use super::profile::{FunctionSamples, RanAs, SideProfile};
use super::runs::{
    RUNS_CONFIDENCE, RunPair, RunsChange, RunsVerdict, difference_half_width, judge_paired_ranks_at,
    judge_paired_runs_at, judge_runs_at, paired_difference_half_width,
};
use crate::model::frames::Function;

/// One benchmark (or the whole profile) in one run of a side.
#[derive(Debug, Clone)]
pub struct BenchmarkRun {
    /// Its profile (its windows' samples).
    pub profile: SideProfile,
    /// Its timing, with the profile's CPU time per iteration when known.
    pub timing: Option<Timing>,
    /// The round it ran in at the same time as the other side's run of
    /// that round (`bench --schedule duet`): judged as a pair with it.
    pub duet_round: Option<DuetRound>,
}

/// A duet round: both sides' runs of it ran at the same time on one
/// machine, so they pair up. Several `bench` outputs merged (say, one per
/// CI job) each number their rounds from 1: a round pairs only within its
/// output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DuetRound {
    /// Which merged output it is from (0 for the first, or the only one).
    pub output: u32,
    /// Its round there.
    pub round: u32,
}

/// The benchmark's time per iteration judged over runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunsTime {
    /// Which statistic each run gave ([`runs_time`] chooses).
    pub statistic: Statistic,
    /// Each base run's value, ns.
    pub base: Vec<f64>,
    /// Each head run's value, ns.
    pub head: Vec<f64>,
    /// The change judged.
    pub change: RunsChange,
    /// Where the statistic is the harness's fastest timing: the profile's
    /// CPU time per iteration judged beside it, which counts every
    /// iteration's cost ([`RunsTime::verdict`]).
    pub guard: Option<CpuGuard>,
}

/// The CPU time per iteration of each run, judged beside a run's fastest
/// timing: a cost that falls on some iterations only (extra work every few
/// calls, a collection, a deoptimization now and then) leaves the fastest
/// iteration as it was, not the CPU time of them all.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuGuard {
    /// Each base run's CPU time per iteration, ns.
    pub base: Vec<f64>,
    /// Each head run's.
    pub head: Vec<f64>,
    /// The change judged, at [`GUARDED_CONFIDENCE`].
    pub change: RunsChange,
}

/// The least number of timings every run of a benchmark must have for its
/// fastest timing to be the statistic: measured on the bench52 study
/// (docs/compare.md, "Which statistic"), the fastest of 10-15 iterations
/// spread 2-4 times as much as the CPU time per iteration between a duet's
/// runs, the fastest of 200-330 iterations 0.6 times as much.
pub const LEAST_TIMINGS_FOR_FASTEST: f64 = 50.0;

/// The least fastest timing that is the statistic, ns: below it the
/// fastest iteration is the harness's timer and its overhead (a 30 ns
/// benchmark's fastest timing was 30.0 ns in every run of both sides, at
/// any change), not the code.
pub const LEAST_FASTEST_NS: f64 = 1_000.0;

/// The confidence of each of two statistics judged together (a fastest
/// timing and its [`CpuGuard`]): each at [`RUNS_CONFIDENCE`]. Measured on
/// the bench52 study: 0 false alarms in 20 unchanged comparisons, and every
/// detection of the CPU time alone kept (deoptimizations now and then 3 of
/// 3, more allocation 1 of 3); at half the error each (Bonferroni, 97.5 %)
/// the guard lost detections (2 of 3, 0 of 3) and decided no more.
pub const GUARDED_CONFIDENCE: f64 = RUNS_CONFIDENCE;

impl RunsTime {
    /// The verdict over runs: the statistic's, or with a [`CpuGuard`],
    /// regressed when either is; within noise (or improved) when the
    /// statistic is and the CPU time shows no increase at all (its interval
    /// reaches down to no change); else undecided.
    pub fn verdict(&self) -> RunsVerdict {
        let Some(guard) = &self.guard else { return self.change.verdict };
        let no_increase = guard.change.interval.low <= 0.0;
        match (self.change.verdict, guard.change.verdict) {
            (RunsVerdict::Regressed, _) | (_, RunsVerdict::Regressed) => RunsVerdict::Regressed,
            (RunsVerdict::Unchanged, _) if no_increase => RunsVerdict::Unchanged,
            (RunsVerdict::Improved, _) if no_increase => RunsVerdict::Improved,
            _ => RunsVerdict::Undecided,
        }
    }

    /// Each run's CPU time per iteration (base, head), when every run has
    /// one: the statistic's values or the guard's.
    pub fn cpu_per_iteration(&self) -> Option<(&[f64], &[f64])> {
        match (&self.guard, self.statistic) {
            (Some(guard), _) => Some((&guard.base, &guard.head)),
            (None, Statistic::Cpu) => Some((&self.base, &self.head)),
            (None, _) => None,
        }
    }
}

/// The statistic every run of both sides gives, and each run's value,
/// judged: the harness's fastest timing (with the CPU time per iteration
/// as its [`CpuGuard`]) where every run has it (at least
/// [`LEAST_FASTEST_NS`]), its CPU time and at least
/// [`LEAST_TIMINGS_FOR_FASTEST`] timings; else the CPU time per iteration
/// where every run has it, else the harness's median, else its mean.
pub fn runs_time(base_runs: &[BenchmarkRun], head_runs: &[BenchmarkRun], threshold: f64) -> Option<RunsTime> {
    let timings = |runs: &[BenchmarkRun]| runs.iter().map(|run| run.timing).collect::<Option<Vec<Timing>>>();
    let (base_timings, head_timings) = (timings(base_runs)?, timings(head_runs)?);
    let every = |has: &dyn Fn(&Timing) -> bool| base_timings.iter().chain(&head_timings).all(has);
    let has_cpu = every(&|timing| timing.cpu_per_iteration.is_some_and(|cpu| cpu > 0.0));
    let has_fastest = every(&|timing| {
        timing.min.is_some_and(|min| min >= LEAST_FASTEST_NS) && timing.samples >= LEAST_TIMINGS_FOR_FASTEST
    });
    let statistic = if has_cpu && has_fastest {
        Statistic::Minimum
    } else if has_cpu {
        Statistic::Cpu
    } else if every(&|timing| timing.median.is_some_and(|median| median > 0.0)) {
        Statistic::Median
    } else {
        Statistic::Mean
    };
    let values = |statistic: Statistic, timings: &[Timing]| {
        timings.iter().map(|timing| statistic.of(*timing)).collect::<Vec<f64>>()
    };
    let (base, head) = (values(statistic, &base_timings), values(statistic, &head_timings));
    if statistic != Statistic::Minimum {
        let change = judge_benchmark_values(base_runs, &base, head_runs, &head, threshold, RUNS_CONFIDENCE);
        return Some(RunsTime { statistic, base, head, change, guard: None });
    }
    let change = judge_benchmark_values(base_runs, &base, head_runs, &head, threshold, GUARDED_CONFIDENCE);
    let (guard_base, guard_head) = (values(Statistic::Cpu, &base_timings), values(Statistic::Cpu, &head_timings));
    let guard_change = judge_values_at(base_runs, &guard_base, head_runs, &guard_head, threshold, GUARDED_CONFIDENCE);
    let guard = CpuGuard { base: guard_base, head: guard_head, change: guard_change };
    Some(RunsTime { statistic, base, head, change, guard: Some(guard) })
}

/// Judges each run's value (`base_values[i]` is `base[i]`'s): as pairs
/// ([`judge_paired_runs`]) when every run of both sides ran in a duet
/// beside one of the other side's, else side against side ([`judge_runs`]).
pub fn judge_values(
    base: &[BenchmarkRun],
    base_values: &[f64],
    head: &[BenchmarkRun],
    head_values: &[f64],
    threshold: f64,
) -> RunsChange {
    judge_values_at(base, base_values, head, head_values, threshold, RUNS_CONFIDENCE)
}

/// A benchmark's runs judged: duets as pairs by ranks from
/// [`LEAST_PAIRS_FOR_RANKS`] pairs on ([`judge_paired_ranks_at`]: measured
/// on the bench52 study, 11 of 60 unchanged benchmarks within noise against
/// 6 by the paired mean, with the same detections and no false alarm), the
/// paired mean below; other runs side against side ([`judge_values_at`]).
pub fn judge_benchmark_values(
    base: &[BenchmarkRun],
    base_values: &[f64],
    head: &[BenchmarkRun],
    head_values: &[f64],
    threshold: f64,
    confidence: f64,
) -> RunsChange {
    match duet_pairs(base, base_values, head, head_values) {
        Some(pairs) if pairs.len() >= LEAST_PAIRS_FOR_RANKS => judge_paired_ranks_at(&pairs, threshold, confidence),
        Some(pairs) => judge_paired_runs_at(&pairs, threshold, confidence),
        None => judge_runs_at(base_values, head_values, threshold, confidence),
    }
}

/// The fewest pairs whose Wilcoxon signed-rank interval exists at 95 %
/// (2⁻⁶ ≤ 2.5 % < 2⁻⁵).
pub const LEAST_PAIRS_FOR_RANKS: usize = 6;

/// [`judge_values`] at another confidence.
pub fn judge_values_at(
    base: &[BenchmarkRun],
    base_values: &[f64],
    head: &[BenchmarkRun],
    head_values: &[f64],
    threshold: f64,
    confidence: f64,
) -> RunsChange {
    match duet_pairs(base, base_values, head, head_values) {
        Some(pairs) => judge_paired_runs_at(&pairs, threshold, confidence),
        None => judge_runs_at(base_values, head_values, threshold, confidence),
    }
}

/// The runs' values as pairs, when the runs pair up one to one by duet
/// round (each round once on each side: a hand-edited runs.json that names
/// a round twice is judged side against side).
fn duet_pairs(
    base: &[BenchmarkRun],
    base_values: &[f64],
    head: &[BenchmarkRun],
    head_values: &[f64],
) -> Option<Vec<RunPair>> {
    if base.is_empty() || base.len() != head.len() || base.len() != base_values.len() || head.len() != head_values.len()
    {
        return None;
    }
    let rounds = |runs: &[BenchmarkRun]| -> Option<Vec<DuetRound>> {
        let mut rounds = runs.iter().map(|run| run.duet_round).collect::<Option<Vec<DuetRound>>>()?;
        rounds.sort_unstable();
        rounds.dedup();
        Some(rounds)
    };
    let base_rounds = rounds(base)?;
    if base_rounds.len() != base.len() || rounds(head)? != base_rounds {
        return None;
    }
    base.iter()
        .zip(base_values)
        .map(|(run, &base_value)| {
            let round = run.duet_round?;
            let beside = head.iter().position(|other| other.duet_round == Some(round))?;
            Some(RunPair { base: base_value, head: head_values[beside] })
        })
        .collect()
}

/// The geometric mean of the positive finite `values` (0 for none): the
/// center of a side whose change is judged on log times.
pub fn geometric_mean(values: &[f64]) -> f64 {
    let logs: Vec<f64> =
        values.iter().filter(|value| value.is_finite() && **value > 0.0).map(|value| value.ln()).collect();
    if logs.is_empty() { 0.0 } else { (logs.iter().sum::<f64>() / logs.len() as f64).exp() }
}

/// The median of `values` (0 for none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        length if length % 2 == 1 => sorted[length / 2],
        length => (sorted[length / 2 - 1] + sorted[length / 2]) / 2.0,
    }
}

/// The profiles of several runs as one: their weights summed.
pub fn merged<'run>(profiles: impl IntoIterator<Item = &'run SideProfile>) -> SideProfile {
    let mut functions: FxHashMap<Function, FunctionSamples> = FxHashMap::default();
    let (mut total_weight, mut sample_weight) = (0u64, u64::MAX);
    for profile in profiles {
        total_weight += profile.total_weight;
        sample_weight = sample_weight.min(profile.sample_weight.max(1));
        for (function, samples) in &profile.functions {
            let entry = functions.entry(function.clone()).or_default();
            entry.self_weight += samples.self_weight;
            entry.inclusive_weight += samples.inclusive_weight;
            for (ran_as, weight) in &samples.ran_as {
                *entry.ran_as.entry(ran_as.clone()).or_default() += weight;
            }
            if entry.script.is_none() {
                entry.script.clone_from(&samples.script);
            }
        }
    }
    SideProfile { functions, total_weight, sample_weight: if sample_weight == u64::MAX { 1 } else { sample_weight } }
}

/// `profile` with its functions renamed by `keys` (base's functions as
/// head names them: moved lines, or matched across a source map).
pub fn rekeyed(profile: &SideProfile, keys: &BTreeMap<Function, Function>) -> SideProfile {
    let mut renamed = SideProfile { functions: FxHashMap::default(), ..profile.clone() };
    for (function, samples) in &profile.functions {
        let key = keys.get(function).unwrap_or(function).clone();
        let entry = renamed.functions.entry(key).or_default();
        entry.self_weight += samples.self_weight;
        entry.inclusive_weight += samples.inclusive_weight;
        for (ran_as, weight) in &samples.ran_as {
            *entry.ran_as.entry(ran_as.clone()).or_default() += weight;
        }
        if entry.script.is_none() {
            entry.script.clone_from(&samples.script);
        }
    }
    renamed
}

/// How V8 ran a function in each run of the two sides: the way that held
/// most of its self time in each run where it had at least
/// [`RunChoices::LEAST_SAMPLES`] self samples.
#[derive(Debug, Clone, PartialEq)]
pub struct RunChoices {
    /// Each base run's way (`None`: too few samples to tell).
    pub base: Vec<Option<RanAs>>,
    /// Each head run's way.
    pub head: Vec<Option<RanAs>>,
}

impl RunChoices {
    /// Self samples a run needs before its way counts.
    pub const LEAST_SAMPLES: u64 = 20;

    fn of(function: &Function, runs: &[BenchmarkRun]) -> Vec<Option<RanAs>> {
        runs.iter()
            .map(|run| {
                let samples = run.profile.functions.get(function)?;
                if samples.self_weight < Self::LEAST_SAMPLES * run.profile.sample_weight.max(1) {
                    return None;
                }
                samples
                    .ran_as
                    .iter()
                    .max_by(|left, right| left.1.cmp(right.1).then(right.0.cmp(left.0)))
                    .map(|(ran_as, _)| ran_as.clone())
            })
            .collect()
    }

    /// Each way with how many runs of `side` it held, commonest first.
    fn counts(side: &[Option<RanAs>]) -> Vec<(&RanAs, usize)> {
        let mut counts: BTreeMap<&RanAs, usize> = BTreeMap::new();
        for ran_as in side.iter().flatten() {
            *counts.entry(ran_as).or_default() += 1;
        }
        let mut counts: Vec<(&RanAs, usize)> = counts.into_iter().collect();
        counts.sort_by(|left, right| right.1.cmp(&left.1).then(left.0.cmp(right.0)));
        counts
    }

    /// Whether the runs of either side ran it in more than one way.
    pub fn disagree(&self) -> bool {
        Self::counts(&self.base).len() > 1 || Self::counts(&self.head).len() > 1
    }

    /// `V8's runs disagree: base inlined into parse (TurboFan) in 3 of 5
    /// runs, TurboFan in 2; head TurboFan in 5 of 5`; `None` when they agree.
    pub fn describe(&self) -> Option<String> {
        if !self.disagree() {
            return None;
        }
        let side = |runs: &[Option<RanAs>]| {
            let counts = Self::counts(runs);
            if counts.is_empty() {
                return "too few samples to tell".to_string();
            }
            counts
                .iter()
                .enumerate()
                .map(|(index, (ran_as, count))| {
                    if index == 0 {
                        format!("{} in {count} of {} runs", ran_as.describe(), runs.len())
                    } else {
                        format!("{} in {count}", ran_as.describe())
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        Some(format!("V8's runs disagree: base {}; head {}", side(&self.base), side(&self.head)))
    }

    /// The ways of both sides' runs.
    fn shared_ways(&self) -> Vec<&RanAs> {
        let head: Vec<&RanAs> = self.head.iter().flatten().collect();
        let mut shared: Vec<&RanAs> = self.base.iter().flatten().filter(|ran_as| head.contains(ran_as)).collect();
        shared.sort();
        shared.dedup();
        shared
    }
}

/// A function judged over runs by the own-time rule.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionRuns {
    /// Its own CPU time per iteration in each base run, ns (or, without
    /// iterations, its self share of each run).
    pub base_own: Vec<f64>,
    /// The same at head.
    pub head_own: Vec<f64>,
    /// Whether the values are time per iteration (else shares).
    pub per_iteration: bool,
    /// The benchmark's base time per iteration (the median of its runs),
    /// or 1 for shares: what each run's own time is added to.
    pub base_total: f64,
    /// `base_total + own` judged over runs: the change the benchmark would
    /// show if this function alone had changed.
    pub change: RunsChange,
    /// The pooled samples' z (Poisson rate per iteration, or the
    /// two-proportion z of shares).
    pub z: f64,
    /// The run-to-run noise of its self share's change: the half-width of
    /// the 95 % interval of the difference of the sides' mean self shares
    /// over runs (as pairs for duets), in shares (0.01 is 1 pp); what the
    /// text table's noise column shows over runs.
    pub share_noise: f64,
    /// How V8 ran it in each run.
    pub choices: RunChoices,
    /// The change is V8's choice: the runs that ran it the same way on
    /// both sides do not show it.
    pub explained_by_choices: bool,
    /// The rule's verdict (before [`FunctionRuns::explained_by_choices`]).
    pub verdict: Verdict,
}

/// The own-time rule: `change` (the function's own time added to the
/// benchmark's base time, run by run, judged by
/// [`super::runs::judge_runs`] against `threshold`) regressed, and the
/// pooled samples agree (`z ≥ SHARE_Z`); improved likewise.
fn own_time_verdict(change: &RunsChange, z: f64) -> Verdict {
    match change.verdict {
        RunsVerdict::Regressed if z >= SHARE_Z => Verdict::Regressed,
        RunsVerdict::Improved if z <= -SHARE_Z => Verdict::Improved,
        _ => Verdict::Unchanged,
    }
}

/// One side's runs of a function: each run's own value, and the pooled
/// self samples and units (iterations, or samples for shares).
struct OwnValues {
    values: Vec<f64>,
    hits: f64,
    units: f64,
}

fn own_values(function: &Function, runs: &[BenchmarkRun], per_iteration: bool) -> OwnValues {
    let mut own = OwnValues { values: Vec::with_capacity(runs.len()), hits: 0.0, units: 0.0 };
    for run in runs {
        let self_weight = run.profile.functions.get(function).map_or(0, |samples| samples.self_weight);
        own.hits += self_weight as f64 / run.profile.sample_weight.max(1) as f64;
        if per_iteration {
            let iterations = run.timing.map_or(1.0, |timing| timing.samples.max(1.0));
            own.values.push(self_weight as f64 / iterations);
            own.units += iterations;
        } else {
            own.values.push(run.profile.share(self_weight));
            own.units += run.profile.samples();
        }
    }
    own
}

/// The pooled samples' z of head against base: a Poisson rate test of self
/// samples per iteration, or the pooled two-proportion z of shares.
fn pooled_z(base: &OwnValues, head: &OwnValues, per_iteration: bool) -> f64 {
    let (base_units, head_units) = (base.units.max(1.0), head.units.max(1.0));
    let (base_rate, head_rate) = (base.hits / base_units, head.hits / head_units);
    let variance = if per_iteration {
        base.hits / base_units.powi(2) + head.hits / head_units.powi(2)
    } else {
        let pooled = (base.hits + head.hits) / (base_units + head_units);
        pooled * (1.0 - pooled) * (1.0 / base_units + 1.0 / head_units)
    };
    if variance > 0.0 {
        (head_rate - base_rate) / variance.sqrt()
    } else if head_rate == base_rate {
        0.0
    } else {
        f64::INFINITY.copysign(head_rate - base_rate)
    }
}

/// Judges `function` (keyed as head names it; base's runs rekeyed) over
/// the runs by the own-time rule. `per_iteration`: every run has CPU time
/// per iteration, whose base median is `base_total`; else shares.
pub fn judge_function(
    function: &Function,
    base: &[BenchmarkRun],
    head: &[BenchmarkRun],
    per_iteration: bool,
    base_total: f64,
    threshold: f64,
) -> FunctionRuns {
    let base_own = own_values(function, base, per_iteration);
    let head_own = own_values(function, head, per_iteration);
    let counterfactual = |values: &[f64]| values.iter().map(|value| base_total + value).collect::<Vec<f64>>();
    let change =
        judge_values(base, &counterfactual(&base_own.values), head, &counterfactual(&head_own.values), threshold);
    let z = pooled_z(&base_own, &head_own, per_iteration);
    let (base_shares, head_shares) =
        (own_values(function, base, false).values, own_values(function, head, false).values);
    let share_noise = match duet_pairs(base, &base_shares, head, &head_shares) {
        Some(pairs) => paired_difference_half_width(&pairs),
        None => difference_half_width(&base_shares, &head_shares),
    };
    let verdict = own_time_verdict(&change, z);
    let choices = RunChoices { base: RunChoices::of(function, base), head: RunChoices::of(function, head) };
    // Where the runs disagree on how V8 ran it, the runs that ran it the
    // same way on both sides judge again: when any such group does not
    // show the change, V8's choice explains it.
    let explained_by_choices = verdict != Verdict::Unchanged
        && choices.disagree()
        && choices.shared_ways().iter().any(|way| {
            let pick = |runs: &[BenchmarkRun], ways: &[Option<RanAs>]| -> Vec<BenchmarkRun> {
                runs.iter()
                    .zip(ways)
                    .filter(|(_, ran_as)| ran_as.as_ref() == Some(*way))
                    .map(|(run, _)| run.clone())
                    .collect()
            };
            let (base_group, head_group) = (pick(base, &choices.base), pick(head, &choices.head));
            let (base_values, head_values) =
                (own_values(function, &base_group, per_iteration), own_values(function, &head_group, per_iteration));
            let change = judge_values(
                &base_group,
                &counterfactual(&base_values.values),
                &head_group,
                &counterfactual(&head_values.values),
                threshold,
            );
            own_time_verdict(&change, pooled_z(&base_values, &head_values, per_iteration)) != verdict
        });
    FunctionRuns {
        base_own: base_own.values,
        head_own: head_own.values,
        per_iteration,
        base_total,
        change,
        z,
        share_noise,
        choices,
        explained_by_choices,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::compare::profile::KeyOptions;
    use std::path::Path;

    /// A run: `f` with `f_samples` samples, inlined into `main` or not,
    /// the rest `main`'s; 100 iterations.
    fn run(f_samples: u64, inlined: bool) -> BenchmarkRun {
        let f = if inlined { "JS:*f /p/a.js:5:1_[i]" } else { "JS:*f /p/a.js:5:1" };
        let text =
            format!("node;JS:*main /p/a.js:1:1;{f} {f_samples}\nnode;JS:*main /p/a.js:1:1 {}\n", 1000 - f_samples);
        let options = KeyOptions { project_root: None, separate_native: false };
        let mut profile = SideProfile::from_folded(&text, Path::new("x"), &options).unwrap();
        profile.sample_weight = 1;
        let timing = Timing {
            mean: 10.0,
            stddev: 1.0,
            samples: 100.0,
            median: Some(10.0),
            min: None,
            cpu_per_iteration: Some(10.0),
        };
        BenchmarkRun { profile, timing: Some(timing), duet_round: None }
    }

    fn f() -> Function {
        Function {
            name: "f".into(),
            file: Some("/p/a.js".into()),
            start: Some(crate::model::frames::SourceLine { line: 5, column: Some(1) }),
        }
    }

    /// Three rounds whose machine slowed both sides alike (100, 200, 150
    /// base; head 10 % slower in each): as duets, judged as pairs, +10 %
    /// with a narrow interval; a round missing on one side, or interleaved
    /// runs, are judged side against side, where the 2× spread hides it.
    #[test]
    fn duet_runs_are_judged_as_pairs_by_their_round() {
        let runs = |rounds: &[Option<u32>]| -> Vec<BenchmarkRun> {
            rounds
                .iter()
                .map(|&round| BenchmarkRun {
                    duet_round: round.map(|round| DuetRound { output: 0, round }),
                    ..run(100, true)
                })
                .collect()
        };
        let (base_values, head_values) = ([100.0, 200.0, 150.0], [220.0, 165.0, 110.0]);
        // Head's runs listed in another order: paired by round, not place.
        let (base, head) = (runs(&[Some(1), Some(2), Some(3)]), runs(&[Some(2), Some(3), Some(1)]));
        let paired = judge_values(&base, &base_values, &head, &head_values, 0.05);
        assert!(paired.paired && (paired.change - 0.10).abs() < 1e-9, "{paired:?}");
        assert!(paired.interval.low > 0.099 && paired.interval.high < 0.101, "{paired:?}");
        assert_eq!(paired.verdict, RunsVerdict::Regressed);
        for (base, head) in [
            (runs(&[Some(1), Some(2), Some(3)]), runs(&[Some(2), Some(4), Some(1)])),
            (runs(&[Some(1), Some(2), Some(2)]), runs(&[Some(2), Some(1), Some(2)])),
            (runs(&[None, None, None]), runs(&[None, None, None])),
        ] {
            let unpaired = judge_values(&base, &base_values, &head, &head_values, 0.05);
            assert!(!unpaired.paired, "{unpaired:?}");
            assert_eq!(unpaired.verdict, RunsVerdict::Undecided, "{unpaired:?}");
        }
    }

    /// Two bench outputs merged, each numbering its rounds 1 and 2: a round
    /// pairs with its own output's other side only. Paired across outputs
    /// (round 1 of the first with round 1 of the second) the 2× spread
    /// between machines would come back.
    #[test]
    fn merged_outputs_pair_within_each_output() {
        let at =
            |output: u32, round: u32| BenchmarkRun { duet_round: Some(DuetRound { output, round }), ..run(100, true) };
        let base = [at(0, 1), at(0, 2), at(1, 1), at(1, 2)];
        // The second output's machine is twice as slow, and head lists its
        // rounds in another order.
        let head = [at(1, 2), at(0, 1), at(1, 1), at(0, 2)];
        let (base_values, head_values) = ([100.0, 120.0, 200.0, 240.0], [264.0, 110.0, 220.0, 132.0]);
        let paired = judge_values(&base, &base_values, &head, &head_values, 0.05);
        assert!(paired.paired && (paired.change - 0.10).abs() < 1e-9, "{paired:?}");
        assert_eq!(paired.verdict, RunsVerdict::Regressed, "{paired:?}");
    }

    /// f runs 100 samples inlined and 500 not inlined. Base inlined it in
    /// every run, head in 1 of 6: head's own time is higher, but the runs
    /// that ran it alike (inlined) do not show it: V8's choice. Half and
    /// half, the spread leaves it undecided, not a regression either.
    #[test]
    fn a_change_of_v8_s_choice_is_not_a_regression() {
        let base: Vec<BenchmarkRun> = (0..4).map(|index| run(100 + index, true)).collect();
        let head: Vec<BenchmarkRun> =
            std::iter::once(run(101, true)).chain((0..5).map(|index| run(500 + index, false))).collect();
        let judged = judge_function(&f(), &base, &head, true, 10.0, 0.05);
        assert_eq!(judged.verdict, Verdict::Regressed, "{judged:?}");
        assert!(judged.explained_by_choices);
        assert_eq!(
            judged.choices.describe().unwrap(),
            "V8's runs disagree: base inlined into main (TurboFan) in 4 of 4 runs; head TurboFan in 5 of 6 runs, \
             inlined into main (TurboFan) in 1"
        );
        let head = vec![run(101, true), run(300, false), run(102, true), run(301, false)];
        let judged = judge_function(&f(), &base, &head, true, 10.0, 0.05);
        assert_eq!((judged.verdict, judged.change.verdict), (Verdict::Unchanged, RunsVerdict::Undecided));
        // Slower in every head run, inlined alike: a regression.
        let head: Vec<BenchmarkRun> = (0..4).map(|index| run(300 + index, true)).collect();
        let judged = judge_function(&f(), &base, &head, true, 10.0, 0.05);
        assert_eq!((judged.verdict, judged.explained_by_choices), (Verdict::Regressed, false));
        assert_eq!(judged.choices.describe(), None);
    }
}
