//! v8inline: expand V8's inlined JavaScript frames in native profiles.
//!
//! V8's perf jitdump describes each optimized code object as one symbol, so a
//! sampling profiler shows a hot inlined chain `root -> a -> b -> c` as one
//! `root` frame. The V8 code log of the same process (`--log-code`) carries the
//! inlining tree of every code object. This crate joins the two and turns a
//! sampled address back into the stack of JavaScript functions that ran there.
//!
//! Data flow, one module per step:
//!
//! ```text
//! v8log (code log text) ──┐
//! jitdump (binary)      ──┴─► inline_map ─► inline_stack ─┐
//! samples (perf script) ─────────────────────────────────┴─► collapse ─► folded stacks
//! ```
pub mod collapse;
pub mod diagnostics;
pub mod expand;
pub mod flamegraph;
pub mod inline_map;
pub mod inline_stack;
pub mod input;
pub mod jitdump;
pub mod lookup;
pub mod output;
pub mod perf_data;
pub mod pipeline;
pub mod profile;
pub mod record;
pub mod sample;
pub mod samples;
pub mod source;
pub mod symbols;
pub mod ticks;
pub mod v8log;
