//! `v8inline lookup`: addr2line for JIT code.

use std::fmt::Write as _;

use crate::diagnostics::Diagnostics;
use crate::error::Error;
use crate::expansion::{PositionOrigin, SourceFrame};
use crate::v8::code_logs::{CodeLogOptions, CodeLogs};
use crate::v8::inline_map::InlineMap;
use crate::v8::inline_stack::PositionRule;

/// An address to look up, optionally at a time (jitdump clock, ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressQuery {
    /// The runtime address.
    pub address: u64,
    /// When it was sampled.
    pub time: Option<u64>,
}

/// An address argument that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressParseError {
    /// The time after `@` is not a number of nanoseconds.
    #[error("{text}: expected ADDRESS@NANOSECONDS")]
    Time {
        /// The argument.
        text: String,
    },
    /// The address is not hexadecimal.
    #[error("{text}: expected a hexadecimal address")]
    Address {
        /// The argument.
        text: String,
    },
}

impl AddressQuery {
    /// Parses `0xADDRESS` or `0xADDRESS@NANOSECONDS` (hex with or without
    /// `0x`); `default_time` applies when no `@` is given.
    pub fn parse(text: &str, default_time: Option<u64>) -> Result<AddressQuery, AddressParseError> {
        let (address_text, time) = match text.split_once('@') {
            Some((address, time)) => {
                let time = time.parse::<u64>().map_err(|_| AddressParseError::Time { text: text.to_string() })?;
                (address, Some(time))
            }
            None => (text, default_time),
        };
        let digits =
            address_text.strip_prefix("0x").or_else(|| address_text.strip_prefix("0X")).unwrap_or(address_text);
        let address =
            u64::from_str_radix(digits, 16).map_err(|_| AddressParseError::Address { text: text.to_string() })?;
        Ok(AddressQuery { address, time })
    }
}

/// What [`lookup`] found.
pub struct LookupAnswer {
    /// The inline stack at each address ([`describe_address`]).
    pub text: String,
    /// The readers' warnings, with the problems of the tables the lookups
    /// decoded.
    pub diagnostics: Diagnostics,
    /// The code logs and jitdump, kept so that a command line can exit
    /// without dropping millions of code objects one by one.
    pub code_logs: CodeLogs,
}

/// Why [`lookup`] could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// Neither a code log nor a jitdump was given.
    #[error("lookup needs --log and/or --jitdump")]
    NoInputs,
    /// The inputs are of several processes (or none).
    #[error("lookup takes one process, got {processes}: give one --log/--jitdump pair")]
    NotOneProcess {
        /// How many.
        processes: usize,
        /// The readers' warnings.
        diagnostics: Diagnostics,
    },
    /// An input that cannot be used at all.
    #[error(transparent)]
    Input(#[from] Error),
}

/// Loads the code logs and jitdump of one process and describes the inline
/// stack at each address.
pub fn lookup(options: CodeLogOptions, queries: &[AddressQuery]) -> Result<LookupAnswer, LookupError> {
    if options.logs.is_empty() && options.jitdumps.is_empty() {
        return Err(LookupError::NoInputs);
    }
    let code_logs = CodeLogs::load(options)?;
    let [map] = code_logs.maps() else {
        return Err(LookupError::NotOneProcess {
            processes: code_logs.maps().len(),
            diagnostics: code_logs.diagnostics.clone(),
        });
    };
    let mut text = String::new();
    for &query in queries {
        describe_address(map, query, &mut text);
    }
    let mut diagnostics = code_logs.diagnostics.clone();
    code_logs.add_table_problems(&mut diagnostics);
    crate::v8::unexpanded::add_jitdump_cuts(&code_logs, None, &mut diagnostics);
    Ok(LookupAnswer { text, diagnostics, code_logs })
}

/// Writes the inline stack at one address, innermost first (a process with
/// several isolates also names the log of the isolate that made the code):
///
/// ```text
/// 0x7f5f3802a6d3: JS:*kernel /app/deep.js:24:16+0x113 (TurboFan, code index 1234)
///   square /app/deep.js:9:10 (inlined)
///   weigh /app/deep.js:14:45 (inlined)
///   kernel /app/deep.js:27:30
/// ```
pub fn describe_address(map: &InlineMap, query: AddressQuery, output: &mut String) {
    let Some(found) = map.find(query.address, query.time) else {
        let _ = writeln!(output, "0x{:x}: unknown: no JIT code object covers this address", query.address);
        return;
    };
    let code = map.code(found.code);
    let _ = write!(output, "0x{:x}: {}+0x{:x}", query.address, map.name_of(code), found.offset);
    let mut details = Vec::new();
    if let Some(tier) = map.log_object(found.code).and_then(|object| object.tier) {
        details.push(tier.tier.display_name().to_string());
    }
    if let Some(index) = code.code_index() {
        details.push(format!("code index {index}"));
    }
    if !found.time_matched {
        details.push("loaded after the given time".to_string());
    }
    if map.only_in_code_log(found.code) {
        details.push("from the code log: the jitdump was cut before its load".to_string());
    }
    match code.log_object() {
        None => details.push("not in the code log".to_string()),
        // Which isolate's log, when the process has several.
        Some(object) if map.logs().len() > 1 => {
            let path = &map.log(object.log).path;
            let name = path.file_name().unwrap_or(path.as_os_str());
            details.push(format!("log {}", name.to_string_lossy()));
        }
        Some(_) => {}
    }
    if !details.is_empty() {
        let _ = write!(output, " ({})", details.join(", "));
    }
    output.push('\n');
    let mut frames = Vec::new();
    map.inline_frames(found.code, found.offset, PositionRule::AtOrBefore, &mut frames);
    for frame in &frames {
        let frame = map.describe(found.code, frame);
        let _ = writeln!(output, "  {}", frame_line(&frame));
    }
}

/// The function of a frame as people read it: its name, `(top level)` or
/// `(unknown function)`.
pub fn function_label<'frame>(frame: &SourceFrame<'frame>) -> &'frame str {
    // An empty name with a script is top-level code; with none, a function
    // the log never named (its records lost, e.g. in a log several isolates
    // wrote at once).
    match (frame.function_name.is_empty(), frame.script_name.is_empty()) {
        (false, _) => frame.function_name,
        (true, false) => "(top level)",
        (true, true) => "(unknown function)",
    }
}

/// `function script:line:col`, with `(inlined)` and a note when the position
/// is only the function's start or unknown.
pub fn frame_line(frame: &SourceFrame<'_>) -> String {
    let mut line = function_label(frame).to_string();
    if !frame.script_name.is_empty() {
        let _ = write!(line, " {}", frame.script_name);
    }
    if let Some(position) = frame.position {
        let _ = write!(line, ":{}:{}", position.line, position.column);
    }
    if frame.inlined {
        line.push_str(" (inlined)");
    }
    match frame.position_origin {
        PositionOrigin::Script => {}
        PositionOrigin::FunctionStart => line.push_str(" (function start: no script source)"),
        PositionOrigin::Unknown => line.push_str(" (position unknown)"),
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_forms() {
        assert_eq!(AddressQuery::parse("0x10", None), Ok(AddressQuery { address: 16, time: None }));
        assert_eq!(AddressQuery::parse("ff@12", Some(3)), Ok(AddressQuery { address: 255, time: Some(12) }));
        assert_eq!(AddressQuery::parse("0x10", Some(3)), Ok(AddressQuery { address: 16, time: Some(3) }));
        assert!(AddressQuery::parse("zz", None).is_err());
        assert!(AddressQuery::parse("0x10@soon", None).is_err());
    }
}
