//! The source-map reader on arbitrary bytes: a `u32` map length
//! (little-endian), the map, then the generated script's text. The map is
//! parsed (index maps flattened, sources resolved), checked against the
//! script's lines, and looked up at the start, middle and end of every line
//! of the script and one column past it; the script's own
//! `sourceMappingURL` is followed when it is a `data:` URL (never a file).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use v8inline::internals::formats::v8log::LineColumn;
use v8inline::internals::v8::source::LineTable;
use v8inline::internals::v8::source_map::{
    LoadedSourceMap, ScriptSourceMap, SourceMapOptions, load_script_map, source_mapping_url,
};

/// The most lines of the script looked up per input, so that one input
/// stays fast.
const MAX_LOOKED_UP_LINES: usize = 256;

/// Where the script pretends to be: no file there, so nothing is read from
/// disk.
const SCRIPT_NAME: &str = "/nonexistent/v8inline-fuzz/dist/app.js";

fuzz_target!(|bytes: &[u8]| {
    let Some((length, rest)) = bytes.split_first_chunk::<4>() else { return };
    let length = (u32::from_le_bytes(*length) as usize).min(rest.len());
    let (map_bytes, script_bytes) = rest.split_at(length);
    let script = String::from_utf8_lossy(script_bytes);
    let lines = LineTable::from_text(&script);

    if let Ok(map) = LoadedSourceMap::parse(map_bytes, Path::new("/nonexistent/v8inline-fuzz/dist")) {
        // Checked against the script or not, the check answers; a map that
        // fits no script fits none with fewer lines either.
        let fits_script = map.check_positions(Some(&lines)).is_ok();
        let fits_sources = map.check_positions(None).is_ok();
        assert!(!fits_script || fits_sources);
        look_up_every_line(&map, &script);
    }

    // The script's own map, as the pipeline finds it: only data: URLs (and a
    // SCRIPT.map beside a script that does not exist: none).
    let url = source_mapping_url(&script);
    if url.is_none_or(|url| url.starts_with("data:")) {
        let script_path = Path::new(SCRIPT_NAME);
        match load_script_map(SCRIPT_NAME, script_path, Some(&script), Some(&lines), &SourceMapOptions::default()) {
            ScriptSourceMap::Loaded(map) => {
                assert!(url.is_some());
                look_up_every_line(&map, &script);
            }
            ScriptSourceMap::Failed(unusable) => {
                assert!(url.is_some());
                assert_eq!(unusable.map, format!("data: URL in {SCRIPT_NAME}"));
                assert!(!unusable.problem.to_string().is_empty());
            }
            ScriptSourceMap::None => assert!(url.is_none()),
        }
    }
});

/// Looks every line up at its first, middle and last column and one past
/// it; each answer is 1-based and the same the second time (the cache).
fn look_up_every_line(map: &LoadedSourceMap, script: &str) {
    for (index, line) in script.lines().take(MAX_LOOKED_UP_LINES).enumerate() {
        let width = line.encode_utf16().count() as u32;
        for column in [1, width / 2 + 1, width, width + 1, u32::MAX] {
            let generated = LineColumn { line: index as u32 + 1, column: column.max(1) };
            let original = map.original(generated);
            if let Some(original) = original {
                assert!(original.position.line >= 1 && original.position.column >= 1);
            }
            assert_eq!(map.original(generated), original);
        }
    }
    // Line and column 0 do not exist (1-based): no answer, no panic.
    assert_eq!(map.original(LineColumn { line: 0, column: 1 }), None);
    assert_eq!(map.original(LineColumn { line: 1, column: 0 }), None);
}
