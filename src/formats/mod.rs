//! Readers of the input formats, and nothing else: each turns bytes into
//! records and says what it skipped. They know nothing of samples,
//! expansion or outputs.
//!
//! - [`v8log`]: V8's code log (`--log-code`, also `--prof` ticks), lexed with logos.
//! - [`jitdump`]: the perf jitdump (`--perf-prof`), record by record.
//! - [`perf_script`]: `perf script` text, line by line as inferno reads it.

pub mod jitdump;
pub mod perf_script;
pub mod v8log;
