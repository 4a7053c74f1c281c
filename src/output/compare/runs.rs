//! A benchmark's change judged with the run as the unit: each run (one
//! process of the benchmark command) gives one CPU time per iteration, and
//! the runs of a side are the sample.
//!
//! Within one run the iterations are not independent: a slow second of a
//! shared machine slows every iteration in it, and V8's JIT decides once per
//! process (inlined or not, Maglev or TurboFan). Only runs at different
//! moments, in separate processes, see that spread (Kalibera & Jones,
//! "Rigorous Benchmarking in Reasonable Time", ISMM 2013: the level that
//! varies most, here the process, must be repeated).
//!
//! The estimator: the ratio of the sides' geometric means, with Welch's
//! t interval on the difference of the mean log times (Welch, "The
//! generalization of 'Student's' problem when several different population
//! variances are involved", Biometrika 1947; degrees of freedom by
//! Welch–Satterthwaite). On the log scale a relative change is a
//! difference, so the interval of the ratio is exact under log-normal run
//! times, without the delta method's linearisation (google/tachometer uses
//! Welch with the delta method on the plain scale).

use super::noise::student_t_critical;

/// The default threshold of a benchmark's verdict over runs, relative:
/// 5 %, which the busy-machine study (docs/performance-log.md, 2026-11-28)
/// chose over 3 % (no fewer false alarms) and 10 % (missed a 10 % slowdown).
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// Confidence of the interval of [`judge_runs`].
pub const RUNS_CONFIDENCE: f64 = 0.95;

/// How the two sides of a `bench` round ran (runs.json's `schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// One after the other, in an order drawn at random each round.
    #[default]
    Interleaved,
    /// Both at the same time, so that a neighbour slows both alike (Bulej
    /// et al., "Duet Benchmarking: Improving Measurement Accuracy in the
    /// Cloud", ICPE 2020); a round's two runs are then judged as a pair.
    Duet,
}

impl Schedule {
    /// `interleaved`, `duet`: as `--schedule` and runs.json spell it.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Interleaved => "interleaved",
            Schedule::Duet => "duet",
        }
    }
}

/// A relative change and its interval: 0.05 is +5 %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeInterval {
    /// Lower bound (at least -1: nothing is faster than free).
    pub low: f64,
    /// Upper bound (infinite when a side has fewer than two runs).
    pub high: f64,
}

/// A benchmark's verdict over runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RunsVerdict {
    /// The whole interval lies above +threshold.
    Regressed,
    /// The whole interval lies below -threshold.
    Improved,
    /// The whole interval lies within ±threshold.
    Unchanged,
    /// The interval straddles a threshold: more runs would tell.
    Undecided,
}

impl RunsVerdict {
    /// `regressed`, `improved`, `within noise`, `undecided`: as compare
    /// prints a benchmark's verdict.
    pub fn name(self) -> &'static str {
        match self {
            RunsVerdict::Regressed => "regressed",
            RunsVerdict::Improved => "improved",
            RunsVerdict::Unchanged => "within noise",
            RunsVerdict::Undecided => "undecided",
        }
    }
}

/// A benchmark's change of CPU time per iteration, head against base, over
/// runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunsChange {
    /// Head's geometric mean over base's, minus one (0.05 is 5 % slower).
    pub change: f64,
    /// Its interval at [`RUNS_CONFIDENCE`].
    pub interval: ChangeInterval,
    /// The smallest change this comparison could have called a
    /// regression: `(1 + threshold)·exp(t·se) − 1`, the change whose
    /// interval, at this spread, would just clear `+threshold`.
    pub minimum_detectable: f64,
    /// The verdict from the interval against the threshold.
    pub verdict: RunsVerdict,
    /// Runs of base used (finite positive times).
    pub base_runs: usize,
    /// Runs of head used.
    pub head_runs: usize,
    /// Judged as pairs of runs that ran at the same time
    /// ([`judge_paired_runs`]), not side against side.
    pub paired: bool,
    /// How the runs were combined into the change and its interval.
    pub method: ChangeMethod,
    /// The spread the interval came from: the sample standard deviation of
    /// the pairs' log ratios (paired), or the standard error of the
    /// difference of mean log times times √n (side against side): what
    /// [`RunsChange::rounds_to_decide`] forecasts from.
    pub log_spread: f64,
    /// The threshold judged against (0.05: ±5 %).
    pub threshold: f64,
}

/// How a [`RunsChange`] combined the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeMethod {
    /// The ratio of the sides' geometric means, Welch's t interval.
    Welch,
    /// The mean of the pairs' log ratios, the paired t interval.
    PairedMean,
    /// The Hodges–Lehmann estimate of the pairs' log ratios (the median of
    /// their Walsh averages), bounded by Wilcoxon's signed-rank test.
    HodgesLehmann,
}

impl ChangeMethod {
    /// How the docs and outputs name it.
    pub fn name(self) -> &'static str {
        match self {
            ChangeMethod::Welch => "ratio of geometric means, Welch t interval",
            ChangeMethod::PairedMean => "mean of paired log ratios, paired t interval",
            ChangeMethod::HodgesLehmann => {
                "Hodges–Lehmann estimate of paired log ratios, Wilcoxon signed-rank interval"
            }
        }
    }
}

/// Judges head against base, each a run's CPU time per iteration (any unit,
/// the same on both sides), against `threshold` (0.05: ±5 %), at
/// [`RUNS_CONFIDENCE`]. Times that are not finite and positive are left
/// out. With fewer than two runs on a side the spread is unknown: the
/// interval is [-1, ∞) and the verdict undecided.
pub fn judge_runs(base: &[f64], head: &[f64], threshold: f64) -> RunsChange {
    judge_runs_at(base, head, threshold, RUNS_CONFIDENCE)
}

/// [`judge_runs`] at another confidence (0.99: a 99 % interval).
pub fn judge_runs_at(base: &[f64], head: &[f64], threshold: f64, confidence: f64) -> RunsChange {
    let base = LogSample::of(base);
    let head = LogSample::of(head);
    let (base_runs, head_runs) = (base.runs, head.runs);
    if base_runs == 0 || head_runs == 0 {
        return RunsChange::unknown(base_runs, head_runs, false);
    }
    let difference = head.mean - base.mean;
    let pooled = (base.variance / base_runs as f64 + head.variance / head_runs as f64).sqrt();
    let log_spread = pooled * (base_runs.min(head_runs) as f64).sqrt();
    let half_width = if base_runs < 2 || head_runs < 2 {
        f64::INFINITY
    } else {
        let (base_part, head_part) = (base.variance / base_runs as f64, head.variance / head_runs as f64);
        let standard_error = (base_part + head_part).sqrt();
        if standard_error == 0.0 {
            0.0
        } else {
            // Welch–Satterthwaite.
            let degrees = (base_part + head_part).powi(2)
                / (base_part.powi(2) / (base_runs - 1) as f64 + head_part.powi(2) / (head_runs - 1) as f64);
            student_t_critical(1.0 - confidence, degrees) * standard_error
        }
    };
    RunsChange::of_log_difference(difference, half_width, threshold, (base_runs, head_runs), ChangeMethod::Welch)
        .with_spread(log_spread)
}

/// The half-width of the 95 % Welch t interval of `head`'s mean minus
/// `base`'s, on the values' own scale (shares, not their logs): infinite
/// with fewer than two values a side.
pub fn difference_half_width(base: &[f64], head: &[f64]) -> f64 {
    let moments = |values: &[f64]| {
        let count = values.len() as f64;
        let mean = values.iter().sum::<f64>() / count;
        (count, values.iter().map(|value| (value - mean).powi(2)).sum::<f64>() / (count - 1.0))
    };
    if base.len() < 2 || head.len() < 2 {
        return f64::INFINITY;
    }
    let ((base_count, base_variance), (head_count, head_variance)) = (moments(base), moments(head));
    let (base_part, head_part) = (base_variance / base_count, head_variance / head_count);
    if base_part + head_part == 0.0 {
        return 0.0;
    }
    let degrees = (base_part + head_part).powi(2)
        / (base_part.powi(2) / (base_count - 1.0) + head_part.powi(2) / (head_count - 1.0));
    student_t_critical(1.0 - RUNS_CONFIDENCE, degrees) * (base_part + head_part).sqrt()
}

/// [`difference_half_width`] for pairs of runs that ran at the same time:
/// the paired t interval of the mean of `head − base`.
pub fn paired_difference_half_width(pairs: &[RunPair]) -> f64 {
    if pairs.len() < 2 {
        return f64::INFINITY;
    }
    let count = pairs.len() as f64;
    let differences: Vec<f64> = pairs.iter().map(|pair| pair.head - pair.base).collect();
    let mean = differences.iter().sum::<f64>() / count;
    let variance = differences.iter().map(|difference| (difference - mean).powi(2)).sum::<f64>() / (count - 1.0);
    if variance == 0.0 {
        return 0.0;
    }
    student_t_critical(1.0 - RUNS_CONFIDENCE, count - 1.0) * (variance / count).sqrt()
}

/// A round's two runs that ran at the same time (`bench --schedule duet`):
/// each side's value (CPU time per iteration, any unit, the same on both).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunPair {
    /// Base's run.
    pub base: f64,
    /// Head's run beside it.
    pub head: f64,
}

/// Judges head against base over pairs of runs that ran at the same time:
/// the paired t interval on the mean of the pairs' log ratios (Student,
/// "The probable error of a mean", Biometrika 1908; n − 1 degrees of
/// freedom). A neighbour that slows the machine for a moment slows both
/// runs of a pair, and the pair's ratio cancels it: that is what duet
/// benchmarking buys (Bulej et al., ICPE 2020). Pairs with a value that is
/// not finite and positive are left out; with fewer than two the spread is
/// unknown and the verdict undecided.
pub fn judge_paired_runs(pairs: &[RunPair], threshold: f64) -> RunsChange {
    judge_paired_runs_at(pairs, threshold, RUNS_CONFIDENCE)
}

/// [`judge_paired_runs`] at another confidence.
pub fn judge_paired_runs_at(pairs: &[RunPair], threshold: f64, confidence: f64) -> RunsChange {
    let usable = |time: f64| time.is_finite() && time > 0.0;
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|pair| usable(pair.base) && usable(pair.head))
        .map(|pair| pair.head.ln() - pair.base.ln())
        .collect();
    let runs = ratios.len();
    if runs == 0 {
        return RunsChange::unknown(0, 0, true);
    }
    let difference = ratios.iter().sum::<f64>() / runs as f64;
    let spread = standard_deviation(&ratios, difference);
    let half_width = if runs < 2 {
        f64::INFINITY
    } else {
        let standard_error = spread / (runs as f64).sqrt();
        if standard_error == 0.0 {
            0.0
        } else {
            student_t_critical(1.0 - confidence, (runs - 1) as f64) * standard_error
        }
    };
    RunsChange::of_log_difference(difference, half_width, threshold, (runs, runs), ChangeMethod::PairedMean)
        .with_spread(spread)
}

/// The sample standard deviation of `values` about `mean` (0 for fewer
/// than two).
fn standard_deviation(values: &[f64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    (values.iter().map(|value| (value - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64).sqrt()
}

/// The usable pairs' log ratios, head over base.
fn log_ratios(pairs: &[RunPair]) -> Vec<f64> {
    let usable = |time: f64| time.is_finite() && time > 0.0;
    pairs
        .iter()
        .filter(|pair| usable(pair.base) && usable(pair.head))
        .map(|pair| pair.head.ln() - pair.base.ln())
        .collect()
}

/// Judges head against base over pairs of runs that ran at the same time,
/// by ranks: the Hodges–Lehmann estimate of the pairs' log ratios (the
/// median of the Walsh averages `(rᵢ + rⱼ)/2`, i ≤ j) and the interval of
/// Wilcoxon's signed-rank test, exact (Hodges & Lehmann, "Estimates of
/// location based on rank tests", Ann. Math. Statist. 1963; Hollander &
/// Wolfe, "Nonparametric Statistical Methods", §3.2–3.3). A pair a
/// neighbour slowed more on one side than the other counts by its rank, not
/// its size. Below 6 usable pairs no 95 % interval exists: undecided.
pub fn judge_paired_ranks(pairs: &[RunPair], threshold: f64) -> RunsChange {
    judge_paired_ranks_at(pairs, threshold, RUNS_CONFIDENCE)
}

/// [`judge_paired_ranks`] at another confidence.
pub fn judge_paired_ranks_at(pairs: &[RunPair], threshold: f64, confidence: f64) -> RunsChange {
    let ratios = log_ratios(pairs);
    let runs = ratios.len();
    if runs == 0 {
        return RunsChange::unknown(0, 0, true);
    }
    let mut walsh: Vec<f64> =
        (0..runs).flat_map(|i| (i..runs).map(move |j| (i, j))).map(|(i, j)| (ratios[i] + ratios[j]) / 2.0).collect();
    walsh.sort_by(f64::total_cmp);
    let count = walsh.len();
    let estimate = if count % 2 == 1 { walsh[count / 2] } else { (walsh[count / 2 - 1] + walsh[count / 2]) / 2.0 };
    let mean = ratios.iter().sum::<f64>() / runs as f64;
    let spread = standard_deviation(&ratios, mean);
    let judged = match signed_rank_critical(runs, 1.0 - confidence) {
        // The (c+1)-th smallest and largest Walsh averages.
        Some(critical) => RunsChange::of_log_interval(
            estimate,
            walsh[critical],
            walsh[count - 1 - critical],
            threshold,
            (runs, runs),
            ChangeMethod::HodgesLehmann,
        ),
        None => RunsChange::of_log_interval(
            estimate,
            f64::NEG_INFINITY,
            f64::INFINITY,
            threshold,
            (runs, runs),
            ChangeMethod::HodgesLehmann,
        ),
    };
    judged.with_spread(spread)
}

/// The largest `c` with P(W⁺ ≤ c) ≤ alpha/2 under the null hypothesis, for
/// Wilcoxon's signed-rank statistic of `n` pairs (its exact distribution:
/// the number of the 2ⁿ sign choices giving each rank sum); `None` where
/// even P(W⁺ = 0) = 2⁻ⁿ exceeds alpha/2. Above 60 pairs, the normal
/// approximation with continuity correction.
fn signed_rank_critical(n: usize, alpha: f64) -> Option<usize> {
    if n > 60 {
        // A t of very many degrees of freedom is the normal quantile.
        let (n, z) = (n as f64, student_t_critical(alpha, 1e9));
        let mean = n * (n + 1.0) / 4.0;
        let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
        let critical = (mean - z * sd - 0.5).floor();
        return (critical >= 0.0).then_some(critical as usize);
    }
    // counts[w]: sign choices whose positive ranks sum to w, as f64 (2^60
    // is exact enough for a tail probability).
    let mut counts = vec![1.0f64];
    for rank in 1..=n {
        let mut grown = counts.clone();
        grown.resize(counts.len() + rank, 0.0);
        for (total, &count) in counts.iter().enumerate() {
            grown[total + rank] += count;
        }
        counts = grown;
    }
    let all = 2f64.powi(n as i32);
    let (mut cumulative, mut critical) = (0.0, None);
    for (w, &count) in counts.iter().enumerate() {
        if (cumulative + count) / all > alpha / 2.0 {
            break;
        }
        cumulative += count;
        critical = Some(w);
    }
    critical
}

impl RunsChange {
    /// No usable run on a side: nothing is known.
    fn unknown(base_runs: usize, head_runs: usize, paired: bool) -> RunsChange {
        RunsChange {
            change: f64::NAN,
            interval: ChangeInterval { low: -1.0, high: f64::INFINITY },
            minimum_detectable: f64::INFINITY,
            verdict: RunsVerdict::Undecided,
            base_runs,
            head_runs,
            paired,
            method: if paired { ChangeMethod::PairedMean } else { ChangeMethod::Welch },
            log_spread: f64::NAN,
            threshold: f64::NAN,
        }
    }

    fn with_spread(mut self, log_spread: f64) -> RunsChange {
        self.log_spread = log_spread;
        self
    }

    /// The change from the difference of mean log times and its interval's
    /// half-width, judged against `threshold`.
    fn of_log_difference(
        difference: f64,
        half_width: f64,
        threshold: f64,
        runs: (usize, usize),
        method: ChangeMethod,
    ) -> RunsChange {
        RunsChange::of_log_interval(
            difference,
            difference - half_width,
            difference + half_width,
            threshold,
            runs,
            method,
        )
    }

    /// The change from a log estimate and its interval's log bounds, judged
    /// against `threshold`. The minimum detectable change is the change
    /// whose interval, this wide above its estimate, would just clear
    /// `+threshold`.
    fn of_log_interval(
        estimate: f64,
        low: f64,
        high: f64,
        threshold: f64,
        (base_runs, head_runs): (usize, usize),
        method: ChangeMethod,
    ) -> RunsChange {
        let change = estimate.exp() - 1.0;
        let interval = ChangeInterval { low: low.exp() - 1.0, high: high.exp() - 1.0 };
        let below = estimate - low;
        let minimum_detectable = (1.0 + threshold) * below.exp() - 1.0;
        let verdict = if interval.low > threshold {
            RunsVerdict::Regressed
        } else if interval.high < -threshold {
            RunsVerdict::Improved
        } else if interval.low > -threshold && interval.high < threshold {
            RunsVerdict::Unchanged
        } else {
            RunsVerdict::Undecided
        };
        RunsChange {
            change,
            interval,
            minimum_detectable,
            verdict,
            base_runs,
            head_runs,
            paired: method != ChangeMethod::Welch,
            method,
            log_spread: f64::NAN,
            threshold,
        }
    }

    /// How many rounds in all would decide an undecided change at its
    /// threshold, were the spread of log ratios what it is now and the
    /// estimate to stay: the least n whose t interval, `t(n−1)·s/√n`, fits
    /// between the estimate and the nearer threshold it must clear (inside
    /// ±threshold to be within noise; beyond it to be a change). `None`
    /// when it is decided, when the spread is unknown, or when the estimate
    /// lies on a threshold (no number of rounds would do), or beyond 10,000.
    pub fn rounds_to_decide(&self) -> Option<usize> {
        let threshold = self.threshold;
        if self.verdict != RunsVerdict::Undecided || !self.log_spread.is_finite() || !self.change.is_finite() {
            return None;
        }
        let estimate = (1.0 + self.change).ln();
        let (upper, lower) = ((1.0 + threshold).ln(), (1.0 - threshold).ln());
        let margin = if estimate > upper {
            estimate - upper
        } else if estimate < lower {
            lower - estimate
        } else {
            (upper - estimate).min(estimate - lower)
        };
        if margin <= 0.0 {
            return None;
        }
        if self.log_spread == 0.0 {
            return Some(self.base_runs.max(2));
        }
        (2..=10_000).find(|&rounds| {
            let rounds = rounds as f64;
            student_t_critical(1.0 - RUNS_CONFIDENCE, rounds - 1.0) * self.log_spread / rounds.sqrt() <= margin
        })
    }
}

/// What another round of runs costs, for the forecast of an undecided
/// change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundCost {
    /// How long a round took, when known (`bench` knows).
    pub seconds: Option<f64>,
    /// How many `bench` outputs were merged: each adds its rounds at the
    /// same time as the others (one per CI job), so the rounds still
    /// needed are shared out among them.
    pub parallel_outputs: usize,
}

impl Default for RoundCost {
    fn default() -> RoundCost {
        RoundCost { seconds: None, parallel_outputs: 1 }
    }
}

/// What would decide an undecided change: `±5 % would need about 40
/// rounds (25 more)`, with `, about 2 min` where a round's time is known,
/// and `25 more: 9 in each of 3 outputs` where outputs were merged; `None`
/// when it is decided or nothing can be forecast
/// ([`RunsChange::rounds_to_decide`]).
pub fn decision_forecast(change: &RunsChange, cost: RoundCost) -> Option<String> {
    let threshold = format!("±{}", trim_percent(change.threshold));
    let done = change.base_runs.min(change.head_runs);
    let Some(rounds) = change.rounds_to_decide() else {
        return (change.verdict == RunsVerdict::Undecided && change.log_spread.is_finite())
            .then(|| format!("{threshold} would need more rounds than can be forecast"));
    };
    let more = rounds.saturating_sub(done);
    let outputs = cost.parallel_outputs.max(1);
    let more_in_each = more.div_ceil(outputs);
    let shared = if outputs > 1 { format!(": {more_in_each} in each of {outputs} outputs") } else { String::new() };
    let time = cost
        .seconds
        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
        .map(|seconds| {
            let minutes = more_in_each as f64 * seconds / 60.0;
            if minutes < 1.0 { ", under a minute".to_string() } else { format!(", about {minutes:.0} min") }
        })
        .unwrap_or_default();
    Some(format!("{threshold} would need about {rounds} rounds ({more} more{shared}{time})"))
}

/// `5 %`, `2.5 %`: a threshold as people write it.
fn trim_percent(fraction: f64) -> String {
    let percent = format!("{:.1}", fraction * 100.0);
    format!("{} %", percent.trim_end_matches('0').trim_end_matches('.'))
}

/// The mean and sample variance of the logs of a side's usable times.
struct LogSample {
    runs: usize,
    mean: f64,
    variance: f64,
}

impl LogSample {
    fn of(times: &[f64]) -> LogSample {
        let logs: Vec<f64> =
            times.iter().filter(|time| time.is_finite() && **time > 0.0).map(|time| time.ln()).collect();
        let runs = logs.len();
        let mean = logs.iter().sum::<f64>() / runs.max(1) as f64;
        let variance =
            if runs < 2 { 0.0 } else { logs.iter().map(|log| (log - mean).powi(2)).sum::<f64>() / (runs - 1) as f64 };
        LogSample { runs, mean, variance }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < 1e-9
    }

    #[test]
    fn equal_runs_give_a_point_interval() {
        let judged = judge_runs(&[100.0, 100.0, 100.0], &[110.0, 110.0, 110.0], 0.05);
        assert!(close(judged.change, 0.10), "{judged:?}");
        assert!(close(judged.interval.low, 0.10) && close(judged.interval.high, 0.10), "{judged:?}");
        assert!(close(judged.minimum_detectable, 0.05), "{judged:?}");
        assert_eq!(judged.verdict, RunsVerdict::Regressed);
        assert_eq!((judged.base_runs, judged.head_runs), (3, 3));
    }

    #[test]
    fn welch_interval_on_log_times() {
        // By hand (python3: Simpson's rule on Student's density): mean log
        // difference 0.2052479, se 0.0636750, Welch df 2.83366,
        // t(0.975, 2.83366) = 3.290785, half-width 0.2095407.
        let judged = judge_runs(&[100.0, 110.0, 90.0], &[120.0, 130.0, 125.0, 115.0], 0.05);
        assert!((judged.change - 0.227_829_456).abs() < 1e-8, "{judged:?}");
        assert!((judged.interval.low - (-0.004_283_566)).abs() < 1e-6, "{judged:?}");
        assert!((judged.interval.high - 0.514_050_709).abs() < 1e-6, "{judged:?}");
        assert!((judged.minimum_detectable - 0.294_767_149).abs() < 1e-6, "{judged:?}");
        assert_eq!(judged.verdict, RunsVerdict::Undecided);
        // Above +5 % were the interval's low end not just below zero.
        assert_eq!(
            judge_runs(&[100.0, 110.0, 90.0], &[120.0, 130.0, 125.0, 115.0], 0.0).verdict,
            RunsVerdict::Undecided
        );
    }

    #[test]
    fn verdicts_against_the_threshold() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let verdict = |head: &[f64], threshold| judge_runs(&base, head, threshold).verdict;
        assert_eq!(verdict(&[125.0, 126.0, 124.0, 125.5, 124.5], 0.10), RunsVerdict::Regressed);
        assert_eq!(verdict(&[80.0, 81.0, 79.0, 80.5, 79.5], 0.10), RunsVerdict::Improved);
        assert_eq!(verdict(&[101.0, 102.0, 100.0, 101.5, 100.5], 0.10), RunsVerdict::Unchanged);
        // +25 % is beyond a 30 % threshold? No: wholly inside ±30 %.
        assert_eq!(verdict(&[125.0, 126.0, 124.0, 125.5, 124.5], 0.30), RunsVerdict::Unchanged);
        // A change near the threshold straddles it.
        assert_eq!(verdict(&[110.0, 111.0, 109.0, 110.5, 109.5], 0.10), RunsVerdict::Undecided);
        // A wide spread straddles both.
        assert_eq!(verdict(&[70.0, 140.0, 100.0, 90.0, 120.0], 0.10), RunsVerdict::Undecided);
    }

    #[test]
    fn one_run_a_side_cannot_see_the_spread() {
        let judged = judge_runs(&[100.0], &[200.0], 0.05);
        assert!(close(judged.change, 1.0));
        assert_eq!(judged.interval, ChangeInterval { low: -1.0, high: f64::INFINITY });
        assert_eq!(judged.minimum_detectable, f64::INFINITY);
        assert_eq!(judged.verdict, RunsVerdict::Undecided);
    }

    #[test]
    fn unusable_times_are_left_out() {
        let judged = judge_runs(&[100.0, f64::NAN, 0.0, -3.0, 100.0], &[], 0.05);
        assert_eq!((judged.base_runs, judged.head_runs), (2, 0));
        assert_eq!(judged.verdict, RunsVerdict::Undecided);
        assert!(judged.change.is_nan());
        let judged = judge_runs(&[100.0, f64::INFINITY, 100.0], &[100.0, 100.0], 0.05);
        assert_eq!((judged.base_runs, judged.head_runs), (2, 2));
        assert_eq!(judged.verdict, RunsVerdict::Unchanged);
    }

    #[test]
    fn paired_interval_on_log_ratios() {
        // Three rounds, each pair slowed together by a neighbour: the
        // ratios 1.10, 1.12, 1.08 agree closely although the times range
        // over 2×. By hand (python3; t(0.975, 2) = 4.302653): mean log
        // ratio 0.0951999, sd 0.0181841, se 0.0104986, half-width 0.0451717.
        let pairs = [
            RunPair { base: 100.0, head: 110.0 },
            RunPair { base: 200.0, head: 224.0 },
            RunPair { base: 150.0, head: 162.0 },
        ];
        let judged = judge_paired_runs(&pairs, 0.05);
        let (mean, half) = (0.095_199_97_f64, 0.045_171_74_f64);
        assert!((judged.change - (mean.exp() - 1.0)).abs() < 1e-5, "{judged:?}");
        assert!((judged.interval.low - ((mean - half).exp() - 1.0)).abs() < 1e-5, "{judged:?}");
        assert!((judged.interval.high - ((mean + half).exp() - 1.0)).abs() < 1e-5, "{judged:?}");
        // The interval starts at +5.13 %: just beyond +5 %.
        assert_eq!(judged.verdict, RunsVerdict::Regressed);
        assert_eq!((judged.base_runs, judged.head_runs, judged.paired), (3, 3, true));
        // The same times unpaired: the 2× spread between rounds swamps the
        // 10 % change.
        let unpaired = judge_runs(&[100.0, 200.0, 150.0], &[110.0, 224.0, 162.0], 0.05);
        assert!(unpaired.minimum_detectable > 1.0 && judged.minimum_detectable < 0.11, "{unpaired:?} {judged:?}");
    }

    #[test]
    fn half_widths_of_a_difference_on_the_plain_scale() {
        // By hand: Welch se sqrt(0.0001/3 + 0.0001/3) = 0.0081650, df 4,
        // t(0.975, 4) = 2.776445: 0.0226697.
        let half = difference_half_width(&[0.10, 0.11, 0.12], &[0.20, 0.21, 0.22]);
        assert!((half - 0.022_669_7).abs() < 1e-6, "{half}");
        // Paired: the differences 0.10, 0.10, 0.10 do not vary.
        let pairs = [
            RunPair { base: 0.10, head: 0.20 },
            RunPair { base: 0.11, head: 0.21 },
            RunPair { base: 0.12, head: 0.22 },
        ];
        assert!(paired_difference_half_width(&pairs) < 1e-12);
        assert_eq!(difference_half_width(&[0.1], &[0.2, 0.3]), f64::INFINITY);
        assert_eq!(paired_difference_half_width(&pairs[..1]), f64::INFINITY);
    }

    #[test]
    fn paired_runs_with_an_unusable_value_are_left_out() {
        let pairs = [
            RunPair { base: 100.0, head: 120.0 },
            RunPair { base: f64::NAN, head: 120.0 },
            RunPair { base: 100.0, head: 0.0 },
            RunPair { base: 50.0, head: 60.0 },
        ];
        let judged = judge_paired_runs(&pairs, 0.05);
        assert_eq!((judged.base_runs, judged.head_runs), (2, 2));
        assert!(close(judged.change, 0.2) && close(judged.interval.low, 0.2), "{judged:?}");
        assert_eq!(judged.verdict, RunsVerdict::Regressed);
        let one = judge_paired_runs(&pairs[..1], 0.05);
        assert_eq!(one.interval.high, f64::INFINITY);
        assert_eq!(one.verdict, RunsVerdict::Undecided);
        assert_eq!(judge_paired_runs(&[], 0.05).verdict, RunsVerdict::Undecided);
    }

    #[test]
    fn signed_rank_critical_values_are_the_tables() {
        // Two-sided 5 % (Hollander & Wolfe, table A.4): none below 6 pairs.
        assert_eq!(signed_rank_critical(5, 0.05), None);
        assert_eq!(signed_rank_critical(6, 0.05), Some(0));
        assert_eq!(signed_rank_critical(10, 0.05), Some(8));
        assert_eq!(signed_rank_critical(20, 0.05), Some(52));
        assert_eq!(signed_rank_critical(30, 0.05), Some(137));
        // The normal approximation goes on where the exact count stops.
        let (exact, approximate) = (signed_rank_critical(60, 0.05).unwrap(), signed_rank_critical(61, 0.05).unwrap());
        assert!(approximate > exact && approximate - exact < 40, "{exact} {approximate}");
    }

    #[test]
    fn hodges_lehmann_of_paired_log_ratios() {
        // Log ratios 0.00, 0.01, ..., 0.09: the Walsh averages' median is
        // 0.045; with 10 pairs the 9th smallest and largest of the 55 bound
        // the interval: 0.02 and 0.07 (testdata/bench52/judge.py agrees).
        let pairs: Vec<RunPair> = (0..10).map(|i| RunPair { base: 1.0, head: (0.01 * i as f64).exp() }).collect();
        let judged = judge_paired_ranks(&pairs, 0.05);
        assert!(close(judged.change, 0.045f64.exp() - 1.0), "{judged:?}");
        assert!(close(judged.interval.low, 0.02f64.exp() - 1.0), "{judged:?}");
        assert!(close(judged.interval.high, 0.07f64.exp() - 1.0), "{judged:?}");
        assert_eq!(
            (judged.method, judged.paired, judged.verdict),
            (ChangeMethod::HodgesLehmann, true, RunsVerdict::Undecided)
        );
        // One pair far off moves the estimate by its rank only.
        let mut wild = pairs.clone();
        wild[9].head = 2.0;
        let robust = judge_paired_ranks(&wild, 0.05);
        assert!(close(robust.change, judged.change), "{robust:?}");
        assert!(judge_paired_runs(&wild, 0.05).change > 0.1);
        // Five pairs give no 95 % interval.
        assert_eq!(judge_paired_ranks(&pairs[..5], 0.05).interval.high, f64::INFINITY);
    }

    #[test]
    fn rounds_to_decide_from_the_spread() {
        // Ten pairs around no change with a spread of 0.1: the least n whose
        // t interval fits within ±5 %.
        let ratios = [0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.05, -0.05];
        let pairs: Vec<RunPair> = ratios.iter().map(|ratio: &f64| RunPair { base: 1.0, head: ratio.exp() }).collect();
        let judged = judge_paired_runs(&pairs, 0.05);
        assert_eq!(judged.verdict, RunsVerdict::Undecided);
        let rounds = judged.rounds_to_decide().unwrap();
        let fits =
            |n: usize| student_t_critical(0.05, n as f64 - 1.0) * judged.log_spread / (n as f64).sqrt() <= 1.05f64.ln();
        assert!(fits(rounds) && !fits(rounds - 1), "{rounds}");
        assert!((15..30).contains(&rounds), "{rounds}");
        // Decided: nothing to forecast; on the threshold: no number would do.
        assert_eq!(judge_paired_runs(&pairs[..2], 10.0).rounds_to_decide(), None);
        // Said in rounds, and in minutes where a round's time is known.
        let more = rounds - 10;
        assert_eq!(
            decision_forecast(&judged, RoundCost::default()).unwrap(),
            format!("±5 % would need about {rounds} rounds ({more} more)")
        );
        assert_eq!(
            decision_forecast(&judged, RoundCost { seconds: Some(30.0), parallel_outputs: 1 }).unwrap(),
            format!("±5 % would need about {rounds} rounds ({more} more, about {:.0} min)", more as f64 * 0.5)
        );
        // Three outputs merged (three CI jobs) add their rounds at once.
        let in_each = more.div_ceil(3);
        assert_eq!(
            decision_forecast(&judged, RoundCost { seconds: Some(60.0), parallel_outputs: 3 }).unwrap(),
            format!(
                "±5 % would need about {rounds} rounds ({more} more: {in_each} in each of 3 outputs, about {in_each} min)"
            )
        );
        let at = 1.05f64.ln();
        let on_threshold =
            [RunPair { base: 1.0, head: (at + 0.1).exp() }, RunPair { base: 1.0, head: (at - 0.1).exp() }];
        assert_eq!(judge_paired_runs(&on_threshold, 0.05).rounds_to_decide(), None);
    }

    #[test]
    fn more_confidence_widens_the_interval() {
        let (base, head) = ([100.0, 104.0, 97.0, 102.0], [108.0, 111.0, 105.0, 110.0]);
        let at_95 = judge_runs_at(&base, &head, 0.05, 0.95);
        let at_99 = judge_runs_at(&base, &head, 0.05, 0.99);
        assert!(close(at_95.change, at_99.change));
        assert!(at_99.interval.low < at_95.interval.low && at_99.interval.high > at_95.interval.high);
        assert!(at_99.minimum_detectable > at_95.minimum_detectable);
    }
}
