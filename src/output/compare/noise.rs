//! When a change is beyond noise (docs/compare.md states the model):
//!
//! - time per iteration: the profile's CPU time per iteration when both
//!   sides give one (the samples in the benchmark's windows over the
//!   iterations the harness timed), beyond noise when it moved by at least
//!   [`cpu_floor`]: on a loaded machine the wall-clock timings of a suite
//!   of few long iterations move by up to +222 % between runs of the same
//!   code (testdata/benchsuite), its CPU time by up to 17 %. Else the
//!   harness's median when both sides give one,
//!   beyond noise when it moved by at least [`MEDIAN_FLOOR`] (what
//!   unchanged code's median moves between two runs). Else Welch's t-test
//!   on the means, standard deviations and sample counts, two-sided at
//!   [`TIME_ALPHA`], and a relative change of the mean of at least
//!   [`MEAN_FLOOR`]. Welch's test is always computed and shown; it does not
//!   decide when medians are given because the means of timings on a
//!   loaded machine carry preemption and GC pauses of tens of
//!   milliseconds that Welch's model (independent samples) does not
//!   expect: an unchanged pair of testdata/compare moved its mean by 28 %
//!   at p < 0.001 while its median moved by 3.7 %;
//! - a function's self share: a two-proportion z-test on its self samples
//!   of each side's samples (each sample lands in the function or not),
//!   `|z|` at least [`SHARE_Z`], and a change of at least
//!   [`SHARE_FLOOR`] (samples of one run are not independent: a program's
//!   phases move whole blocks of them, which the binomial model does not
//!   see; the floor is measured on unchanged pairs).

/// Two-sided significance level of the time-per-iteration test.
pub const TIME_ALPHA: f64 = 0.001;

/// The least relative change of the median time per iteration that
/// counts: the 10 unchanged pairs of testdata/compare moved theirs by 3.9 %
/// at most (docs/compare.md).
pub const MEDIAN_FLOOR: f64 = 0.10;

/// The least relative change of the mean time per iteration that counts
/// when a side gives no median: the same pairs moved theirs by 28 %.
pub const MEAN_FLOOR: f64 = 0.30;

/// The least `|z|` of a self-share change. 3.29 would be two-sided 0.001
/// for independent samples; a profile's are not (V8 inlining a function
/// or not moves whole blocks of them): over the floor, unchanged pairs of
/// testdata/benchsuite reach |z| = 4.28, its slowed inlined isEmpty 9.55,
/// and clampPart leaving versionKey in testdata/compare 5.96
/// (docs/compare.md).
pub const SHARE_Z: f64 = 5.0;

/// The least relative change of CPU time per iteration that counts, with
/// `iterations` the fewer iterations of the two sides: 10 %, or
/// [`CPU_FLOOR_SCALE`] / √iterations for suites of few iterations (the
/// iterations' run-to-run spread averages out as 1/√n).
pub fn cpu_floor(iterations: f64) -> f64 {
    MEDIAN_FLOOR.max(CPU_FLOOR_SCALE / iterations.max(1.0).sqrt())
}

/// Unchanged pairs of testdata/benchsuite moved CPU per iteration by at
/// most 0.547/√n (17.3 % at 10 iterations), its slowed head by at least
/// 1.15/√n; 0.80 sits in between (×1.46 each side).
pub const CPU_FLOOR_SCALE: f64 = 0.80;

/// The least self-share change that counts, as a share (0.01 is one
/// percentage point): the largest change of any function between unchanged
/// pairs, rounded up (docs/compare.md).
pub const SHARE_FLOOR: f64 = 0.025;

/// A harness's timing of one benchmark: the mean time per iteration, its
/// spread and how many iterations it timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Mean, ns.
    pub mean: f64,
    /// Standard deviation of the iterations' times, ns.
    pub stddev: f64,
    /// Iterations timed.
    pub samples: f64,
    /// Median, ns, when the harness gives it.
    pub median: Option<f64>,
    /// The fastest timing, ns, when the harness gives it.
    pub min: Option<f64>,
    /// CPU time per iteration from the profile (its samples' weight in
    /// the benchmark's windows over the iterations timed), ns.
    pub cpu_per_iteration: Option<f64>,
}

/// Which statistic of time per iteration a change judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The profile's CPU time per iteration.
    Cpu,
    /// The harness's median.
    Median,
    /// The harness's mean.
    Mean,
    /// The harness's fastest timing.
    Minimum,
}

impl Statistic {
    /// `CPU`, `median`, `mean`: as in "median time per iteration".
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Cpu => "CPU",
            Statistic::Median => "median",
            Statistic::Mean => "mean",
            Statistic::Minimum => "fastest",
        }
    }

    /// The statistic of one side, ns.
    pub fn of(self, timing: Timing) -> f64 {
        match self {
            Statistic::Cpu => timing.cpu_per_iteration.unwrap_or(timing.mean),
            Statistic::Median => timing.median.unwrap_or(timing.mean),
            Statistic::Mean => timing.mean,
            Statistic::Minimum => timing.min.unwrap_or(timing.mean),
        }
    }
}

/// The verdict on a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Beyond noise, worse.
    Regressed,
    /// Beyond noise, better.
    Improved,
    /// Within noise.
    Unchanged,
    /// Over several runs per side: the change's interval holds both a
    /// change beyond the threshold and none; more runs would tell.
    Undecided,
}

impl Verdict {
    /// `regressed`, `improved`, `within noise`, `undecided`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unchanged => "within noise",
            Verdict::Undecided => "undecided",
        }
    }
}

/// A time-per-iteration change judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeChange {
    /// Head over base minus one of the statistic judged (CPU per
    /// iteration, else the median, else the mean): 0.25 is 25 % slower.
    pub relative: f64,
    /// The statistic judged.
    pub statistic: Statistic,
    /// Head over base minus one of the means.
    pub mean_relative: f64,
    /// The noise band, relative: the floor, and for means also the
    /// t-test's critical change when larger.
    pub noise: f64,
    /// Welch's two-sided p-value of the means.
    pub p_value: f64,
    /// The verdict.
    pub verdict: Verdict,
}

/// Judges base → head time per iteration: CPU per iteration against
/// [`cpu_floor`], else the medians against
/// [`MEDIAN_FLOOR`], or without medians Welch's t-test
/// (<https://en.wikipedia.org/wiki/Welch%27s_t-test>) at [`TIME_ALPHA`]
/// and [`MEAN_FLOOR`].
pub fn judge_time(base: Timing, head: Timing) -> TimeChange {
    let ratio = |base: f64, head: f64| if base > 0.0 { head / base - 1.0 } else { 0.0 };
    let mean_relative = ratio(base.mean, head.mean);
    let base_variance = base.stddev.powi(2) / base.samples.max(1.0);
    let head_variance = head.stddev.powi(2) / head.samples.max(1.0);
    let standard_error = (base_variance + head_variance).sqrt();
    let (p_value, critical) = if standard_error > 0.0 && base.samples >= 2.0 && head.samples >= 2.0 {
        let t = (head.mean - base.mean) / standard_error;
        let degrees = (base_variance + head_variance).powi(2)
            / (base_variance.powi(2) / (base.samples - 1.0) + head_variance.powi(2) / (head.samples - 1.0));
        let p_value = student_t_two_sided_p(t.abs(), degrees);
        (p_value, student_t_critical(TIME_ALPHA, degrees) * standard_error)
    } else {
        // No spread given: only the floor judges.
        (if head.mean == base.mean { 1.0 } else { 0.0 }, 0.0)
    };
    let (relative, statistic, noise, beyond) =
        match (base.cpu_per_iteration, head.cpu_per_iteration, base.median, head.median) {
            (Some(base_cpu), Some(head_cpu), _, _) if base_cpu > 0.0 => {
                let relative = ratio(base_cpu, head_cpu);
                let noise = cpu_floor(base.samples.min(head.samples));
                (relative, Statistic::Cpu, noise, relative.abs() >= noise)
            }
            (_, _, Some(base_median), Some(head_median)) if base_median > 0.0 => {
                let relative = ratio(base_median, head_median);
                (relative, Statistic::Median, MEDIAN_FLOOR, relative.abs() >= MEDIAN_FLOOR)
            }
            _ => {
                let noise = MEAN_FLOOR.max(if base.mean > 0.0 { critical / base.mean } else { 0.0 });
                (mean_relative, Statistic::Mean, noise, p_value < TIME_ALPHA && mean_relative.abs() >= noise)
            }
        };
    let verdict = match (beyond, relative > 0.0) {
        (false, _) => Verdict::Unchanged,
        (true, true) => Verdict::Regressed,
        (true, false) => Verdict::Improved,
    };
    TimeChange { relative, statistic, mean_relative, noise, p_value, verdict }
}

/// A self-share change judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareChange {
    /// Head minus base share.
    pub change: f64,
    /// The noise band, a share: the larger of the floor and the z-test's
    /// critical change.
    pub noise: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// When the function's own CPU time per iteration decided (see
    /// [`judge_own_time`]): its change, as a share of the benchmark's CPU
    /// time per iteration at base (1.6 is 160 % of it), and the noise band
    /// it beat.
    pub own_time: Option<OwnTimeChange>,
}

/// A function's own CPU time per iteration, changed by more than its
/// benchmark's noise allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OwnTimeChange {
    /// Head minus base own time per iteration, over the benchmark's CPU
    /// time per iteration at base.
    pub relative: f64,
    /// The benchmark's noise band, relative ([`cpu_floor`]).
    pub noise: f64,
}

/// Judges a function's self change inside a benchmark by its own CPU time
/// per iteration too (its self share times the benchmark's CPU time per
/// iteration). A share cannot show a function that holds most of a
/// benchmark getting slower: 80 % of the samples at base, 90 % at head,
/// though it runs three times longer. Its own time's growth counts when it
/// alone is beyond the benchmark's noise band, that is, when it alone would
/// be a regression of the benchmark (unchanged code: each function's own
/// time moves at most by the benchmark's move plus its share's,
/// docs/compare.md). Only the profile's CPU time per iteration is
/// used, never the wall clock's.
pub fn judge_own_time(share: ShareChange, base_share: f64, head_share: f64, time: &TimeChange) -> ShareChange {
    if share.verdict != Verdict::Unchanged || time.statistic != Statistic::Cpu {
        return share;
    }
    let relative = head_share * (1.0 + time.relative) - base_share;
    if relative.abs() < time.noise {
        return share;
    }
    let verdict = if relative > 0.0 { Verdict::Regressed } else { Verdict::Improved };
    ShareChange { verdict, own_time: Some(OwnTimeChange { relative, noise: time.noise }), ..share }
}

/// Judges a function's self share: `base_hits` of `base_samples` against
/// `head_hits` of `head_samples`, with the pooled two-proportion z-test
/// (<https://en.wikipedia.org/wiki/Two-proportion_Z-test>) and
/// [`SHARE_FLOOR`].
pub fn judge_share(base_hits: f64, base_samples: f64, head_hits: f64, head_samples: f64) -> ShareChange {
    let base_share = if base_samples > 0.0 { base_hits / base_samples } else { 0.0 };
    let head_share = if head_samples > 0.0 { head_hits / head_samples } else { 0.0 };
    let change = head_share - base_share;
    let pooled =
        if base_samples + head_samples > 0.0 { (base_hits + head_hits) / (base_samples + head_samples) } else { 0.0 };
    let standard_error = (pooled * (1.0 - pooled) * (1.0 / base_samples.max(1.0) + 1.0 / head_samples.max(1.0))).sqrt();
    let noise = SHARE_FLOOR.max(SHARE_Z * standard_error);
    let verdict = if change.abs() < noise {
        Verdict::Unchanged
    } else if change > 0.0 {
        Verdict::Regressed
    } else {
        Verdict::Improved
    };
    ShareChange { change, noise, verdict, own_time: None }
}

/// Two-sided p-value of Student's t with `degrees` degrees of freedom:
/// `I_{d/(d+t²)}(d/2, 1/2)`.
pub(crate) fn student_t_two_sided_p(t: f64, degrees: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    regularized_incomplete_beta(degrees / (degrees + t * t), degrees / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The `t` whose two-sided p-value is `alpha`, by bisection.
pub(crate) fn student_t_critical(alpha: f64, degrees: f64) -> f64 {
    let (mut low, mut high) = (0.0f64, 1e3f64);
    for _ in 0..100 {
        let middle = (low + high) / 2.0;
        if student_t_two_sided_p(middle, degrees) > alpha {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
}

/// `I_x(a, b)` by Lentz's continued fraction (Numerical Recipes, `betai`).
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_continued_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_continued_fraction(1.0 - x, b, a) / b
    }
}

fn beta_continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut fraction = d;
    for m in 1..300 {
        let m = m as f64;
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + even * d;
        d = if d.abs() < TINY { 1.0 / TINY } else { 1.0 / d };
        c = 1.0 + even / c;
        if c.abs() < TINY {
            c = TINY;
        }
        fraction *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + odd * d;
        d = if d.abs() < TINY { 1.0 / TINY } else { 1.0 / d };
        c = 1.0 + odd / c;
        if c.abs() < TINY {
            c = TINY;
        }
        let step = d * c;
        fraction *= step;
        if (step - 1.0).abs() < 1e-12 {
            break;
        }
    }
    fraction
}

/// `ln Γ(x)`, Lanczos (g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (index, coefficient) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += coefficient / (x + index as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 0.05 at 10 degrees of freedom: t = 2.228; 0.001 at 30: 3.646.
        assert!((student_t_critical(0.05, 10.0) - 2.228).abs() < 1e-3);
        assert!((student_t_critical(0.001, 30.0) - 3.646).abs() < 1e-3);
        assert!((student_t_two_sided_p(1.96, 1e6) - 0.05).abs() < 1e-3);
    }

    #[test]
    fn time_verdicts() {
        let base =
            Timing { mean: 1000.0, stddev: 50.0, samples: 500.0, median: None, min: None, cpu_per_iteration: None };
        assert_eq!(judge_time(base, Timing { mean: 1400.0, ..base }).verdict, Verdict::Regressed);
        assert_eq!(judge_time(base, Timing { mean: 1200.0, ..base }).verdict, Verdict::Unchanged);
        assert_eq!(judge_time(base, Timing { mean: 600.0, ..base }).verdict, Verdict::Improved);
        // A wide spread from few samples: not beyond noise.
        let few =
            Timing { mean: 1000.0, stddev: 900.0, samples: 5.0, median: None, min: None, cpu_per_iteration: None };
        assert_eq!(judge_time(few, Timing { mean: 1500.0, ..few }).verdict, Verdict::Unchanged);
        // Medians decide when both sides have one: testdata/compare's
        // unchanged pair 4 (mean +28 % at p < 0.001, median +3.7 %) and
        // its base and head (mean +7.7 %, median +22 %).
        let pair_a = Timing {
            mean: 1025.0,
            stddev: 1854.0,
            samples: 2919.0,
            median: Some(463.0),
            min: None,
            cpu_per_iteration: None,
        };
        let pair_b = Timing {
            mean: 1315.0,
            stddev: 2613.0,
            samples: 2271.0,
            median: Some(480.0),
            min: None,
            cpu_per_iteration: None,
        };
        let judged = judge_time(pair_a, pair_b);
        assert!(judged.p_value < TIME_ALPHA, "{judged:?}");
        assert_eq!(judged.verdict, Verdict::Unchanged);
        let base = Timing {
            mean: 1151.0,
            stddev: 2650.0,
            samples: 2603.0,
            median: Some(465.0),
            min: None,
            cpu_per_iteration: None,
        };
        let head = Timing {
            mean: 1240.0,
            stddev: 2009.0,
            samples: 2403.0,
            median: Some(568.0),
            min: None,
            cpu_per_iteration: None,
        };
        assert_eq!(judge_time(base, head).verdict, Verdict::Regressed);
    }

    #[test]
    fn own_time_verdicts() {
        let time = |relative: f64| TimeChange {
            relative,
            statistic: Statistic::Cpu,
            mean_relative: relative,
            noise: 0.25,
            p_value: 0.0,
            verdict: Verdict::Regressed,
        };
        // 80 % of the samples, then 90 % of three times as much: within
        // the share's noise, 190 % of the benchmark's time more.
        let share = judge_share(80.0, 100.0, 90.0, 100.0);
        assert_eq!(share.verdict, Verdict::Unchanged);
        let judged = judge_own_time(share, 0.8, 0.9, &time(2.0));
        assert_eq!(judged.verdict, Verdict::Regressed);
        assert!((judged.own_time.unwrap().relative - 1.9).abs() < 1e-9);
        // A benchmark 17 % slower, its function's share steady: within the
        // 25 % band.
        assert_eq!(judge_own_time(share, 0.8, 0.8, &time(0.17)).verdict, Verdict::Unchanged);
        // Not by the wall clock.
        let wall = TimeChange { statistic: Statistic::Median, ..time(2.0) };
        assert_eq!(judge_own_time(share, 0.8, 0.9, &wall).verdict, Verdict::Unchanged);
    }

    #[test]
    fn share_verdicts() {
        assert_eq!(judge_share(100.0, 3000.0, 600.0, 3000.0).verdict, Verdict::Regressed);
        assert_eq!(judge_share(100.0, 3000.0, 120.0, 3000.0).verdict, Verdict::Unchanged);
        // 1.5 points on 200 samples is within the binomial noise.
        assert_eq!(judge_share(20.0, 200.0, 23.0, 200.0).verdict, Verdict::Unchanged);
    }

    /// testdata/benchsuite's figures: CPU per iteration judges when both
    /// sides give it, against 0.80/√n. Pair 09 (unchanged, 26 and 10
    /// iterations, CPU +17.3 %, wall median +222 %) stays within noise;
    /// base-1 → head (17 and 18 iterations, CPU +30.9 %, wall median
    /// -9.7 %) regressed.
    #[test]
    fn cpu_per_iteration_verdicts() {
        let timing = |iterations: f64, median: f64, cpu: f64| Timing {
            mean: median,
            stddev: median / 3.0,
            samples: iterations,
            median: Some(median),
            min: None,
            cpu_per_iteration: Some(cpu),
        };
        let unchanged = judge_time(timing(26.0, 36.8, 27.2), timing(10.0, 118.5, 31.9));
        assert_eq!((unchanged.statistic, unchanged.verdict), (Statistic::Cpu, Verdict::Unchanged));
        assert!((unchanged.noise - 0.80 / 10f64.sqrt()).abs() < 1e-9);
        let slowed = judge_time(timing(17.0, 56.5, 22.0), timing(18.0, 51.0, 28.8));
        assert_eq!((slowed.statistic, slowed.verdict), (Statistic::Cpu, Verdict::Regressed));
        // Many iterations: the 10 % floor.
        assert_eq!(cpu_floor(2600.0), MEDIAN_FLOOR);
    }
}
