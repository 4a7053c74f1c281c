//! A code log's text kept where it was read ([`RetainedText`]: in memory,
//! or its file read again), and where a script's text is ([`ScriptText`]).

use std::borrow::Cow;
use std::sync::Arc;

/// Where a script's escaped text is.
#[derive(Debug, Clone)]
pub(super) enum ScriptText {
    /// Copied out of the log.
    Owned(Box<[u8]>),
    /// In the log's [`RetainedText`], at this range.
    Retained(std::ops::Range<usize>),
}

/// The text of a code log kept where it was read: the position tables and
/// script sources of a log stay there, uncopied, until a lookup needs them
/// (most code objects are never sampled).
#[derive(Clone)]
pub struct RetainedText {
    source: RetainedSource,
}

#[derive(Clone)]
enum RetainedSource {
    /// Text in memory that lives as long as the log.
    Memory(Arc<dyn AsRef<[u8]> + Send + Sync>),
    /// The log's file, read again where needed (`pread`). A mapping would
    /// keep every page a lookup touched resident, and Linux maps 64 KiB
    /// around each one (`fault_around_bytes`): on a 20 s recording of a
    /// real app the tables of the sampled code kept 1.5 MB of a 3.5 MB log
    /// resident, and handing the pages back after each decoding (a TLB
    /// shootdown on every thread) cost more time than reading did.
    File(Arc<std::fs::File>),
}

impl RetainedText {
    /// Text that lives as long as the log that refers to it.
    pub fn new(text: Arc<dyn AsRef<[u8]> + Send + Sync>) -> RetainedText {
        RetainedText { source: RetainedSource::Memory(text) }
    }

    /// The text of `file`, read again from it where a lookup needs it.
    pub fn in_file(file: std::fs::File) -> RetainedText {
        RetainedText { source: RetainedSource::File(Arc::new(file)) }
    }

    /// The bytes of `range`; `None` when they cannot be read (the file was
    /// cut or is unreadable since).
    pub(super) fn read(&self, range: std::ops::Range<usize>) -> Option<Cow<'_, [u8]>> {
        match &self.source {
            RetainedSource::Memory(text) => (**text).as_ref().get(range).map(Cow::Borrowed),
            RetainedSource::File(file) => {
                use std::os::unix::fs::FileExt;
                let mut bytes = vec![0; range.len()];
                file.read_exact_at(&mut bytes, range.start as u64).ok()?;
                Some(Cow::Owned(bytes))
            }
        }
    }
}

impl std::fmt::Debug for RetainedText {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            RetainedSource::Memory(text) => write!(formatter, "RetainedText({} bytes)", (**text).as_ref().len()),
            RetainedSource::File(file) => write!(formatter, "RetainedText({file:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::v8log::{CodeLog, TableProblem};

    /// A log read from its file reads tables and sources back from it when
    /// a lookup first needs them. Cut since (replaced, or still being
    /// written over), what is gone is reported as unreadable, not read
    /// wrong (a mapping would have killed the process with SIGBUS).
    #[test]
    fn tables_of_a_log_cut_after_reading_are_reported_unreadable() {
        let text: &[u8] = b"script-source,81,/tmp/a.js,function b() {}\\n\n\
            code-creation,JS,13,45545,0x7f3e9a7e5a40,396,b /tmp/a.js:2:11,0x1899,*\n\
            code-source-info,0x7f3e9a7e5a40,81,68,99,C0O68C39O28I0,F0O81,S0x1899\n\
            code-creation,JS,13,45547,0x7f3e9a7e7000,396,d /tmp/a.js:4:11,0x18b9,*\n\
            code-source-info,0x7f3e9a7e7000,81,68,99,C0O1234567890,,\n";
        let path = std::env::temp_dir().join(format!("v8inline-log-unit-{}.log", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let log = CodeLog::parse_retained(text, RetainedText::in_file(std::fs::File::open(&path).unwrap()), |_| {});
        let [first, second] = [&log.code_objects[0], &log.code_objects[1]];
        assert_eq!(log.source_tables(first).unwrap().positions.len(), 2);
        let second_record = memchr::memmem::find(text, b"code-creation,JS,13,45547").unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(second_record as u64).unwrap();
        assert!(log.source_tables(second).is_none());
        assert_eq!(log.source_tables(first).unwrap().positions.len(), 2, "decoded before the cut: kept");
        let problems: Vec<(u64, &TableProblem)> =
            log.table_problems().map(|(object, problem)| (object.address, problem)).collect();
        assert_eq!(problems, [(0x7f3e9a7e7000, &TableProblem::NotReadAgain)]);
        assert_eq!(problems[0].1.to_string(), "its tables could not be read again from the log file");
        assert_eq!(log.script_source(&log.scripts[&81]).as_deref(), Some(&b"function b() {}\\n"[..]));
        file.set_len(10).unwrap();
        assert_eq!(log.script_source(&log.scripts[&81]), None);
        std::fs::remove_file(&path).unwrap();
    }

    /// A log whose text is retained keeps its tables and sources as ranges
    /// of it, and gives what a copying parse gives.
    #[test]
    fn retained_text_gives_what_copies_give() {
        let text: &[u8] = b"script-source,81,/tmp/a.js,function b() {}\\x2C 1\\n\\n\\n\n\
            code-creation,JS,13,45545,0x7f3e9a7e5a40,396,b /tmp/a.js:2:11,0x1899,*\n\
            code-source-info,0x7f3e9a7e5a40,81,68,99,C0O68C39O28I0,F0O81,S0x1899\n\
            code-creation,JS,13,45546,0x7f3e9a7e6000,396,c /tmp/a.js:3:11,0x18a9,*\n\
            code-source-info,0x7f3e9a7e6000,81,68,99,C0O1I1,F0O81I0,S0x1899\n\
            code-creation,JS,13,45547,0x7f3e9a7e7000,396,d /tmp/a.js:4:11,0x18b9,*\n\
            code-source-info,0x7f3e9a7e7000,81,68,99,C0O1234567890,,\n\
            code-creation,JS,13,45548,0x7f3e9a7e8000,396,e /tmp/a.js:5:11,0x18c9,*\n\
            code-source-info,0x7f3e9a7e8000,81,68,99,,,\n";
        let copied = CodeLog::parse(text);
        let retained = CodeLog::parse_retained(text, RetainedText::new(Arc::new(text.to_vec())), |_| {});
        assert_eq!(copied.code_objects.len(), 4);
        for (left, right) in copied.code_objects.iter().zip(&retained.code_objects) {
            let (left_tables, right_tables) =
                (copied.source_tables(left).unwrap(), retained.source_tables(right).unwrap());
            assert_eq!(left_tables.positions, right_tables.positions);
            assert_eq!(left_tables.inlining_positions, right_tables.inlining_positions);
            assert_eq!(left_tables.inlined_functions, right_tables.inlined_functions);
        }
        let problems = |log: &CodeLog| log.table_problems().map(|(object, _)| object.address).collect::<Vec<_>>();
        assert_eq!(problems(&copied), [0x7f3e9a7e6000]);
        assert_eq!(problems(&copied), problems(&retained));
        assert_eq!(copied.source_tables(&copied.code_objects[0]).unwrap().positions.len(), 2);
        assert_eq!(copied.source_tables(&copied.code_objects[2]).unwrap().positions[0].script_offset, 1234567890);
        let script = |log: &CodeLog| log.script_source(&log.scripts[&81]).map(|source| source.to_vec());
        assert_eq!(script(&copied), Some(b"function b() {}\\x2C 1\\n\\n\\n".to_vec()));
        assert_eq!(script(&copied), script(&retained));
    }
}
