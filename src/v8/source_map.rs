//! Source maps ([ECMA-426](https://tc39.es/ecma426/)): positions in generated
//! JavaScript (tsc output, bundles, minified code) mapped back to the
//! original files, lines, columns and names.
//!
//! A script names its map in a last-line `//# sourceMappingURL=` comment: a
//! `data:` URL holds the map inline, anything else is a path relative to the
//! script. Without a comment, `SCRIPT.map` beside the script is used when it
//! exists. Mappings count lines and columns from 0 (columns in UTF-16 code
//! units, as V8 does); [`LineColumn`] counts from 1.
//!
//! A map is used whole or not at all: one that does not parse, names a
//! source above the root of the file system, or holds a mapping past the end
//! of a line (of the script, or of a source whose text the map carries) was
//! made for other files, and each is one [`SourceMapProblem`].

use std::borrow::Cow;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use sourcemap::{DecodedMap, SourceMap};

use crate::formats::v8log::LineColumn;
use crate::v8::source::LineTable;

/// Where source maps come from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SourceMapOptions {
    /// Map frames through source maps at all. Default: true.
    pub enabled: bool,
    /// Maps given for scripts by name (`--source-map SCRIPT=MAP`): they
    /// win over what the script names.
    pub overrides: Vec<SourceMapOverride>,
}

impl Default for SourceMapOptions {
    fn default() -> SourceMapOptions {
        SourceMapOptions { enabled: true, overrides: Vec::new() }
    }
}

/// One `--source-map SCRIPT=MAP`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMapOverride {
    /// The script's name as V8 names it (usually its path).
    pub script: String,
    /// The map file.
    pub map: PathBuf,
}

/// A source map that could not be used, with its path: a warning
/// ([`crate::diagnostics::WarningKind::SourceMapUnusable`]) that displays
/// as `MAP: PROBLEM`.
#[derive(Debug, thiserror::Error)]
#[error("{map}: {problem}")]
pub struct UnusableSourceMap {
    /// The map's path (or `data: URL in SCRIPT` for an inline one).
    pub map: String,
    /// What went wrong.
    pub problem: SourceMapProblem,
}

/// Why a source map cannot be used: it cannot be read or decoded, or it was
/// made for other files.
#[derive(Debug, thiserror::Error)]
pub enum SourceMapProblem {
    /// The map's path names a directory, a device or another non-file.
    #[error("not a regular file")]
    NotARegularFile,
    /// The map file cannot be read.
    #[error("cannot read it: {0}")]
    Unreadable(#[source] io::Error),
    /// An inline map's URL does not start with `data:`.
    #[error("not a data: URL")]
    NotADataUrl,
    /// An inline map's `data:` URL has no `,` before its data.
    #[error("data: URL without a comma")]
    DataUrlWithoutComma,
    /// An inline map's `data:` URL says base64 and its data is not.
    #[error("data: URL: bad base64: {0}")]
    BadBase64(#[source] data_encoding::DecodeError),
    /// The bytes do not decode as a source map.
    #[error("not a source map: {0}")]
    NotASourceMap(#[source] sourcemap::Error),
    /// An index map whose sections cannot be flattened into one map.
    #[error("index map not usable: {0}")]
    IndexMapNotUsable(#[source] sourcemap::Error),
    /// A relative source with more `..` than the absolute directory it
    /// resolves against is deep.
    #[error("sources[{index}] {name:?} leads above / from {}", base_directory.display())]
    SourceAboveRoot {
        /// The source's index in `sources`.
        index: usize,
        /// The source as the map names it.
        name: String,
        /// The directory it resolves against.
        base_directory: PathBuf,
    },
    /// A mapping's generated position lies outside the script's text.
    #[error("a mapping at generated line {line}, column {column} lies {}", outside.of("the script"))]
    OutsideScript {
        /// The mapping's generated line, 1-based.
        line: u64,
        /// Its generated column, 1-based.
        column: u64,
        /// Where it lies.
        outside: Outside,
    },
    /// A mapping's original position lies outside its source's text as the
    /// map carries it (`sourcesContent`).
    #[error(
        "the mapping at generated line {line}, column {column} to line {original_line}, column {original_column} lies {}",
        outside.of(&format!("the sourcesContent of {source_name}"))
    )]
    OutsideSourceContent {
        /// The mapping's generated line, 1-based.
        line: u64,
        /// Its generated column, 1-based.
        column: u64,
        /// Its original line, 1-based.
        original_line: u64,
        /// Its original column, 1-based.
        original_column: u64,
        /// The source's resolved name (`?` for an index past `sources`).
        source_name: String,
        /// Where it lies.
        outside: Outside,
    },
}

/// Where a mapping lies outside a text: past its last line, or past the end
/// of its line (a column may be that of the line's break, not beyond).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// Past the last line.
    PastLastLine {
        /// The text's number of lines.
        line_count: usize,
    },
    /// Past the end of the line.
    PastLineEnd {
        /// The line's last column, 1-based.
        last_column: u64,
    },
}

impl Outside {
    /// Where, in the text named `what`: `past the last line of WHAT (line N)`.
    fn of(&self, what: &str) -> String {
        match self {
            Outside::PastLastLine { line_count } => format!("past the last line of {what} (line {line_count})"),
            Outside::PastLineEnd { last_column } => {
                format!("past the end of that line of {what} (column {last_column})")
            }
        }
    }
}

/// What a script's source map lookup came to.
#[derive(Debug)]
pub enum ScriptSourceMap {
    /// The script has no map: its frames keep their JavaScript positions.
    None,
    /// The map, parsed.
    Loaded(Box<LoadedSourceMap>),
    /// A map was named or given but could not be used.
    Failed(UnusableSourceMap),
}

/// A parsed source map with its sources resolved.
#[derive(Debug)]
pub struct LoadedSourceMap {
    map: SourceMap,
    /// Each source's path, resolved against the directory of the script (as
    /// V8 names it) or of the map file, lexically normalized; URLs (`webpack://`)
    /// as they are.
    sources: Vec<String>,
    /// Lookups done, by generated position: each location of a script is
    /// named and described once per output, and every frame of a function
    /// looks up its start again.
    lookups: Mutex<FxHashMap<LineColumn, Option<MappedToken>>>,
}

/// A lookup's answer, as indexes into the map.
#[derive(Debug, Clone, Copy)]
struct MappedToken {
    source: u32,
    position: LineColumn,
    name: Option<u32>,
}

/// A generated position mapped to its original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OriginalPosition<'map> {
    /// The original file.
    pub source: &'map str,
    /// 1-based line and column in it.
    pub position: LineColumn,
    /// The original name the mapping records there, if any.
    pub name: Option<&'map str>,
}

impl LoadedSourceMap {
    /// Parses `bytes` as a source map (index maps are flattened); sources are
    /// resolved against `base_directory`.
    pub fn parse(bytes: &[u8], base_directory: &Path) -> Result<LoadedSourceMap, SourceMapProblem> {
        let decoded = sourcemap::decode_slice(bytes).map_err(SourceMapProblem::NotASourceMap)?;
        LoadedSourceMap::from_decoded(decoded, base_directory)
    }

    fn from_decoded(decoded: DecodedMap, base_directory: &Path) -> Result<LoadedSourceMap, SourceMapProblem> {
        let map = match decoded {
            DecodedMap::Regular(map) => map,
            DecodedMap::Index(index) => index.flatten().map_err(SourceMapProblem::IndexMapNotUsable)?,
            DecodedMap::Hermes(hermes) => (*hermes).clone(),
        };
        let sources = map
            .sources()
            .enumerate()
            .map(|(index, source)| {
                resolve_source(source, base_directory).ok_or_else(|| SourceMapProblem::SourceAboveRoot {
                    index,
                    name: source.to_string(),
                    base_directory: base_directory.to_path_buf(),
                })
            })
            .collect::<Result<_, SourceMapProblem>>()?;
        Ok(LoadedSourceMap { map, sources, lookups: Mutex::default() })
    }

    /// Checks that every mapping lies within the text it maps: its generated
    /// line and column within `script` (when its text is known), its
    /// original ones within its source's text where the map carries it
    /// (`sourcesContent`). A column may be that of the line's break (or the
    /// end of the text on the last line), not beyond. The first mapping that
    /// does not fit is the error: the map was made for other files.
    pub fn check_positions(&self, script: Option<&LineTable>) -> Result<(), SourceMapProblem> {
        let contents: Vec<Option<LineTable>> = (0..self.map.get_source_count())
            .map(|index| self.map.get_source_contents(index).map(LineTable::from_text))
            .collect();
        for token in self.map.tokens() {
            let (line, column) = (token.get_dst_line(), token.get_dst_col());
            if let Some(script) = script
                && let Err(outside) = within(script, line, column)
            {
                return Err(SourceMapProblem::OutsideScript {
                    line: one_based(line),
                    column: one_based(column),
                    outside,
                });
            }
            if !token.has_source() {
                continue;
            }
            let source = token.get_src_id();
            let Some(Some(text)) = contents.get(source as usize) else { continue };
            let (original_line, original_column) = (token.get_src_line(), token.get_src_col());
            if let Err(outside) = within(text, original_line, original_column) {
                return Err(SourceMapProblem::OutsideSourceContent {
                    line: one_based(line),
                    column: one_based(column),
                    original_line: one_based(original_line),
                    original_column: one_based(original_column),
                    source_name: self.sources.get(source as usize).map_or("?", String::as_str).to_string(),
                    outside,
                });
            }
        }
        Ok(())
    }

    /// The original of a generated 1-based position: the mapping at or
    /// before it on its line; `None` where the map has none or it names no
    /// source.
    pub fn original(&self, generated: LineColumn) -> Option<OriginalPosition<'_>> {
        let mapped = {
            let mut lookups = self.lookups.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *lookups.entry(generated).or_insert_with(|| self.look_up(generated))
        }?;
        Some(OriginalPosition {
            source: self.sources.get(mapped.source as usize)?,
            position: mapped.position,
            name: mapped.name.and_then(|name| self.map.get_name(name)),
        })
    }

    /// [`LoadedSourceMap::original`] without the cache.
    fn look_up(&self, generated: LineColumn) -> Option<MappedToken> {
        let line = generated.line.checked_sub(1)?;
        let column = generated.column.checked_sub(1)?;
        let token = self.map.lookup_token(line, column)?;
        if token.get_dst_line() != line || !token.has_source() {
            return None;
        }
        Some(MappedToken {
            source: token.get_src_id(),
            // A map may claim line or column u32::MAX (VLQ deltas that wrap):
            // no position.
            position: LineColumn {
                line: token.get_src_line().checked_add(1)?,
                column: token.get_src_col().checked_add(1)?,
            },
            name: token.has_name().then(|| token.get_name_id()),
        })
    }
}

/// The URL of a script's last `//# sourceMappingURL=` (or legacy `//@`)
/// comment.
pub fn source_mapping_url(source: &str) -> Option<&str> {
    source.lines().rev().find_map(|line| {
        let comment = line.trim().strip_prefix("//")?;
        let rest = comment.strip_prefix("# ").or_else(|| comment.strip_prefix("@ "))?;
        let url = rest.strip_prefix("sourceMappingURL=")?.trim();
        (!url.is_empty() && !url.contains(char::is_whitespace)).then_some(url)
    })
}

/// Finds, reads, parses and checks the map of one script.
///
/// `script_name` is the name V8 gives the script; `script_path` where to
/// read it and its neighbours (after `--substitute-path`); `source` its text
/// when known (the log's `script-source`, or read from disk), needed for a
/// `sourceMappingURL`; `script` its lines, when known, which every mapping
/// must lie within ([`LoadedSourceMap::check_positions`]).
pub fn load_script_map(
    script_name: &str,
    script_path: &Path,
    source: Option<&str>,
    script: Option<&LineTable>,
    options: &SourceMapOptions,
) -> ScriptSourceMap {
    let script_file = script_file_name(script_name);
    let script_directory = Path::new(script_file.as_ref()).parent().unwrap_or(Path::new(""));
    let given = options.overrides.iter().find(|given| given.script == script_name || given.script == script_file);
    let (map_name, loaded) = if let Some(given) = given {
        // Sources resolve against the map's URL (ECMA-426, after `sourceRoot`,
        // which the map's reader prefixes): the file given, wherever that
        // is, made absolute against the working directory it was named in.
        let map_path = std::path::absolute(&given.map).unwrap_or_else(|_| given.map.clone());
        let base = map_path.parent().unwrap_or(Path::new(""));
        (given.map.display().to_string(), read_map_file(&map_path, base))
    } else if let Some(url) = source.and_then(source_mapping_url) {
        if url.starts_with("data:") {
            let loaded = decode_data_url(url).and_then(|bytes| LoadedSourceMap::parse(&bytes, script_directory));
            (format!("data: URL in {script_name}"), loaded)
        } else {
            let relative = percent_decode(url);
            let read_from = script_path.parent().unwrap_or(Path::new("")).join(relative.as_ref());
            // The script's text came from the log and its tree is not on this
            // machine (recorded elsewhere, no --substitute-path): nothing to map,
            // and nothing wrong with the map.
            if !is_file(script_path) && !is_file(&read_from) {
                return ScriptSourceMap::None;
            }
            // Sources resolve against the map's directory as the script names it.
            let base = normalize(&script_directory.join(relative.as_ref())).path;
            (read_from.display().to_string(), read_map_file(&read_from, base.parent().unwrap_or(Path::new(""))))
        }
    } else {
        let mut beside = script_path.as_os_str().to_owned();
        beside.push(".map");
        let beside = PathBuf::from(beside);
        if !is_file(&beside) {
            return ScriptSourceMap::None;
        }
        (beside.display().to_string(), read_map_file(&beside, script_directory))
    };
    match loaded.and_then(|map| map.check_positions(script).map(|()| map)) {
        Ok(map) => ScriptSourceMap::Loaded(Box::new(map)),
        Err(problem) => ScriptSourceMap::Failed(UnusableSourceMap { map: map_name, problem }),
    }
}

/// The file a script name means: `file://` URLs (ES modules) as paths.
pub fn script_file_name(script_name: &str) -> Cow<'_, str> {
    match script_name.strip_prefix("file://") {
        Some(path) => Cow::Owned(percent_decode(path).into_owned()),
        None => Cow::Borrowed(script_name),
    }
}

fn is_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file())
}

/// Reads and parses a map file; its sources resolve against `base_directory`.
fn read_map_file(path: &Path, base_directory: &Path) -> Result<LoadedSourceMap, SourceMapProblem> {
    // Only regular files: a map named `/dev/zero` must not hang the run.
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => {}
        Ok(_) => return Err(SourceMapProblem::NotARegularFile),
        Err(error) => return Err(SourceMapProblem::Unreadable(error)),
    }
    let bytes = std::fs::read(path).map_err(SourceMapProblem::Unreadable)?;
    LoadedSourceMap::parse(&bytes, base_directory)
}

/// The bytes of a `data:[MEDIA TYPE][;base64],DATA` URL.
fn decode_data_url(url: &str) -> Result<Vec<u8>, SourceMapProblem> {
    let rest = url.strip_prefix("data:").ok_or(SourceMapProblem::NotADataUrl)?;
    let (header, data) = rest.split_once(',').ok_or(SourceMapProblem::DataUrlWithoutComma)?;
    if header.split(';').any(|part| part == "base64") {
        data_encoding::BASE64
            .decode(data.trim_end_matches(['\r', '\n']).as_bytes())
            .or_else(|_| data_encoding::BASE64_NOPAD.decode(data.trim_end_matches('=').as_bytes()))
            .map_err(SourceMapProblem::BadBase64)
    } else {
        Ok(percent_decode(data).into_owned().into_bytes())
    }
}

/// `%XX` escapes decoded (a source map URL is a URL); invalid ones kept.
fn percent_decode(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&decoded).into_owned())
}

/// A 0-based line or column as people count it (a map's may be u32::MAX).
fn one_based(zero_based: u32) -> u64 {
    u64::from(zero_based) + 1
}

/// Whether the 0-based `line` and `column` lie within `text`; else where
/// they lie.
fn within(text: &LineTable, line: u32, column: u32) -> Result<(), Outside> {
    match text.last_column(line as usize) {
        None => Err(Outside::PastLastLine { line_count: text.line_count() }),
        Some(last) if column > last => Err(Outside::PastLineEnd { last_column: one_based(last) }),
        Some(_) => Ok(()),
    }
}

/// A map's source resolved against `base_directory`: URLs with a scheme as
/// they are, `file://` URLs to their path, relative paths joined and
/// normalized; `None` for a relative path with more `..` than an absolute
/// `base_directory` is deep (it leads above `/`).
fn resolve_source(source: &str, base_directory: &Path) -> Option<String> {
    if let Some(path) = source.strip_prefix("file://") {
        return Some(percent_decode(path).into_owned());
    }
    let has_scheme = source.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.chars().all(|character| character.is_ascii_alphanumeric() || "+-.".contains(character))
    });
    if has_scheme {
        return Some(source.to_string());
    }
    let source = percent_decode(source);
    let joined = base_directory.join(source.as_ref());
    let normalized = normalize(&joined);
    // `/..` is `/` to the file system: only a relative source can climb.
    if normalized.climbed_above_root && !Path::new(source.as_ref()).has_root() {
        return None;
    }
    Some(normalized.path.display().to_string())
}

/// A path with `.` and `..` removed lexically.
struct Normalized {
    path: PathBuf,
    /// A `..` met the root (and was dropped).
    climbed_above_root: bool,
}

/// `.` and `..` removed lexically (the files need not exist here).
fn normalize(path: &Path) -> Normalized {
    let mut normalized = PathBuf::new();
    let mut climbed_above_root = false;
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let popped =
                    matches!(normalized.components().next_back(), Some(Component::Normal(_))) && normalized.pop();
                if !popped && !normalized.has_root() {
                    normalized.push("..");
                }
                climbed_above_root |= !popped && normalized.has_root();
            }
            other => normalized.push(other.as_os_str()),
        }
    }
    Normalized { path: normalized, climbed_above_root }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_source_mapping_url() {
        let source = "let a = 1;\n//# sourceMappingURL=old.js.map\ncode();\n//# sourceMappingURL=app.js.map\n";
        assert_eq!(source_mapping_url(source), Some("app.js.map"));
        assert_eq!(source_mapping_url("x();\n//@ sourceMappingURL=legacy.map"), Some("legacy.map"));
        assert_eq!(source_mapping_url("x(); // sourceMappingURL=no.map"), None);
    }

    #[test]
    fn sources_resolve_against_the_script_directory() {
        let base = Path::new("/app/dist/tsc");
        let resolve = |source| resolve_source(source, base);
        assert_eq!(resolve("../../src/server.ts").as_deref(), Some("/app/src/server.ts"));
        assert_eq!(resolve("webpack://app/./src/a.ts").as_deref(), Some("webpack://app/./src/a.ts"));
        assert_eq!(resolve("file:///app/src/b.ts").as_deref(), Some("/app/src/b.ts"));
        assert_eq!(resolve("../../src/my%20file.ts").as_deref(), Some("/app/src/my file.ts"));
        // Three levels up from /app/dist/tsc is /, a fourth leads nowhere.
        assert_eq!(resolve("../../../etc/x.ts").as_deref(), Some("/etc/x.ts"));
        assert_eq!(resolve("../../../../etc/x.ts"), None);
        assert_eq!(resolve("a/../../../../../x.ts"), None);
        assert_eq!(resolve("/../etc/x.ts").as_deref(), Some("/etc/x.ts"));
        // Against a relative base nothing can be said.
        assert_eq!(resolve_source("../../x.ts", Path::new("dist")).as_deref(), Some("../x.ts"));
    }

    #[test]
    fn a_source_above_the_root_makes_the_map_unusable() {
        let json = br#"{"version":3,"sources":["a.ts","../../../../etc/x.ts"],"names":[],"mappings":"AAAA"}"#;
        let error = LoadedSourceMap::parse(json, Path::new("/app/dist/tsc")).expect_err("refused");
        assert!(matches!(&error, SourceMapProblem::SourceAboveRoot { index: 1, .. }), "{error:?}");
        assert_eq!(error.to_string(), r#"sources[1] "../../../../etc/x.ts" leads above / from /app/dist/tsc"#);
    }

    #[test]
    fn mappings_must_lie_within_the_script_and_the_sources_texts() {
        // Generated 1:1 and 1:4 (the end of `abc`), then 2:1 from a.ts 1:1, 1:4, 2:1.
        let json = br#"{"version":3,"sources":["a.ts"],"sourcesContent":["abc\nde"],"names":[],
            "mappings":"AAAA,GAAG;AACH"}"#;
        let map = LoadedSourceMap::parse(json, Path::new("/app")).expect("parses");
        let check = |map: &LoadedSourceMap, script: Option<&str>| {
            map.check_positions(script.map(LineTable::from_text).as_ref()).map_err(|problem| problem.to_string())
        };
        assert_eq!(check(&map, Some("abc\nxy")), Ok(()));
        assert_eq!(check(&map, Some("abc\r\nxy")), Ok(()));
        assert_eq!(check(&map, None), Ok(()));
        assert!(matches!(
            map.check_positions(Some(&LineTable::from_text("ab\nxy"))),
            Err(SourceMapProblem::OutsideScript {
                line: 1,
                column: 4,
                outside: Outside::PastLineEnd { last_column: 3 }
            })
        ));
        assert_eq!(
            check(&map, Some("ab\nxy")),
            Err("a mapping at generated line 1, column 4 lies past the end of that line of the script (column 3)"
                .into())
        );
        assert_eq!(
            check(&map, Some("abc")),
            Err("a mapping at generated line 2, column 1 lies past the last line of the script (line 1)".into())
        );
        // The original text is a line shorter than the mappings say.
        let json = br#"{"version":3,"sources":["a.ts"],"sourcesContent":["abc"],"names":[],"mappings":"AAAA;AACA"}"#;
        let map = LoadedSourceMap::parse(json, Path::new("/app")).expect("parses");
        assert_eq!(
            check(&map, None),
            Err("the mapping at generated line 2, column 1 to line 2, column 1 lies \
                 past the last line of the sourcesContent of /app/a.ts (line 1)"
                .into())
        );
        // Without sourcesContent the original side is not checked.
        let json = br#"{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA;AACA"}"#;
        let map = LoadedSourceMap::parse(json, Path::new("/app")).expect("parses");
        assert_eq!(check(&map, Some("x\ny")), Ok(()));
    }

    #[test]
    fn maps_positions_and_names_one_based() {
        // Generated line 1: `function a(b){return b}` from parse.ts line 3,
        // `a` named parseHeader.
        let json = br#"{"version":3,"sources":["../src/parse.ts"],"names":["parseHeader"],
            "mappings":"AAEA,SAASA,WACP"}"#;
        let map = LoadedSourceMap::parse(json, Path::new("/app/dist")).expect("map parses");
        let at_name = map.original(LineColumn { line: 1, column: 10 }).expect("mapped");
        assert_eq!(at_name.source, "/app/src/parse.ts");
        assert_eq!(at_name.position, LineColumn { line: 3, column: 10 });
        assert_eq!(at_name.name, Some("parseHeader"));
        let in_body = map.original(LineColumn { line: 1, column: 21 }).expect("mapped");
        assert_eq!(in_body.position, LineColumn { line: 4, column: 3 });
        assert_eq!(in_body.name, None);
        assert_eq!(map.original(LineColumn { line: 2, column: 1 }), None);
    }

    #[test]
    fn a_mapping_to_line_or_column_u32_max_maps_nowhere() {
        // `AADA`: source line 0 - 1, which the decoder wraps to u32::MAX;
        // `AAAD`: the same for the column (found by the source_map fuzz target).
        for mappings in ["AADA", "AAAD"] {
            let json = format!(
                r#"{{"version":3,"sources":["a.ts"],"sourcesContent":["x"],"names":[],"mappings":"{mappings}"}}"#
            );
            let map = LoadedSourceMap::parse(json.as_bytes(), Path::new("/app")).expect("parses");
            assert_eq!(map.original(LineColumn { line: 1, column: 1 }), None, "{mappings}");
            assert!(map.check_positions(None).is_err(), "{mappings}");
        }
    }

    #[test]
    fn index_maps_are_flattened() {
        // Two sections: generated line 1 from a.ts line 1, line 2 from b.ts line 5.
        let json = br#"{"version":3,"sections":[
            {"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"}},
            {"offset":{"line":1,"column":0},"map":{"version":3,"sources":["b.ts"],"names":["run"],"mappings":"AAIAA"}}]}"#;
        let map = LoadedSourceMap::parse(json, Path::new("/app/dist")).expect("index map parses");
        let first = map.original(LineColumn { line: 1, column: 3 }).expect("mapped");
        assert_eq!((first.source, first.position), ("/app/dist/a.ts", LineColumn { line: 1, column: 1 }));
        let second = map.original(LineColumn { line: 2, column: 1 }).expect("mapped");
        assert_eq!(
            (second.source, second.position, second.name),
            ("/app/dist/b.ts", LineColumn { line: 5, column: 1 }, Some("run"))
        );
        // The same lookup again comes from the cache, equal.
        assert_eq!(map.original(LineColumn { line: 2, column: 1 }), Some(second));
    }

    #[test]
    fn inline_data_urls_decode() {
        let json = r#"{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"}"#;
        let url =
            format!("data:application/json;charset=utf-8;base64,{}", data_encoding::BASE64.encode(json.as_bytes()));
        assert_eq!(decode_data_url(&url).expect("decodes"), json.as_bytes());
        assert_eq!(decode_data_url("data:application/json,%7B%7D").expect("decodes"), b"{}");
    }
}
