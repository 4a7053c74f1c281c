//! Throughput of the whole pipeline on the real npm-package app of
//! `testdata/realapp` (acorn + marked under node 20): perf.data read
//! directly, and perf script text, each expanded and folded.
//!
//! The perf.data figures are past the one-time costs: a [`PerfDataSource`]
//! has read the file once before the timing starts, so the symbols of node,
//! libc and the kernel are loaded; every timed read still rebuilds the
//! address spaces and names every frame anew. The code log and jitdump are
//! loaded once too. `bench/pipeline.sh` times whole runs, one-time costs
//! included, against `perf script` and inferno.

use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flate2::read::MultiGzDecoder;

use v8inline::internals::model::sample::{Sample, SampleInterner, SampleSink};
use v8inline::internals::pipeline::relay::read_with_sink_on_thread;
use v8inline::internals::pipeline::{ExpandingSinks, FoldOptions, fold_perf_script_from};
use v8inline::internals::sources::perf_data::PerfDataSource;
use v8inline::internals::v8::code_logs::{CodeLogOptions, CodeLogs};
use v8inline::internals::v8::expand::V8Expander;

/// The realapp recording decompressed into a directory of its own; another
/// recording of the same app when `V8INLINE_BENCH_RECORDING` names its
/// directory (bench/pipeline.sh records a longer one).
fn realapp() -> PathBuf {
    let source = std::env::var_os("V8INLINE_BENCH_RECORDING")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/realapp"));
    let directory = std::env::temp_dir().join(format!("v8inline-bench-realapp-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("temporary directory");
    for entry in std::fs::read_dir(&source).expect("testdata/realapp") {
        let path = entry.expect("directory entry").path();
        let Some(name) = path.file_name().and_then(|name| name.to_str()).and_then(|name| name.strip_suffix(".gz"))
        else {
            continue;
        };
        let mut bytes = Vec::new();
        MultiGzDecoder::new(std::fs::File::open(&path).expect("recording file")).read_to_end(&mut bytes).expect("gzip");
        std::fs::write(directory.join(name), bytes).expect("decompressed file");
    }
    directory
}

/// The one file in `directory` whose name starts with `prefix`.
fn file(directory: &Path, prefix: &str) -> PathBuf {
    std::fs::read_dir(directory)
        .expect("directory")
        .map(|entry| entry.expect("directory entry").path())
        .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with(prefix)))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", directory.display()))
}

/// Counts the samples a source hands on.
struct CountingSink(u64);

impl SampleSink for CountingSink {
    fn add_sample(&mut self, sample: &Sample, _interner: &SampleInterner) {
        self.0 += black_box(sample.frames.len()) as u64 / black_box(sample.frames.len().max(1)) as u64;
    }
}

fn pipeline(criterion: &mut Criterion) {
    let directory = realapp();
    let perf_data = file(&directory, "perf.data");
    let code_log_options = {
        let mut code_log_options = CodeLogOptions::default();
        code_log_options.logs = vec![file(&directory, "codspeed-v8-")];
        code_log_options.jitdumps = vec![file(&directory, "jit-")];
        code_log_options
    };
    let code_logs = CodeLogs::load(code_log_options).expect("realapp code log and jitdump");
    let options = FoldOptions::default();
    let mut source = PerfDataSource::new();
    let mut counter = CountingSink(0);
    source.read(&perf_data, None, &mut counter).expect("realapp perf.data");
    let samples = counter.0;

    let mut group = criterion.benchmark_group("realapp");
    group.sample_size(20);
    group.throughput(Throughput::Elements(samples));
    group.bench_function("perf_data_read", |bencher| {
        bencher.iter(|| {
            let mut counter = CountingSink(0);
            source.read(&perf_data, None, &mut counter).expect("realapp perf.data");
            counter.0
        })
    });
    group.bench_function("perf_data_expanded_and_folded", |bencher| {
        bencher.iter(|| {
            let mut sink = ExpandingSinks::new(V8Expander::new(code_logs.clone(), options.expand), &options);
            source.read(&perf_data, None, &mut sink).expect("realapp perf.data");
            sink.folder().distinct_stacks()
        })
    });
    // As `--perf-data` runs on two cores or more: read on this thread,
    // expanded and folded on another.
    group.bench_function("perf_data_expanded_and_folded_on_two_threads", |bencher| {
        bencher.iter(|| {
            let mut sink = ExpandingSinks::new(V8Expander::new(code_logs.clone(), options.expand), &options);
            read_with_sink_on_thread(&mut sink, |relay| source.read(&perf_data, None, relay))
                .expect("realapp perf.data");
            sink.folder().distinct_stacks()
        })
    });
    let script = std::fs::read(file(&directory, "perf.script")).expect("perf script");
    group.throughput(Throughput::Bytes(script.len() as u64));
    // The main job's path once it has opened the script (on one thread per
    // core, as users run it), the folded text written.
    group.bench_function("perf_script_expanded_and_folded", |bencher| {
        bencher.iter(|| {
            let profile = fold_perf_script_from(
                black_box(script.as_slice()),
                Path::new("perf.script"),
                code_logs.clone(),
                &options,
            )
            .expect("realapp perf script");
            profile.write_folded(std::io::sink()).expect("writing nowhere")
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&directory);
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
