//! The V8 side: the code log and jitdump of each process joined into an
//! inline map, V8's `SourcePosition::InliningStack` walk, and the expander
//! that replaces a sampled JIT frame by the JavaScript functions inlined
//! there.
//!
//! - [`code_logs`]: finds and pairs each process's code log and jitdump.
//! - [`inline_map`]: one process's code objects by address and time.
//! - [`inline_stack`]: the inline stack at a code offset.
//! - [`inline_tree`]: a code object's inlining tree with the code of each call.
//! - [`source`]: script text, lines and columns.
//! - [`source_map`]: source maps, to original files, lines and names.
//! - [`expand`]: the pipeline's expansion stage.
//! - [`unexpanded`]: after the fold, why a process's JavaScript did not expand.

pub mod code_logs;
pub mod embedded_blob;
pub mod expand;
pub mod inline_map;
pub mod inline_stack;
pub mod inline_tree;
pub mod source;
pub mod source_map;
pub mod tool_code;
pub mod unexpanded;
