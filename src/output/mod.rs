//! Outputs richer than folded stacks. The aggregated ones are built on one
//! [`StackProfile`]: pprof, the JSON report, GitHub annotations, the markdown
//! summary and the comparison of two profiles. The timeline ones on the
//! [`Timeline`], every sample in time order: `.cpuprofile` and the Firefox
//! Profiler's format. Both share the [`FrameTable`] of typed frames.
//!
//! ```text
//! Folder (detailed stacks) + expander ──► StackProfile ─► pprof
//! folded text ─────────────────────────► StackProfile ─► Report ─► json, annotations, compare
//! TimelineRecorder + expander ──────────► Timeline ─► cpuprofile, firefox
//! ```
//!
//! `debuginfo` writes DWARF for one JIT code object into its jitted ELF file.
//! `stats` writes the `--stats` text. Which outputs a job writes is chosen
//! in [`crate::pipeline::outputs`].
//!
//! [`StackProfile`]: crate::model::stack_profile::StackProfile
//! [`FrameTable`]: crate::model::frames::FrameTable
//! [`Timeline`]: crate::model::timeline::Timeline

pub mod annotations;
pub mod charts;
pub mod compare;
pub mod cpuprofile;
pub mod debuginfo;
pub mod firefox;
pub mod flamegraph;
pub mod json;
pub mod pprof;
pub mod report;
pub mod stats;
