//! The names of inline frames: `TAG:MARKER name` as V8 names code in the
//! jitdump ([`NameStyle`]: with or without the column), mapped through a
//! script's source map when it has one.

use std::borrow::Cow;
use std::sync::Arc;

use crate::formats::v8log::{CodeLog, CodeName, FunctionName, LineColumn};
use crate::v8::inline_stack::FrameFunction;
use crate::v8::source_map::LoadedSourceMap;

use super::InlineMap;
use super::codes::{CodeId, JitCode, LogId, NameStyle, one_line, strip_column};

impl InlineMap {
    /// The folded-stack name of one inline frame of `code`.
    ///
    /// A frame of a script with a source map is named after the original:
    /// the tier marker kept, then the original function name (where the map
    /// records one at the function's start, else V8's), file and start.
    pub fn frame_name(&self, code: CodeId, function: FrameFunction) -> Cow<'_, str> {
        let name = self.generated_frame_name(code, function);
        match self.mapped_frame_name(code, function, &name) {
            Some(mapped) => Cow::Owned(mapped),
            None => name,
        }
    }

    /// [`InlineMap::frame_name`] before source maps.
    fn generated_frame_name(&self, code: CodeId, function: FrameFunction) -> Cow<'_, str> {
        let jit_code = self.code(code);
        let FrameFunction::Inlined(function) = function else {
            return Cow::Borrowed(self.name_of(jit_code));
        };
        // Inlined functions exist only in the log of their host code.
        let Some(log) = self.log_of(code) else { return Cow::Borrowed(self.name_of(jit_code)) };
        let function = log.function(function);
        let host = self.log_object(code);
        // V8 names code `TAG:MARKER name`; an inlined function is named as
        // its own code of the host's compiler would be (no OSR `o` or
        // context-specialization `'`), so it merges with its standalone frames.
        let tag = host.map_or("JS", |object| log.object_tag(object));
        let marker = host.and_then(|object| object.tier).map_or("", |tier| tier.tier.marker());
        // Brackets, not parentheses: folding cuts names at a `(` (C++ arguments).
        let name: &str = if function.name.is_empty() { "[unknown function]" } else { &function.name };
        let name = match self.name_style {
            NameStyle::LineAndColumn => name,
            NameStyle::LineOnly => strip_column(name),
        };
        Cow::Owned(one_line(&format!("{tag}:{marker}{name}")).into_owned())
    }

    /// The log and script id of one inline frame's function.
    fn frame_script(&self, code: CodeId, function: FrameFunction) -> Option<(LogId, i64)> {
        let host = self.log_object(code);
        let log_id = self.code(code).log_object().map(|object| object.log)?;
        let log = self.log(log_id);
        let script_id = match function {
            FrameFunction::Outer => host
                .and_then(|object| log.source_info(object))
                .map(|info| info.script_id)
                .or_else(|| host.and_then(|object| object.function).and_then(|id| log.function(id).script_id)),
            FrameFunction::Inlined(id) => log.function(id).script_id,
        }?;
        Some((log_id, script_id))
    }

    /// `name` (`TAG:MARKER function script:line[:column]`) with the function,
    /// script and start mapped through the script's source map; `None`
    /// without a map or a mapping at the start.
    fn mapped_frame_name(&self, code: CodeId, function: FrameFunction, name: &str) -> Option<String> {
        let (log_id, script_id) = self.frame_script(code, function)?;
        let source_map = self.source_map(log_id, script_id)?;
        let script_name = &*self.log(log_id).scripts.get(&script_id)?.name;
        let parsed = FunctionName::parse(name, Some(script_name));
        let start = parsed.start?;
        let original = source_map.original(start)?;
        let prefix_length = tier_prefix_length(parsed.function);
        let prefix = &parsed.function[..prefix_length];
        let generated_function = &parsed.function[prefix_length..];
        let original_function = original_function_name(source_map, start).unwrap_or(generated_function);
        let position = original.position;
        Some(match self.name_style {
            NameStyle::LineAndColumn => {
                format!("{prefix}{original_function} {}:{}:{}", original.source, position.line, position.column)
            }
            NameStyle::LineOnly => format!("{prefix}{original_function} {}:{}", original.source, position.line),
        })
    }
}

/// How long the `TAG:MARKER` prefix of a code name's function part is, as
/// the one parser of V8 code names reads it (`JS:*`, `LazyCompile:~`,
/// `JS:o^`); 0 without a tier marker.
fn tier_prefix_length(function: &str) -> usize {
    match CodeName::parse(function) {
        Some(name) if name.marker.is_some() => function.len() - name.rest.len(),
        _ => 0,
    }
}

/// The original name of the function starting at `start` (V8's start: the
/// `(` of its parameters): the name the map records at the start or at the
/// identifier just before it, as DevTools resolves minified names.
pub(super) fn original_function_name(source_map: &LoadedSourceMap, start: LineColumn) -> Option<&str> {
    source_map.original(start).and_then(|original| original.name).or_else(|| {
        let before = LineColumn { line: start.line, column: start.column.checked_sub(1).filter(|&column| column > 0)? };
        source_map.original(before)?.name
    })
}

/// Node 18's jitdump names drop the column the log names carry; later
/// versions keep it. Decided by the joined code objects themselves.
pub(super) fn detect_name_style(logs: &[CodeLog], codes: &[JitCode], names: &[Arc<str>]) -> NameStyle {
    let mut line_only = 0;
    let mut line_and_column = 0;
    for code in codes.iter().filter(|code| code.has_code_index) {
        let Some(id) = code.log_object() else { continue };
        let code_name = &names[code.name.index()];
        let log = &logs[id.log.index()];
        let object = log.code_object(id.object);
        if object.function.is_none() {
            continue;
        }
        let object_name = log.object_name(object);
        if code_name.ends_with(object_name) {
            line_and_column += 1;
        } else if code_name.ends_with(strip_column(object_name)) {
            line_only += 1;
        }
    }
    if line_only > line_and_column { NameStyle::LineOnly } else { NameStyle::LineAndColumn }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_line() {
        assert_eq!(one_line("f /a.js:1:1"), "f /a.js:1:1");
        assert_eq!(one_line("eval\nat f\r\n"), "eval at f  ");
    }

    #[test]
    fn names_without_columns() {
        assert_eq!(strip_column("f /a/b.js:3:4"), "f /a/b.js:3");
        assert_eq!(strip_column("f /a/b.js:3"), "f /a/b.js:3");
        assert_eq!(strip_column("Builtin:Foo"), "Builtin:Foo");
    }

    #[test]
    fn tier_prefixes() {
        let cases = [("JS:*parse", 4), ("JS:o^parse", 5), ("LazyCompile:~open", 13), ("JS:open", 0), ("open", 0)];
        for (function, length) in cases {
            assert_eq!(tier_prefix_length(function), length, "{function}");
        }
    }
}
