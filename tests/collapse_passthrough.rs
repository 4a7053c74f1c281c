//! The collapser against inferno 0.12.8's `perf` collapser: byte-identical
//! output with `NoExpansion`, count conservation, and the expansion hook.

use std::io::Read;
use std::path::{Path, PathBuf};

use inferno::collapse::Collapse;
use v8inline::internals::expansion::{ExpandedFrames, FrameContext, FrameExpander};
use v8inline::internals::formats::perf_script::PerfScriptReader;
use v8inline::internals::model::sample::{AddressKind, SampleTime};
use v8inline::internals::pipeline::collapse_with;
use v8inline::{CollapseOptions, CollapseSummary, collapse};

/// inferno's folded output for `input` with the same options, single-threaded.
fn inferno_output(input: &[u8], options: &CollapseOptions) -> Vec<u8> {
    let mut inferno_options = inferno::collapse::perf::Options::default();
    inferno_options.nthreads = 1;
    inferno_options.include_pid = options.include_pid;
    inferno_options.include_tid = options.include_tid;
    inferno_options.include_addrs = options.include_addrs;
    inferno_options.annotate_jit = options.annotate_jit;
    inferno_options.annotate_kernel = options.annotate_kernel;
    inferno_options.event_filter = options.event_filter.clone();
    inferno_options.skip_after = options.skip_after.clone();
    let mut folder = inferno::collapse::perf::Folder::from(inferno_options);
    let mut output = Vec::new();
    Collapse::collapse(&mut folder, input, &mut output).expect("inferno collapses");
    output
}

/// Our folded output and summary for `input`, through the public
/// inferno-compatible entry.
fn our_output(input: &[u8], options: &CollapseOptions) -> (Vec<u8>, CollapseSummary) {
    let mut output = Vec::new();
    let summary = collapse(input, options, &mut output).expect("collapses");
    (output, summary)
}

/// Our folded output and summary for `input`, with `expander`.
fn our_expanded_output(
    input: &[u8],
    options: &CollapseOptions,
    expander: impl FrameExpander + Send,
) -> (Vec<u8>, CollapseSummary) {
    let mut output = Vec::new();
    let summary = collapse_with(input, options, expander, &mut output).expect("collapses");
    (output, summary)
}

/// The sum of the counts of folded output.
fn sum_of_counts(folded: &[u8]) -> u64 {
    String::from_utf8_lossy(folded)
        .lines()
        .map(|line| {
            let (_, count) = line.rsplit_once(' ').expect("a count");
            count.parse::<u64>().expect("a number")
        })
        .sum()
}

/// Checks the summary's own bookkeeping against `folded`.
fn assert_summary_consistent(folded: &[u8], summary: &CollapseSummary, label: &str) {
    assert_eq!(sum_of_counts(folded), summary.total_count, "{label}: counts written != total_count");
    assert_eq!(
        summary.samples_read,
        summary.samples_kept + summary.samples_filtered_out + summary.samples_without_frames,
        "{label}: samples do not add up"
    );
    assert_eq!(String::from_utf8_lossy(folded).lines().count() as u64, summary.distinct_stacks, "{label}: line count");
}

/// Asserts our output with `NoExpansion` equals inferno's, showing the first
/// differing line otherwise.
fn assert_matches_inferno(input: &[u8], options: &CollapseOptions, label: &str) -> Vec<u8> {
    let expected = inferno_output(input, options);
    let (actual, summary) = our_output(input, options);
    if actual != expected {
        let expected_text = String::from_utf8_lossy(&expected);
        let actual_text = String::from_utf8_lossy(&actual);
        let expected_lines: Vec<&str> = expected_text.lines().collect();
        let actual_lines: Vec<&str> = actual_text.lines().collect();
        let first_difference = expected_lines
            .iter()
            .zip(&actual_lines)
            .position(|(expected_line, actual_line)| expected_line != actual_line)
            .unwrap_or(expected_lines.len().min(actual_lines.len()));
        panic!(
            "{label} ({options:?}): output differs from inferno at line {first_difference} \
             ({} vs {} lines)\n  inferno: {:?}\n  ours:    {:?}",
            expected_lines.len(),
            actual_lines.len(),
            expected_lines.get(first_difference),
            actual_lines.get(first_difference),
        );
    }
    assert_summary_consistent(&actual, &summary, label);
    actual
}

/// The gunzipped recorded `perf script` files (node runs, and a native one).
fn recorded_scripts() -> Vec<(PathBuf, Vec<u8>)> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut directories: Vec<PathBuf> = std::fs::read_dir(&testdata)
        .expect("testdata exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("node") || name == "native")
        })
        .collect();
    directories.sort();
    let mut scripts = Vec::new();
    for directory in directories {
        for file_name in ["perf.script.gz", "perf-inject.script.gz"] {
            let path = directory.join(file_name);
            let Ok(file) = std::fs::File::open(&path) else {
                continue;
            };
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(file).read_to_end(&mut text).expect("gunzips");
            scripts.push((path, text));
        }
    }
    assert!(scripts.len() >= 2, "expected recorded perf scripts in testdata");
    scripts
}

/// Default options, each option alone, all together, and event filters.
fn option_sets() -> Vec<(&'static str, CollapseOptions)> {
    // The options are #[non_exhaustive]: each set is the default changed.
    let with = |change: &dyn Fn(&mut CollapseOptions)| {
        let mut options = CollapseOptions::default();
        change(&mut options);
        options
    };
    vec![
        ("default", CollapseOptions::default()),
        ("pid", with(&|options| options.include_pid = true)),
        ("tid", with(&|options| options.include_tid = true)),
        ("addrs", with(&|options| options.include_addrs = true)),
        ("annotate_jit", with(&|options| options.annotate_jit = true)),
        ("annotate_kernel", with(&|options| options.annotate_kernel = true)),
        (
            "all",
            with(&|options| {
                options.include_pid = true;
                options.include_tid = true;
                options.include_addrs = true;
                options.annotate_kernel = true;
                options.annotate_jit = true;
                options.annotate_inline = true;
                options.event_filter = Some("cpu-clock".to_owned());
            }),
        ),
        ("event_filter", with(&|options| options.event_filter = Some("cpu-clock".to_owned()))),
        ("event_filter_absent", with(&|options| options.event_filter = Some("cycles".to_owned()))),
        (
            "skip_after",
            with(&|options| {
                options.skip_after = vec!["v8::internal::Execution::Call".to_owned(), "node::Start".to_owned()];
            }),
        ),
    ]
}

/// Whether every option set runs on `path`: all `perf inject` scripts (JIT
/// frames in `jitted-*.so`), node20's plain script (`/tmp/perf-PID.map`) and
/// the native one; the other plain scripts get the default and all-options
/// sets, to keep the debug-mode test time low.
fn runs_every_option(path: &Path) -> bool {
    path.ends_with("perf-inject.script.gz")
        || path.ends_with("node20/perf.script.gz")
        || path.ends_with("native/perf.script.gz")
}

#[test]
fn recorded_scripts_match_inferno_with_every_option() {
    let scripts = recorded_scripts();
    let (left, right) = scripts.split_at(scripts.len() / 2);
    std::thread::scope(|scope| {
        for half in [left, right] {
            scope.spawn(move || {
                for (path, text) in half {
                    for (label, options) in option_sets() {
                        if !runs_every_option(path) && label != "default" && label != "all" {
                            continue;
                        }
                        let label = format!("{} {label}", path.display());
                        let output = assert_matches_inferno(text, &options, &label);
                        assert_eq!(
                            output.is_empty(),
                            label.ends_with("event_filter_absent"),
                            "{label}: output expected unless filtering an absent event"
                        );
                    }
                }
            });
        }
    });
}

/// Hand-written inputs for inferno's edge cases.
const EDGE_CASES: &[(&str, &str)] = &[
    (
        "comm with spaces, pid/tid forms, cpu",
        "V8 WorkerThread 25607 4794564.109216: cycles: \n\
         \tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n\
         \t7f533952bc77 _dl_check_map_versions+0x597 (/usr/lib/ld-2.28.so)\n\
         \n\
         java 24636/25607 [000] 4794564.109216: cycles:\n\
         \t7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n\
         \n\
         java 12688 [002] 6544038.708352: cycles:\n\
         \t7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n\
         \n\
         java 12688/12764 6544038.708352: cycles:\n\
         \t8c3453 tcp_sendmsg (/lib/modules/4.3.0-rc1-virtual/build/vmlinux)\n\
         \t7d8 ipv4_conntrack_local+0x7f8f80b8 ([nf_conntrack_ipv4])\n\
         \t7d8 mod_func (/lib/modules/x/foo.ko)\n\
         \n\
         V8 WorkerThread 24636/25607 [000] 94564.109216: cycles:\n\
         \t1 a (/usr/bin/node)\n\
         \n\
         12 34 1.0: cycles:\n\
         \t1 digits_comm (/usr/bin/node)\n\
         \n\
         weird/1/2 3/4/5 1.0: cycles:\n\
         \t1 slashes (/usr/bin/node)\n",
    ),
    (
        "combined event and stack lines",
        "vote   913    72.176760:     257597 cycles:uppp:\n\
         \tffffffff9aa3c8de do_syscall_64 ([kernel.kallsyms])\n\
         \n\
         false 64414 20110.539270:      34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])\n\
         false 64414 20110.539271:      34467 cycles:  ffffffff9aa3c8de [unknown] ([unknown])\n\
         false 64414 20110.539272:      34467 cycles:u:  4004f0 main+0x10 (/tmp/false)\n\
         false 64414 20110.539273:      10 cycles:u:  4004f0 main+0x10 (/tmp/false)\n\
         false 64414 20110.539274:      10 cycles:u:  4004f0 (not_a_function) (/tmp/false)\n\
         false 64414 20110.539275: cycles:u:  4004f0 no_period (/tmp/false)\n",
    ),
    (
        "Java inlined frames",
        "java 1234/1235 1.000001: 1 cpu-clock:\n\
         \t7f1 Lcom/example/Foo;::inner->Lcom/example/Bar;::middle->Lcom/example/Baz;::outer+0x12 (/tmp/perf-1234.map)\n\
         \t7f2 Ljava/lang/Thread;::run (/tmp/perf-1234.map)\n\
         \t7f3 [unknown] (/tmp/perf-1234.map)\n\
         \t7f4 a->b_[i]->c (/usr/lib/jvm/libjvm.so)\n\
         \t7f5 JavaCalls::call_helper(JavaValue*, methodHandle*, JavaCallArguments*, Thread*) (/usr/lib/jvm/libjvm.so)\n\
         \n\
         notjava 1 1.5: 1 cpu-clock:\n\
         \t7f1 Lcom/example/Foo;::inner->x (/tmp/perf-1234.map)\n\
         \t7f2 trailing-> (/tmp/perf-1234.map)\n\
         \t7f3 ->leading (/tmp/perf-1234.map)\n\
         \n",
    ),
    (
        "comments, two event types, no frames, no final blank line",
        "# ========\n\
         # captured on: Thu Jan  1 00:00:00 2020\n\
         # ========\n\
         #\n\
         node 1 1.0: 100 cycles:\n\
         \t1 leaf (/usr/bin/node)\n\
         # a comment inside a sample\n\
         \t2 root (/usr/bin/node)\n\
         \n\
         node 1 1.1: 200 instructions:\n\
         \t1 other_leaf (/usr/bin/node)\n\
         \t2 root (/usr/bin/node)\n\
         \n\
         node 1 1.2: 300 cycles:\n\
         \n\
         \n\
         node 1 1.3: 400 instructions:\n\
         \t1 other_leaf (/usr/bin/node)\n\
         \n\
         node 1 1.4: 500 cycles:\n\
         \t1 leaf (/usr/bin/node)\n\
         \t2 root (/usr/bin/node)",
    ),
    (
        "CRLF line ends",
        "node 1 1.0: 100 cpu-clock:\r\n\
         \t1 leaf+0x1 (/usr/bin/node)\r\n\
         \t2 root (/usr/bin/node)\r\n\
         \r\n\
         node 1 1.1: 100 cpu-clock:\r\n\
         \t1 leaf+0x2 (/usr/bin/node)\r\n\
         \t2 root (/usr/bin/node)\r\n\
         \r\n",
    ),
    (
        "symbols: offsets, unknowns, tidying, rust, parentheses",
        "node 1 1.0: 1 cpu-clock:\n\
         \t1 [unknown] (/tmp/perf-2020.map)\n\
         \t2 [unknown] ([unknown])\n\
         \t3 [unknown] (/usr/lib/libc.so.6)\n\
         \t4 ends_with_plus+0x (/usr/bin/node)\n\
         \t5 not_hex+0xzz (/usr/bin/node)\n\
         \t6 +0x10 (/usr/bin/node)\n\
         \t7 (in_parens) (/usr/bin/node)\n\
         \t8 (in_parens)+0x5 (/usr/bin/node)\n\
         \t9 go/build.(*importReader).readByte (/usr/bin/go)\n\
         \ta foo<Vec::<usize>>(Vec<usize>) (/usr/bin/x)\n\
         \tb (anonymous namespace)::myBar() (/usr/bin/x)\n\
         \tc std::function<void (int, int)>::operator(int, int) (/usr/bin/x)\n\
         \td semi;colon;name (/usr/bin/x)\n\
         \te std::sys::unix::fs::File::open::hb90e1c1c787080f0 (/usr/bin/x)\n\
         \tf _$LT$std..fs..ReadDir$u20$as$u20$core..iter..Iterator$GT$::next::hc14f1750ca79129b+0x1f (/usr/bin/x)\n\
         \t10 unbalanced)(args) (/usr/bin/x)\n\
         \t11 JS:~ node:internal/main/run_main_module:1:1+0xdc (/tmp/v8/jitted-1-2184.so)\n\
         \t12 JS:*hot /app/deep.js:12:3+0x1a (/tmp/perf-1.map)\n\
         \t13 already_jit_[j] (/tmp/perf-1.map)\n\
         \t14  (/lib/x86_64-linux-gnu/libc-2.15.so)\n\
         \t15 ifunc_resolver (/usr/lib/vmlinux-5.4.14-cloudflare-2020.1.11)\n\
         \t16 space in (module name) (/usr/bin/x)\n\
         \t17 [unknown] ([vdso])\n\
         \tffffffffffffffff [unknown] ([unknown])\n\
         \t0 [unknown] ([unknown])\n\
         \n",
    ),
    (
        "weird lines and recovery",
        "node 1 1.0: 1 cpu-clock:\n\
         \t1 a (/usr/bin/node)\n\
         \tnot a stack line\n\
         \t2 b (unclosed\n\
         \tonlyaddress\n\
         \t3 c (/usr/bin/node)\n\
         \n\
         this is not an event line\n\
         \t4 d (/usr/bin/node)\n\
         \t0 [unknown] ([unknown])\n\
         \t5 e (/usr/bin/node)\n\
         \n\
         node 1 1.2: 7 cpu-clock:\n\
         \t6 f (/usr/bin/node)\n\
         \n",
    ),
    (
        "periods",
        "node 1 1.0: 5 cpu-clock:\n\
         \t1 a (/usr/bin/node)\n\
         \n\
         node 1 1.0: +6 cpu-clock:\n\
         \t1 a (/usr/bin/node)\n\
         \n\
         node 1 1.0: 7  cpu-clock:\n\
         \t1 a (/usr/bin/node)\n\
         \n\
         node 1 1.0: cpu-clock:\n\
         \t1 a (/usr/bin/node)\n\
         \n\
         node 1 1.0: 18446744073709551616 cpu-clock:\n\
         \t1 a (/usr/bin/node)\n\
         \n\
         node 1 1.0:    9 cpu-clock:  1 (x) (/usr/bin/node)\n\
         node 1 no colon here\n\
         \t1 stale_period (/usr/bin/node)\n\
         \n",
    ),
    (
        "semicolons in comm",
        "a;b 1 1.0: 1 cpu-clock:\n\
         \t1 f (/usr/bin/node)\n\
         \n\
         a 1 1.0: 2 cpu-clock:\n\
         \t1 f (/usr/bin/node)\n\
         \t2 b (/usr/bin/node)\n\
         \n",
    ),
];

/// One case of inferno 0.12.8's collapse-perf suite
/// (`testdata/inferno-suite`, as its `tests/collapse-perf.rs` lists them).
struct SuiteCase {
    /// The perf script, gzipped.
    input: PathBuf,
    /// The folded output inferno's test expects, gzipped.
    expected: PathBuf,
    /// inferno's name of the case's option (`pid`, `tid`, `kernel`, `jit`,
    /// `all`, `addrs`), if any.
    option: Option<&'static str>,
    /// FlameGraph's results hold no quotes: inferno's test takes them out of
    /// its output before comparing.
    strip_quotes: bool,
}

/// The 86 cases of inferno's suite whose output it compares to a file.
fn inferno_suite() -> Vec<SuiteCase> {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/inferno-suite");
    let options = ["pid", "tid", "kernel", "jit", "all", "addrs"];
    let result = |directory: &str, stem: &str, option: Option<&str>| {
        let suffix = option.map(|option| format!("-{option}")).unwrap_or_default();
        suite.join(directory).join(format!("results/{stem}-collapsed{suffix}.txt.gz"))
    };
    let mut cases = Vec::new();
    let flamegraph_inputs = [
        "cycles-instructions-01",
        "dd-stacks-01",
        "funcab-cmd-01",
        "funcab-pid-01",
        "iperf-stacks-pidtid-01",
        "java-faults-01",
        "java-stacks-01",
        "java-stacks-02",
        "js-stacks-01",
        "mirageos-stacks-01",
        "numa-stacks-01",
        "vertx-stacks-01",
    ];
    for name in flamegraph_inputs {
        let stem = format!("perf-{name}");
        for option in options {
            cases.push(SuiteCase {
                input: suite.join(format!("flamegraph/{stem}.txt.gz")),
                expected: result("flamegraph", &stem, Some(option)),
                option: Some(option),
                strip_quotes: true,
            });
        }
    }
    // inferno corrects Rust symbols FlameGraph demangled wrongly: its own results.
    for option in options {
        cases.push(SuiteCase {
            input: suite.join("flamegraph/perf-rust-Yamakaky-dcpu.txt.gz"),
            expected: result("inferno", "perf-rust-Yamakaky-dcpu", Some(option)),
            option: Some(option),
            strip_quotes: false,
        });
    }
    let inferno_inputs = [
        ("no-events", None),
        ("single-line-stacks", None),
        ("single-event", None),
        ("go-stacks", None),
        ("java-inline", None),
        ("versioned-vmlinux", Some("kernel")),
        ("sourcepawn-jitdump", Some("jit")),
    ];
    for (stem, option) in inferno_inputs {
        cases.push(SuiteCase {
            input: suite.join(format!("inferno/{stem}.txt.gz")),
            expected: result("inferno", stem, option),
            option,
            strip_quotes: false,
        });
    }
    cases.push(SuiteCase {
        input: suite.join("flamegraph/example-perf-stacks.txt.gz"),
        expected: result("inferno", "example-perf-stacks", None),
        option: None,
        strip_quotes: false,
    });
    cases
}

fn gunzip(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(file).read_to_end(&mut text).expect("gunzips");
    text
}

/// Why `ours` is not what the case expects, if it is not: inferno's bytes,
/// and its expected file as inferno's test reads it.
fn suite_case_difference(case: &SuiteCase, ours: &[u8]) -> Option<String> {
    let mut options = CollapseOptions::default();
    match case.option {
        Some("pid") => options.include_pid = true,
        Some("tid") => options.include_tid = true,
        Some("addrs") => options.include_addrs = true,
        Some("jit") => options.annotate_jit = true,
        Some("kernel") => options.annotate_kernel = true,
        Some("all") => {
            options.annotate_jit = true;
            options.annotate_kernel = true;
        }
        _ => {}
    }
    let inferno = inferno_output(&gunzip(&case.input), &options);
    let first_difference = |ours: &[String], theirs: &[String]| {
        let line = ours.iter().zip(theirs).position(|(a, b)| a != b).unwrap_or(ours.len().min(theirs.len()));
        format!("line {}: ours {:?}, theirs {:?}", line + 1, ours.get(line), theirs.get(line))
    };
    let lines = |bytes: &[u8]| String::from_utf8_lossy(bytes).lines().map(str::to_owned).collect::<Vec<_>>();
    if ours != inferno {
        return Some(format!("not inferno's bytes, {}", first_difference(&lines(ours), &lines(&inferno))));
    }
    let mut our_lines = lines(ours);
    if case.strip_quotes {
        our_lines = our_lines.into_iter().map(|line| line.replace(['"', '\''], "")).collect();
    }
    let expected = lines(&gunzip(&case.expected));
    (our_lines != expected).then(|| format!("not the expected file, {}", first_difference(&our_lines, &expected)))
}

/// inferno's own collapse-perf suite through the `v8inline` binary with
/// inferno's flags and no V8 data: all 86 cases byte-identical to inferno
/// 0.12.8 (`--pid` and `--tid` included: their roots are inferno's, one per
/// name; one root per process is `--one-root-per-process`'s).
#[test]
fn inferno_suite_passes_through_the_binary() {
    let cases = inferno_suite();
    assert_eq!(cases.len(), 86);
    // No jitdump or perf.data to find where it runs.
    let directory = std::env::temp_dir().join(format!("v8inline-inferno-suite-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let flag = case.option.map(|option| format!("--{option}"));
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .args(flag.iter())
            .arg(&case.input)
            .current_dir(&directory)
            .output()
            .expect("v8inline runs");
        let label = format!("{} {:?}", case.input.file_name().unwrap().to_string_lossy(), case.option);
        if !output.status.success() {
            failures.push(format!("{label}: {}", String::from_utf8_lossy(&output.stderr)));
        } else if let Some(difference) = suite_case_difference(case, &output.stdout) {
            failures.push(format!("{label}: {difference}"));
        }
    }
    std::fs::remove_dir_all(&directory).unwrap();
    assert!(failures.is_empty(), "{} of 86 pass:\n{}", 86 - failures.len(), failures.join("\n"));
}

#[test]
fn edge_cases_match_inferno_with_every_option() {
    for (label, text) in EDGE_CASES {
        for (option_label, options) in option_sets() {
            if option_label == "skip_after" {
                continue;
            }
            assert_matches_inferno(text.as_bytes(), &options, &format!("{label} {option_label}"));
        }
        for event in ["cycles", "instructions", "cpu-clock"] {
            let options = {
                let mut collapse_options = CollapseOptions::default();
                collapse_options.event_filter = Some(event.to_owned());
                collapse_options
            };
            assert_matches_inferno(text.as_bytes(), &options, &format!("{label} {event}"));
        }
        for skip_after in ["root", "b", "leaf", "main", "Ljava/lang/Thread;::run", "x"] {
            let options = {
                let mut collapse_options = CollapseOptions::default();
                collapse_options.skip_after = vec![skip_after.to_owned()];
                collapse_options
            };
            assert_matches_inferno(text.as_bytes(), &options, &format!("{label} skip_after {skip_after}"));
        }
    }
}

#[test]
fn non_utf8_bytes_match_inferno() {
    let mut text = Vec::new();
    text.extend_from_slice(b"no\xffde 1 1.0: 3 cpu-clock:\n");
    text.extend_from_slice(b"\t1 bad\xc3\x28utf8+0x1 (/usr/bin/node)\n");
    text.extend_from_slice(b"\t2 caf\xc3\xa9 (/usr/lib/\xe2\x82bad.so)\n");
    text.extend_from_slice(b"\t3 [unknown] (/usr/lib/\xe2\x82bad.so)\n");
    text.extend_from_slice(b"\n");
    text.extend_from_slice(b"node 1 1.1: 4 cpu-clock:\n");
    text.extend_from_slice(b"\t1 \xf0\x9f\x98\x80emoji (/usr/bin/node)\n\n");
    for (label, options) in option_sets() {
        assert_matches_inferno(&text, &options, &format!("non-UTF-8 {label}"));
    }
}

#[test]
fn empty_and_comment_only_inputs_give_empty_output() {
    for text in ["", "# only a comment\n", "#\n# two\n"] {
        let output = assert_matches_inferno(text.as_bytes(), &CollapseOptions::default(), text);
        assert!(output.is_empty());
    }
}

#[test]
fn counts_are_conserved_on_recorded_scripts() {
    for (path, text) in recorded_scripts() {
        // Independently: the weights of the samples of the first event type
        // that have a frame inferno keeps.
        let mut reader = PerfScriptReader::new(text.as_slice());
        let mut expected_total = 0u64;
        let mut samples_with_frames = 0u64;
        while let Some(sample) = reader.next_sample().expect("reads") {
            if sample.frames().any(|frame| !frame.function().starts_with('(')) {
                expected_total += sample.weight();
                samples_with_frames += 1;
            }
        }
        let options = CollapseOptions::default();
        let (output, summary) = our_output(&text, &options);
        assert_eq!(summary.total_count, expected_total, "{}", path.display());
        assert_eq!(summary.samples_kept, samples_with_frames);
        assert_eq!(sum_of_counts(&output), expected_total);
        assert_eq!(sum_of_counts(&inferno_output(&text, &options)), expected_total);
        assert!(summary.warnings.is_empty(), "{}", summary.warnings);
        assert_eq!(summary.event.as_deref(), Some("cpu-clock"));
        assert!(summary.samples_read > 100);

        // An expander that expands every JIT line into two frames and drops
        // every libc line keeps every sample's count.
        let (output, summary) = our_expanded_output(&text, &options, &mut JitDoublerLibcDropper);
        assert_summary_consistent(&output, &summary, &path.display().to_string());
        assert!(summary.stack_lines_expanded > 0);
        let has_jit_frames = !path.parent().is_some_and(|directory| directory.ends_with("native"));
        assert_eq!(summary.expanded_frames > summary.stack_lines_expanded, has_jit_frames);
        let dropped_only_samples = summary.samples_without_frames;
        assert_eq!(summary.samples_kept + dropped_only_samples, samples_with_frames);
    }
}

/// Expands JIT frames into two and drops libc frames.
struct JitDoublerLibcDropper;

impl FrameExpander for JitDoublerLibcDropper {
    fn expand(&mut self, frame: &FrameContext<'_>, frames: &mut ExpandedFrames) -> bool {
        if frame.module_path().contains("libc") {
            return true;
        }
        if frame.module_kind().is_jit() {
            frames.push_formatted(format_args!("inlined@{:x}", frame.frame.address), true);
            frames.push(frame.symbol(), false);
            return true;
        }
        false
    }
}

/// Replaces `JS:*hot` by three frames and records what it was asked.
#[derive(Default)]
struct HotExpander {
    /// Every context seen, as text.
    seen: Vec<String>,
}

impl FrameExpander for HotExpander {
    fn expand(&mut self, frame: &FrameContext<'_>, frames: &mut ExpandedFrames) -> bool {
        let sample = frame.sample;
        self.seen.push(format!(
            "{} {:?} {:?} {:?} leaf={} exact={} {:x} {}+{:?} {} {:?}",
            frame.comm(),
            sample.pid,
            sample.tid,
            sample.time.map(|time| time.nanoseconds),
            frame.index == 0,
            frame.frame.address_kind == AddressKind::InstructionPointer,
            frame.frame.address,
            frame.symbol(),
            frame.frame.symbol_offset,
            frame.module_path(),
            frame.module_kind(),
        ));
        if !frame.symbol().starts_with("JS:*hot ") {
            frames.push("ignored because false is returned", false);
            return false;
        }
        // An expander's names are V8's: `;` becomes `:`, but nothing is cut
        // at `(` (inferno's cut is for C++ argument lists).
        frames.push("inner(a;b)", true);
        frames.push("mid;dle", true);
        frames.push_formatted(format_args!("hot {}:{}:{}", "/app/deep.js", 12, 3), false);
        true
    }
}

const HOT_INPUT: &str = "node 40/41 5.000000001: 1000 cpu-clock:\n\
    \tffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])\n\
    \t7f0010 JS:*hot /app/deep.js:12:3+0x10 (/tmp/perf-40.map)\n\
    \t7f0020 JS:~main /app/deep.js:1:1+0x20 (/tmp/perf-40.map)\n\
    \t55aa node::Start+0x5 (/usr/bin/node)\n\
    \n\
    node 40/41 5.000001: 500 cpu-clock:\n\
    \t7f0010 JS:*hot /app/deep.js:12:3+0x14 (/tmp/perf-40.map)\n\
    \t55aa node::Start+0x5 (/usr/bin/node)\n\
    \n";

fn hot_output(options: &CollapseOptions) -> (String, CollapseSummary, Vec<String>) {
    let mut expander = HotExpander::default();
    let (output, summary) = our_expanded_output(HOT_INPUT.as_bytes(), options, &mut expander);
    (String::from_utf8(output).expect("UTF-8"), summary, expander.seen)
}

#[test]
fn expander_replaces_a_frame_by_three() {
    let (output, summary, seen) = hot_output(&CollapseOptions::default());
    assert_eq!(
        output,
        "node;node::Start;JS:~main /app/deep.js:1:1;hot /app/deep.js:12:3;mid:dle;inner(a:b);asm_exc_page_fault 1000\n\
         node;node::Start;hot /app/deep.js:12:3;mid:dle;inner(a:b) 500\n"
    );
    assert_eq!(summary.stack_lines_expanded, 2);
    assert_eq!(summary.expanded_frames, 6);
    assert_eq!(summary.stack_lines_passed_through, 4);
    assert_eq!(summary.total_count, 1500);
    assert_eq!(
        seen,
        vec![
            "node Some(40) Some(41) Some(5000000001) leaf=true exact=true ffffffff81000c82 asm_exc_page_fault+Some(34) [kernel.kallsyms] Kernel",
            "node Some(40) Some(41) Some(5000000001) leaf=false exact=true 7f0010 JS:*hot /app/deep.js:12:3+Some(16) /tmp/perf-40.map PerfMap { pid: Some(40), jitdump: NotKnown }",
            "node Some(40) Some(41) Some(5000000001) leaf=false exact=false 7f0020 JS:~main /app/deep.js:1:1+Some(32) /tmp/perf-40.map PerfMap { pid: Some(40), jitdump: NotKnown }",
            "node Some(40) Some(41) Some(5000000001) leaf=false exact=false 55aa node::Start+Some(5) /usr/bin/node File",
            "node Some(40) Some(41) Some(5000001000) leaf=true exact=true 7f0010 JS:*hot /app/deep.js:12:3+Some(20) /tmp/perf-40.map PerfMap { pid: Some(40), jitdump: NotKnown }",
            "node Some(40) Some(41) Some(5000001000) leaf=false exact=false 55aa node::Start+Some(5) /usr/bin/node File",
        ]
    );
}

#[test]
fn expander_frames_are_annotated() {
    let cases = [
        (
            false,
            true,
            "node;node::Start;JS:~main /app/deep.js:1:1_[j];hot /app/deep.js:12:3_[j];mid:dle_[j];inner(a:b)_[j];asm_exc_page_fault 1000\n\
             node;node::Start;hot /app/deep.js:12:3_[j];mid:dle_[j];inner(a:b)_[j] 500\n",
        ),
        (
            true,
            false,
            "node;node::Start;JS:~main /app/deep.js:1:1;hot /app/deep.js:12:3;mid:dle_[i];inner(a:b)_[i];asm_exc_page_fault 1000\n\
             node;node::Start;hot /app/deep.js:12:3;mid:dle_[i];inner(a:b)_[i] 500\n",
        ),
        (
            true,
            true,
            "node;node::Start;JS:~main /app/deep.js:1:1_[j];hot /app/deep.js:12:3_[j];mid:dle_[i];inner(a:b)_[i];asm_exc_page_fault 1000\n\
             node;node::Start;hot /app/deep.js:12:3_[j];mid:dle_[i];inner(a:b)_[i] 500\n",
        ),
    ];
    for (annotate_inline, annotate_jit, expected) in cases {
        let options = {
            let mut collapse_options = CollapseOptions::default();
            collapse_options.annotate_inline = annotate_inline;
            collapse_options.annotate_jit = annotate_jit;
            collapse_options
        };
        let (output, _, _) = hot_output(&options);
        assert_eq!(output, expected, "inline={annotate_inline} jit={annotate_jit}");
    }
}

#[test]
fn expander_frames_honour_skip_after() {
    let options = {
        let mut collapse_options = CollapseOptions::default();
        collapse_options.skip_after = vec!["mid;dle".to_owned()];
        collapse_options
    };
    let (output, _, _) = hot_output(&options);
    assert_eq!(output, "mid:dle;inner(a:b) 500\nmid:dle;inner(a:b);asm_exc_page_fault 1000\n");
    let options = {
        let mut collapse_options = CollapseOptions::default();
        collapse_options.skip_after = vec!["JS:*hot /app/deep.js:12:3".to_owned()];
        collapse_options
    };
    let (output, _, _) = hot_output(&options);
    assert_eq!(
        output,
        "hot /app/deep.js:12:3;mid:dle;inner(a:b) 500\n\
         hot /app/deep.js:12:3;mid:dle;inner(a:b);asm_exc_page_fault 1000\n"
    );
}

#[test]
fn reader_reports_times_exactly() {
    let text = "node 1 102.105295: 1 cpu-clock:\n\t1 a (m)\n\n";
    let mut reader = PerfScriptReader::new(text.as_bytes());
    let sample = reader.next_sample().expect("reads").expect("a sample");
    assert_eq!(sample.time, Some(SampleTime { nanoseconds: 102_105_295_000, resolution_nanoseconds: 1000 }));
}

/// A small xorshift generator, for reproducible mutations.
struct Xorshift {
    /// The state; never zero.
    state: u64,
}

impl Xorshift {
    /// The next pseudo-random number.
    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// A number below `bound` (which must not be 0).
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

const MUTATION_BASE: &str = "java 24636/25607 [000] 4794564.109216: 10 cycles:\n\
    \t7f722d142778 Lfoo/Bar;::a->Lb/C;::d+0x1 (/tmp/perf-19982.map)\n\
    \tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n\
    \t8c3453 tcp_sendmsg (/lib/modules/4.3.0-rc1-virtual/build/vmlinux)\n\
    \n\
    false 64414 20110.539270:      34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])\n\
    V8 W 5 1.0: 3 instructions:\n\
    \t1 std::sys::unix::fs::File::open::hb90e1c1c787080f0 (/x)\n\
    \t2 [unknown] (/tmp/perf-1.map)\n\
    \n\
    node  2696   102.172678:    1003009 cpu-clock: \n\
    \t          e1f174 v8::internal::interpreter::ConstantArrayBuilder::Insert+0x44 (/usr/bin/node)\n\
    \t             15c JS:~ node:internal/main/run_main_module:1:1+0xdc (/tmp/d/jitted-2696-2184.so)\n\
    \n";

/// Randomly mutated inputs (tokens inserted, bytes deleted or replaced) give
/// inferno's output, whenever inferno does not panic on them (it asserts
/// that the first sample names an event, among others); ours never panics.
#[test]
fn mutated_inputs_match_inferno() {
    const TOKENS: &[&[u8]] = &[
        b" ",
        b":",
        b"(",
        b")",
        b"\n",
        b"\n\n",
        b"#",
        b"->",
        b"+0x",
        b"/",
        b"5",
        b"12 ",
        b"\xff",
        b"\t",
        b"[",
        b";",
        b"\r",
        b"cycles:",
        b" 7 cycles:u:  ff x (m)",
        b"[unknown]",
        b"h0123456789abcdef",
        b".",
    ];
    let mut random = Xorshift { state: 0x5eed_1234 };
    let mut compared = 0;
    for _ in 0..400 {
        let mut input = MUTATION_BASE.as_bytes().to_vec();
        for _ in 0..1 + random.below(12) {
            let position = random.below(input.len() + 1);
            match random.below(3) {
                0 => {
                    let token = TOKENS[random.below(TOKENS.len())];
                    input.splice(position..position, token.iter().copied());
                }
                1 if position < input.len() => {
                    let end = (position + 1 + random.below(8)).min(input.len());
                    input.drain(position..end);
                }
                _ if position < input.len() => input[position] = random.next() as u8,
                _ => {}
            }
        }
        let options = {
            let mut collapse_options = CollapseOptions::default();
            collapse_options.include_pid = random.below(2) == 0;
            collapse_options.include_tid = random.below(3) == 0;
            collapse_options.include_addrs = random.below(2) == 0;
            collapse_options.annotate_jit = random.below(2) == 0;
            collapse_options.annotate_kernel = random.below(2) == 0;
            collapse_options.annotate_inline = false;
            collapse_options.event_filter = match random.below(4) {
                0 => Some("cycles".to_owned()),
                1 => Some("instructions".to_owned()),
                _ => None,
            };
            collapse_options.skip_after =
                if random.below(4) == 0 { vec!["native_safe_halt".to_owned()] } else { Vec::new() };
            collapse_options
        };
        let (actual, summary) = our_output(&input, &options);
        assert_summary_consistent(&actual, &summary, "mutated");
        let Ok(expected) = std::panic::catch_unwind(|| inferno_output(&input, &options)) else {
            continue;
        };
        compared += 1;
        assert!(
            actual == expected,
            "mutated input {:?} with {options:?}:\ninferno {:?}\nours    {:?}",
            String::from_utf8_lossy(&input),
            String::from_utf8_lossy(&expected),
            String::from_utf8_lossy(&actual)
        );
    }
    assert!(compared > 300, "only {compared} inputs compared");
}
