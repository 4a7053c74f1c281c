//! The plain data model at the bottom of the crate: values that every
//! layer above passes along. It imports nothing else of the crate.
//!
//! - [`sample`]: the typed sample every source produces and every sink
//!   consumes, its frames and the interner of their text.
//! - [`frames`]: typed frames of functions at source lines, interned.
//! - [`stack_profile`]: distinct stacks of those frames and their weights.
//! - [`benchmarks`]: the benchmarks a recorded program ran and their
//!   time windows.
//! - [`timeline`]: every sample in time order with its thread and stack.

pub mod benchmarks;
pub mod frames;
pub mod sample;
pub mod stack_profile;
pub mod timeline;
