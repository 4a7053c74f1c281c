//! `v8inline compare BASE HEAD`: two recordings (or profiles) compared
//! benchmark by benchmark, time per iteration first, then the functions
//! whose own (self) share of the samples moved beyond noise, with how V8
//! ran them on each side.
//!
//! - [`profile`]: one side's functions from folded stacks or a JSON report;
//! - [`noise`]: when a change is beyond noise within one run;
//! - [`runs`]: a benchmark's change over several runs per side;
//! - [`across`]: functions over several runs (the own-time rule, V8's
//!   choices);
//! - [`render`]: text, markdown (a PR comment) and GitHub annotations;
//! - [`differential`]: the differential flame graph.

pub mod across;
pub mod differential;
pub mod noise;
pub mod profile;
pub mod render;
pub mod runs;

use std::collections::BTreeMap;

use crate::model::frames::{FrameKind, Function};

use across::{BenchmarkRun, FunctionRuns, RunsTime};
use noise::{ShareChange, TimeChange, Timing, Verdict, judge_own_time, judge_share, judge_time};
use profile::{FunctionSamples, RanAs, SideProfile};
use runs::RunsVerdict;

pub use profile::{CompareError, KeyOptions, is_json_report};

/// One function's change between two profiles.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionChange {
    /// The function as compared (script relative to its project root).
    pub function: Function,
    /// Its samples at base (empty if absent).
    pub base: FunctionSamples,
    /// Its samples at head (empty if absent).
    pub head: FunctionSamples,
    /// Its self share at base, 0 to 1.
    pub base_self_share: f64,
    /// Its self share at head.
    pub head_self_share: f64,
    /// Its inclusive share at base.
    pub base_inclusive_share: f64,
    /// Its inclusive share at head.
    pub head_inclusive_share: f64,
    /// The self-share change, judged (over several runs per side, its
    /// verdict is the own-time rule's: [`FunctionChange::across_runs`]).
    pub self_change: ShareChange,
    /// Over several runs per side: the function judged by the own-time
    /// rule, and how V8 ran it in each run.
    pub across_runs: Option<FunctionRuns>,
}

impl FunctionChange {
    /// Head minus base inclusive share.
    pub fn inclusive_change(&self) -> f64 {
        self.head_inclusive_share - self.base_inclusive_share
    }

    /// Whether it is JavaScript (it has a script).
    pub fn is_javascript(&self) -> bool {
        self.function.file.is_some()
    }

    /// Its script as recorded (absolute), head's when it ran there.
    pub fn script(&self) -> Option<&str> {
        self.head.script.as_deref().or(self.base.script.as_deref())
    }

    /// Whether its self share moved beyond noise.
    pub fn beyond_noise(&self) -> bool {
        self.self_change.verdict != Verdict::Unchanged
    }

    /// The callers it ran inlined into at head (else at base), heaviest
    /// first.
    pub fn inlined_into(&self) -> Vec<&str> {
        let side = if self.head.self_weight > 0 { &self.head } else { &self.base };
        let mut callers: BTreeMap<&str, u64> = BTreeMap::new();
        for (ran_as, weight) in &side.ran_as {
            if let Some(caller) = &ran_as.inlined_into {
                *callers.entry(caller).or_default() += weight;
            }
        }
        let mut callers: Vec<(&str, u64)> = callers.into_iter().collect();
        callers.sort_by(|left, right| right.1.cmp(&left.1).then(left.0.cmp(right.0)));
        callers.into_iter().map(|(caller, _)| caller).collect()
    }

    /// How V8 ran it, when that changed between base and head: e.g. `V8
    /// no longer inlined it: base 97% inlined into versionKey (TurboFan);
    /// head 88% TurboFan, 9% interpreted`. `None` when the mix is alike or
    /// either side has too few self samples to tell.
    pub fn ran_as_change(&self, base_sample_weight: u64, head_sample_weight: u64) -> Option<String> {
        const LEAST_SAMPLES: u64 = 20;
        const LEAST_DISTANCE: f64 = 0.25;
        if self.base.self_weight < LEAST_SAMPLES * base_sample_weight.max(1)
            || self.head.self_weight < LEAST_SAMPLES * head_sample_weight.max(1)
        {
            return None;
        }
        let base = fractions(&self.base);
        let head = fractions(&self.head);
        let keys: std::collections::BTreeSet<&RanAs> = base.keys().chain(head.keys()).copied().collect();
        let distance: f64 =
            keys.iter().map(|key| (base.get(*key).unwrap_or(&0.0) - head.get(*key).unwrap_or(&0.0)).abs()).sum::<f64>()
                / 2.0;
        if distance < LEAST_DISTANCE {
            return None;
        }
        let inlined = |mix: &BTreeMap<&RanAs, f64>| {
            mix.iter().filter(|(ran_as, _)| ran_as.inlined_into.is_some()).map(|(_, share)| share).sum::<f64>()
        };
        let unoptimized = |mix: &BTreeMap<&RanAs, f64>| {
            mix.iter()
                .filter(|(ran_as, _)| {
                    ran_as.inlined_into.is_none()
                        && matches!(ran_as.tier, FrameKind::Interpreted | FrameKind::Sparkplug)
                })
                .map(|(_, share)| share)
                .sum::<f64>()
        };
        let headline = if inlined(&base) >= 0.5 && inlined(&head) < 0.5 {
            "V8 no longer inlined it"
        } else if inlined(&base) < 0.5 && inlined(&head) >= 0.5 {
            "V8 now inlined it"
        } else if unoptimized(&head) >= 0.5 && unoptimized(&base) < 0.5 {
            "V8 left it unoptimized (interpreter or Sparkplug)"
        } else if unoptimized(&base) >= 0.5 && unoptimized(&head) < 0.5 {
            "V8 now optimized it"
        } else {
            "V8 ran it differently"
        };
        Some(format!("{headline}: base {}; head {}", mix_text(&base), mix_text(&head)))
    }
}

/// Each way's fraction of a function's self weight.
fn fractions(samples: &FunctionSamples) -> BTreeMap<&RanAs, f64> {
    let total = samples.ran_as.values().sum::<u64>().max(1) as f64;
    samples.ran_as.iter().map(|(ran_as, weight)| (ran_as, *weight as f64 / total)).collect()
}

/// `97% inlined into versionKey (TurboFan), 3% TurboFan`: the ways of
/// at least 2 %, heaviest first.
fn mix_text(mix: &BTreeMap<&RanAs, f64>) -> String {
    let mut ways: Vec<(&&RanAs, &f64)> = mix.iter().filter(|(_, share)| **share >= 0.02).collect();
    ways.sort_by(|left, right| right.1.total_cmp(left.1).then(left.0.cmp(right.0)));
    ways.iter()
        .map(|(ran_as, share)| format!("{:.0}% {}", *share * 100.0, ran_as.describe()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Two profiles compared function by function.
#[derive(Debug, Clone)]
pub struct ProfileComparison {
    /// Every function of either side: those beyond noise first (growth
    /// before shrinkage, JavaScript before native), then by self change.
    pub changes: Vec<FunctionChange>,
    /// Samples at base.
    pub base_samples: f64,
    /// Samples at head.
    pub head_samples: f64,
    /// One sample's weight at base.
    pub base_sample_weight: u64,
    /// One sample's weight at head.
    pub head_sample_weight: u64,
    /// How base's functions were matched to head's beyond their keys.
    pub matching: FunctionMatching,
}

impl ProfileComparison {
    /// Whether a JavaScript function's self share grew beyond noise.
    pub fn regressed(&self) -> bool {
        self.regressions().next().is_some()
    }

    /// The JavaScript functions whose self share grew beyond noise.
    pub fn regressions(&self) -> impl Iterator<Item = &FunctionChange> {
        self.changes.iter().filter(|change| change.is_javascript() && change.self_change.verdict == Verdict::Regressed)
    }

    /// The functions whose self share moved beyond noise: those that
    /// explain a change.
    pub fn explaining(&self) -> impl Iterator<Item = &FunctionChange> {
        self.changes.iter().filter(|change| change.beyond_noise())
    }

    /// The line saying how V8 ran `change` differently, if it did.
    pub fn ran_as_change(&self, change: &FunctionChange) -> Option<String> {
        change.ran_as_change(self.base_sample_weight, self.head_sample_weight)
    }
}

/// Compares two profiles function by function.
pub fn compare_profiles(base: &SideProfile, head: &SideProfile) -> ProfileComparison {
    let matching = match_functions(base, head);
    let mut merged: BTreeMap<&Function, (FunctionSamples, FunctionSamples)> = BTreeMap::new();
    for (function, samples) in &base.functions {
        let function = matching.keys.get(function).unwrap_or(function);
        merged.entry(function).or_default().0 = samples.clone();
    }
    for (function, samples) in &head.functions {
        merged.entry(function).or_default().1 = samples.clone();
    }
    let base_samples = base.samples();
    let head_samples = head.samples();
    let mut changes: Vec<FunctionChange> = merged
        .into_iter()
        .map(|(function, (base_function, head_function))| {
            let self_change = judge_share(
                base_function.self_weight as f64 / base.sample_weight.max(1) as f64,
                base_samples,
                head_function.self_weight as f64 / head.sample_weight.max(1) as f64,
                head_samples,
            );
            FunctionChange {
                function: function.clone(),
                base_self_share: base.share(base_function.self_weight),
                head_self_share: head.share(head_function.self_weight),
                base_inclusive_share: base.share(base_function.inclusive_weight),
                head_inclusive_share: head.share(head_function.inclusive_weight),
                base: base_function,
                head: head_function,
                self_change,
                across_runs: None,
            }
        })
        .collect();
    changes.sort_by(ordered);
    ProfileComparison {
        changes,
        base_samples,
        head_samples,
        base_sample_weight: base.sample_weight,
        head_sample_weight: head.sample_weight,
        matching,
    }
}

/// Those beyond noise first (growth before shrinkage, JavaScript before
/// native), then by self change.
fn ordered(left: &FunctionChange, right: &FunctionChange) -> std::cmp::Ordering {
    right
        .beyond_noise()
        .cmp(&left.beyond_noise())
        .then(left.self_change.verdict.cmp(&right.self_change.verdict))
        .then(right.is_javascript().cmp(&left.is_javascript()))
        .then(right.self_change.change.total_cmp(&left.self_change.change))
        .then(right.inclusive_change().total_cmp(&left.inclusive_change()))
        .then_with(|| left.function.cmp(&right.function))
}

/// How base's functions were matched to head's beyond their keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionMatching {
    /// Base's function → head's: moved lines (code above changed), or
    /// matched by name across scripts that differ (one side source-mapped).
    pub keys: BTreeMap<Function, Function>,
    /// Scripts whose functions were matched by name: one side read
    /// through a source map and the other not, or maps that disagree.
    pub scripts: Vec<ScriptMatch>,
    /// Scripts of one side only, none of whose functions could be matched
    /// while the other side has such scripts too.
    pub unmatched_scripts: Vec<UnmatchedScript>,
}

/// A base script whose functions were matched by name to a head script.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScriptMatch {
    /// Base's script, as keyed (relative to its project root).
    pub base: String,
    /// Head's.
    pub head: String,
    /// How many functions were matched so.
    pub functions: usize,
}

/// A script of one side that could not be matched to the other's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnmatchedScript {
    /// Whether it is head's (else base's).
    pub in_head: bool,
    /// The script, as keyed.
    pub script: String,
    /// Its functions.
    pub functions: usize,
}

/// Matches base's functions that head does not have under the same key:
///
/// 1. **moved**: the same script, name and column at another line (code
///    above changed), paired in line order when both sides have as many;
/// 2. **across scripts**: a script of one side only (no function of it on
///    the other side) against the other side's such scripts, function by
///    function by name, when a name is found once on each side (a built
///    file edited without its source map is read unmapped at one side,
///    `lib/index.js`, and mapped at the other, `src/parse.ts`).
///
/// What is left in scripts of one side only, while the other side also has
/// such scripts, is listed as not matched.
pub fn match_functions(base: &SideProfile, head: &SideProfile) -> FunctionMatching {
    let head_only = only_in(head, base);
    let mut matching = FunctionMatching::default();
    for (group, base_functions) in only_in(base, head) {
        if let Some(head_functions) = head_only.get(&group)
            && head_functions.len() == base_functions.len()
        {
            matching.keys.extend(base_functions.into_iter().cloned().zip(head_functions.iter().map(|f| (*f).clone())));
        }
    }
    // Scripts of one side only, with their functions not yet matched.
    let (base_scripts, head_scripts) = (scripts_of(base), scripts_of(head));
    let matched_heads: std::collections::BTreeSet<&Function> = matching.keys.values().collect();
    let base_lone: Vec<&Function> = lone(&base_scripts, &head_scripts)
        .into_iter()
        .filter(|function| !matching.keys.contains_key(*function))
        .collect();
    let head_lone: Vec<&Function> =
        lone(&head_scripts, &base_scripts).into_iter().filter(|function| !matched_heads.contains(function)).collect();
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut matched_base = std::collections::BTreeSet::new();
    let mut matched_head = std::collections::BTreeSet::new();
    let (mut base_left, mut head_left) = (base_lone, head_lone);
    // Most telling first: the script's file name, the function's name and
    // position; then file name and function name; then the name alone.
    for pass in [MatchBy::FileNamePosition, MatchBy::FileName, MatchBy::Name] {
        let head_groups = group_by(&head_left, pass);
        let mut newly: Vec<(&Function, &Function)> = Vec::new();
        for (key, base_functions) in group_by(&base_left, pass) {
            // Anonymous functions have no name to match by alone.
            if pass == MatchBy::Name && key.1 == "(anonymous)" {
                continue;
            }
            if let (Some([head_function]), [base_function]) =
                (head_groups.get(&key).map(Vec::as_slice), base_functions.as_slice())
            {
                newly.push((base_function, head_function));
            }
        }
        for (base_function, head_function) in newly {
            let key = (base_function.file.clone().unwrap_or_default(), head_function.file.clone().unwrap_or_default());
            *pairs.entry(key).or_default() += 1;
            matched_base.insert(base_function.file.clone());
            matched_head.insert(head_function.file.clone());
            matching.keys.insert(base_function.clone(), head_function.clone());
            base_left.retain(|function| *function != base_function);
            head_left.retain(|function| *function != head_function);
        }
    }
    let (base_lone, head_lone) = (base_left, head_left);
    matching.scripts =
        pairs.into_iter().map(|((base, head), functions)| ScriptMatch { base, head, functions }).collect();
    let base_has_lone = !base_lone.is_empty();
    let head_has_lone = !head_lone.is_empty();
    if base_has_lone && head_has_lone {
        let mut unmatched = Vec::new();
        for (side, scripts, other, in_head, matched) in [
            (base, &base_scripts, &head_scripts, false, &matched_base),
            (head, &head_scripts, &base_scripts, true, &matched_head),
        ] {
            for (script, functions) in scripts {
                // A script sampled a few times on one side only is sampling,
                // not a mismatch: only those that hold a part of the profile.
                let weight: u64 =
                    functions.iter().filter_map(|function| side.functions.get(*function)).map(|f| f.self_weight).sum();
                if !other.contains_key(script)
                    && !matched.contains(&Some(script.to_string()))
                    && side.share(weight) >= UNMATCHED_SCRIPT_SHARE
                {
                    unmatched.push(UnmatchedScript { in_head, script: script.to_string(), functions: functions.len() });
                }
            }
        }
        // Named only when both sides have such scripts: else they are new
        // (or gone) code.
        if unmatched.iter().any(|script| script.in_head) && unmatched.iter().any(|script| !script.in_head) {
            matching.unmatched_scripts = unmatched;
        }
    }
    matching
}

/// The least self share of a script of one side only that is named as not
/// matched.
pub const UNMATCHED_SCRIPT_SHARE: f64 = 0.01;

type FunctionGroup<'side> = BTreeMap<(&'side str, &'side str, Option<u32>), Vec<&'side Function>>;

/// The JavaScript functions of `side` that `other` lacks, by script, name
/// and column, each group in line order.
fn only_in<'side>(side: &'side SideProfile, other: &SideProfile) -> FunctionGroup<'side> {
    let mut groups: FunctionGroup<'side> = BTreeMap::new();
    for function in side.functions.keys() {
        if let Some(file) = &function.file
            && !other.functions.contains_key(function)
        {
            let column = function.start.and_then(|start| start.column);
            groups.entry((file.as_str(), function.name.as_str(), column)).or_default().push(function);
        }
    }
    for functions in groups.values_mut() {
        functions.sort();
    }
    groups
}

/// A side's JavaScript functions by script.
fn scripts_of(side: &SideProfile) -> BTreeMap<&str, Vec<&Function>> {
    let mut scripts: BTreeMap<&str, Vec<&Function>> = BTreeMap::new();
    for function in side.functions.keys() {
        if let Some(file) = &function.file {
            scripts.entry(file.as_str()).or_default().push(function);
        }
    }
    scripts
}

/// The functions of the scripts of `scripts` that `other` lacks.
fn lone<'side>(
    scripts: &BTreeMap<&'side str, Vec<&'side Function>>,
    other: &BTreeMap<&str, Vec<&Function>>,
) -> Vec<&'side Function> {
    scripts
        .iter()
        .filter(|(script, _)| !other.contains_key(*script))
        .flat_map(|(_, functions)| functions.iter().copied())
        .collect()
}

/// What functions of scripts whose paths differ are matched by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatchBy {
    /// The script's file name, the function's name, line and column.
    FileNamePosition,
    /// The script's file name and the function's name.
    FileName,
    /// The function's name.
    Name,
}

type MatchKey = (String, String, Option<crate::model::frames::SourceLine>);

/// Functions grouped by what `by` matches.
fn group_by<'side>(functions: &[&'side Function], by: MatchBy) -> BTreeMap<MatchKey, Vec<&'side Function>> {
    let mut groups: BTreeMap<MatchKey, Vec<&'side Function>> = BTreeMap::new();
    for function in functions {
        let file_name = || {
            let file = function.file.as_deref().unwrap_or("");
            file.rsplit('/').next().unwrap_or(file).to_string()
        };
        let key = match by {
            MatchBy::FileNamePosition => (file_name(), function.name.clone(), function.start),
            MatchBy::FileName => (file_name(), function.name.clone(), None),
            MatchBy::Name => (String::new(), function.name.clone(), None),
        };
        groups.entry(key).or_default().push(function);
    }
    groups
}

/// One benchmark on both sides.
#[derive(Debug, Clone)]
pub struct BenchmarkComparison {
    /// Its name, as the harness names it.
    pub name: String,
    /// The harness's timing at base, if it gave one.
    pub base_timing: Option<Timing>,
    /// The harness's timing at head.
    pub head_timing: Option<Timing>,
    /// The time change judged, when both sides have timings.
    pub time: Option<TimeChange>,
    /// Its profiles compared (over several runs, their sums).
    pub profile: ProfileComparison,
    /// Runs of it at base.
    pub base_runs: usize,
    /// Runs of it at head.
    pub head_runs: usize,
    /// Over several runs per side: its time per iteration judged with the
    /// run as the unit.
    pub runs: Option<RunsTime>,
}

impl BenchmarkComparison {
    /// Whether it was judged over several runs per side (else one run's
    /// noise model: the noise between runs is not seen).
    pub fn across_runs(&self) -> bool {
        self.base_runs >= 2 && self.head_runs >= 2
    }

    /// The benchmark's verdict. Over several runs: its time's over runs
    /// (regressed, improved, within noise or undecided), made a regression
    /// when a JavaScript function is one by the own-time rule. Else its
    /// time's, or without timings, whether a JavaScript function's self
    /// share grew beyond noise.
    pub fn verdict(&self) -> Verdict {
        if let Some(runs) = &self.runs {
            let total = match runs.verdict() {
                RunsVerdict::Regressed => Verdict::Regressed,
                RunsVerdict::Improved => Verdict::Improved,
                RunsVerdict::Unchanged => Verdict::Unchanged,
                RunsVerdict::Undecided => Verdict::Undecided,
            };
            return match total {
                Verdict::Unchanged | Verdict::Undecided if self.profile.regressed() => Verdict::Regressed,
                total => total,
            };
        }
        match self.time {
            Some(time) => time.verdict,
            None if self.profile.regressed() => Verdict::Regressed,
            None => Verdict::Unchanged,
        }
    }

    /// Over runs, the function whose own time regressed the benchmark when
    /// its time per iteration alone did not (undecided or within noise):
    /// what the verdict rests on.
    pub fn regressed_by_function(&self) -> Option<&FunctionChange> {
        let runs = self.runs.as_ref()?;
        if matches!(runs.verdict(), RunsVerdict::Regressed | RunsVerdict::Improved) {
            return None;
        }
        self.profile.regressions().next()
    }
}

/// Judges a benchmark's time per iteration.
pub fn compare_benchmark(
    name: &str,
    base_timing: Option<Timing>,
    head_timing: Option<Timing>,
    profile: ProfileComparison,
) -> BenchmarkComparison {
    let time = match (base_timing, head_timing) {
        (Some(base), Some(head)) => Some(judge_time(base, head)),
        _ => None,
    };
    let mut profile = profile;
    if let Some(time) = &time {
        for change in &mut profile.changes {
            change.self_change =
                judge_own_time(change.self_change, change.base_self_share, change.head_self_share, time);
        }
        profile.changes.sort_by(ordered);
    }
    BenchmarkComparison {
        name: name.to_string(),
        base_timing,
        head_timing,
        time,
        profile,
        base_runs: 1,
        head_runs: 1,
        runs: None,
    }
}

/// Judges a benchmark over the runs of each side. With one run on either
/// side, [`compare_benchmark`]'s model (which cannot see the noise between
/// runs); else its time per iteration over runs
/// ([`across::runs_time`], against `threshold`) and each function by the
/// own-time rule ([`across::judge_function`]).
pub fn compare_benchmark_runs(
    name: &str,
    base: &[BenchmarkRun],
    head: &[BenchmarkRun],
    threshold: f64,
) -> BenchmarkComparison {
    let pooled_base = across::merged(base.iter().map(|run| &run.profile));
    let pooled_head = across::merged(head.iter().map(|run| &run.profile));
    let keys = match_functions(&pooled_base, &pooled_head).keys;
    let mut comparison_profile = compare_profiles(&pooled_base, &pooled_head);
    if base.len() < 2 || head.len() < 2 {
        let first_timing = |runs: &[BenchmarkRun]| runs.first().and_then(|run| run.timing);
        let mut single = compare_benchmark(name, first_timing(base), first_timing(head), comparison_profile);
        (single.base_runs, single.head_runs) = (base.len(), head.len());
        return single;
    }
    let base: Vec<BenchmarkRun> = base
        .iter()
        .map(|run| BenchmarkRun {
            profile: across::rekeyed(&run.profile, &keys),
            timing: run.timing,
            duet_round: run.duet_round,
        })
        .collect();
    let runs = across::runs_time(&base, head, threshold);
    let cpu_per_iteration = runs.as_ref().and_then(|runs| runs.cpu_per_iteration());
    let per_iteration = cpu_per_iteration.is_some();
    let base_total = match cpu_per_iteration {
        Some((base_cpu, _)) => across::median(base_cpu),
        None => 1.0,
    };
    for change in &mut comparison_profile.changes {
        let judged = across::judge_function(&change.function, &base, head, per_iteration, base_total, threshold);
        change.self_change.verdict = if judged.explained_by_choices { Verdict::Unchanged } else { judged.verdict };
        change.self_change.own_time = None;
        change.across_runs = Some(judged);
    }
    comparison_profile.changes.sort_by(ordered);
    BenchmarkComparison {
        name: name.to_string(),
        base_timing: base.first().and_then(|run| run.timing),
        head_timing: head.first().and_then(|run| run.timing),
        time: None,
        profile: comparison_profile,
        base_runs: base.len(),
        head_runs: head.len(),
        runs,
    }
}

/// What `compare` found: the benchmarks of a suite compared, or the whole
/// profiles.
#[derive(Debug, Clone)]
pub struct SuiteComparison {
    /// The benchmarks of both sides, in head's order (empty when either
    /// side has none).
    pub benchmarks: Vec<BenchmarkComparison>,
    /// Benchmark names on one side only.
    pub unmatched: Vec<UnmatchedBenchmark>,
    /// The whole profiles compared, without benchmarks.
    pub whole: Option<ProfileComparison>,
    /// Runs at base (recordings of its side directory; 1 for a recording).
    pub base_runs: usize,
    /// Runs at head.
    pub head_runs: usize,
    /// What another round costs: its time when known (`bench`), and how
    /// many merged `bench` outputs add rounds at once.
    pub round_cost: runs::RoundCost,
}

/// A benchmark that only one side ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedBenchmark {
    /// Its name.
    pub name: String,
    /// Whether it is the head's (else the base's).
    pub in_head: bool,
}

impl SuiteComparison {
    /// Whether there are several runs on each side, so that the noise
    /// between runs is measured.
    pub fn across_runs(&self) -> bool {
        self.base_runs >= 2 && self.head_runs >= 2
    }

    /// Whether a benchmark's verdict is undecided (more runs would tell).
    pub fn undecided(&self) -> bool {
        self.benchmarks.iter().any(|benchmark| benchmark.verdict() == Verdict::Undecided)
    }

    /// Whether anything regressed beyond noise: a benchmark, or without
    /// benchmarks, the profile. `--fail-on-regression` exits 1 on it.
    pub fn regressed(&self) -> bool {
        match &self.whole {
            Some(whole) => whole.regressed(),
            None => self.benchmarks.iter().any(|benchmark| benchmark.verdict() == Verdict::Regressed),
        }
    }
}
