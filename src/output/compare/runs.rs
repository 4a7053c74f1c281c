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
    RunsChange::of_log_difference(difference, half_width, threshold, (base_runs, head_runs), false)
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
    let half_width = if runs < 2 {
        f64::INFINITY
    } else {
        let variance = ratios.iter().map(|ratio| (ratio - difference).powi(2)).sum::<f64>() / (runs - 1) as f64;
        let standard_error = (variance / runs as f64).sqrt();
        if standard_error == 0.0 {
            0.0
        } else {
            student_t_critical(1.0 - confidence, (runs - 1) as f64) * standard_error
        }
    };
    RunsChange::of_log_difference(difference, half_width, threshold, (runs, runs), true)
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
        }
    }

    /// The change from the difference of mean log times and its interval's
    /// half-width, judged against `threshold`.
    fn of_log_difference(
        difference: f64,
        half_width: f64,
        threshold: f64,
        (base_runs, head_runs): (usize, usize),
        paired: bool,
    ) -> RunsChange {
        let change = difference.exp() - 1.0;
        let interval =
            ChangeInterval { low: (difference - half_width).exp() - 1.0, high: (difference + half_width).exp() - 1.0 };
        let minimum_detectable = (1.0 + threshold) * half_width.exp() - 1.0;
        let verdict = if interval.low > threshold {
            RunsVerdict::Regressed
        } else if interval.high < -threshold {
            RunsVerdict::Improved
        } else if interval.low > -threshold && interval.high < threshold {
            RunsVerdict::Unchanged
        } else {
            RunsVerdict::Undecided
        };
        RunsChange { change, interval, minimum_detectable, verdict, base_runs, head_runs, paired }
    }
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
    fn more_confidence_widens_the_interval() {
        let (base, head) = ([100.0, 104.0, 97.0, 102.0], [108.0, 111.0, 105.0, 110.0]);
        let at_95 = judge_runs_at(&base, &head, 0.05, 0.95);
        let at_99 = judge_runs_at(&base, &head, 0.05, 0.99);
        assert!(close(at_95.change, at_99.change));
        assert!(at_99.interval.low < at_95.interval.low && at_99.interval.high > at_95.interval.high);
        assert!(at_99.minimum_detectable > at_95.minimum_detectable);
    }
}
