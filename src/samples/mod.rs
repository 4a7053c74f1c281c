//! Reading profiler samples.
//!
//! [`PerfScriptReader`] streams the text that `perf script` prints (with
//! callchains, as recorded by `perf record -g`) one [`Sample`] at a time. It
//! follows the line rules of inferno's `perf` collapser exactly (comment lines,
//! blank lines ending a sample, event lines with their stack lines, combined
//! event-and-stack lines, event filtering), so that the collapser built on it
//! can reproduce `inferno-collapse-perf` byte for byte.
//!
//! The reader never panics and never gives up on garbage: lines it cannot
//! parse are skipped and tallied in [`ReaderWarnings`].

mod perf_script;

pub use perf_script::{
    EventSelection, PerfScriptReader, PerfScriptSource, ReaderStatistics, ReaderWarnings, ScriptSample, StackLine,
    StackLines, WarningExample, WarningTally, parse_sample_time, strip_symbol_offset,
};
