//! Scripts, their line tables and source maps: how an [`InlineMap`] finds
//! a script's text ([`SourceOptions`]), and [`InlineMap::describe`], which
//! places an inline frame in its (original) source for people.

use std::borrow::Cow;
use std::path::Path;

use crate::expansion::{PositionOrigin, SourceFrame};
use crate::formats::v8log::{FunctionName, SharedFunction};
use crate::v8::inline_stack::{FrameFunction, InlineFrame};
use crate::v8::source::LineTable;
use crate::v8::source_map::{
    LoadedSourceMap, ScriptSourceMap, SourceMapOptions, UnusableSourceMap, load_script_map, script_file_name,
};

use super::InlineMap;
use super::codes::{CodeId, LogId};
use super::names::original_function_name;

/// How to find script text when the log carries none (`--no-log-source-code`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SourceOptions {
    /// Read scripts from disk by the path V8 names them with.
    pub read_from_disk: bool,
    /// Path prefixes to replace before reading (`FROM`, `TO`), for profiles
    /// recorded elsewhere.
    pub path_substitutions: Vec<(String, String)>,
    /// Where source maps come from, and whether frames are mapped at all.
    pub source_maps: SourceMapOptions,
}

impl InlineMap {
    /// The source map of a script of one log, found and parsed on first use
    /// (see [`crate::v8::source_map::load_script_map`]); `None` when source
    /// maps are off, the script has none, or it could not be used (then
    /// [`InlineMap::source_map_problems`] says why).
    pub fn source_map(&self, log: LogId, script_id: i64) -> Option<&LoadedSourceMap> {
        if !self.sources.source_maps.enabled {
            return None;
        }
        let cell = self.source_maps.get(log.index())?.get(&script_id)?;
        let state = cell.get_or_init(|| {
            let Some(script) = self.log(log).scripts.get(&script_id) else { return ScriptSourceMap::None };
            // Node's own scripts (`node:internal/...`) have no maps.
            if script.name.is_empty() || script.name.starts_with("node:") {
                return ScriptSourceMap::None;
            }
            let file_name = script_file_name(&script.name);
            let path = substitute_path(&file_name, &self.sources.path_substitutions);
            let path = Path::new(path.as_ref());
            // Read once for both: a log's sources are read back from its file.
            let escaped = self.log(log).script_source(script);
            let source = match escaped.as_deref() {
                // Most scripts name no map: unescape only those that may.
                Some(escaped) if memchr::memmem::find(escaped, b"sourceMappingURL").is_none() => None,
                Some(escaped) => Some(crate::formats::v8log::escape::unescape(escaped)),
                None if self.sources.read_from_disk
                    && std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) =>
                {
                    std::fs::read(path).ok().map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                }
                None => None,
            };
            let lines = self.line_table_given(log, script_id, escaped.as_deref());
            load_script_map(&script.name, path, source.as_deref(), lines, &self.sources.source_maps)
        });
        match state {
            ScriptSourceMap::Loaded(map) => Some(map),
            ScriptSourceMap::None | ScriptSourceMap::Failed(_) => None,
        }
    }

    /// The source maps found so far that could not be used.
    pub fn source_map_problems(&self) -> impl Iterator<Item = &UnusableSourceMap> {
        self.source_maps.iter().flat_map(|scripts| scripts.values()).filter_map(|cell| match cell.get() {
            Some(ScriptSourceMap::Failed(problem)) => Some(problem),
            _ => None,
        })
    }

    /// Describes one inline frame of `code` for people.
    pub fn describe(&self, code: CodeId, frame: &InlineFrame) -> SourceFrame<'_> {
        let host = self.log_object(code);
        let log_id = self.code(code).log_object().map(|object| object.log);
        let log = log_id.map(|id| self.log(id));
        let (function, script_id): (Option<&SharedFunction>, Option<i64>) = match (frame.function, log) {
            (FrameFunction::Outer, _) => {
                let function = host.and_then(|object| object.function).zip(log).map(|(id, log)| log.function(id));
                let script = host
                    .zip(log)
                    .and_then(|(object, log)| log.source_info(object))
                    .map(|info| info.script_id)
                    .or_else(|| function.and_then(|function| function.script_id));
                (function, script)
            }
            (FrameFunction::Inlined(id), Some(log)) => {
                let function = log.function(id);
                (Some(function), function.script_id)
            }
            (FrameFunction::Inlined(_), None) => (None, None),
        };
        let full_name: &str = match (frame.function, function) {
            (_, Some(function)) if !function.name.is_empty() => &function.name,
            (FrameFunction::Outer, _) => {
                host.zip(log).map_or(self.code_name(code), |(object, log)| log.object_name(object))
            }
            _ => "",
        };
        let script_name = script_id.zip(log).and_then(|(id, log)| log.scripts.get(&id)).map(|script| &*script.name);
        // Code the log knows to be no JavaScript function (a regular
        // expression, a stub) is named by its code name as it is: a RegExp's
        // pattern may hold spaces and `:N`, which are no script or line.
        let is_function_code = host.is_none_or(|object| object.function.is_some());
        let parsed = if is_function_code {
            FunctionName::parse(full_name, script_name)
        } else {
            FunctionName { function: full_name, script: "", start: None }
        };
        let script_position = script_id
            .zip(log_id)
            .and_then(|(script_id, log_id)| self.line_table(log_id, script_id))
            .and_then(|table| table.position(i64::from(frame.script_offset)));
        let (mut position, position_origin) = match (script_position, parsed.start) {
            (Some(position), _) => (Some(position), PositionOrigin::Script),
            (None, Some(start)) => (Some(start), PositionOrigin::FunctionStart),
            (None, None) => (None, PositionOrigin::Unknown),
        };
        let mut function_name = parsed.function;
        let mut script_name = script_name.unwrap_or(parsed.script);
        let mut function_start = parsed.start;
        // Through the script's source map: the function's start decides its
        // original file and name; the frame's position maps on its own.
        let source_map = script_id.zip(log_id).and_then(|(script_id, log_id)| self.source_map(log_id, script_id));
        if let Some((source_map, start)) = source_map.zip(parsed.start)
            && let Some(original_start) = source_map.original(start)
        {
            function_name = original_function_name(source_map, start).unwrap_or(function_name);
            script_name = original_start.source;
            function_start = Some(original_start.position);
            position = position.map(|generated| {
                source_map
                    .original(generated)
                    .filter(|original| original.source == original_start.source)
                    .map_or(original_start.position, |original| original.position)
            });
        }
        SourceFrame {
            frame_name: self.frame_name(code, frame.function),
            function_name,
            script_name,
            position,
            position_origin,
            function_start,
            inlined: matches!(frame.function, FrameFunction::Inlined(_)),
            tier: host.and_then(|object| object.tier).map(|tier| tier.tier),
        }
    }

    /// The line table of a script of one log (script ids are per isolate):
    /// from the log's `script-source`, else from disk when allowed. Built
    /// once, on first use.
    pub fn line_table(&self, log: LogId, script_id: i64) -> Option<&LineTable> {
        self.line_table_given(log, script_id, None)
    }

    /// [`InlineMap::line_table`], built from `escaped`, the script's source
    /// as the log carries it, when the caller has read it already.
    fn line_table_given(&self, log: LogId, script_id: i64, escaped: Option<&[u8]>) -> Option<&LineTable> {
        let cell = self.line_tables.get(log.index())?.get(&script_id)?;
        cell.get_or_init(|| {
            let script = self.log(log).scripts.get(&script_id)?;
            if let Some(escaped) = escaped {
                return Some(LineTable::from_escaped_source(escaped));
            }
            if let Some(source) = self.log(log).script_source(script) {
                return Some(LineTable::from_escaped_source(&source));
            }
            if !self.sources.read_from_disk {
                return None;
            }
            let path = substitute_path(&script.name, &self.sources.path_substitutions);
            let path = Path::new(path.as_ref());
            // Only regular files: a script named `/dev/zero` or a FIFO in a
            // damaged log must not hang the run or exhaust memory.
            if !std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file()) {
                return None;
            }
            let bytes = std::fs::read(path).ok()?;
            Some(LineTable::from_text(&String::from_utf8_lossy(&bytes)))
        })
        .as_ref()
    }
}

/// Applies the first matching prefix substitution.
fn substitute_path<'path>(path: &'path str, substitutions: &[(String, String)]) -> Cow<'path, str> {
    for (from, to) in substitutions {
        if let Some(rest) = path.strip_prefix(from.as_str()) {
            return Cow::Owned(format!("{to}{rest}"));
        }
    }
    Cow::Borrowed(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions() {
        let substitutions = vec![("/ci/work".to_string(), "/home/me/src".to_string())];
        assert_eq!(substitute_path("/ci/work/app.js", &substitutions), "/home/me/src/app.js");
        assert_eq!(substitute_path("/other/app.js", &substitutions), "/other/app.js");
    }
}
