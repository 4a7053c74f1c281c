//! `--ticks`: V8's own samples from `node --prof --log-code` logs of node
//! 18-26, compared with what `node --prof-process` of the same node made of
//! the same log (`testdata/node*/prof/prof-process.folded.gz`, written by
//! `testdata/record.sh prof:VERSION`).

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{NODE_VERSIONS, assert_matches_expected, recording_dir};

fn prof_dir(version: u32) -> PathBuf {
    recording_dir(version).join("prof")
}

fn prof_log(version: u32) -> PathBuf {
    let directory = prof_dir(version);
    std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.file_name().unwrap().to_string_lossy().starts_with("prof-")
                && path.to_string_lossy().ends_with(".log.gz")
        })
        .unwrap_or_else(|| panic!("no prof-*.log.gz in {}", directory.display()))
}

fn gunzip_text(path: &Path) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_string(&mut text).unwrap();
    text
}

/// Runs `v8inline` with `args`; returns (success, stdout, stderr).
fn v8inline(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).output().unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn fold_ticks(version: u32, extra: &[&str]) -> String {
    let log = prof_log(version).display().to_string();
    let mut args = vec!["--ticks", &log];
    args.extend_from_slice(extra);
    let (success, folded, errors) = v8inline(&args);
    assert!(success, "node {version}: {errors}");
    folded
}

/// `stack count` lines into a map from stack to count (summing repeats).
fn parse_folded(folded: &str) -> BTreeMap<String, u64> {
    let mut stacks = BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        *stacks.entry(stack.to_string()).or_default() += count.parse::<u64>().unwrap();
    }
    stacks
}

fn is_js_frame(frame: &str) -> bool {
    ["JS:", "LazyCompile:", "Function:", "Eval:", "Script:"].iter().any(|tag| frame.starts_with(tag))
}

/// A JavaScript function as both tools name it: the name after the tag and
/// tier marker (`JS:*kernel /x.js:32:16` and `JS:Opt:kernel /x.js:32:16`
/// both give `kernel /x.js:32:16`).
fn js_function(name_after_tag: &str) -> &str {
    name_after_tag.trim_start_matches(['~', '^', '+', '*', 'o', '\''])
}

/// The JavaScript functions of a v8inline stack, root first, inlined frames
/// (`_[i]`) dropped: what the tick processor, which does not expand
/// inlining, shows.
fn outer_js_functions(stack: &str) -> Vec<String> {
    stack
        .split(';')
        .filter(|frame| is_js_frame(frame) && !frame.ends_with("_[i]"))
        .map(|frame| js_function(frame.split_once(':').unwrap().1).to_string())
        .collect()
}

/// The JavaScript functions of a tick processor stack, root first.
fn prof_process_js_functions(stack: &str) -> Vec<String> {
    stack
        .split(';')
        .filter_map(|frame| frame.strip_prefix("JS:"))
        .map(|rest| js_function(rest.split_once(':').unwrap().1).to_string())
        .collect()
}

/// Counts per key, from folded stacks and a key function.
fn tally(stacks: &BTreeMap<String, u64>, key: impl Fn(&str) -> Vec<String>) -> BTreeMap<Vec<String>, u64> {
    let mut counts = BTreeMap::new();
    for (stack, count) in stacks {
        *counts.entry(key(stack)).or_default() += count;
    }
    counts
}

#[test]
fn ticks_have_the_tick_processors_javascript_stacks_plus_inlined_frames() {
    for version in NODE_VERSIONS {
        let ours = parse_folded(&fold_ticks(version, &["--annotate-inline"]));
        let theirs = parse_folded(&gunzip_text(&prof_dir(version).join("prof-process.folded.gz")));
        let tick_count: u64 = theirs.values().sum();
        assert_eq!(ours.values().sum::<u64>(), tick_count, "node {version}: one count per tick");
        // Per tick, the same JavaScript functions in the same order, once
        // the frames only v8inline shows (inlined functions) are dropped.
        assert_eq!(
            tally(&ours, outer_js_functions),
            tally(&theirs, prof_process_js_functions),
            "node {version}: JavaScript stacks differ from node --prof-process"
        );
        // And the inlined ones are there: kernel's hot loop inlines combine.
        let inlined: u64 = ours
            .iter()
            .filter(|(stack, _)| {
                let frames: Vec<&str> = stack.split(';').collect();
                frames.windows(2).any(|pair| {
                    pair[0].contains("kernel /tmp/v8inline-testdata/")
                        && pair[1].contains("combine /tmp/v8inline-testdata/")
                        && pair[1].ends_with("_[i]")
                })
            })
            .map(|(_, count)| count)
            .sum();
        assert!(inlined * 2 > tick_count, "node {version}: only {inlined} of {tick_count} ticks in kernel+combine");
    }
}

#[test]
fn golden_tick_stacks() {
    for version in NODE_VERSIONS {
        // Native frames are named from the binaries on this machine; the
        // JavaScript part is machine-independent.
        let folded = fold_ticks(version, &[]);
        // Read on one thread and folded on another, or all on one: the same.
        assert!(fold_ticks(version, &["--threads", "1"]) == folded, "node {version}: differs on one thread");
        let by_js_frames = tally(&parse_folded(&folded), |stack| {
            stack.split(';').filter(|frame| is_js_frame(frame)).map(str::to_string).collect()
        });
        let javascript: String =
            by_js_frames.iter().map(|(frames, count)| format!("{} {count}\n", frames.join(";"))).collect();
        assert_matches_expected(&javascript, &prof_dir(version).join("expected-js.folded"));
    }
}

#[test]
fn a_log_without_ticks_says_so() {
    let log = common::log_path(20).display().to_string();
    let (success, _, errors) = v8inline(&["--ticks", &log]);
    assert!(!success);
    assert!(errors.contains("no tick records"), "{errors}");
    let (success, _, errors) = v8inline(&["--ticks", "/nonexistent/prof.log"]);
    assert!(!success);
    assert!(errors.contains("/nonexistent/prof.log"), "{errors}");
}

/// `--ticks` once per isolate's log: each log's ticks are folded with its
/// own code objects and the stacks added up, as if the two recordings here
/// were two isolates of one process. Detailed outputs take one log.
#[test]
fn several_tick_logs_fold_into_the_sum_of_each() {
    let (first, second) = (prof_log(20).display().to_string(), prof_log(22).display().to_string());
    let mut expected = parse_folded(&fold_ticks(20, &[]));
    for (stack, count) in parse_folded(&fold_ticks(22, &[])) {
        *expected.entry(stack).or_default() += count;
    }
    let (success, folded, errors) = v8inline(&["--ticks", &first, "--ticks", &second]);
    assert!(success, "{errors}");
    assert_eq!(parse_folded(&folded), expected);
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .args(["--ticks", &first, "--ticks", &second, "--pprof", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "v8inline: --pprof, --report, --summary and --annotate take one --ticks log\n"
    );
}
