//! Outputs richer than folded stacks, all built on one [`StackProfile`]:
//! pprof, the JSON report, GitHub annotations, the markdown summary and the
//! comparison of two profiles.

pub mod report;
pub mod stack_profile;
