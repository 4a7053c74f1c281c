//! Change points of a series of commits as Apache Otava (formerly
//! DataStax's Hunter) finds them: D. Fleming et al., "Hunter: Using Change
//! Point Detection to Hunt for Performance Regressions", ICPE 2023;
//! `otava/analysis.py`, `compute_change_points`. E-divisive means (Matteson
//! & James, "A Nonparametric Approach for Multiple Change Point Analysis of
//! Multivariate Data", JASA 109(505), 2014) proposes the splits, and a
//! Student t test between the commits on either side decides them.
//!
//! 1. Split: over windows of [`ChangePointOptions::window`] commits that
//!    overlap by half, the split that most separates a segment's runs by
//!    energy distance is kept while its t test's p-value is at most ten
//!    times the significance (Otava's "weak" change points), then the same
//!    within each part.
//! 2. Merge: over the whole series, the weakest change point (largest
//!    p-value, each tested between its neighbours) is dropped while its
//!    p-value exceeds the significance, and the others are tested again.
//!
//! Three differences from Otava, each measured (docs/history.md):
//! - The t test's values are the commits' means over their runs (a
//!   commit's runs share its moment on the machine: the commit, not the
//!   run, is the unit), with sample variances (Otava passes population
//!   standard deviations to scipy's `ttest_ind_from_stats`, a smaller
//!   variance); the energy distance is over every run, split only between
//!   commits.
//! - A p-value is multiplied by the number of splits its segment allows
//!   (Bonferroni): the split tested is the best of them, and tested as if
//!   chosen beforehand, 2 % of histories of unchanged code had a change
//!   point at p 0.001 and 21 % at 0.01.
//! - When the merge drops a change point, its neighbours move to the best
//!   split between their new neighbours (Otava leaves them: of two steps a
//!   few commits apart, the one dropped left the other labelled at the
//!   smaller step).
//!
//! Unlike a permutation test (the paper's), the t test has no floor: a step
//! of 3 commits in 9 can be found, and so can a last commit unlike all
//! before it, which no shuffle of whole commits can show.

use crate::output::compare::noise::{student_t_critical, student_t_two_sided_p};

/// How change points are searched and tested.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointOptions {
    /// A change point is kept when its t test's p-value is at most this
    /// (Otava's `max_pvalue`).
    pub significance: f64,
    /// Commits per window of the split step (Otava's `window_len`).
    pub window: usize,
    /// The fewest commits on each side of a split.
    pub least_segment: usize,
}

/// The defaults: significance 0.005 (no change point in 300 shuffled
/// histories of the 40 commits of unchanged code of testdata/bench52 nor in
/// the history as they ran; 5 in 300 at 0.05: docs/history.md), windows of
/// 50 commits (Otava's), and a last commit alone may be a change.
pub const DEFAULT_OPTIONS: ChangePointOptions =
    ChangePointOptions { significance: 0.005, window: 50, least_segment: 1 };

impl Default for ChangePointOptions {
    fn default() -> ChangePointOptions {
        DEFAULT_OPTIONS
    }
}

/// A change point: the index of the first commit after the change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first commit of the new segment.
    pub index: usize,
    /// The t test's p-value between the commits from the previous change
    /// point to this one and from this one to the next.
    pub p_value: f64,
    /// The split's statistic Q̂ when it was proposed.
    pub statistic: f64,
}

/// The best split of `values[start..end]` at one of `splits` (indices
/// into `values`, ascending, inside the segment): its index and Q̂.
fn best_split(values: &[f64], start: usize, end: usize, splits: &[usize]) -> Option<(usize, f64)> {
    let length = end.checked_sub(start)?;
    if length < 2 || splits.is_empty() {
        return None;
    }
    let segment = &values[start..end];
    // Sums of distances: each value to those before it, and to those after.
    let distance = |left: usize, right: usize| (segment[left] - segment[right]).abs();
    let total: f64 = (0..length)
        .flat_map(|left| (left + 1..length).map(move |right| (left, right)))
        .fold(0.0, |sum, (left, right)| sum + distance(left, right));
    // within_left: pairs inside [0, split); within_right: inside [split, length).
    let mut within_left = 0.0;
    let mut within_right = total;
    let mut best: Option<(usize, f64)> = None;
    let mut candidates = splits.iter().map(|split| split - start).peekable();
    for split in 1..length {
        // Move value split-1 from the right part to the left part.
        let moved = split - 1;
        for other in 0..moved {
            within_left += distance(other, moved);
        }
        for other in split..length {
            within_right -= distance(moved, other);
        }
        if candidates.peek() != Some(&split) {
            continue;
        }
        candidates.next();
        let (left_count, right_count) = (split, length - split);
        let between = total - within_left - within_right;
        let (left, right) = (left_count as f64, right_count as f64);
        let pairs = |count: f64| count * (count - 1.0) / 2.0;
        let mean_within = |sum: f64, count: f64| if count < 2.0 { 0.0 } else { sum / pairs(count) };
        let energy = 2.0 * between / (left * right) - mean_within(within_left, left) - mean_within(within_right, right);
        let statistic = left * right / (left + right) * energy;
        if best.is_none_or(|(_, best)| statistic > best) {
            best = Some((start + split, statistic));
        }
    }
    best
}

/// Where each commit's runs start in the flattened values, and the end.
struct CommitBounds(Vec<usize>);

impl CommitBounds {
    /// The splits allowed in the segment of commits `first..end`: between
    /// commits, `least` commits a side; as indices into the values.
    fn splits(&self, first: usize, end: usize, least: usize) -> Vec<usize> {
        let least = least.max(1);
        (first + least..=end.saturating_sub(least)).map(|commit| self.0[commit]).collect()
    }
}

/// The largest statistic over the segments' best splits, as a commit index
/// and Q̂; `segments` are commit indices.
fn largest_split(values: &[f64], commits: &CommitBounds, segments: &[usize], least: usize) -> Option<(usize, f64)> {
    segments
        .windows(2)
        .filter_map(|segment| {
            let splits = commits.splits(segment[0], segment[1], least);
            let (index, statistic) = best_split(values, commits.0[segment[0]], commits.0[segment[1]], &splits)?;
            Some((commits.0.partition_point(|start| *start < index), statistic))
        })
        .fold(None, |best: Option<(usize, f64)>, split| match best {
            Some(best) if best.1 >= split.1 => Some(best),
            _ => Some(split),
        })
}

/// Two samples as Student's two-sample t test sees them (pooled variance).
struct PooledSamples {
    /// `mean(right) - mean(left)`.
    difference: f64,
    /// The pooled variance times `1/m + 1/n`: the difference's variance.
    variance: f64,
    /// `m + n - 2`.
    degrees: f64,
}

impl PooledSamples {
    /// `None` with fewer than 3 values (no degree of freedom: Otava's rule).
    fn of(left: &[f64], right: &[f64]) -> Option<PooledSamples> {
        let (left_count, right_count) = (left.len() as f64, right.len() as f64);
        let degrees = left_count + right_count - 2.0;
        if left.is_empty() || right.is_empty() || degrees < 1.0 {
            return None;
        }
        let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
        let squares = |values: &[f64], mean: f64| values.iter().map(|value| (value - mean).powi(2)).sum::<f64>();
        let (left_mean, right_mean) = (mean(left), mean(right));
        let pooled = (squares(left, left_mean) + squares(right, right_mean)) / degrees;
        Some(PooledSamples {
            difference: right_mean - left_mean,
            variance: pooled * (1.0 / left_count + 1.0 / right_count),
            degrees,
        })
    }
}

/// Two-sided p-value of Student's t test (pooled variance) between two
/// samples; 1 where there are fewer than 3 values and where both are
/// constant and equal.
pub fn student_t_test(left: &[f64], right: &[f64]) -> f64 {
    let Some(samples) = PooledSamples::of(left, right) else {
        return 1.0;
    };
    if samples.variance == 0.0 {
        return if samples.difference == 0.0 { 1.0 } else { 0.0 };
    }
    let t = samples.difference / samples.variance.sqrt();
    if t.is_nan() { 1.0 } else { student_t_two_sided_p(t, samples.degrees) }
}

/// A difference of means with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanDifference {
    /// `mean(right) - mean(left)`.
    pub difference: f64,
    /// The interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

/// `mean(right) - mean(left)` with its Student t interval at `confidence`
/// (the interval of [`student_t_test`], so a change it finds at p ≤ 1 -
/// `confidence` has an interval that leaves out 0); `None` with fewer than
/// 3 values.
pub fn student_t_interval(left: &[f64], right: &[f64], confidence: f64) -> Option<MeanDifference> {
    let samples = PooledSamples::of(left, right)?;
    let half_width = student_t_critical(1.0 - confidence, samples.degrees) * samples.variance.sqrt();
    let difference = samples.difference;
    Some(MeanDifference { difference, low: difference - half_width, high: difference + half_width })
}

/// A series of commits: every run's value, where each commit's runs
/// start, and each commit's mean (`None` for a commit without runs).
struct Series {
    values: Vec<f64>,
    bounds: CommitBounds,
    means: Vec<Option<f64>>,
    /// The fewest commits a side.
    least: usize,
}

impl Series {
    fn new(commits: &[Vec<f64>], least: usize) -> Series {
        let mut values = Vec::new();
        let mut starts = vec![0];
        for runs in commits {
            values.extend_from_slice(runs);
            starts.push(values.len());
        }
        let means = commits
            .iter()
            .map(|runs| (!runs.is_empty()).then(|| runs.iter().sum::<f64>() / runs.len() as f64))
            .collect();
        Series { values, bounds: CommitBounds(starts), means, least: least.max(1) }
    }

    /// The t test between commits `start..index` and `index..end`, times
    /// the splits `start..end` allows (Bonferroni: the split tested is the
    /// best of them, not one chosen beforehand).
    fn p_value(&self, start: usize, index: usize, end: usize) -> f64 {
        let means = |range: std::ops::Range<usize>| self.means[range].iter().flatten().copied().collect::<Vec<f64>>();
        let splits = (end - start + 1).saturating_sub(2 * self.least).max(1);
        (student_t_test(&means(start..index), &means(index..end)) * splits as f64).min(1.0)
    }

    /// Each change point's p-value between its neighbours (`indices`
    /// ascending), the series' ends outside the first and last.
    fn p_values(&self, indices: &[usize]) -> Vec<f64> {
        (0..indices.len())
            .map(|at| {
                let start = if at == 0 { 0 } else { indices[at - 1] };
                let end = indices.get(at + 1).copied().unwrap_or(self.means.len());
                self.p_value(start, indices[at], end)
            })
            .collect()
    }

    /// E-divisive within commits `start..end`: the largest split over the
    /// current segments, kept while its t test between its segment's parts
    /// is at most `significance`.
    fn split_window(&self, start: usize, end: usize, significance: f64) -> Vec<(usize, f64)> {
        let mut segments = vec![start, end];
        let mut found = Vec::new();
        while let Some((index, statistic)) = largest_split(&self.values, &self.bounds, &segments, self.least) {
            let at = segments.partition_point(|bound| *bound < index);
            if self.p_value(segments[at - 1], index, segments[at]) > significance {
                break;
            }
            found.push((index, statistic));
            segments.insert(at, index);
        }
        found
    }
}

/// The change points of a series of commits, each its runs' values (in the
/// order of the commits), by Otava's split and merge (the module's
/// comment). A commit without values counts as none.
pub fn e_divisive(commits: &[Vec<f64>], options: &ChangePointOptions) -> Vec<ChangePoint> {
    let series = Series::new(commits, options.least_segment);
    let count = commits.len();
    let window = options.window.max(2);
    // Otava's first pass: ten times the significance below 0.05, twice it
    // below 0.5.
    let weak = match options.significance {
        significance if significance < 0.05 => significance * 10.0,
        significance if significance < 0.5 => significance * 2.0,
        significance => significance,
    };
    let mut proposed: Vec<(usize, f64)> = Vec::new();
    let mut start = 0;
    while start < count {
        let end = (start + window).min(count);
        let found = series.split_window(start, end, weak);
        let last = found.iter().map(|(index, _)| *index).max().unwrap_or(0);
        for point in found {
            if !proposed.iter().any(|(index, _)| *index == point.0) {
                proposed.push(point);
            }
        }
        start = last.max(start + window / 2);
    }
    proposed.sort_by_key(|(index, _)| *index);
    // Merge: drop the weakest while it is not significant.
    loop {
        let indices: Vec<usize> = proposed.iter().map(|(index, _)| *index).collect();
        let p_values = series.p_values(&indices);
        let weakest = p_values.iter().enumerate().fold(None, |weakest: Option<(usize, f64)>, (at, p)| match weakest {
            Some((_, largest)) if largest >= *p => weakest,
            _ => Some((at, *p)),
        });
        match weakest {
            Some((at, p)) if p > options.significance => {
                proposed.remove(at);
                // Its neighbours' segments grew: each moves to the best
                // split between its new neighbours (Otava keeps them where
                // they were: two steps a few commits apart, one dropped,
                // left the other at the smaller step).
                for neighbour in [at.checked_sub(1), (at < proposed.len()).then_some(at)].into_iter().flatten() {
                    let start = if neighbour == 0 { 0 } else { proposed[neighbour - 1].0 };
                    let end = proposed.get(neighbour + 1).map_or(count, |point| point.0);
                    if let Some(best) = largest_split(&series.values, &series.bounds, &[start, end], series.least) {
                        proposed[neighbour] = best;
                    }
                }
            }
            _ => {
                return proposed
                    .iter()
                    .zip(p_values)
                    .map(|(&(index, statistic), p_value)| ChangePoint { index, p_value, statistic })
                    .collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_found_where_it_is() {
        let mut values: Vec<f64> = (0..12).map(|index| 1.0 + 0.01 * ((index * 7 % 5) as f64)).collect();
        values.extend((0..8).map(|index| 1.3 + 0.01 * ((index * 3 % 4) as f64)));
        let found = e_divisive(&one_run_each(&values), &DEFAULT_OPTIONS);
        assert_eq!(found.iter().map(|point| point.index).collect::<Vec<_>>(), [12]);
        assert!(found[0].p_value < 1e-12, "{found:?}");
    }

    #[test]
    fn two_steps_and_none() {
        let mut values = vec![1.0, 1.02, 0.99, 1.01, 1.0, 0.98, 1.01, 0.99];
        values.extend([2.0, 2.01, 1.99, 2.02, 2.0, 1.98, 2.01, 2.0]);
        values.extend([1.5, 1.49, 1.51, 1.52, 1.5, 1.48, 1.51, 1.5]);
        let found: Vec<usize> =
            e_divisive(&one_run_each(&values), &DEFAULT_OPTIONS).iter().map(|point| point.index).collect();
        assert_eq!(found, [8, 16]);
        let flat = [1.0, 1.02, 0.99, 1.01, 1.0, 0.98, 1.01, 1.0, 0.99];
        assert!(e_divisive(&one_run_each(&flat), &DEFAULT_OPTIONS).is_empty());
        // Two commits: no degree of freedom, however far apart.
        assert!(e_divisive(&one_run_each(&[1.0, 2.0]), &DEFAULT_OPTIONS).is_empty());
    }

    /// Each value a commit of one run.
    fn one_run_each(values: &[f64]) -> Vec<Vec<f64>> {
        values.iter().map(|value| vec![*value]).collect()
    }

    /// Three runs a commit: a step of four commits after eight is found
    /// between commits, and so is a last commit whose runs are all slower
    /// (a permutation of whole commits could not show it: p ≥ 1/9).
    #[test]
    fn a_step_and_a_last_commit() {
        let steady = |index: usize| vec![1.0 + 0.01 * (index % 3) as f64, 1.01, 0.99 + 0.005 * (index % 2) as f64];
        let mut commits: Vec<Vec<f64>> = (0..8).map(steady).collect();
        commits.extend((0..4).map(|index| steady(index).iter().map(|value| value + 0.5).collect::<Vec<f64>>()));
        let found = e_divisive(&commits, &DEFAULT_OPTIONS);
        assert_eq!(found.iter().map(|point| point.index).collect::<Vec<_>>(), [8]);
        let mut last_slow: Vec<Vec<f64>> = (0..8).map(steady).collect();
        last_slow.push(vec![1.5, 1.52, 1.49]);
        assert_eq!(e_divisive(&last_slow, &DEFAULT_OPTIONS).iter().map(|point| point.index).collect::<Vec<_>>(), [8]);
        // Two commits a side at the least: the last commit alone is no segment.
        let options = ChangePointOptions { least_segment: 2, ..DEFAULT_OPTIONS };
        assert!(e_divisive(&last_slow, &options).is_empty());
    }

    /// Windows of 10 commits over 40: each of three steps is found, the
    /// middle ones by windows that overlap them.
    #[test]
    fn windows_find_every_step() {
        let level = |index: usize| match index {
            0..12 => 1.0,
            12..25 => 1.2,
            25..33 => 0.9,
            _ => 1.1,
        };
        let values: Vec<f64> = (0..40).map(|index| level(index) + 0.01 * ((index * 7 % 5) as f64)).collect();
        let options = ChangePointOptions { window: 10, ..DEFAULT_OPTIONS };
        let found: Vec<usize> = e_divisive(&one_run_each(&values), &options).iter().map(|point| point.index).collect();
        assert_eq!(found, [12, 25, 33]);
    }

    /// R's `t.test(c(1,2,3,4), c(3,4,5,6,7), var.equal = TRUE)`: t =
    /// −2.5459, df = 7, p = 0.03833.
    #[test]
    fn the_t_test_is_students() {
        let p = student_t_test(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0, 7.0]);
        assert!((p - 0.038334).abs() < 1e-5, "{p}");
        assert_eq!(student_t_test(&[1.0], &[2.0]), 1.0);
        assert_eq!(student_t_test(&[1.0, 1.0], &[2.0]), 0.0);
        assert_eq!(student_t_test(&[1.0, 1.0], &[1.0]), 1.0);
        // Its 95 % interval: 2.5 ± 2.3646 · 0.98198.
        let interval = student_t_interval(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0, 7.0], 0.95).unwrap();
        assert!((interval.difference - 2.5).abs() < 1e-12, "{interval:?}");
        assert!((interval.low - 0.17800).abs() < 1e-4 && (interval.high - 4.82200).abs() < 1e-4, "{interval:?}");
        assert_eq!(student_t_interval(&[1.0], &[2.0], 0.95), None);
    }

    #[test]
    fn the_split_statistic_is_the_papers() {
        // X = [0, 0], Y = [1, 1, 1]: between 1, within 0; Q = 2*3/5 * 2 = 2.4.
        let (index, statistic) = best_split(&[0.0, 0.0, 1.0, 1.0, 1.0], 0, 5, &[2]).unwrap();
        assert_eq!(index, 2);
        assert!((statistic - 2.4).abs() < 1e-12, "{statistic}");
    }
}
