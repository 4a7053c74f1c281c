//! Readers of the input formats, and nothing else: each turns bytes into
//! records and says what it skipped. They know nothing of samples,
//! expansion or outputs.
//!
//! - [`v8log`]: V8's code log (`--log-code`, also `--prof` ticks), lexed with logos.
//! - [`jitdump`]: the perf jitdump (`--perf-prof`), record by record.
//! - [`perf_script`]: `perf script` text, line by line as inferno reads it.
//! - [`perf_data`]: the header of a perf.data, checked before it is read.
//! - [`folded`]: folded stacks as text, read back into a stack profile.

pub mod folded;
pub mod jitdump;
pub mod perf_data;
pub mod perf_script;
pub mod v8log;
