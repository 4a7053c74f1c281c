//! A benchmark's stacks start at the benchmark: in each benchmark's folded
//! stacks (and so its flame graph, and compare's differential graph drawn
//! from them) the root is the benchmark, named as the harness names it, and
//! the frame under it is the task function the user wrote. The frames that
//! ran it (the runtime's startup, the event loop, the harness) are folded
//! into that root; [`TaskRoot`] lists them, for the root's tooltip.
//!
//! The task function is found in the stacks themselves, whatever the
//! harness: it is the outermost frame of the user's own code
//! ([`is_users_frame`]): a JavaScript function of a script that is a file
//! outside any `node_modules` (not the harness, not a library), not the
//! runtime's own (`node:`) and not record's preload (which wraps mitata's
//! `run`). A harness that compiles its loop (benchmark.js, mitata) runs it
//! as code of no file, which is not the user's either. A stack without the
//! task (the harness between two iterations, the garbage collector, a stack
//! the unwinder lost) keeps what lies past the longest start it shares with
//! the task's stacks: its process's root at least.

use crate::formats::folded::strip_annotation;
use crate::formats::v8log::CodeName;
use crate::v8::tool_code::is_users_script;

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

/// Whether a folded frame name (its annotation included) is a JavaScript
/// function of the user's own code: of a script that is a file outside any
/// `node_modules`, not the runtime's, not record's preload.
pub fn is_users_frame(name: &str) -> bool {
    let (name, _) = strip_annotation(name);
    CodeName::javascript(name).is_some_and(|code| is_users_script(code.function_name().script))
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
    fn root_names_hold_no_separator_nor_control_character() {
        assert_eq!(root_frame_name("parse a;b\0c\n"), "parse a,b c ");
        assert_eq!(root_frame_name(""), "(benchmark)");
        assert_eq!(root_frame_name("sum of squares"), "sum of squares");
    }
}
