//! Commands beyond the main job, as library functions the binary calls.
//!
//! - [`record`]: run a node or Deno program under perf and fold it.
//! - [`bench`]: `record` in a base and a head tree, round after round, judged over runs.
//! - [`lookup`]: the inline stack of one address.
//! - [`compare`]: two profiles' functions, share by share.
//! - [`history`]: a branch's results commit after commit, and their change points.
//! - [`repair`]: a jitdump with V8's mis-sized records corrected.
//! - [`debuginfo`]: DWARF with the inlined frames in perf inject's jitted files.
//! - [`inject`]: `record --inject`, a recording through perf inject and debuginfo.
//! - [`output_choices`]: the outputs a command line asks for, as the
//!   requests the main job and `record` hand the one writer.

pub mod bench;
pub mod compare;
pub mod debuginfo;
pub mod history;
pub mod inject;
pub mod lookup;
pub mod output_choices;
pub mod record;
pub mod repair;
