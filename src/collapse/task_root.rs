//! A benchmark's stacks start at the benchmark: in each benchmark's folded
//! stacks (and so its flame graph, and compare's differential graph drawn
//! from them) the root is the benchmark, named as the harness names it, and
//! the frame under it is the task function the user wrote. The frames that
//! ran it (the runtime's startup, the event loop, the harness) are folded
//! into that root; [`TaskRoot`] lists them, for the root's tooltip.
//!
//! The task function is found in the stacks themselves, whatever the
//! harness ([`task_position`]): the first frame of the user's own code
//! ([`is_users_frame`]: JavaScript of a file outside any `node_modules`,
//! not the runtime's `node:` code, not record's preload) that a harness's
//! frame (JavaScript of an installed package) called; with no harness
//! frame above the user's code (`performance.measure` around the user's
//! own loop), the user's outermost frame. So a benchmark.js suite run from
//! a script's top level starts at the task, not at the top level, and a
//! harness that compiles its loop (benchmark.js, mitata: code of no file)
//! is seen through. A stack without the task (the harness between two
//! iterations, the garbage collector, a stack the unwinder lost) keeps
//! what lies past the longest start it shares with the task's stacks: its
//! process's root at least.

use crate::formats::folded::strip_annotation;
use crate::formats::v8log::CodeName;
use crate::v8::tool_code::{is_installed_script, is_users_script};

/// What a benchmark's root stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskRoot {
    /// The root frame's name: the benchmark's name as the harness gave it,
    /// made a frame name ([`root_frame_name`]).
    pub name: String,
    /// The frames folded into it, each once, outermost first (in the order
    /// of the folded text): the process's root, the runtime's startup, the
    /// event loop, the harness.
    pub folded_frames: Vec<String>,
    /// Whether a task function of the user's was found under the harness;
    /// without one only the process's root is folded into the benchmark's.
    pub task_found: bool,
}

impl TaskRoot {
    /// The root's tooltip note: which frames it stands for.
    pub fn describe(&self) -> String {
        if !self.task_found {
            return format!(
                "benchmark {}: no function of the user's code ran under it; folded into this root: {}",
                self.name,
                self.folded_frames.join(", ")
            );
        }
        format!(
            "benchmark {}: the frames that ran its task, folded into this root (outermost first):\n{}",
            self.name,
            self.folded_frames.join("\n")
        )
    }
}

/// `name` made a folded frame name: a `;` (which separates frames) becomes
/// `,`, a control character a space; an empty name is `(benchmark)`.
pub fn root_frame_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|character| {
            if character == ';' {
                ','
            } else if character.is_control() {
                ' '
            } else {
                character
            }
        })
        .collect();
    if cleaned.trim().is_empty() { "(benchmark)".to_string() } else { cleaned }
}

/// Whose code a frame runs, as far as finding a benchmark's task goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeOwner {
    /// JavaScript of the user's own files ([`is_users_frame`]).
    User,
    /// JavaScript of an installed package (`node_modules/`): a harness, a
    /// library.
    Installed,
    /// Anything else: native code, the runtime's JavaScript, code of no
    /// file, record's preload.
    Other,
}

/// Whose code the frame named `name` (as folded, its annotation included)
/// runs.
pub fn code_owner(name: &str) -> CodeOwner {
    let (name, _) = strip_annotation(name);
    let Some(code) = CodeName::javascript(name) else { return CodeOwner::Other };
    let script = code.function_name().script;
    if is_users_script(script) {
        CodeOwner::User
    } else if is_installed_script(script) {
        CodeOwner::Installed
    } else {
        CodeOwner::Other
    }
}

/// Whether a folded frame name (its annotation included) is a JavaScript
/// function of the user's own code: of a script that is a file outside any
/// `node_modules`, not the runtime's, not record's preload.
pub fn is_users_frame(name: &str) -> bool {
    code_owner(name) == CodeOwner::User
}

/// Where the task function is in a stack whose frames' owners are
/// `owners`, root first: the first frame of the user's code that an
/// installed package's (the harness's) called, when the harness ran before
/// it; else, when the user's code ran first (a script's top level, the
/// user's `main`), the first of the user's frames after the harness's, or,
/// with no harness at all (`performance.measure` around the user's own
/// code), the user's outermost frame. A stack inside the harness (between
/// iterations) has none.
pub fn task_position(owners: impl IntoIterator<Item = CodeOwner>) -> Option<usize> {
    let (mut first_users, mut installed_seen) = (None, false);
    for (position, owner) in owners.into_iter().enumerate() {
        match owner {
            CodeOwner::User if installed_seen => return Some(position),
            CodeOwner::User => {
                first_users.get_or_insert(position);
            }
            CodeOwner::Installed => installed_seen = true,
            CodeOwner::Other => {}
        }
    }
    // The user's code that called a package (benchmark.js run from a
    // script's top level, a library) and nothing of the user's under it:
    // the harness between iterations, or a library's frames, not a task.
    if installed_seen { None } else { first_users }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_frames_are_javascript_of_their_own_files() {
        for users in [
            "JS:~parseResourceMap file:///tmp/suite/bench.mjs:15:63_[j]",
            "JS:*sumOfSquares /home/me/app/work.cjs:5:22_[i]",
            "JS:^ /home/me/app/bench.js:1:1",
        ] {
            assert!(is_users_frame(users), "{users}");
        }
        for others in [
            "JS:^#_ file:///tmp/suite/node_modules/tinybench/dist/index.js:495:4_[j]",
            // Deno's cache of npm packages.
            "JS:^#_ file:///root/.cache/deno/npm/registry.npmjs.org/tinybench/6.2.5/dist/index.js:495:4_[j]",
            "JS:*run node:internal/main/run_main_module:1:1_[j]",
            "JS:~runObserved /tmp/v8inline-0/preload-0123456789abcdef.cjs:421:40_[j]",
            // benchmark.js's compiled loop: a script of no file.
            "JS:*anonymous  :1:1_[j]",
            "Builtins_RunMicrotasks",
            "node-1234",
            "sumOfSquares /home/me/app/work.cjs:5:22",
        ] {
            assert!(!is_users_frame(others), "{others}");
        }
    }

    #[test]
    fn the_task_is_the_users_code_the_harness_calls_else_the_users_outermost() {
        use CodeOwner::{Installed as H, Other as O, User as U};
        // tinybench from the microtask queue: startup, harness, task, library.
        assert_eq!(task_position([O, O, H, H, U, H, H]), Some(4));
        // benchmark.js run from the script's top level: its compiled loop
        // (no file) calls the task.
        assert_eq!(task_position([O, U, H, H, O, U, U]), Some(5));
        // performance.measure around the user's own loop.
        assert_eq!(task_position([O, O, U, U]), Some(2));
        // Inside the harness, between iterations; the user's code in a
        // library's: no task.
        assert_eq!(task_position([O, U, H, O]), None);
        assert_eq!(task_position([O, H, H]), None);
        assert_eq!(task_position([O, O]), None);
    }

    #[test]
    fn root_names_hold_no_separator_nor_control_character() {
        assert_eq!(root_frame_name("parse a;b\0c\n"), "parse a,b c ");
        assert_eq!(root_frame_name(""), "(benchmark)");
        assert_eq!(root_frame_name("sum of squares"), "sum of squares");
    }
}
