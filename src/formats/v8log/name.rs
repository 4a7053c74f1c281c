//! V8's names of code, parsed here and nowhere else.
//!
//! V8 names a JavaScript code object `TAG:MARKER function script:line:column`
//! in the jitdump, and writes `function script:line:column` as the NAME of its
//! `code-creation` in the code log, with the tag and the marker as fields of
//! their own (`CodeEventLogger` and the code log's code events in V8's
//! [src/logging/log.cc](https://chromium.googlesource.com/v8/v8/+/refs/heads/main/src/logging/log.cc)).
//! The folded stacks carry the jitdump's names. The tag of JavaScript code is
//! one of [`JAVASCRIPT_TAGS`]; the marker is the tier ([`TierMarker`]).
//!
//! - [`CodeName`]: `TAG:MARKER` and the rest of a jitdump or folded name.
//! - [`FunctionName`]: the function, its script and where it starts.
//! - [`ScriptLine`]: the function, its script and line as a label shows them.

use super::record::{Tier, TierMarker};
use crate::model::frames::{FrameKind, Function, SourceLine};

/// The V8 log tags of JavaScript function code (`JS` in current V8; node 18
/// writes `LazyCompile`, `Function`, `Script` and `Eval`).
pub const JAVASCRIPT_TAGS: [&str; 5] = ["JS", "LazyCompile", "Function", "Script", "Eval"];

/// A 1-based line and column, as editors and V8's stack traces show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineColumn {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in UTF-16 code units.
    pub column: u32,
}

/// A code name split at its first colon into `TAG` and `MARKER` and the rest:
/// `JS:*'square /app/deep.js:16:16` is tag `JS`, marker `*'` (TurboFan,
/// context specialized), rest `square /app/deep.js:16:16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeName<'name> {
    /// What precedes the first colon: `JS`, `Builtin`, `RegExp`...
    pub tag: &'name str,
    /// The tier marker after the colon, if there is one: `o`?, then one of
    /// `~ ^ + *`, then `'`? (as [`TierMarker::parse`] reads it in the log).
    pub marker: Option<TierMarker>,
    /// The rest of the name, after the marker.
    pub rest: &'name str,
}

impl<'name> CodeName<'name> {
    /// Splits `name` at its first colon; `None` without one.
    pub fn parse(name: &'name str) -> Option<CodeName<'name>> {
        let (tag, after_tag) = name.split_once(':')?;
        // Longest first, so that a name starting with `o` stays whole.
        let (marker, rest) = (1..=3)
            .rev()
            .filter_map(|length| {
                let marker = TierMarker::parse(after_tag.as_bytes().get(..length)?).ok()??;
                Some((Some(marker), &after_tag[length..]))
            })
            .next()
            .unwrap_or((None, after_tag));
        Some(CodeName { tag, marker, rest })
    }

    /// [`CodeName::parse`], for the code of JavaScript functions only (a
    /// tag of [`JAVASCRIPT_TAGS`]).
    pub fn javascript(name: &'name str) -> Option<CodeName<'name>> {
        CodeName::parse(name).filter(|name| JAVASCRIPT_TAGS.contains(&name.tag))
    }

    /// The rest as [`FunctionName::parse`] splits it without a script name.
    pub fn function_name(&self) -> FunctionName<'name> {
        FunctionName::parse(self.rest, None)
    }

    /// The JavaScript function the rest names, as profiles show it: the
    /// function's name (`(anonymous)` for none), its script when the name
    /// has one, and where it starts ([`CodeName::function_name`]).
    pub fn function(&self) -> Function {
        let parsed = self.function_name();
        let name = if parsed.function.is_empty() { "(anonymous)" } else { parsed.function };
        Function {
            name: name.to_string(),
            file: (!parsed.script.is_empty()).then(|| parsed.script.to_string()),
            start: parsed.start.map(|start| SourceLine { line: start.line, column: Some(start.column) }),
        }
    }

    /// The rest as a label shows it ([`ScriptLine`]); `None` without a
    /// script and line.
    pub fn script_line(&self) -> Option<ScriptLine<'name>> {
        let (function, location) = split_function_and_location(self.rest)?;
        let (script, line, column) = script_and_line(location)?;
        Some(ScriptLine { function, script, line, column })
    }
}

impl FrameKind {
    /// The kind of code of a V8 tier.
    pub fn from_tier(tier: Tier) -> FrameKind {
        match tier {
            Tier::Interpreted => FrameKind::Interpreted,
            Tier::Sparkplug => FrameKind::Sparkplug,
            Tier::Maglev => FrameKind::Maglev,
            Tier::TurboFan => FrameKind::TurboFan,
        }
    }
}

/// Splits a V8 function name `function script:line:col` (the NAME of a JS
/// code-creation) into its parts. The function part may be empty (top-level
/// code) and may contain spaces (`get x`); the script part is taken to be
/// `script_name` when the caller knows it, else the text after the last space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionName<'name> {
    /// The function's own name; empty for anonymous or top-level code.
    pub function: &'name str,
    /// The script name.
    pub script: &'name str,
    /// Where the function starts, when the name carries it.
    pub start: Option<LineColumn>,
}

impl<'name> FunctionName<'name> {
    /// Parses `name`, using `script_name` to split it when known.
    pub fn parse(name: &'name str, script_name: Option<&str>) -> FunctionName<'name> {
        let (location, start) = split_line_column(name);
        let split_at = script_name
            .filter(|script| !script.is_empty() && location.ends_with(*script))
            .map(|script| location.len() - script.len())
            .or_else(|| location.rfind(' ').map(|space| space + 1));
        match split_at {
            Some(split) => FunctionName {
                function: location[..split].strip_suffix(' ').unwrap_or(&location[..split]),
                script: &location[split..],
                start,
            },
            None => FunctionName { function: location, script: "", start },
        }
    }
}

/// Splits a trailing `:line:col` (or `:line`) off a name.
fn split_line_column(name: &str) -> (&str, Option<LineColumn>) {
    let number_suffix = |text: &str| -> Option<(usize, u32)> {
        let colon = text.rfind(':')?;
        let number = text[colon + 1..].parse::<u32>().ok()?;
        Some((colon, number))
    };
    let Some((colon, last)) = number_suffix(name) else {
        return (name, None);
    };
    match number_suffix(&name[..colon]) {
        Some((line_colon, line)) => (&name[..line_colon], Some(LineColumn { line, column: last })),
        None => (&name[..colon], Some(LineColumn { line: last, column: 1 })),
    }
}

/// `function script:line[:column]` with the script found as a label needs
/// it ([`CodeName::script_line`]): scripts may hold spaces too (`/tmp/my
/// app/lib.js`), so the script is the first part that starts as a path or URL
/// does (`/`, `file:`, `node:`, `ext:`, `https:`) and has a position, else the
/// last part with a position. The line is kept as the name writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptLine<'name> {
    /// The function's name, as the code name writes it; empty for anonymous
    /// or top-level code.
    pub function: &'name str,
    /// The script, not empty.
    pub script: &'name str,
    /// The line, decimal digits.
    pub line: &'name str,
    /// The column, decimal digits, when the name has one.
    pub column: Option<&'name str>,
}

/// Splits `function script:line[:column]` at the space before the script.
/// Function names may hold spaces (`get size`), so may paths: the script
/// is the first that starts as a path or URL does (`/`, `file:`, `node:`,
/// `ext:`, `https:`), else the last one with a position.
fn split_function_and_location(text: &str) -> Option<(&str, &str)> {
    let mut last_with_position = None;
    for (space, _) in text.match_indices(' ') {
        let (function, location) = (&text[..space], &text[space + 1..]);
        let Some((script, _, _)) = script_and_line(location) else { continue };
        if script.starts_with('/') || has_url_scheme(script) {
            return Some((function, location));
        }
        last_with_position = Some((function, location));
    }
    last_with_position
}

/// Whether `script` starts with `scheme:` (letters, digits, `+-.`).
fn has_url_scheme(script: &str) -> bool {
    let Some((scheme, _)) = script.split_once(':') else { return false };
    scheme.starts_with(|first: char| first.is_ascii_alphabetic())
        && scheme.chars().all(|character| character.is_ascii_alphanumeric() || "+-.".contains(character))
}

/// `script:line:column` or `script:line` split into the script (not empty)
/// and the line.
fn script_and_line(location: &str) -> Option<(&str, &str, Option<&str>)> {
    let is_number = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    let (before, last) = location.rsplit_once(':')?;
    if !is_number(last) {
        return None;
    }
    let (script, line, column) = match before.rsplit_once(':') {
        Some((script, line)) if is_number(line) => (script, line, Some(last)),
        _ => (before, last, None),
    };
    (!script.is_empty()).then_some((script, line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names() {
        let cases = [
            ("root /tmp/exp/bench.js:4:14", None, ("root", "/tmp/exp/bench.js", Some((4, 14)))),
            (" /tmp/exp/bench.js:1:1", None, ("", "/tmp/exp/bench.js", Some((1, 1)))),
            ("get x /a b/c.js:2:3", Some("/a b/c.js"), ("get x", "/a b/c.js", Some((2, 3)))),
            ("readWeight /tmp/deep.js:34", None, ("readWeight", "/tmp/deep.js", Some((34, 1)))),
            ("anonymous:1:1", None, ("anonymous", "", Some((1, 1)))),
            ("Builtin:ArrayPush", None, ("Builtin:ArrayPush", "", None)),
        ];
        for (name, script, (function, script_name, start)) in cases {
            let parsed = FunctionName::parse(name, script);
            assert_eq!(parsed.function, function, "{name}");
            assert_eq!(parsed.script, script_name, "{name}");
            assert_eq!(parsed.start, start.map(|(line, column)| LineColumn { line, column }), "{name}");
        }
    }

    /// Tags and markers: a marker is `o`?, a tier, `'`?; a name that starts
    /// like one keeps what is no marker.
    #[test]
    fn code_names() {
        let cases = [
            ("JS:*square /a.js:1:1", Some(("JS", Some("*"), "square /a.js:1:1"))),
            ("JS:o+kernel /a.js:1:1", Some(("JS", Some("o+"), "kernel /a.js:1:1"))),
            ("JS:*'combine /a.js:1:1", Some(("JS", Some("*'"), "combine /a.js:1:1"))),
            ("JS:o*'f /a.js:1:1", Some(("JS", Some("o*'"), "f /a.js:1:1"))),
            ("JS:onload /a.js:1:1", Some(("JS", None, "onload /a.js:1:1"))),
            ("JS:o~~x", Some(("JS", Some("o~"), "~x"))),
            ("LazyCompile:~weigh /a.js:20", Some(("LazyCompile", Some("~"), "weigh /a.js:20"))),
            ("Builtin:ArrayMap", Some(("Builtin", None, "ArrayMap"))),
            ("std::vector<int>::push_back", Some(("std", None, ":vector<int>::push_back"))),
            ("main", None),
        ];
        for (name, expected) in cases {
            let parsed =
                CodeName::parse(name).map(|parsed| (parsed.tag, parsed.marker.map(TierMarker::text), parsed.rest));
            let expected = expected.map(|(tag, marker, rest)| (tag, marker.map(str::to_string), rest));
            assert_eq!(parsed, expected, "{name}");
        }
        assert_eq!(CodeName::javascript("JS:*f /a.js:1:1").unwrap().marker.unwrap().tier, Tier::TurboFan);
        for tag in JAVASCRIPT_TAGS {
            assert!(CodeName::javascript(&format!("{tag}:~f /a.js:1:1")).is_some(), "{tag}");
        }
        assert_eq!(CodeName::javascript("Builtin:ArrayMap"), None);
        assert_eq!(CodeName::javascript("std::vector<int>::push_back"), None);
    }

    #[test]
    fn script_lines() {
        let cases = [
            ("JS:*kernel /app/deep.js:32:16", Some(("kernel", "/app/deep.js", "32"))),
            ("JS:~get size /tmp/my app/lib.js:4:7", Some(("get size", "/tmp/my app/lib.js", "4"))),
            ("JS:~ node:internal/main/run_main_module:1:1", Some(("", "node:internal/main/run_main_module", "1"))),
            ("JS:~f lib.js:9", Some(("f", "lib.js", "9"))),
            ("JS:~f", None),
            ("JS:~f /a.js", None),
        ];
        for (name, expected) in cases {
            let parsed = CodeName::javascript(name)
                .and_then(|name| name.script_line())
                .map(|line| (line.function, line.script, line.line));
            assert_eq!(parsed, expected, "{name}");
        }
    }

    #[test]
    fn v8_names_parse_into_functions_and_tiers() {
        let parse_v8_name =
            |name| CodeName::javascript(name).map(|name| (name.function(), name.marker.map(|marker| marker.tier)));
        let parsed = parse_v8_name("JS:*square /app/deep.js:16:16").unwrap();
        assert_eq!(parsed.0.to_string(), "square /app/deep.js:16:16");
        assert_eq!(parsed.1, Some(Tier::TurboFan));
        let parsed = parse_v8_name("LazyCompile:~weigh /app/deep.js:20").unwrap();
        assert_eq!(parsed.0.name, "weigh");
        // A name without a column starts at column 1, as `FunctionName::parse` reads it.
        assert_eq!(parsed.0.start, Some(SourceLine { line: 20, column: Some(1) }));
        assert_eq!(parsed.1, Some(Tier::Interpreted));
        let parsed = parse_v8_name("JS:^ /app/deep.js:1:1").unwrap();
        assert_eq!(parsed.0.name, "(anonymous)");
        assert_eq!(parsed.1, Some(Tier::Sparkplug));
        let parsed = parse_v8_name("JS:o+kernel /app/deep.js:32:16").unwrap();
        assert_eq!((parsed.0.name.as_str(), parsed.1), ("kernel", Some(Tier::Maglev)));
        let parsed = parse_v8_name("JS:*'combine /app/deep.js:26:17").unwrap();
        assert_eq!((parsed.0.name.as_str(), parsed.1), ("combine", Some(Tier::TurboFan)));
        let parsed = parse_v8_name("JS:onload /app/page.js:3:1").unwrap();
        assert_eq!((parsed.0.name.as_str(), parsed.1), ("onload", None));
        assert!(parse_v8_name("Builtin:ArrayMap").is_none());
        assert!(parse_v8_name("std::vector<int>::push_back").is_none());
    }
}
