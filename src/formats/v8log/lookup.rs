//! What a read [`CodeLog`] answers: names and tags by id, code objects,
//! their source information and position tables (decoded and checked on
//! first use, [`DecodedTables`]), functions and script sources.

use std::borrow::Cow;

use super::record::{self, InliningPosition, PositionEntry};
use super::tables::{self, TableProblem};
use super::{
    CodeLog, CodeObject, CodeObjectId, NameId, Script, ScriptText, SharedFunction, SharedFunctionId, SourceInfo,
    SourceTables, TagId,
};

/// The decoded position and inlining tables of a [`SourceInfo`].
#[derive(Debug, Default)]
pub(super) struct DecodedTables {
    pub(super) positions: Box<[PositionEntry]>,
    pub(super) inlining_positions: Box<[InliningPosition]>,
    /// What is wrong with the tables, if anything: text that does not
    /// parse (then the tables are not used), or ids out of range or parent
    /// chains that loop ([`tables::inlining_table_problem`]).
    pub(super) problem: Option<TableProblem>,
    /// Whether the text parsed, so the tables can be used.
    pub(super) parsed: bool,
}

impl DecodedTables {
    /// Decodes a `code-source-info`'s table text with
    /// `inlined_function_count` inlined functions.
    pub(super) fn decode(positions: &[u8], inlining: &[u8], inlined_function_count: usize) -> DecodedTables {
        match record::parse_position_tables(positions, inlining) {
            Ok((positions, inlining_positions)) => {
                DecodedTables::checked(positions.into(), inlining_positions.into(), inlined_function_count)
            }
            Err(problem) => {
                DecodedTables { problem: Some(TableProblem::Unparsable(problem)), ..DecodedTables::default() }
            }
        }
    }

    /// Tables that parsed, with what is inconsistent in them.
    pub(super) fn checked(
        positions: Box<[PositionEntry]>,
        inlining_positions: Box<[InliningPosition]>,
        inlined_function_count: usize,
    ) -> DecodedTables {
        let functions = vec![SharedFunctionId(0); inlined_function_count];
        let problem = tables::inlining_table_problem(&SourceTables {
            positions: &positions,
            inlining_positions: &inlining_positions,
            inlined_functions: &functions,
        });
        DecodedTables { positions, inlining_positions, problem: problem.map(TableProblem::Inconsistent), parsed: true }
    }
}

impl CodeLog {
    /// The name with this id (unescaped).
    pub fn name(&self, id: NameId) -> &str {
        &self.names[id.index()]
    }

    /// The tag with this id.
    pub fn tag(&self, id: TagId) -> &str {
        &self.tags[id.index()]
    }

    /// A code object's name, e.g. `root /tmp/exp/bench.js:4:14`.
    pub fn object_name(&self, object: &CodeObject) -> &str {
        self.name(object.name)
    }

    /// A code object's tag (`JS`, `LazyCompile`, `Builtin`, ...).
    pub fn object_tag(&self, object: &CodeObject) -> &str {
        self.tag(object.tag)
    }

    /// The code object with this id.
    pub fn code_object(&self, id: CodeObjectId) -> &CodeObject {
        &self.code_objects[id.index()]
    }

    /// The source information of a code object, if its log had any.
    pub fn source_info(&self, object: &CodeObject) -> Option<&SourceInfo> {
        object.source_info.map(|id| &self.source_infos[id.index()])
    }

    /// The position and inlining tables of a code object, decoded and
    /// checked on the first call for it (later calls return the same
    /// tables); `None` without them or when their text does not parse
    /// ([`CodeLog::table_problems`] says why).
    pub fn source_tables(&self, object: &CodeObject) -> Option<SourceTables<'_>> {
        let info = self.source_info(object)?;
        let decoded = info.decoded.get_or_init(|| {
            let positions_length = info.positions_length as usize;
            let range = info.text_start..info.text_start + positions_length + 1 + info.inlining_length as usize;
            let text = match &self.retained {
                Some(retained) => retained.read(range),
                None => self.table_text.get(range).map(Cow::Borrowed),
            };
            Box::new(match text {
                Some(text) => DecodedTables::decode(
                    &text[..positions_length],
                    &text[positions_length + 1..],
                    info.functions_count as usize,
                ),
                None => DecodedTables { problem: Some(TableProblem::NotReadAgain), ..DecodedTables::default() },
            })
        });
        if !decoded.parsed {
            return None;
        }
        let functions_start = info.functions_start as usize;
        Some(SourceTables {
            positions: &decoded.positions,
            inlining_positions: &decoded.inlining_positions,
            inlined_functions: &self.inlined_functions
                [functions_start..functions_start + info.functions_count as usize],
        })
    }

    /// A script's escaped source text, when the log carries it (and, for a
    /// log whose text stays in its file, it can be read again).
    pub fn script_source<'log>(&'log self, script: &'log Script) -> Option<Cow<'log, [u8]>> {
        match script.source.as_ref()? {
            ScriptText::Owned(text) => Some(Cow::Borrowed(text)),
            ScriptText::Retained(range) => self.retained.as_ref()?.read(range.clone()),
        }
    }

    /// The code objects whose tables were decoded so far
    /// ([`CodeLog::source_tables`]) and found unparsable or inconsistent,
    /// with what is wrong, in log order. Tables are checked when decoded,
    /// not when the log is read: a code object no sample or lookup needed
    /// is never checked (most are not, and checking would be a quarter of
    /// reading a log without script sources).
    pub fn table_problems(&self) -> impl Iterator<Item = (&CodeObject, &TableProblem)> {
        self.code_objects.iter().filter_map(|object| {
            let problem = self.source_info(object)?.decoded.get()?.problem.as_ref()?;
            Some((object, problem))
        })
    }

    /// The function with this id.
    pub fn function(&self, id: SharedFunctionId) -> &SharedFunction {
        &self.functions[id.index()]
    }

    /// Whether several isolates wrote this file at once
    /// (`--no-logfile-per-isolate` with worker threads): more than one
    /// `v8-version` header, a clock that restarts, or spliced lines.
    pub fn is_shared_by_isolates(&self) -> bool {
        self.isolate_count > 1 || self.clock_restarts > 0 || self.spliced_lines > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables are decoded and checked on first use: those that parse are
    /// used, with a problem where ids are out of range or chains loop;
    /// those that do not parse are not used, and the problem says why.
    #[test]
    fn tables_are_checked_when_decoded() {
        // (positions, inlining positions, inlined functions, problem)
        let cases: &[(&str, &str, usize, Option<&str>)] = &[
            ("", "", 0, None),
            ("C0O68C39O28I0C114O-1I1", "F0O81FO88I0", 1, None),
            ("C0O5I2", "F0O100F1O200I0", 2, Some("position entry 0: expected an inlining id below 2, found 2")),
            ("C0O5", "F2O100", 2, Some("inlining position 0: expected a function index below 2, found 2")),
            ("C0O5", "F0O100I0", 1, Some("inlining position 0: expected a parent chain that ends, it loops")),
            // A parent after its child (V8 writes callers first), but the chain ends.
            ("C0O5", "F0O100I1F0O1", 1, None),
            ("C1C2O3", "", 0, Some("field 6 (positions): unexpected text at byte 2, expected C<n>O<n>[I<n>]")),
            (
                "C1O1",
                "F0",
                1,
                Some("field 7 (inlining positions): entry without O<offset> at the end, expected F[n]O<n>[I<n>]"),
            ),
        ];
        for &(positions, inlining, functions, expected) in cases {
            let decoded = DecodedTables::decode(positions.as_bytes(), inlining.as_bytes(), functions);
            assert_eq!(
                decoded.problem.as_ref().map(ToString::to_string).as_deref(),
                expected,
                "{positions} {inlining}"
            );
            assert_eq!(decoded.parsed, !expected.is_some_and(|problem| problem.starts_with("field")));
        }
        // Through the log: the problem is known once the tables were needed.
        let log = CodeLog::parse(
            b"code-creation,JS,10,1,0x6000,16,f /a.js:1:1,0x100,*\ncode-source-info,0x6000,1,0,9,C1C2O3,,\n",
        );
        assert_eq!((log.warning_count, log.table_problems().count()), (0, 0));
        assert!(log.source_tables(&log.code_objects[0]).is_none());
        let problems: Vec<String> = log.table_problems().map(|(_, problem)| problem.to_string()).collect();
        assert_eq!(problems, ["field 6 (positions): unexpected text at byte 2, expected C<n>O<n>[I<n>]"]);
    }
}
