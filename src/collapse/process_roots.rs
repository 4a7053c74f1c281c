//! One root frame per process (per thread with `include_tid`), named once:
//! a process that retitles itself (npm: `node`, then `npm`, then
//! `npm run bench`) or renames its threads (vitest's workers) keeps one
//! root instead of one per name, as inferno's per-comm roots would give.
//!
//! While folding, each process's root is a placeholder frame of its own;
//! once every sample is in, [`ProcessRoots::name`] gives each its name: the
//! last name of the process's main thread (the thread whose id is the pid),
//! else the first name of any of its threads (with `include_tid`, the
//! thread's own last name), in input order (time order for perf.data and
//! perf script), as inferno would write it (`comm-PID`, `comm-PID/TID`,
//! or `comm`). The last name, not the first: a child process carries its
//! parent's name from `fork` until its `exec` (npm's `sh -c` child first
//! samples as `npm run bench`), and a process that retitles itself ends with
//! the title it chose (npm: `node`, `npm`, then `npm run bench`).

use rustc_hash::FxHashMap;

use super::naming::push_root_frame;
use super::stack_table::FrameId;

/// Which root a sample belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RootOwner {
    /// The process.
    pub pid: u32,
    /// The thread, when roots are per thread.
    pub tid: Option<u32>,
}

/// What a root will be named from.
#[derive(Debug, Clone)]
struct RootName {
    /// The placeholder frame standing for the root until it is named.
    frame: FrameId,
    /// The last comm of the main thread (or, per thread, of the thread).
    main_comm: Option<Box<str>>,
    /// The first comm of any of its threads.
    any_comm: Box<str>,
    /// The pid and tid as the source printed them.
    pid_text: Box<str>,
    tid_text: Box<str>,
}

/// The roots of the processes (or threads) of one folder.
#[derive(Debug, Clone, Default)]
pub struct ProcessRoots {
    roots: FxHashMap<RootOwner, RootName>,
}

/// The root of one sample, as [`ProcessRoots::root_of`] needs it.
#[derive(Debug, Clone, Copy)]
pub struct SampleThread<'a> {
    /// Its owner.
    pub owner: RootOwner,
    /// Whether the sample is of the process's main thread (or roots are
    /// per thread).
    pub is_main: bool,
    /// The sample's comm.
    pub comm: &'a str,
    /// The pid and tid as the source printed them.
    pub pid_text: &'a str,
    pub tid_text: &'a str,
}

impl ProcessRoots {
    /// The placeholder name of `owner`'s root while folding: no frame
    /// name of a sample can hold a NUL byte and the pid.
    pub fn placeholder(owner: RootOwner) -> String {
        match owner.tid {
            Some(tid) => format!("\0root {}/{tid}", owner.pid),
            None => format!("\0root {}", owner.pid),
        }
    }

    /// The root frame of `thread` (its placeholder, interned by `intern`
    /// the first time), noting its comm.
    pub fn root_of(&mut self, thread: SampleThread<'_>, intern: impl FnOnce(&str) -> FrameId) -> FrameId {
        let root = self.roots.entry(thread.owner).or_insert_with(|| RootName {
            frame: intern(&ProcessRoots::placeholder(thread.owner)),
            main_comm: None,
            any_comm: thread.comm.into(),
            pid_text: thread.pid_text.into(),
            tid_text: thread.tid_text.into(),
        });
        if thread.is_main && root.main_comm.as_deref() != Some(thread.comm) {
            root.main_comm = Some(thread.comm.into());
            root.tid_text = thread.tid_text.into();
        }
        root.frame
    }

    /// Each root's placeholder frame and its name, as inferno writes a root
    /// (`comm-PID` with `include_pid`, `comm-PID/TID` with `include_tid`,
    /// else `comm`).
    pub fn name(&self, include_pid: bool, include_tid: bool) -> Vec<(FrameId, String)> {
        let mut named: Vec<(FrameId, String)> = self
            .roots
            .values()
            .map(|root| {
                let mut name = String::new();
                let comm = root.main_comm.as_deref().unwrap_or(&root.any_comm);
                push_root_frame(&mut name, comm, &root.pid_text, &root.tid_text, include_pid, include_tid);
                (root.frame, name)
            })
            .collect();
        named.sort_by_key(|(frame, _)| frame.index());
        named
    }
}
