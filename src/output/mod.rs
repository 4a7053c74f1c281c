//! Outputs richer than folded stacks, all built on one [`StackProfile`]:
//! pprof, the JSON report, GitHub annotations, the markdown summary and the
//! comparison of two profiles.
//!
//! ```text
//! Folder (detailed stacks) + V8Expander ─► StackProfile ─► pprof
//! folded text ─────────────────────────► StackProfile ─► Report ─► json, annotations, compare
//! ```
//!
//! [`StackProfile`]: stack_profile::StackProfile

pub mod annotations;
pub mod compare;
pub mod flamegraph;
pub mod json;
pub mod pprof;
pub mod report;
pub mod stack_profile;
