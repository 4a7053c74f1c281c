//! Change points of a series by E-divisive means (Matteson & James, "A
//! Nonparametric Approach for Multiple Change Point Analysis of
//! Multivariate Data", JASA 109(505), 2014; the method of R's `ecp`
//! package, of MongoDB's signal-processing-algorithms and of Apache
//! Otava, formerly Hunter): the split that most separates a segment's
//! values by energy distance, kept when a permutation test finds it
//! significant, then the same within each part, until no split is.
//!
//! Here α = 1 (absolute differences), each commit's runs as its values
//! (every run a point, as ecp takes several observations per time point
//! when they are exchangeable: a commit of 3 runs weighs three times one
//! run), a split only between commits, the split's end κ fixed at the
//! segment's end, each part at least [`ChangePointOptions::least_segment`]
//! commits, the runs shuffled within each segment for the permutation test,
//! and the permutations drawn from a fixed seed: the same series gives the
//! same change points.

/// How change points are searched and tested.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointOptions {
    /// A split is kept when its permutation p-value is at most this.
    pub significance: f64,
    /// Permutations per test.
    pub permutations: usize,
    /// The fewest commits on each side of a split.
    pub least_segment: usize,
    /// The permutations' seed.
    pub seed: u64,
}

/// The defaults: significance 0.01 (on 300 shuffled histories of the 40
/// commits of unchanged code of testdata/bench52, 3 runs each, 1 false
/// change point at 0.01, 16 at `ecp`'s 0.05: docs/history.md), 999
/// permutations (p-values to 0.001), parts of at least 2 commits (3 found
/// fast-xml-parser's 5.5.10 a release late), seed 53.
pub const DEFAULT_OPTIONS: ChangePointOptions =
    ChangePointOptions { significance: 0.01, permutations: 999, least_segment: 2, seed: 53 };

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
    /// The permutation test's p-value when it was kept.
    pub p_value: f64,
    /// The split's statistic Q̂.
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

/// SplitMix64 (Steele, Lea & Flood 2014): a small generator whose stream
/// depends on the seed alone, so the tests are reproducible.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut mixed = self.0;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        mixed ^ (mixed >> 31)
    }

    /// A uniform index below `bound` (Lemire's multiply-shift; the bias is
    /// below 2⁻⁵⁰ for the lengths of histories).
    fn below(&mut self, bound: usize) -> usize {
        ((self.next() as u128 * bound as u128) >> 64) as usize
    }

    /// Fisher–Yates.
    fn shuffle<T>(&mut self, values: &mut [T]) {
        for index in (1..values.len()).rev() {
            let other = self.below(index + 1);
            values.swap(index, other);
        }
    }
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

/// The change points of a series of commits, each its runs' values (in
/// the order of the commits), by E-divisive means with a permutation test:
/// each round the segment split whose statistic is largest is tested
/// against `permutations` shuffles of the commits within each segment
/// (ecp's procedure, with a commit's runs kept together: runs of one
/// commit share the machine's moment, so they are not exchangeable with
/// other commits' runs), p = (shuffles at least as large + 1) /
/// (permutations + 1). A commit without values counts as none.
pub fn e_divisive(commits: &[Vec<f64>], options: &ChangePointOptions) -> Vec<ChangePoint> {
    let mut random = SplitMix64(options.seed);
    let flatten = |order: &[usize]| -> (Vec<f64>, CommitBounds) {
        let mut values = Vec::new();
        let mut starts = Vec::with_capacity(order.len() + 1);
        starts.push(0);
        for &commit in order {
            values.extend_from_slice(&commits[commit]);
            starts.push(values.len());
        }
        (values, CommitBounds(starts))
    };
    let identity: Vec<usize> = (0..commits.len()).collect();
    let (values, bounds) = flatten(&identity);
    let mut segments = vec![0, commits.len()];
    let mut found: Vec<ChangePoint> = Vec::new();
    let mut order = identity.clone();
    while let Some((index, statistic)) = largest_split(&values, &bounds, &segments, options.least_segment) {
        let mut as_large = 0usize;
        for _ in 0..options.permutations {
            order.copy_from_slice(&identity);
            for segment in segments.windows(2) {
                random.shuffle(&mut order[segment[0]..segment[1]]);
            }
            let (shuffled, shuffled_bounds) = flatten(&order);
            let permuted = largest_split(&shuffled, &shuffled_bounds, &segments, options.least_segment)
                .map_or(0.0, |split| split.1);
            // The same split in another order sums the same distances in
            // another order: equal up to rounding, and counted as equal.
            if permuted >= statistic * (1.0 - 1e-9) {
                as_large += 1;
            }
        }
        let p_value = (as_large + 1) as f64 / (options.permutations + 1) as f64;
        if p_value > options.significance {
            break;
        }
        found.push(ChangePoint { index, p_value, statistic });
        let at = segments.partition_point(|bound| *bound < index);
        segments.insert(at, index);
    }
    found.sort_by_key(|point| point.index);
    found
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
        assert_eq!(found[0].p_value, 0.001);
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
        assert!(e_divisive(&one_run_each(&[1.0, 2.0]), &DEFAULT_OPTIONS).is_empty());
    }

    /// Each value a commit of one run.
    fn one_run_each(values: &[f64]) -> Vec<Vec<f64>> {
        values.iter().map(|value| vec![*value]).collect()
    }

    /// Three runs a commit: a step of four commits after eight is found
    /// between commits; one last commit whose runs are all slower is not
    /// (shuffling whole commits, it is as likely as any commit's moment to
    /// be the slow one: p ≥ 1/9).
    #[test]
    fn runs_of_a_commit_stay_together() {
        let steady = |index: usize| vec![1.0 + 0.01 * (index % 3) as f64, 1.01, 0.99 + 0.005 * (index % 2) as f64];
        let mut commits: Vec<Vec<f64>> = (0..8).map(steady).collect();
        commits.extend((0..4).map(|index| steady(index).iter().map(|value| value + 0.5).collect::<Vec<f64>>()));
        let found = e_divisive(&commits, &DEFAULT_OPTIONS);
        assert_eq!(found.iter().map(|point| point.index).collect::<Vec<_>>(), [8]);
        let mut one_slow: Vec<Vec<f64>> = (0..8).map(steady).collect();
        one_slow.push(vec![1.5, 1.52, 1.49]);
        let options = ChangePointOptions { least_segment: 1, ..DEFAULT_OPTIONS };
        assert!(e_divisive(&one_slow, &options).is_empty());
    }

    #[test]
    fn the_split_statistic_is_the_papers() {
        // X = [0, 0], Y = [1, 1, 1]: between 1, within 0; Q = 2*3/5 * 2 = 2.4.
        let (index, statistic) = best_split(&[0.0, 0.0, 1.0, 1.0, 1.0], 0, 5, &[2]).unwrap();
        assert_eq!(index, 2);
        assert!((statistic - 2.4).abs() < 1e-12, "{statistic}");
    }

    #[test]
    fn the_generator_is_splitmix64() {
        // The first output for seed 0 (the reference implementation's).
        assert_eq!(SplitMix64(0).next(), 0xE220_A839_7B1D_CDAF);
    }
}
