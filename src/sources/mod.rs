//! Sample sources: each reads one kind of input into typed
//! [`Sample`](crate::model::sample::Sample)s, naming native and kernel frames as
//! `perf script` names them.
//!
//! - [`perf_script`]: `perf script` text ([`crate::formats::perf_script`]).
//! - [`perf_data`]: perf.data read directly (`linux-perf-data`), with ELF and
//!   kernel symbols.
//! - [`ticks`]: V8's own `tick` records of a `--prof` log.

pub mod perf_data;
pub mod perf_script;
pub mod ticks;
