//! The inlining tree of one code object with the instructions of each
//! inlined call: what a debugger's `DW_TAG_inlined_subroutine`s describe.
//!
//! V8 keeps the tree as its inlining positions (`F<function>O<call>I<parent>`)
//! and maps instructions to it through the source-position table. Here the
//! code is cut at every offset where the position table changes and each
//! piece walked with [`crate::v8::inline_stack::inlining_stack`] (V8's
//! `SourcePosition::InliningStack`), so every offset gets exactly the stack
//! `v8inline lookup` prints for it; the stacks of all pieces, merged from
//! the outermost frame in, are the tree.

use rustc_hash::FxHashMap;

use crate::formats::v8log::SharedFunctionId;
use crate::v8::inline_map::{CodeId, InlineMap};
use crate::v8::inline_stack::{FrameFunction, InlineFrame, PositionRule, WalkProblem};

/// Index of an [`InlinedCall`] in [`CodeInlining::calls`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub(crate) u32);

impl CallId {
    /// Its index from 0.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Code offsets from `start` up to, not including, `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeSpan {
    /// The first offset.
    pub start: u64,
    /// The first offset after it.
    pub end: u64,
}

/// One call of an inlined function: a node of the inlining tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedCall {
    /// The calling inlined call; `None` when the code object's own function
    /// made the call.
    pub parent: Option<CallId>,
    /// The function inlined.
    pub function: SharedFunctionId,
    /// Where the caller calls it: a script offset in the caller's script
    /// (-1 unknown).
    pub call_offset: i32,
    /// The instructions that run in this call or in calls inlined into it,
    /// ascending, adjacent ones merged.
    pub spans: Vec<CodeSpan>,
}

/// A piece of the code with one inline stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionSpan {
    /// The instructions.
    pub span: CodeSpan,
    /// The innermost call running there; `None` for the code object's own
    /// function.
    pub innermost: Option<CallId>,
    /// The script offset of those instructions in the innermost function's
    /// script (-1 unknown).
    pub script_offset: i32,
}

/// The inlining tree of a code object, as [`code_inlining`] builds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeInlining {
    /// The inlined calls; a call's parent comes before it.
    pub calls: Vec<InlinedCall>,
    /// The code from offset 0 to its size, in order, one piece per change
    /// of inline stack or position.
    pub positions: Vec<PositionSpan>,
    /// The first problem met walking the tables (the walk still gave a stack).
    pub problem: Option<WalkProblem>,
}

impl CodeInlining {
    /// The frames at `span` (an element of [`CodeInlining::positions`]),
    /// innermost first, as [`InlineMap::inline_frames`] gives them: each
    /// inlined call's function at its position, then the code object's own
    /// function at the outermost call site.
    pub fn frames(&self, span: &PositionSpan, frames: &mut Vec<InlineFrame>) {
        let mut script_offset = span.script_offset;
        let mut call = span.innermost;
        // A parent comes before its child, so the walk ends.
        while let Some(id) = call {
            let inlined = &self.calls[id.index()];
            frames.push(InlineFrame { function: FrameFunction::Inlined(inlined.function), script_offset });
            script_offset = inlined.call_offset;
            call = inlined.parent;
        }
        frames.push(InlineFrame { function: FrameFunction::Outer, script_offset });
    }
}

/// The inlining tree of `code` over its first `code_size` bytes. A code
/// object without source positions is one piece of its own function, at
/// offset -1.
pub fn code_inlining(map: &InlineMap, code: CodeId, code_size: u64) -> CodeInlining {
    let mut inlining = CodeInlining::default();
    if code_size == 0 {
        return inlining;
    }
    // Where the stack may change: offset 0 and each position entry's offset.
    let mut starts = vec![0u64];
    let tables = map.log_object(code).zip(map.log_of(code)).and_then(|(object, log)| log.source_tables(object));
    if let Some(tables) = tables {
        starts.extend(
            tables.positions.iter().map(|entry| u64::from(entry.code_offset)).filter(|&offset| offset < code_size),
        );
    }
    // The table is ascending when it was checked; sorting keeps a damaged one usable.
    starts.sort_unstable();
    starts.dedup();
    let mut calls_by_key: FxHashMap<CallKey, CallId> = FxHashMap::default();
    let mut frames = Vec::new();
    for (index, &start) in starts.iter().enumerate() {
        let end = starts.get(index + 1).copied().unwrap_or(code_size);
        frames.clear();
        // The rule that applies at `start` applies up to the next start.
        let problem = map.inline_frames(code, start, PositionRule::AtOrBefore, &mut frames);
        if inlining.problem.is_none() {
            inlining.problem = problem;
        }
        let Some((innermost_frame, _)) = frames.split_first() else { continue };
        let mut parent = None;
        // From the outermost call in: frame i is called from frame i + 1.
        for pair in frames.windows(2).rev() {
            let [callee, caller] = pair else { continue };
            let FrameFunction::Inlined(function) = callee.function else { continue };
            let key = CallKey { parent, function, call_offset: caller.script_offset };
            let id = *calls_by_key.entry(key).or_insert_with(|| {
                inlining.calls.push(InlinedCall {
                    parent,
                    function,
                    call_offset: caller.script_offset,
                    spans: Vec::new(),
                });
                CallId(inlining.calls.len() as u32 - 1)
            });
            add_span(&mut inlining.calls[id.index()].spans, CodeSpan { start, end });
            parent = Some(id);
        }
        let piece = PositionSpan {
            span: CodeSpan { start, end },
            innermost: parent,
            script_offset: innermost_frame.script_offset,
        };
        match inlining.positions.last_mut() {
            // The same stack and position as the piece before: one piece.
            Some(last) if last.innermost == piece.innermost && last.script_offset == piece.script_offset => {
                last.span.end = end
            }
            _ => inlining.positions.push(piece),
        }
    }
    inlining
}

/// What makes two inlined calls one: the same caller, function and call site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CallKey {
    parent: Option<CallId>,
    function: SharedFunctionId,
    call_offset: i32,
}

/// Appends `span` to ascending `spans`, merged with the last when adjacent.
fn add_span(spans: &mut Vec<CodeSpan>, span: CodeSpan) {
    match spans.last_mut() {
        Some(last) if last.end == span.start => last.end = span.end,
        _ => spans.push(span),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::v8log::CodeLog;
    use crate::v8::inline_map::SourceOptions;

    /// f (0x1000, 100 bytes) inlines g at script offset 8, and g inlines h
    /// at 21: `[0, 10)` is f's own code, `[10, 20)` g's, `[20, 30)` h's
    /// inside g, `[30, 40)` f's again and `[40, 100)` g's (a second span of
    /// the same call).
    fn map() -> InlineMap {
        let log = CodeLog::parse(
            b"code-creation,JS,10,1,0x2000,8,g /app/a.js:2:1,0x600,~\n\
              code-creation,JS,10,1,0x3000,8,h /app/a.js:3:1,0x700,~\n\
              code-creation,JS,10,2,0x1000,100,f /app/a.js:1:1,0x500,*\n\
              code-source-info,0x1000,1,0,50,C0O5C10O20I0C20O30I1C30O7C40O25I0,F0O8F1O21I0,S0x600S0x700\n",
        );
        InlineMap::new(vec![log], None, SourceOptions::default())
    }

    #[test]
    fn calls_hold_the_code_of_their_callees_and_pieces_the_innermost_position() {
        let map = map();
        let code = map.code_ids().find(|&code| map.code(code).address == 0x1000).unwrap();
        let inlining = code_inlining(&map, code, 100);
        let span = |start, end| CodeSpan { start, end };
        let [g, h] = [&inlining.calls[0], &inlining.calls[1]];
        assert_eq!((g.parent, g.call_offset, &g.spans[..]), (None, 8, &[span(10, 30), span(40, 100)][..]));
        assert_eq!((h.parent, h.call_offset, &h.spans[..]), (Some(CallId(0)), 21, &[span(20, 30)][..]));
        assert_ne!(g.function, h.function);
        let pieces: Vec<(u64, u64, Option<CallId>, i32)> = inlining
            .positions
            .iter()
            .map(|piece| (piece.span.start, piece.span.end, piece.innermost, piece.script_offset))
            .collect();
        assert_eq!(
            pieces,
            [
                (0, 10, None, 5),
                (10, 20, Some(CallId(0)), 20),
                (20, 30, Some(CallId(1)), 30),
                (30, 40, None, 7),
                (40, 100, Some(CallId(0)), 25)
            ]
        );
        assert_eq!(inlining.problem, None);
        // Every offset has the stack lookup gives it.
        for piece in &inlining.positions {
            for offset in piece.span.start..piece.span.end {
                let (mut expected, mut actual) = (Vec::new(), Vec::new());
                map.inline_frames(code, offset, PositionRule::AtOrBefore, &mut expected);
                inlining.frames(piece, &mut actual);
                assert_eq!(actual, expected, "offset {offset}");
            }
        }
        // A shorter code keeps what lies in it.
        let cut = code_inlining(&map, code, 25);
        assert_eq!(cut.positions.last().map(|piece| piece.span), Some(span(20, 25)));
        assert_eq!(cut.calls[0].spans, [span(10, 25)]);
        assert_eq!(code_inlining(&map, code, 0), CodeInlining::default());
    }

    #[test]
    fn code_without_positions_is_one_piece_of_its_own_function() {
        let log = CodeLog::parse(b"code-creation,JS,10,2,0x1000,64,f /app/a.js:1:1,0x500,*\n");
        let map = InlineMap::new(vec![log], None, SourceOptions::default());
        let inlining = code_inlining(&map, CodeId(0), 64);
        assert!(inlining.calls.is_empty());
        assert_eq!(
            inlining.positions,
            [PositionSpan { span: CodeSpan { start: 0, end: 64 }, innermost: None, script_offset: -1 }]
        );
    }
}
