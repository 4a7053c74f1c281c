//! TEMPORARY stub of bench46's runs.rs (contract signature), not committed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeInterval {
    pub low: f64,
    pub high: f64,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsVerdict {
    Regressed,
    Improved,
    Unchanged,
    Undecided,
}
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunsChange {
    pub change: f64,
    pub interval: ChangeInterval,
    pub minimum_detectable: f64,
    pub verdict: RunsVerdict,
    pub base_runs: usize,
    pub head_runs: usize,
}
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}
pub fn judge_runs(base: &[f64], head: &[f64], threshold: f64) -> RunsChange {
    let logs = |values: &[f64]| values.iter().map(|value| value.max(1e-12).ln()).collect::<Vec<_>>();
    let (lb, lh) = (logs(base), logs(head));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let var = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64
    };
    let change = median(head) / median(base) - 1.0;
    let (n, m) = (base.len(), head.len());
    if n < 2 || m < 2 {
        return RunsChange {
            change,
            interval: ChangeInterval { low: f64::NEG_INFINITY, high: f64::INFINITY },
            minimum_detectable: f64::INFINITY,
            verdict: RunsVerdict::Undecided,
            base_runs: n,
            head_runs: m,
        };
    }
    let se = (var(&lb) / n as f64 + var(&lh) / m as f64).sqrt();
    let d = mean(&lh) - mean(&lb);
    let t = 2.2;
    let interval = ChangeInterval { low: (d - t * se).exp() - 1.0, high: (d + t * se).exp() - 1.0 };
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
        change: d.exp() - 1.0,
        interval,
        minimum_detectable: (2.0 * t * se).exp() - 1.0,
        verdict,
        base_runs: n,
        head_runs: m,
    }
}
