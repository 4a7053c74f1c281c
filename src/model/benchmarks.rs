//! The benchmarks a recorded program ran, each with the time windows of its
//! measured iterations on one thread, and the lookup that routes a sample
//! to the benchmark whose window it was taken in (`record` splits its
//! samples by it: [`crate::pipeline::engine`]).

use std::collections::HashMap;

use super::timeline::{ThreadId, Timeline};

/// A span of time on CLOCK_MONOTONIC (perf's `-k mono` sample clock), in
/// nanoseconds, ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    /// Its first nanosecond.
    pub start_ns: u64,
    /// Its last nanosecond.
    pub end_ns: u64,
}

/// The time one iteration took as the harness measured it, in
/// nanoseconds; what the harness did not give is `None`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TimePerIteration {
    /// The mean.
    pub mean: f64,
    /// The standard deviation of the timings.
    pub stddev: Option<f64>,
    /// The median timing.
    pub median: Option<f64>,
    /// The shortest timing.
    pub min: Option<f64>,
    /// The longest timing.
    pub max: Option<f64>,
    /// The 75th percentile of the timings (tinybench 3 on, mitata).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p75: Option<f64>,
    /// The 99th percentile of the timings (tinybench 3 on, mitata).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    /// How many timings the harness took.
    pub samples: Option<u64>,
}

/// What one timing of a harness measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimingUnit {
    /// One iteration (tinybench, `Deno.bench`).
    Iteration,
    /// The mean iteration of a batch (mitata).
    Batch,
    /// The mean iteration of a cycle (benchmark.js).
    Cycle,
}

/// The timings a harness took of a benchmark, in nanoseconds per
/// iteration: each one in the order taken (up to 1,000 of them), or 101
/// quantiles of more, the minimum first and the maximum last (the preload
/// reduces them: `preload.cjs`, `timings`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HarnessTimings {
    /// What each timing measured.
    pub of: TimingUnit,
    /// How many timings the harness took.
    pub count: u64,
    /// Every timing, in the order taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns: Option<Vec<f64>>,
    /// Quantiles at evenly spaced ranks, where there were too many to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantiles_ns: Option<Vec<f64>>,
}

impl HarnessTimings {
    /// The timings or their quantiles: values that stand for the
    /// distribution, each with the same weight.
    pub fn values(&self) -> &[f64] {
        self.ns.as_deref().or(self.quantiles_ns.as_deref()).unwrap_or(&[])
    }
}

/// One benchmark: its name as the harness names it, the harness, the
/// thread it ran on and its windows.
#[derive(Debug, Clone, PartialEq)]
pub struct Benchmark {
    /// The name as the harness gave it.
    pub name: String,
    /// `tinybench`, `mitata`, `benchmark.js` or `performance.measure`.
    pub harness: String,
    /// The process.
    pub pid: u32,
    /// The thread (an OS thread id: the pid for a main thread).
    pub tid: u32,
    /// The measured iterations' windows, in time order.
    pub windows: Vec<Window>,
    /// The harness's own timing, when it gave one.
    pub time_per_iteration: Option<TimePerIteration>,
    /// Each timing the harness took, when it kept them.
    pub timings: Option<HarnessTimings>,
}

/// A window of one benchmark on one thread, for the lookup.
#[derive(Debug, Clone, Copy)]
struct ThreadWindow {
    window: Window,
    benchmark: usize,
}

/// Benchmarks and the lookup from a sample's thread and time to the
/// benchmark that ran then.
#[derive(Debug, Clone, Default)]
pub struct BenchmarkWindows {
    benchmarks: Vec<Benchmark>,
    /// By (pid, tid): the windows sorted by start.
    by_thread: HashMap<(u32, u32), ThreadWindows>,
}

/// One thread's windows, sorted by start, and the longest one's length:
/// no window that starts before `time - longest` holds `time`.
#[derive(Debug, Clone, Default)]
struct ThreadWindows {
    windows: Vec<ThreadWindow>,
    longest_ns: u64,
}

impl BenchmarkWindows {
    /// The lookup over `benchmarks`.
    pub fn new(benchmarks: Vec<Benchmark>) -> BenchmarkWindows {
        let mut by_thread: HashMap<(u32, u32), ThreadWindows> = HashMap::new();
        for (index, benchmark) in benchmarks.iter().enumerate() {
            let thread = by_thread.entry((benchmark.pid, benchmark.tid)).or_default();
            for &window in &benchmark.windows {
                thread.longest_ns = thread.longest_ns.max(window.end_ns.saturating_sub(window.start_ns));
                thread.windows.push(ThreadWindow { window, benchmark: index });
            }
        }
        for thread in by_thread.values_mut() {
            thread.windows.sort_by_key(|thread_window| (thread_window.window.start_ns, thread_window.window.end_ns));
        }
        BenchmarkWindows { benchmarks, by_thread }
    }

    /// The benchmarks, in the order given.
    pub fn benchmarks(&self) -> &[Benchmark] {
        &self.benchmarks
    }

    /// Whether there is no benchmark.
    pub fn is_empty(&self) -> bool {
        self.benchmarks.is_empty()
    }

    /// The index of the benchmark whose window on thread `tid` of `pid`
    /// holds `time_ns`: of windows that nest (a `performance.measure`
    /// around a whole suite), the one that started last.
    pub fn benchmark_at(&self, pid: u32, tid: u32, time_ns: u64) -> Option<usize> {
        let thread = self.by_thread.get(&(pid, tid))?;
        let started = thread.windows.partition_point(|thread_window| thread_window.window.start_ns <= time_ns);
        let earliest = time_ns.saturating_sub(thread.longest_ns);
        thread.windows[..started]
            .iter()
            .rev()
            .take_while(|thread_window| thread_window.window.start_ns >= earliest)
            .find(|thread_window| thread_window.window.end_ns >= time_ns)
            .map(|thread_window| thread_window.benchmark)
    }
}

impl BenchmarkWindows {
    /// The samples of `timeline` inside the windows of benchmark `index`,
    /// with the threads that have some (the frames and stacks shared as
    /// they are).
    pub fn timeline_of(&self, timeline: &Timeline, index: usize) -> Timeline {
        let mut kept_threads = Vec::new();
        let mut new_id: Vec<Option<ThreadId>> = vec![None; timeline.threads.len()];
        let mut samples = Vec::new();
        for sample in &timeline.samples {
            let thread = timeline.thread(sample.thread);
            let (Some(pid), Some(tid)) = (thread.pid, thread.tid) else { continue };
            if self.benchmark_at(pid, tid, sample.time_nanoseconds) != Some(index) {
                continue;
            }
            let id = *new_id[sample.thread.index()].get_or_insert_with(|| {
                kept_threads.push(super::timeline::TimelineThread { samples: 0, ..thread.clone() });
                ThreadId(kept_threads.len() as u32 - 1)
            });
            kept_threads[id.index()].samples += 1;
            samples.push(super::timeline::TimelineSample { thread: id, ..*sample });
        }
        Timeline {
            frames: timeline.frames.clone(),
            stacks: timeline.stacks.clone(),
            threads: kept_threads,
            samples,
            samples_without_time: 0,
            event: timeline.event.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn benchmark(name: &str, tid: u32, windows: &[(u64, u64)]) -> Benchmark {
        Benchmark {
            name: name.to_string(),
            harness: "tinybench".to_string(),
            pid: 1,
            tid,
            windows: windows.iter().map(|&(start_ns, end_ns)| Window { start_ns, end_ns }).collect(),
            time_per_iteration: None,
            timings: None,
        }
    }

    #[test]
    fn a_sample_goes_to_the_window_of_its_thread_that_holds_it() {
        let windows = BenchmarkWindows::new(vec![
            benchmark("a", 1, &[(10, 20), (40, 50)]),
            benchmark("b", 1, &[(25, 35)]),
            benchmark("c", 2, &[(10, 50)]),
            benchmark("suite", 1, &[(0, 100)]),
        ]);
        assert_eq!(windows.benchmark_at(1, 1, 15), Some(0));
        assert_eq!(windows.benchmark_at(1, 1, 20), Some(0));
        assert_eq!(windows.benchmark_at(1, 1, 30), Some(1));
        assert_eq!(windows.benchmark_at(1, 1, 45), Some(0));
        // Between two benchmarks: the window around them.
        assert_eq!(windows.benchmark_at(1, 1, 22), Some(3));
        assert_eq!(windows.benchmark_at(1, 1, 101), None);
        assert_eq!(windows.benchmark_at(1, 2, 30), Some(2));
        assert_eq!(windows.benchmark_at(1, 3, 30), None);
        assert_eq!(windows.benchmark_at(2, 1, 30), None);
    }
}
