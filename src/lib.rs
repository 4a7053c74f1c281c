//! v8inline: expand V8's inlined JavaScript frames in native profiles.
//!
//! V8's perf jitdump describes each optimized code object as one symbol, so a
//! sampling profiler shows a hot inlined chain `root -> a -> b -> c` as one
//! `root` frame. The V8 code log of the same process (`--log-code`) carries the
//! inlining tree of every code object. This crate joins the two and turns a
//! sampled address back into the stack of JavaScript functions that ran there.
//!
//! The crate in layers, bottom to top; each imports only those below it:
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
//!  pipeline     the one orchestration: fold (threads, relay), outputs::run(Job) writes the OutputRequests
//!  commands     record, lookup, compare, repair-jitdump
//!  bin          arguments -> Job; prints what run tells; exit codes
//! ```
//!
//! The main entry is [`run`]: a [`Job`] names the samples, how to fold them
//! and the [`OutputRequest`]s to write; the command line and `record` both
//! build one. [`fold`] returns the [`FoldedProfile`] without writing.
//!
//! On two cores or more, a perf script is folded in chunks on each, the
//! stacks counted in one shared folder ([`collapse::parallel`]); any other
//! run reads on one thread and expands and aggregates on another
//! ([`pipeline::relay`]). The jitdumps are read while the code logs are
//! ([`v8::code_logs::CodeLogOptions::read_threads`]).
//!
//! An input that cannot be used at all is one [`Error`]: the file and a typed
//! [`ErrorCause`]. Damage that still leaves something to read is a warning in
//! [`Diagnostics`] instead; a producer's known defect read around exactly
//! (V8's mis-sized jitdump records) is a note there.
// The public API is what this root re-exports, and the format readers
// (`formats`). The other modules are reachable for the crate's own tests,
// benches and fuzz targets only (hidden from the documentation; their items
// may change in any release).
#[doc(hidden)]
pub mod collapse;
#[doc(hidden)]
pub mod commands;
#[doc(hidden)]
pub mod default_input;
#[doc(hidden)]
pub mod diagnostics;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod expansion;
#[doc(hidden)]
pub mod files;
pub mod formats;
#[doc(hidden)]
pub mod model;
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod pipeline;
#[doc(hidden)]
pub mod sources;
#[doc(hidden)]
pub mod symbols;
#[doc(hidden)]
pub mod v8;

pub use collapse::CollapseOptions;
pub use commands::compare::{CompareOptions, Comparison, ComparisonFormat, compare_files};
pub use commands::lookup::{AddressQuery, LookupAnswer, lookup};
pub use commands::record::{RecordOptions, Recording, record};
pub use commands::repair::repair_jitdump;
pub use diagnostics::Diagnostics;
pub use error::{Error, ErrorCause};
pub use model::frames::{FrameKind, Function, FunctionId, Location, LocationId, ProfileFrame, SourceLine};
pub use model::stack_profile::StackProfile;
pub use output::cpuprofile::ThreadSelection;
pub use pipeline::outputs::{Destination, Job, OutputRequest, RunError, RunEvent, RunSummary, UsageError, run};
pub use pipeline::{FoldOptions, FoldedProfile, SampleInput, fold};
pub use v8::code_logs::CodeLogOptions;
pub use v8::expand::ExpandOptions;
pub use v8::inline_map::SourceOptions;
