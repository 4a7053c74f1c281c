//! `v8inline compare BASE HEAD`: two recordings (or profiles) compared
//! benchmark by benchmark, time per iteration first, then the functions
//! whose own (self) share of the samples moved beyond noise, with how V8
//! ran them on each side.
//!
//! - [`profile`]: one side's functions from folded stacks or a JSON report;
//! - [`noise`]: when a change is beyond noise;
//! - [`render`]: text, markdown (a PR comment) and GitHub annotations;
//! - [`differential`]: the differential flame graph.

pub mod differential;
pub mod noise;
pub mod profile;
pub mod render;
pub mod runs;

use std::collections::BTreeMap;

use crate::model::frames::{FrameKind, Function};

use noise::{ShareChange, TimeChange, Timing, Verdict, judge_own_time, judge_share, judge_time};
use profile::{FunctionSamples, RanAs, SideProfile};

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
    /// The self-share change, judged.
    pub self_change: ShareChange,
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
    let moved = moved_functions(base, head);
    let mut merged: BTreeMap<&Function, (FunctionSamples, FunctionSamples)> = BTreeMap::new();
    for (function, samples) in &base.functions {
        let function = moved.get(function).copied().unwrap_or(function);
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

/// Base's functions that head has at another line (code above them
/// changed), each mapped to head's: those of a script and name found on
/// one side only, paired in line order when both sides have as many.
fn moved_functions<'side>(
    base: &'side SideProfile,
    head: &'side SideProfile,
) -> BTreeMap<&'side Function, &'side Function> {
    type Group<'side> = BTreeMap<(&'side str, &'side str, Option<u32>), Vec<&'side Function>>;
    let only_in = |side: &'side SideProfile, other: &SideProfile| -> Group<'side> {
        let mut groups: Group<'side> = BTreeMap::new();
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
    };
    let head_only = only_in(head, base);
    let mut moved = BTreeMap::new();
    for (group, base_functions) in only_in(base, head) {
        if let Some(head_functions) = head_only.get(&group)
            && head_functions.len() == base_functions.len()
        {
            moved.extend(base_functions.into_iter().zip(head_functions.iter().copied()));
        }
    }
    moved
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
    /// Its profiles compared.
    pub profile: ProfileComparison,
}

impl BenchmarkComparison {
    /// The benchmark's verdict: its time's, or without timings, whether
    /// a JavaScript function's self share grew beyond noise.
    pub fn verdict(&self) -> Verdict {
        match self.time {
            Some(time) => time.verdict,
            None if self.profile.regressed() => Verdict::Regressed,
            None => Verdict::Unchanged,
        }
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
    BenchmarkComparison { name: name.to_string(), base_timing, head_timing, time, profile }
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
    /// Whether anything regressed beyond noise: a benchmark, or without
    /// benchmarks, the profile. `--fail-on-regression` exits 1 on it.
    pub fn regressed(&self) -> bool {
        match &self.whole {
            Some(whole) => whole.regressed(),
            None => self.benchmarks.iter().any(|benchmark| benchmark.verdict() == Verdict::Regressed),
        }
    }
}
