//! Commands beyond the main job, as library functions the binary calls.
//!
//! - [`record`]: run a node or Deno program under perf and fold it.
//! - [`lookup`]: the inline stack of one address.

pub mod lookup;
pub mod record;
