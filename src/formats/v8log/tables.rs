//! The tables of a `code-source-info`: the inlined-function list at ingest,
//! and what can be wrong with the position and inlining tables.
//!
//! The list's addresses are read while the log is read (each names a
//! function that a later `code-creation` may name); the position and
//! inlining tables are kept as text and decoded on first use
//! ([`CodeLog::source_tables`](super::CodeLog::source_tables)), when they are
//! checked ([`inlining_table_problem`]).

use super::SourceTables;
use super::record::SourceTableError;

/// What is wrong with a code object's position and inlining tables
/// ([`CodeLog::table_problems`](super::CodeLog::table_problems)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableProblem {
    /// The table text does not parse: the tables are not used.
    #[error(transparent)]
    Unparsable(SourceTableError),
    /// The tables parsed, but an id is out of range or a parent chain loops:
    /// they are used, and the stack walk cuts a stack short there.
    #[error(transparent)]
    Inconsistent(#[from] InliningTableProblem),
    /// The log's text was left in its file, and the file no longer holds
    /// the tables (it was cut or replaced after it was read).
    #[error("its tables could not be read again from the log file")]
    NotReadAgain,
}

/// The first inconsistency of a code object's inlining tables
/// ([`inlining_table_problem`]): `what N: expected ..., found ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InliningTableProblem {
    /// A position entry names an inlining id past the inlining table.
    #[error("position entry {entry}: expected an inlining id below {count}, found {found}")]
    InliningIdOutOfRange {
        /// The entry's index in the position table.
        entry: usize,
        /// The number of inlining positions.
        count: usize,
        /// The inlining id found.
        found: u32,
    },
    /// An inlining position names a function past the inlined functions.
    #[error("inlining position {position}: expected a function index below {count}, found {found}")]
    FunctionIndexOutOfRange {
        /// The inlining position's index (its inlining id).
        position: usize,
        /// The number of inlined functions.
        count: usize,
        /// The function index found.
        found: u32,
    },
    /// An inlining position names a parent past the inlining table.
    #[error("inlining position {position}: expected a parent below {count}, found {found}")]
    ParentOutOfRange {
        /// The inlining position's index (its inlining id).
        position: usize,
        /// The number of inlining positions.
        count: usize,
        /// The parent found.
        found: u32,
    },
    /// Following the parents from an inlining position comes back to an
    /// inlining position already visited.
    #[error("inlining position {position}: expected a parent chain that ends, it loops")]
    ParentChainLoops {
        /// The inlining position whose chain loops.
        position: usize,
    },
}

/// The first inconsistency of a code object's inlining tables, which the
/// inline stack walk (`v8::inline_stack::inlining_stack`) survives by
/// cutting the stack short. An inlining position without a function (V8's
/// `F` with no index) is V8's own way to say "unknown", not a problem.
pub fn inlining_table_problem(info: &SourceTables<'_>) -> Option<InliningTableProblem> {
    let inlining_count = info.inlining_positions.len();
    for (index, entry) in info.positions.iter().enumerate() {
        if let Some(id) = entry.inlining_id.filter(|&id| id as usize >= inlining_count) {
            return Some(InliningTableProblem::InliningIdOutOfRange { entry: index, count: inlining_count, found: id });
        }
    }
    for (index, inlining) in info.inlining_positions.iter().enumerate() {
        if let Some(function) =
            inlining.function_index.filter(|&function| function as usize >= info.inlined_functions.len())
        {
            return Some(InliningTableProblem::FunctionIndexOutOfRange {
                position: index,
                count: info.inlined_functions.len(),
                found: function,
            });
        }
        if let Some(parent) = inlining.parent.filter(|&parent| parent as usize >= inlining_count) {
            return Some(InliningTableProblem::ParentOutOfRange {
                position: index,
                count: inlining_count,
                found: parent,
            });
        }
        // A chain longer than the table must visit an entry twice.
        let mut parent = inlining.parent;
        let mut steps = 0;
        while let Some(id) = parent {
            steps += 1;
            if steps > inlining_count {
                return Some(InliningTableProblem::ParentChainLoops { position: index });
            }
            parent = info.inlining_positions.get(id as usize).and_then(|position| position.parent);
        }
    }
    None
}

/// Appends the addresses of `S0x<address>...` to `addresses`; `false` unless
/// the list is in the plain form (at most 16 hex digits each).
pub fn inlined_function_addresses(table: &[u8], addresses: &mut Vec<u64>) -> bool {
    let mut at = 0;
    while at < table.len() {
        if !table[at..].starts_with(b"S0x") {
            return false;
        }
        at += 3;
        let mut value: u64 = 0;
        let start = at;
        while let Some(&byte) = table.get(at) {
            let digit = match byte {
                b'0'..=b'9' => byte - b'0',
                b'a'..=b'f' => byte - b'a' + 10,
                b'A'..=b'F' => byte - b'A' + 10,
                _ => break,
            };
            value = (value << 4) | u64::from(digit);
            at += 1;
        }
        if at == start || at - start > 16 {
            return false;
        }
        addresses.push(value);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::v8log::CodeLog;
    use crate::formats::v8log::record::parse_inlined_functions;

    #[test]
    fn inlined_function_lists() {
        for (table, expected) in [
            ("", Some(vec![])),
            ("S0x1a2BS0x3c4d", Some(vec![0x1a2b, 0x3c4d])),
            ("S0xffffffffffffffff", Some(vec![u64::MAX])),
            ("S0x1ffffffffffffffff", None),
            ("S0x", None),
            ("S0X1", None),
            ("S0x1S", None),
            ("S0x1g", None),
        ] {
            let mut addresses = Vec::new();
            let plain = inlined_function_addresses(table.as_bytes(), &mut addresses);
            assert_eq!(plain.then_some(addresses.clone()), expected, "{table}");
            if plain {
                assert_eq!(parse_inlined_functions(table.as_bytes()).unwrap(), addresses, "{table}");
            }
        }
    }

    #[test]
    fn inlining_tables() {
        let problem = |tables: &str| {
            let log = CodeLog::parse(
                format!(
                    "code-creation,JS,10,1,0x6000,16,f /a.js:1:1,0x100,*\ncode-source-info,0x6000,1,0,9,{tables}\n"
                )
                .as_bytes(),
            );
            assert_eq!(log.warning_count, 0);
            let object = &log.code_objects[0];
            let problem = inlining_table_problem(&log.source_tables(object).unwrap());
            // The same found when the tables were decoded.
            let found: Vec<&TableProblem> = log.table_problems().map(|(_, problem)| problem).collect();
            assert_eq!(found, problem.map(TableProblem::Inconsistent).iter().collect::<Vec<_>>(), "{tables}");
            problem.map(|problem| problem.to_string())
        };
        assert_eq!(problem("C0O1C4O2I1,F0O5FO6I0,S0x100"), None);
        assert_eq!(problem(",,"), None);
        assert_eq!(
            problem("C0O1I2,F0O5,S0x100").unwrap(),
            "position entry 0: expected an inlining id below 1, found 2"
        );
        assert_eq!(
            problem("C0O1,F0O5F3O6,S0x100").unwrap(),
            "inlining position 1: expected a function index below 1, found 3"
        );
        assert_eq!(problem("C0O1,F0O5I4,S0x100").unwrap(), "inlining position 0: expected a parent below 1, found 4");
        assert_eq!(
            problem("C0O1,F0O5I1F0O6I0,S0x100").unwrap(),
            "inlining position 0: expected a parent chain that ends, it loops"
        );
        assert_eq!(
            problem("C0O1,F0O5F0O6I1,S0x100").unwrap(),
            "inlining position 1: expected a parent chain that ends, it loops"
        );
    }
}
