//! The cost of source maps on the recordings of `testdata/sourcemaps` (see
//! its record.sh): one TypeScript program built by tsc, as an esbuild
//! bundle with a linked map and as a minified bundle with an inline map.
//!
//! - `source_map_first_parse`: a script's map found, read (file or data:
//!   URL), parsed and checked against the script's lines, as on the first
//!   frame that needs it ([`load_script_map`]).
//! - `source_map_lookups`: [`LoadedSourceMap::original`] at every column of
//!   every line of the bundle, first on a fresh map (each position looked up
//!   in the map and cached), then again (from the cache).
//! - `source_map_fold`: the recording's perf script expanded and folded with
//!   a fresh [`CodeLogs`] per run, with source maps and without: the
//!   difference is what mapping costs a whole run (loading the code log and
//!   jitdump is not timed).

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use flate2::read::MultiGzDecoder;

use v8inline::internals::collapse::CollapseOptions;
use v8inline::internals::formats::v8log::LineColumn;
use v8inline::internals::pipeline::collapse_with;
use v8inline::internals::v8::code_logs::{CodeLogOptions, CodeLogs};
use v8inline::internals::v8::expand::{ExpandOptions, V8Expander};
use v8inline::internals::v8::inline_map::SourceOptions;
use v8inline::internals::v8::source::LineTable;
use v8inline::internals::v8::source_map::{LoadedSourceMap, ScriptSourceMap, SourceMapOptions, load_script_map};

/// Where record.sh ran the programs: the prefix of every script name.
const RECORDED_ROOT: &str = "/tmp/v8inline-testdata/sourcemaps";

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sourcemaps")
}

/// The one file of a recording whose name starts with `prefix`.
fn recording_file(version: u32, build: &str, prefix: &str) -> PathBuf {
    let directory = testdata().join(format!("node{version}/{build}"));
    std::fs::read_dir(&directory)
        .expect("recording directory")
        .map(|entry| entry.expect("directory entry").path())
        .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with(prefix)))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", directory.display()))
}

/// A script of the builds (`build/...`): its name as V8 gave it, its path
/// here and its text.
struct Script {
    name: String,
    path: PathBuf,
    text: String,
}

fn script(relative: &str) -> Script {
    let path = testdata().join(relative);
    let text = std::fs::read_to_string(&path).expect("script");
    Script { name: format!("{RECORDED_ROOT}/{relative}"), path, text }
}

fn load(script: &Script) -> Box<LoadedSourceMap> {
    let lines = LineTable::from_text(&script.text);
    match load_script_map(&script.name, &script.path, Some(&script.text), Some(&lines), &SourceMapOptions::default()) {
        ScriptSourceMap::Loaded(map) => map,
        other => panic!("{}: {other:?}", script.name),
    }
}

fn first_parse(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("source_map_first_parse");
    for (build, relative, map_bytes) in [
        ("tsc", "build/tsc/server.js", std::fs::metadata(testdata().join("build/tsc/server.js.map")).unwrap().len()),
        ("bundle", "build/bundle.js", std::fs::metadata(testdata().join("build/bundle.js.map")).unwrap().len()),
        ("minified", "build/bundle.min.js", 0),
    ] {
        let script = script(relative);
        // The minified bundle's map is the script's data: URL.
        let map_bytes = if map_bytes == 0 { script.text.len() as u64 } else { map_bytes };
        // The script's line table is built for its frames' positions anyway.
        let lines = LineTable::from_text(&script.text);
        group.throughput(Throughput::Bytes(map_bytes));
        group.bench_function(build, |bencher| {
            bencher.iter(|| {
                load_script_map(
                    black_box(&script.name),
                    &script.path,
                    Some(&script.text),
                    Some(&lines),
                    &SourceMapOptions::default(),
                )
            })
        });
    }
    group.finish();
}

fn lookups(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("source_map_lookups");
    for (build, relative) in [("bundle", "build/bundle.js"), ("minified", "build/bundle.min.js")] {
        let script = script(relative);
        // Every position of the script, 1-based, in UTF-16 columns.
        let positions: Vec<LineColumn> = script
            .text
            .lines()
            .enumerate()
            .flat_map(|(line, text)| {
                (1..=text.encode_utf16().count() as u32).map(move |column| LineColumn { line: line as u32 + 1, column })
            })
            .collect();
        group.throughput(Throughput::Elements(positions.len() as u64));
        group.bench_function(format!("{build}_uncached"), |bencher| {
            bencher.iter_batched(
                || load(&script),
                |map| positions.iter().filter(|&&position| map.original(position).is_some()).count(),
                BatchSize::LargeInput,
            )
        });
        let map = load(&script);
        group.bench_function(format!("{build}_cached"), |bencher| {
            bencher.iter(|| positions.iter().filter(|&&position| map.original(black_box(position)).is_some()).count())
        });
    }
    group.finish();
}

fn fold(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("source_map_fold");
    group.sample_size(20);
    for version in [20, 24] {
        for build in ["bundle", "minified"] {
            let mut perf_script = Vec::new();
            MultiGzDecoder::new(std::fs::File::open(recording_file(version, build, "perf.script")).unwrap())
                .read_to_end(&mut perf_script)
                .unwrap();
            group.throughput(Throughput::Bytes(perf_script.len() as u64));
            for maps in [true, false] {
                let options = {
                    let mut code_log_options = CodeLogOptions::default();
                    code_log_options.logs = vec![recording_file(version, build, "codspeed-v8-")];
                    code_log_options.jitdumps = vec![recording_file(version, build, "jit-")];
                    code_log_options.sources = {
                        let mut source_options = SourceOptions::default();
                        source_options.read_from_disk = true;
                        source_options.path_substitutions =
                            vec![(RECORDED_ROOT.to_string(), testdata().display().to_string())];
                        source_options.source_maps = {
                            let mut source_map_options = SourceMapOptions::default();
                            source_map_options.enabled = maps;
                            source_map_options
                        };
                        source_options
                    };
                    code_log_options
                };
                let name = format!("node{version}_{build}_{}", if maps { "with_maps" } else { "without_maps" });
                group.bench_function(name, |bencher| {
                    bencher.iter_batched(
                        || CodeLogs::load(options.clone()).expect("code log and jitdump"),
                        |code_logs| {
                            let mut expander = V8Expander::new(code_logs, ExpandOptions::default());
                            collapse_with(
                                perf_script.as_slice(),
                                &CollapseOptions::default(),
                                &mut expander,
                                std::io::sink(),
                            )
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, first_parse, lookups, fold);
criterion_main!(benches);
