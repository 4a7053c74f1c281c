//! The inline stack of a code offset: which functions, inlined into one
//! another, were running there.
//!
//! Mirrors V8's `SourcePosition::InliningStack` in
//! [src/codegen/source-position.cc](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/codegen/source-position.cc):
//! start at the position entry for the offset; while it is inside inlined
//! code, emit the inlined function at that position and continue at the call
//! site in its caller; finally emit the code object's own function. The
//! result is innermost first, each outer frame positioned at its call site
//! (the order of addr2line's `FrameIter`).

use crate::formats::v8log::{PositionEntry, SharedFunctionId, SourceTables};

/// Which source-position entry applies to an instruction offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PositionRule {
    /// The last entry with `code_offset <= offset` (the last of several at
    /// one offset): the position of the instruction *at* the offset, as V8's
    /// jitdump debug lines and `v8inline lookup` give it.
    AtOrBefore,
    /// The last entry with `code_offset < offset` (the first entry at offset
    /// 0): the instruction *before* the offset. A return address points after
    /// its call, and a timer sample lands on the instruction after the one
    /// that was running; V8's CPU profiler looks strictly below for both.
    StrictlyBefore,
}

/// The function of an inline frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameFunction {
    /// The code object's own (outermost) function.
    Outer,
    /// An inlined function.
    Inlined(SharedFunctionId),
}

/// One frame of an inline stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineFrame {
    /// Whose frame this is.
    pub function: FrameFunction,
    /// The script offset running in this frame: for the innermost frame the
    /// instruction's position, for outer frames the call site. -1 = unknown.
    pub script_offset: i32,
}

/// Something odd met while walking; the walk still returns what it could.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WalkProblem {
    /// An inlining id past the end of the inlining table.
    InliningIdOutOfRange,
    /// A function index past the end of the inlined functions.
    FunctionIndexOutOfRange,
    /// An inlining entry without a function (V8's -1): frame left out.
    NoFunction,
    /// The parent chain loops; the walk stopped.
    Cycle,
}

/// Finds the position entry that applies to `offset` under `rule`.
pub fn find_position(positions: &[PositionEntry], offset: u64, rule: PositionRule) -> Option<&PositionEntry> {
    let count_before = match rule {
        PositionRule::AtOrBefore => positions.partition_point(|entry| u64::from(entry.code_offset) <= offset),
        PositionRule::StrictlyBefore => positions.partition_point(|entry| u64::from(entry.code_offset) < offset),
    };
    match count_before {
        0 if rule == PositionRule::StrictlyBefore => positions.first(),
        0 => None,
        count => positions.get(count - 1),
    }
}

/// Appends the inline stack at `offset` to `frames`, innermost first. With
/// no position entry for the offset, only the outer frame is appended (at
/// offset -1). Returns the first problem met, if any.
pub fn inlining_stack(
    info: &SourceTables<'_>,
    offset: u64,
    rule: PositionRule,
    frames: &mut Vec<InlineFrame>,
) -> Option<WalkProblem> {
    let Some(entry) = find_position(info.positions, offset, rule) else {
        frames.push(InlineFrame { function: FrameFunction::Outer, script_offset: -1 });
        return None;
    };
    let mut problem = None;
    let mut script_offset = entry.script_offset;
    let mut inlining_id = entry.inlining_id;
    // Each step moves to a parent; more steps than entries means a cycle.
    let mut steps_left = info.inlining_positions.len();
    while let Some(id) = inlining_id {
        let Some(inlining) = info.inlining_positions.get(id as usize) else {
            problem.get_or_insert(WalkProblem::InliningIdOutOfRange);
            break;
        };
        if steps_left == 0 {
            problem.get_or_insert(WalkProblem::Cycle);
            break;
        }
        steps_left -= 1;
        match inlining.function_index {
            Some(index) => match info.inlined_functions.get(index as usize) {
                Some(&function) => {
                    frames.push(InlineFrame { function: FrameFunction::Inlined(function), script_offset })
                }
                None => {
                    problem.get_or_insert(WalkProblem::FunctionIndexOutOfRange);
                }
            },
            None => {
                problem.get_or_insert(WalkProblem::NoFunction);
            }
        }
        script_offset = inlining.call_offset;
        inlining_id = inlining.parent;
    }
    frames.push(InlineFrame { function: FrameFunction::Outer, script_offset });
    problem
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::v8log::record::{parse_inlining_positions, parse_positions};

    /// Decoded tables, as a code log keeps them.
    struct Tables {
        positions: Vec<PositionEntry>,
        inlining_positions: Vec<crate::formats::v8log::InliningPosition>,
        inlined_functions: Vec<SharedFunctionId>,
    }

    fn info(positions: &str, inlining: &str, functions: u32) -> Tables {
        Tables {
            positions: parse_positions(positions.as_bytes()).unwrap(),
            inlining_positions: parse_inlining_positions(inlining.as_bytes()).unwrap(),
            inlined_functions: (0..functions).map(SharedFunctionId).collect(),
        }
    }

    fn walk(info: &Tables, offset: u64, rule: PositionRule) -> (Vec<(Option<u32>, i32)>, Option<WalkProblem>) {
        let mut frames = Vec::new();
        let tables = SourceTables {
            positions: &info.positions,
            inlining_positions: &info.inlining_positions,
            inlined_functions: &info.inlined_functions,
        };
        let problem = inlining_stack(&tables, offset, rule, &mut frames);
        let frames = frames
            .into_iter()
            .map(|frame| match frame.function {
                FrameFunction::Outer => (None, frame.script_offset),
                FrameFunction::Inlined(function) => (Some(function.0), frame.script_offset),
            })
            .collect();
        (frames, problem)
    }

    #[test]
    fn position_rules() {
        let table = parse_positions(b"C0O10C8O20C8O21I0C16O30").unwrap();
        let at = |offset| find_position(&table, offset, PositionRule::AtOrBefore).map(|entry| entry.script_offset);
        let before =
            |offset| find_position(&table, offset, PositionRule::StrictlyBefore).map(|entry| entry.script_offset);
        // The last of several entries at one offset applies.
        assert_eq!(at(8), Some(21));
        assert_eq!(at(7), Some(10));
        assert_eq!(at(0), Some(10));
        assert_eq!(at(100), Some(30));
        assert_eq!(before(8), Some(10));
        assert_eq!(before(9), Some(21));
        assert_eq!(before(16), Some(21));
        assert_eq!(before(0), Some(10));
        let late = parse_positions(b"C4O10").unwrap();
        assert_eq!(find_position(&late, 2, PositionRule::AtOrBefore), None);
        assert_eq!(find_position(&late, 2, PositionRule::StrictlyBefore).map(|entry| entry.script_offset), Some(10));
        assert_eq!(find_position(&[], 2, PositionRule::StrictlyBefore), None);
    }

    #[test]
    fn walks_to_the_outer_function_through_call_sites() {
        // root calls a at 100 (id 0), a calls b at 200 (id 1), b calls c at 300 (id 2).
        let info = info("C0O5C10O350I2C20O250I1C30O7", "F0O100F1O200I0F2O300I1", 3);
        let (frames, problem) = walk(&info, 12, PositionRule::AtOrBefore);
        assert_eq!(frames, vec![(Some(2), 350), (Some(1), 300), (Some(0), 200), (None, 100)]);
        assert_eq!(problem, None);
        let (frames, _) = walk(&info, 20, PositionRule::StrictlyBefore);
        assert_eq!(frames[0], (Some(2), 350));
        let (frames, _) = walk(&info, 20, PositionRule::AtOrBefore);
        assert_eq!(frames, vec![(Some(1), 250), (Some(0), 200), (None, 100)]);
        let (frames, _) = walk(&info, 35, PositionRule::AtOrBefore);
        assert_eq!(frames, vec![(None, 7)]);
    }

    #[test]
    fn bad_tables_end_the_walk_without_panicking() {
        let out_of_range = info("C0O5I7", "F0O100", 1);
        assert_eq!(
            walk(&out_of_range, 0, PositionRule::AtOrBefore),
            (vec![(None, 5)], Some(WalkProblem::InliningIdOutOfRange))
        );
        let cycle = info("C0O5I0", "F0O100I1F0O200I0", 1);
        let (frames, problem) = walk(&cycle, 0, PositionRule::AtOrBefore);
        assert_eq!(problem, Some(WalkProblem::Cycle));
        assert_eq!(frames.len(), 3);
        let missing = info("C0O5I0", "F9O100", 1);
        assert_eq!(
            walk(&missing, 0, PositionRule::AtOrBefore),
            (vec![(None, 100)], Some(WalkProblem::FunctionIndexOutOfRange))
        );
        let no_function = info("C0O5I1", "F0O100FO200I0", 1);
        assert_eq!(
            walk(&no_function, 0, PositionRule::AtOrBefore),
            (vec![(Some(0), 200), (None, 100)], Some(WalkProblem::NoFunction))
        );
        let empty = info("", "", 0);
        assert_eq!(walk(&empty, 0, PositionRule::StrictlyBefore), (vec![(None, -1)], None));
    }
}
