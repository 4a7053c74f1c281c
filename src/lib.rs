//! v8inline: expand V8's inlined JavaScript frames in native profiles.
//!
//! V8's perf jitdump describes each optimized code object as one symbol, so a
//! sampling profiler shows a hot inlined chain `root -> a -> b -> c` as one
//! `root` frame. The V8 code log of the same process (`--log-code`) carries the
//! inlining tree of every code object. This crate joins the two and turns a
//! sampled address back into the stack of JavaScript functions that ran there.
//!
//! Data flow, one module per step ([`pipeline::fold`] runs it):
//!
//! ```text
//!  formats (readers only)          sources                 the one pipeline
//!  perf_script text ─────────► sources::perf_script ──┐
//!  perf.data (linux-perf-data) ► sources::perf_data ──┼─► sample::Sample ─► v8::expand ─► collapse::Folder ─► folded text
//!  v8log ticks ──────────────► sources::ticks ────────┘   (typed, interned)  (V8Expander,     (stack sink)     output::flamegraph
//!                                  │ symbols (ELF, kallsyms)                 ExpandedSample)         │          output::stack_profile ─►
//!  v8log code log ──┐                                                            ▲                    │            pprof, report, json,
//!  jitdump ─────────┴─► v8::profile ─► v8::inline_map ─► v8::inline_stack ───────┘                    │            annotations, compare
//!                                            │ frames named and described through                     │
//!                                            └ v8::source_map (original .ts files, lines, names)      ▼
//!  diagnostics: every reader's warnings, one channel (--strict)                    commands: record, lookup
//! ```
//!
//! On two cores or more, a perf script is folded in chunks on each, the
//! stacks counted in one shared folder ([`collapse::parallel`]); any other
//! run reads on one thread and expands and aggregates on another
//! ([`pipeline::relay`]). The jitdumps are read while the code logs are
//! ([`v8::profile::ProfileOptions::read_threads`]).
//!
//! An input that cannot be used at all is one [`Error`]: the file and a typed
//! [`ErrorCause`]. Damage that still leaves something to read is a warning in
//! [`diagnostics`] instead.
//!
//! The stack sinks ([`pipeline::StackSink`]) take each expanded sample:
//!
//! ```text
//!  ExpandedSample ─┬─► collapse::Folder: counted stacks ─► folded text, flame graph, pprof, reports
//!                  └─► output::timeline::TimelineRecorder (when asked): every sample in time order
//!                        └─► Timeline ─► output::cpuprofile (.cpuprofile), output::firefox (Firefox Profiler)
//! ```
pub mod collapse;
pub mod commands;
pub mod default_input;
pub mod diagnostics;
pub mod error;
pub mod expansion;
pub mod formats;
pub mod input;
pub mod model;
pub mod output;
pub mod pipeline;
pub mod sources;
pub mod symbols;
pub mod v8;

pub use error::{Error, ErrorCause};
/// The typed sample at its old path, while code that imports it from here
/// moves to [`model::sample`].
pub use model::sample;
