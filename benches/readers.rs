//! Throughput of the three readers on the real recordings in `testdata/`:
//! the code log, the jitdump, and `perf script` folding with and without
//! V8 inline expansion. `cargo bench` runs them (they are not tests);
//! `bench/large.sh` times whole runs on large inputs against inferno.

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flate2::read::MultiGzDecoder;

use v8inline::collapse;
use v8inline::internals::collapse::CollapseOptions;
use v8inline::internals::formats::jitdump::{self, ReadOptions};
use v8inline::internals::formats::v8log::CodeLog;
use v8inline::internals::pipeline::collapse_with;
use v8inline::internals::v8::code_logs::{CodeLogOptions, CodeLogs};
use v8inline::internals::v8::expand::{ExpandOptions, V8Expander};

/// The node versions recorded in testdata/.
const NODE_VERSIONS: [u32; 5] = [18, 20, 22, 24, 26];

/// The one file of a recording whose name starts with `prefix`.
fn recording_file(version: u32, prefix: &str) -> PathBuf {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/node{version}"));
    std::fs::read_dir(&directory)
        .expect("testdata directory")
        .map(|entry| entry.expect("directory entry").path())
        .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with(prefix)))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", directory.display()))
}

/// A recording's file, decompressed: the readers are timed, not gunzip.
fn decompressed(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    MultiGzDecoder::new(std::fs::File::open(path).expect("recording file")).read_to_end(&mut bytes).expect("gzip");
    bytes
}

fn code_log(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("code_log");
    for version in NODE_VERSIONS {
        let log = decompressed(&recording_file(version, "codspeed-v8-"));
        group.throughput(Throughput::Bytes(log.len() as u64));
        group.bench_function(format!("node{version}"), |bencher| bencher.iter(|| CodeLog::parse(black_box(&log))));
        // Without the script sources (`--no-log-source-code`, as CodSpeed
        // records): only the code records, the expensive part.
        let code_records: Vec<u8> = log
            .split_inclusive(|&byte| byte == b'\n')
            .filter(|line| !line.starts_with(b"script-source,"))
            .flatten()
            .copied()
            .collect();
        group.throughput(Throughput::Bytes(code_records.len() as u64));
        group.bench_function(format!("node{version}_without_sources"), |bencher| {
            bencher.iter(|| CodeLog::parse(black_box(&code_records)))
        });
    }
    group.finish();
}

fn jitdump_reader(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("jitdump");
    for version in NODE_VERSIONS {
        let dump = decompressed(&recording_file(version, "jit-"));
        group.throughput(Throughput::Bytes(dump.len() as u64));
        group.bench_function(format!("node{version}"), |bencher| {
            bencher.iter(|| jitdump::read(black_box(&dump), &ReadOptions::default()).expect("jitdump"))
        });
    }
    group.finish();
}

fn perf_script(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("perf_script");
    let options = CollapseOptions::default();
    for version in NODE_VERSIONS {
        let script = decompressed(&recording_file(version, "perf.script"));
        group.throughput(Throughput::Bytes(script.len() as u64));
        group.bench_function(format!("node{version}_collapse_only"), |bencher| {
            bencher.iter(|| collapse(black_box(script.as_slice()), &options, std::io::sink()))
        });
        let code_logs = CodeLogs::load({
            let mut code_log_options = CodeLogOptions::default();
            code_log_options.logs = vec![recording_file(version, "codspeed-v8-")];
            code_log_options.jitdumps = vec![recording_file(version, "jit-")];
            code_log_options
        })
        .expect("recording loads");
        // One expander for all iterations: its cache is warm after the first,
        // as it is after the first megabytes of a large input.
        let mut expander = V8Expander::new(code_logs, ExpandOptions::default());
        group.bench_function(format!("node{version}_expanded"), |bencher| {
            bencher.iter(|| collapse_with(black_box(script.as_slice()), &options, &mut expander, std::io::sink()))
        });
    }
    group.finish();
}

criterion_group!(benches, code_log, jitdump_reader, perf_script);
criterion_main!(benches);
