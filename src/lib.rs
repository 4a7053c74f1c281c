//! v8inline: expand V8's inlined JavaScript frames in native profiles.
//!
//! V8's perf jitdump describes each optimized code object as one symbol, so a
//! sampling profiler shows a hot inlined chain `root -> a -> b -> c` as one
//! `root` frame. The V8 code log of the same process (`--log-code`) carries the
//! inlining tree of every code object. This crate joins the two and turns a
//! sampled address back into the stack of JavaScript functions that ran there.
//!
//! The crate in layers, bottom to top; each imports only those below it (one
//! exception: `formats`' jitdump `read_path` opens its file through `files`):
//!
//! ```text
//!  model        plain data: Sample (typed, interned frames), the frame table, StackProfile
//!  formats      bytes -> records and typed warnings: v8log, jitdump, perf_script, perf_data, folded
//!  error, diagnostics, files    the crate's Error; every reader's warnings in one channel; opening files (.gz, mmap)
//!  expansion    FrameExpander, ExpandedSample, StackSink: between sources and sinks
//!  v8           code logs + jitdumps -> InlineMap -> V8Expander (SourcePosition::InliningStack)
//!  sources      perf script, perf.data, V8 ticks -> Sample (symbols: ELF, kallsyms)
//!  collapse     the sinks: Folder (folded stacks), details (StackProfile), TimelineRecorder
//!  output       renderers, model -> bytes: flame graph, pprof, report, annotations, cpuprofile, firefox, stats
//!  pipeline     the one orchestration: the engine (expansion meets the sinks), fold (threads, relay), run(Job)
//!  commands     record, lookup, compare, repair-jitdump, debuginfo, inject; output choices -> requests
//!  bin          arguments -> Job and OutputChoices; prints what run tells; exit codes
//! ```
//!
//! Three entries fold. The main one is [`run`]: a [`Job`] names the samples,
//! how to fold them and the [`OutputRequest`]s to write; the command line
//! and `record` both build one. [`fold`] returns the [`FoldedProfile`]
//! without writing. [`collapse`] folds `perf script` text exactly as
//! `inferno-collapse-perf` does, without expansion. Each command of the
//! binary is a function here ([`record`], [`compare_files`], [`lookup`],
//! [`repair_jitdump`], [`debuginfo`], [`inject`]).
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! let script = "node  2696   102.105295:    1003009 cpu-clock: \n\
//!               \t          e1f174 main+0x44 (/usr/bin/node)\n\n";
//! let mut folded = Vec::new();
//! let summary = v8inline::collapse(script.as_bytes(), &v8inline::CollapseOptions::default(), &mut folded)?;
//! assert_eq!(String::from_utf8_lossy(&folded), "node;main 1003009\n");
//! assert_eq!(summary.samples_kept, 1);
//! # Ok(())
//! # }
//! ```
//!
//! On two cores or more, a perf script is folded in chunks on each, the
//! stacks counted in one shared folder; any other run reads on one thread
//! and expands and aggregates on another. The jitdumps are read while the
//! code logs are ([`CodeLogOptions::read_threads`]).
//!
//! An input that cannot be used at all is one [`Error`]: the file and a typed
//! [`ErrorCause`]. Damage that still leaves something to read is a warning in
//! [`Diagnostics`] instead; a producer's known defect read around exactly
//! (V8's mis-sized jitdump records) is a note there.
mod collapse;
mod commands;
mod default_input;
mod diagnostics;
mod error;
mod expansion;
mod files;
mod formats;
mod history;
mod model;
mod output;
mod pipeline;
mod sources;
mod symbols;
mod v8;

// The API: folding a profile and writing its outputs.
pub use collapse::{CollapseOptions, CollapseSummary};
pub use default_input::{ChosenInput, NoSampleInput, choose_input};
pub use diagnostics::{Diagnostics, Tally, WarningKind, strict_failure};
pub use error::{Error, ErrorCause};
pub use files::replace_file;
pub use model::frames::{FrameKind, Function, FunctionId, Location, LocationId, ProfileFrame, SourceLine};
pub use model::stack_profile::StackProfile;
pub use model::timeline::Timeline;
pub use output::cpuprofile::ThreadSelection;
pub use output::flamegraph::FlameGraphStyle;
pub use pipeline::outputs::{
    Destination, Job, OutputRequest, RunError, RunEvent, RunSummary, UsageError, check_outputs, run,
};
pub use pipeline::{FoldOptions, FoldedProfile, SampleInput, collapse, fold, thread_count};
pub use v8::code_logs::CodeLogOptions;
pub use v8::expand::{ExpandOptions, ExpansionStats};
pub use v8::inline_map::SourceOptions;
pub use v8::source_map::{SourceMapOptions, SourceMapOverride};

// The commands: each a library function the binary calls.
pub use commands::bench::{
    BENCH_FILE, Bench, BenchError, BenchFile, BenchOptions, BenchRound, BenchSide,
    FLAME_GRAPH_FILE as BENCH_FLAME_GRAPH_FILE, REPORT_FILE as BENCH_REPORT_FILE, SideRuns, StopReason, bench,
    default_schedule, parse_duration,
};
pub use commands::compare::{
    BenchmarkOutcome, BenchmarkSvg, CompareCommandError, CompareOptions, Comparison, ComparisonFormat,
    benchmark_svg_path, compare_files,
};
pub use commands::debuginfo::{
    DebugInfoCommandError, DebugInfoOptions, DebugInfoSummary, FileProblem, FileProblemCause, debuginfo,
    default_buildid_dir,
};
pub use commands::history::{
    Added, HistoryAddOptions, HistoryAdded, HistoryCommandError, HistoryReportOptions, HistoryReported, history_add,
    history_report,
};
pub use commands::inject::{InjectError, InjectOptions, InjectedProcess, Injection, inject};
pub use commands::lookup::{AddressParseError, AddressQuery, LookupAnswer, LookupError, lookup};
pub use commands::output_choices::{OutputChoiceError, OutputChoices};
pub use commands::record::{
    CPUPROFILE_FILE, DEFAULT_OUTPUT_DIRECTORY, FIREFOX_PROFILE_FILE, FLAMEGRAPH_FILE, FOLDED_FILE, FlagsNotKnown,
    RecordError, RecordOptions, Recording, RerunNode, Runtime, RuntimeProcess, Sampler, check_command,
    prepare_output_directory, record,
};
pub use commands::repair::{RepairError, Repaired, repair_jitdump};
pub use history::change_points::ChangePointOptions;
pub use output::compare::runs::DEFAULT_THRESHOLD;
pub use output::compare::runs::{
    ChangeInterval, RunPair, RunsChange, RunsVerdict, Schedule, judge_paired_runs, judge_runs,
};

/// The crate's modules, for its own tests, benches and fuzz targets: not
/// part of the API (anything here may change in any release).
#[doc(hidden)]
pub mod internals {
    /// See `crate::collapse`.
    pub mod collapse {
        pub use crate::collapse::*;
    }
    /// See `crate::commands`.
    pub mod commands {
        pub use crate::commands::*;
    }
    /// See `crate::default_input`.
    pub mod default_input {
        pub use crate::default_input::*;
    }
    /// See `crate::diagnostics`.
    pub mod diagnostics {
        pub use crate::diagnostics::*;
    }
    /// See `crate::error`.
    pub mod error {
        pub use crate::error::*;
    }
    /// See `crate::expansion`.
    pub mod expansion {
        pub use crate::expansion::*;
    }
    /// See `crate::files`.
    pub mod files {
        pub use crate::files::*;
    }
    /// See `crate::formats`.
    pub mod formats {
        pub use crate::formats::*;
    }
    /// See `crate::history`.
    pub mod history {
        pub use crate::history::*;
    }
    /// See `crate::model`.
    pub mod model {
        pub use crate::model::*;
    }
    /// See `crate::output`.
    pub mod output {
        pub use crate::output::*;
    }
    /// See `crate::pipeline`.
    pub mod pipeline {
        pub use crate::pipeline::*;
    }
    /// See `crate::sources`.
    pub mod sources {
        pub use crate::sources::*;
    }
    /// See `crate::symbols`.
    pub mod symbols {
        pub use crate::symbols::*;
    }
    /// See `crate::v8`.
    pub mod v8 {
        pub use crate::v8::*;
    }
}
