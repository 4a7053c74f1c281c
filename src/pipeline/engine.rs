//! The one place where expansion meets the sinks: [`ExpandingSinks`]
//! expands each sample's JIT frames with its [`FrameExpander`] and hands
//! the sample to every sink asked for. Every fold runs it: one per thread
//! of a parallel perf script fold ([`super::parallel`]), one behind the
//! relay for every other source ([`super::relay`]), and the
//! inferno-compatible [`super::collapse`] with no expansion at all.

use std::sync::Arc;

use crate::collapse::task_root::{TaskRoot, code_owner, root_frame_name};
use crate::collapse::timeline::TimelineRecorder;
use crate::collapse::{CollapseOptions, CollapseSummary, Folder};
use crate::expansion::{ExpandedSample, FrameExpander, StackSink};
use crate::model::benchmarks::BenchmarkWindows;
use crate::model::sample::{Sample, SampleInterner, SampleSink};
use crate::model::stack_profile::StackProfile;
use crate::model::timeline::Timeline;

use super::FoldOptions;

/// Expands each sample and hands it to the sinks asked for: the folder
/// always, the timeline recorder when a timeline is asked for, the folder
/// of the benchmark whose window holds it when benchmarks are given.
pub struct ExpandingSinks<Expander> {
    expander: Expander,
    expanded: ExpandedSample,
    folder: Folder,
    timeline: Option<TimelineRecorder>,
    benchmarks: Option<BenchmarkFolders>,
    /// Describe the folded stacks' code locations at the end.
    record_details: bool,
}

impl<Expander: FrameExpander> SampleSink for ExpandingSinks<Expander> {
    fn add_sample(&mut self, sample: &Sample, interner: &SampleInterner) {
        self.expanded.expand(sample, interner, &mut self.expander);
        self.folder.add_sample(sample, interner, &self.expanded, &self.expander);
        if let Some(timeline) = &mut self.timeline {
            timeline.add_sample(sample, interner, &self.expanded, &self.expander);
        }
        if let Some(benchmarks) = &mut self.benchmarks
            && let (Some(pid), Some(tid), Some(time)) = (sample.pid, sample.tid, sample.clock_nanoseconds)
            && let Some(index) = benchmarks.windows.benchmark_at(pid, tid, time)
        {
            benchmarks.folders[index].add_sample(sample, interner, &self.expanded, &self.expander);
        }
    }
}

/// One folder per benchmark, and the windows that route samples to them.
struct BenchmarkFolders {
    windows: Arc<BenchmarkWindows>,
    folders: Vec<Folder>,
}

impl<Expander: FrameExpander> ExpandingSinks<Expander> {
    /// Sinks expanding with `expander`, folding (and recording a timeline,
    /// keeping the stacks' code locations) as `options` say.
    pub fn new(expander: Expander, options: &FoldOptions) -> ExpandingSinks<Expander> {
        let mut sinks = ExpandingSinks::folding(expander, &options.collapse);
        if options.record_details {
            sinks.folder.record_details();
            sinks.record_details = true;
        }
        sinks.timeline = options.timeline.then(TimelineRecorder::new);
        sinks.benchmarks =
            options.benchmarks.as_ref().filter(|windows| !windows.is_empty()).map(|windows| BenchmarkFolders {
                windows: Arc::clone(windows),
                folders: windows
                    .benchmarks()
                    .iter()
                    .map(|_| {
                        let mut folder = Folder::new(&options.collapse);
                        if options.record_details {
                            folder.record_details();
                        }
                        folder
                    })
                    .collect(),
            });
        sinks
    }

    /// Sinks expanding with `expander` into a folder only.
    pub fn folding(expander: Expander, options: &CollapseOptions) -> ExpandingSinks<Expander> {
        ExpandingSinks {
            expander,
            expanded: ExpandedSample::new(),
            folder: Folder::new(options),
            timeline: None,
            benchmarks: None,
            record_details: false,
        }
    }

    /// The stacks folded so far.
    pub fn folder(&self) -> &Folder {
        &self.folder
    }

    /// The folder, for a parallel fold's worker to hand its stacks over to
    /// the shared one.
    pub(super) fn folder_mut(&mut self) -> &mut Folder {
        &mut self.folder
    }

    /// What was folded, `summary` (the source's counters) completed with
    /// the folder's.
    pub fn finish(mut self, mut summary: CollapseSummary) -> Folded<Expander> {
        let (windows, mut benchmark_folders) = self
            .benchmarks
            .map_or_else(|| (None, Vec::new()), |benchmarks| (Some(benchmarks.windows), benchmarks.folders));
        // The one place process roots are named: the whole run's and each
        // benchmark's alike.
        for folder in std::iter::once(&mut self.folder).chain(&mut benchmark_folders) {
            folder.name_process_roots();
        }
        summary.take_folder_counts(&self.folder.summary());
        let timeline = self.timeline.map(|recorder| recorder.finish(summary.event.clone()));
        let details =
            self.record_details.then(|| StackProfile::from_folder(&self.folder, &self.expander, summary.event.clone()));
        let benchmark_list = windows.as_deref().map_or(&[][..], |windows| windows.benchmarks());
        let benchmarks = benchmark_folders
            .into_iter()
            .zip(benchmark_list)
            .map(|(mut folder, benchmark)| {
                // Its graph starts at the benchmark, then the user's task.
                let root = folder.start_at_task(&root_frame_name(&benchmark.name), code_owner);
                let details = self
                    .record_details
                    .then(|| StackProfile::from_folder(&folder, &self.expander, summary.event.clone()));
                BenchmarkFold { folder, details, root }
            })
            .collect();
        Folded { folder: self.folder, details, timeline, benchmarks, expanders: vec![self.expander], summary }
    }

    /// The expander and the folder, for a parallel fold's worker at its end.
    pub(super) fn into_parts(self) -> (Expander, Folder) {
        (self.expander, self.folder)
    }
}

/// What a fold gave, by any number of [`ExpandingSinks`]: what
/// [`super::FoldedProfile`] is made of, for any expander.
pub struct Folded<Expander> {
    /// The aggregated stacks.
    pub folder: Folder,
    /// The stacks with their code locations, when asked for.
    pub details: Option<StackProfile>,
    /// Every sample in time order, when asked for.
    pub timeline: Option<Timeline>,
    /// The stacks of each benchmark's windows, in the order of
    /// [`super::FoldOptions::benchmarks`] (none when not asked for).
    pub benchmarks: Vec<BenchmarkFold>,
    /// The expanders, one per thread that folded, with their statistics.
    pub expanders: Vec<Expander>,
    /// Samples read, kept, skipped; distinct stacks; the reader's warnings.
    pub summary: CollapseSummary,
}

/// One benchmark's share of a fold: its stacks, started at the benchmark
/// ([`Folder::start_at_task`]), and what its root stands for.
pub struct BenchmarkFold {
    /// The stacks of the samples in its windows.
    pub folder: Folder,
    /// The same with their code locations, when asked for.
    pub details: Option<StackProfile>,
    /// The benchmark's root frame and the frames folded into it.
    pub root: TaskRoot,
}
