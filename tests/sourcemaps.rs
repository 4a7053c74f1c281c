//! Source maps on real recordings (testdata/sourcemaps, see its record.sh):
//! one TypeScript program (src/server.ts calling src/http/parse.ts in a hot
//! loop V8 inlines) built by tsc (a linked .js.map per module) and by
//! esbuild (one minified bundle, its map inline in a data: URL).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where record.sh ran the programs: the prefix of every script name.
const RECORDED_ROOT: &str = "/tmp/v8inline-testdata/sourcemaps";

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sourcemaps")
}

/// The one file of a recording (`tsc` or `minified`) whose name starts with `prefix`.
fn recording_file(build: &str, prefix: &str) -> String {
    let directory = testdata().join(build);
    let mut matches: Vec<PathBuf> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(matches.len(), 1, "one {prefix}* in {}", directory.display());
    matches.pop().unwrap().display().to_string()
}

/// Runs v8inline on a recording's perf script, log and jitdump, with the
/// recorded paths read from `root` (where the build and sources are).
fn run(build: &str, root: &Path, extra: &[&str]) -> Output {
    let substitution = format!("{RECORDED_ROOT}={}", root.display());
    let mut args = vec![
        recording_file(build, "perf.script"),
        "--log".to_string(),
        recording_file(build, "codspeed-v8-"),
        "--jitdump".to_string(),
        recording_file(build, "jit-"),
        "--substitute-path".to_string(),
        substitution,
    ];
    args.extend(extra.iter().map(|arg| arg.to_string()));
    Command::new(env!("CARGO_BIN_EXE_v8inline")).args(&args).output().unwrap()
}

fn folded(build: &str, root: &Path, extra: &[&str]) -> String {
    let output = run(build, root, extra);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.stderr.is_empty(), "unexpected warnings: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The distinct JavaScript frames (`JS:...`) of the program's own scripts
/// and sources (not node's), sorted.
fn program_frames(folded: &str) -> Vec<String> {
    let mut frames: Vec<String> = folded
        .lines()
        .flat_map(|line| line.rsplit_once(' ').unwrap().0.split(';'))
        .filter(|frame| frame.starts_with("JS:") && frame.contains(RECORDED_ROOT))
        .map(str::to_string)
        .collect();
    frames.sort();
    frames.dedup();
    frames
}

/// The sum of the counts of the stacks that end with `leaf_chain`.
fn count_ending_with(folded: &str, leaf_chain: &str) -> u64 {
    folded
        .lines()
        .map(|line| line.rsplit_once(' ').unwrap())
        .filter(|(stack, _)| stack.ends_with(leaf_chain))
        .map(|(_, count)| count.parse::<u64>().unwrap())
        .sum()
}

#[test]
fn minified_bundle_frames_show_typescript_files_and_original_names() {
    let folded = folded("minified", &testdata(), &[]);
    let source = format!("{RECORDED_ROOT}/src");
    // Every frame of the bundle is at its .ts file with its original name,
    // but the bundle's top-level code (which starts before the first mapping);
    // No sample caught hashText interpreted, outside the optimized chain.
    let frames = program_frames(&folded);
    let expected: Vec<String> = [
        format!("JS:*handleRequest {source}/server.ts:7:10"),
        format!("JS:*hashText {source}/http/parse.ts:8:17"),
        format!("JS:*parseHeader {source}/http/parse.ts:16:17"),
        format!("JS:*serve {source}/server.ts:15:10"),
        format!("JS:^handleRequest {source}/server.ts:7:10"),
        format!("JS:^hashText {source}/http/parse.ts:8:17"),
        format!("JS:^parseHeader {source}/http/parse.ts:16:17"),
        format!("JS:^serve {source}/server.ts:15:10"),
        format!("JS:~ {RECORDED_ROOT}/build/bundle.min.js:1:1"),
        format!("JS:~handleRequest {source}/server.ts:7:10"),
        format!("JS:~parseHeader {source}/http/parse.ts:16:17"),
        format!("JS:~serve {source}/server.ts:15:10"),
    ]
    .into();
    assert_eq!(frames, expected, "frames of the bundle not mapped");
    // The inlined chain across the two modules, mapped, holds most samples.
    let chain = format!(
        "JS:*serve {source}/server.ts:15:10;JS:*handleRequest {source}/server.ts:7:10;\
         JS:*parseHeader {source}/http/parse.ts:16:17;JS:*hashText {source}/http/parse.ts:8:17"
    );
    let total: u64 = folded.lines().map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum();
    let in_chain = count_ending_with(&folded, &chain);
    assert!(in_chain * 2 > total, "{in_chain} of {total} in {chain}");
    // Without source maps the same stacks name the minified functions.
    let unmapped = folded_without_maps("minified");
    assert!(unmapped.contains(&format!("JS:*o {RECORDED_ROOT}/build/bundle.min.js:1:24")), "{unmapped}");
    assert!(!unmapped.contains(".ts:"));
}

fn folded_without_maps(build: &str) -> String {
    folded(build, &testdata(), &["--no-source-maps"])
}

#[test]
fn tsc_build_frames_match_the_bundle_functions() {
    let folded = folded("tsc", &testdata(), &[]);
    let functions = |folded: &str| -> Vec<String> {
        let mut names: Vec<String> = program_frames(folded)
            .iter()
            .filter(|frame| frame.contains(".ts:"))
            .map(|frame| {
                let (name, file) = frame.split_once(' ').unwrap();
                format!(
                    "{} {}",
                    name.trim_start_matches(['J', 'S', ':', '~', '^', '*']),
                    file.rsplit_once(".ts:").unwrap().0
                )
            })
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let source = format!("{RECORDED_ROOT}/src");
    assert_eq!(
        functions(&folded),
        [
            format!("handleRequest {source}/server"),
            format!("hashText {source}/http/parse"),
            format!("parseHeader {source}/http/parse"),
            format!("serve {source}/server"),
        ]
    );
    // The same original functions as the minified bundle's.
    assert_eq!(functions(&folded), functions(&self::folded("minified", &testdata(), &[])));
}

/// The lines (1-based, first and last) of each function's body in a .ts
/// source: from its `function NAME(` line to the first line that is `}`.
fn function_bodies(source: &str) -> Vec<(String, u32, u32)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut bodies = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(rest) = line.split("function ").nth(1) else { continue };
        let Some((name, _)) = rest.split_once('(') else { continue };
        let last = (index..lines.len()).find(|&end| lines[end] == "}").unwrap();
        bodies.push((name.to_string(), index as u32 + 1, last as u32 + 1));
    }
    bodies
}

#[test]
fn every_mapped_line_lies_inside_its_function() {
    for build in ["tsc", "minified"] {
        let report_path = common::tempdir().join(format!("sourcemaps-{build}.json"));
        let report_text = report_path.display().to_string();
        let output = run(build, &testdata(), &["--report", "json", "--report-output", &report_text, "-o", "/dev/null"]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
        let mut checked_samples = 0;
        for line in report["lines"].as_array().unwrap() {
            let file = line["file"].as_str().unwrap();
            let Some(relative) = file.strip_prefix(&format!("{RECORDED_ROOT}/")) else { continue };
            // A script's top-level code starts at 1:1, before the first
            // mapping (`"use strict";`): it keeps its JavaScript position.
            if line["function"] == "(anonymous)" && line["function_line"] == 1 && relative.starts_with("build/") {
                assert_eq!(line["self"], 0, "{build}: {line}");
                continue;
            }
            assert!(relative.ends_with(".ts"), "{build}: a frame of the program not mapped: {line}");
            let source = std::fs::read_to_string(testdata().join(relative)).unwrap();
            let function = line["function"].as_str().unwrap();
            let number = line["line"].as_u64().unwrap() as u32;
            let bodies = function_bodies(&source);
            let (_, first, last) = bodies
                .iter()
                .find(|(name, _, _)| name == function)
                .unwrap_or_else(|| panic!("{build}: no function {function} in {relative}"));
            assert!(
                (*first..=*last).contains(&number),
                "{build}: {function} at {relative}:{number}, body {first}-{last}"
            );
            assert_eq!(line["function_line"].as_u64(), Some(u64::from(*first)), "{build}: {line}");
            checked_samples += line["self"].as_u64().unwrap();
        }
        // The hot loop of hashText (parse.ts 10-11) is where most time went.
        assert!(checked_samples * 2 > report["total"].as_u64().unwrap(), "{build}: {checked_samples} samples mapped");
        std::fs::remove_file(&report_path).unwrap();
    }
}

/// The tsc build's scripts (not their maps) under `root`.
fn copy_scripts(root: &Path) {
    std::fs::create_dir_all(root.join("build/tsc/http")).unwrap();
    for script in ["build/tsc/server.js", "build/tsc/http/parse.js"] {
        std::fs::copy(testdata().join(script), root.join(script)).unwrap();
    }
}

#[test]
fn unusable_maps_warn_once_each_and_change_nothing_else() {
    // The tsc build's scripts read from a tree where server.js.map does not
    // parse and http/parse.js.map (named by parse.js's sourceMappingURL) is
    // missing beside its script.
    let root = common::tempdir().join("sourcemaps-broken");
    copy_scripts(&root);
    std::fs::write(root.join("build/tsc/server.js.map"), "{not json").unwrap();
    let output = run("tsc", &root, &[]);
    assert_eq!(output.status.code(), Some(0));
    let message = String::from_utf8_lossy(&output.stderr);
    let broken = root.join("build/tsc/server.js.map");
    let missing = root.join("build/tsc/http/parse.js.map");
    assert_eq!(
        message,
        format!(
            "v8inline: warning: 2 input problem(s); the rest of the input was used:\n\
             v8inline:   2 source map(s) missing, unreadable or malformed: their scripts' frames keep their JavaScript positions\n\
             v8inline:     {}: cannot read it: No such file or directory (os error 2)\n\
             v8inline:     {}: not a source map: bad json: key must be a string at line 1 column 2\n",
            missing.display(),
            broken.display()
        )
    );
    assert_eq!(String::from_utf8(output.stdout).unwrap(), folded_without_maps("tsc"));
    let strict = run("tsc", &root, &["--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(strict.stdout.is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_given_map_wins_and_sources_resolve_against_it() {
    // The scripts read from a tree without maps: --source-map gives
    // server.js its map from elsewhere; parse.js's named map is missing.
    let root = common::tempdir().join("sourcemaps-given");
    copy_scripts(&root);
    let given = root.join("maps/build/tsc/server.js.map");
    std::fs::create_dir_all(given.parent().unwrap()).unwrap();
    std::fs::copy(testdata().join("build/tsc/server.js.map"), &given).unwrap();
    let argument = format!("{RECORDED_ROOT}/build/tsc/server.js={}", given.display());
    let output = run("tsc", &root, &["--source-map", &argument]);
    assert_eq!(output.status.code(), Some(0));
    let message = String::from_utf8_lossy(&output.stderr);
    let missing = root.join("build/tsc/http/parse.js.map");
    assert!(message.contains(&format!("v8inline:     {}: cannot read it:", missing.display())), "{message}");
    assert!(message.contains("v8inline:   1 source map(s) missing"), "{message}");
    let folded = String::from_utf8(output.stdout).unwrap();
    let mut optimized: Vec<&str> = folded
        .lines()
        .flat_map(|line| line.rsplit_once(' ').unwrap().0.split(';'))
        .filter(|frame| {
            frame.starts_with("JS:*") && (frame.contains(RECORDED_ROOT) || frame.contains("sourcemaps-given"))
        })
        .collect();
    optimized.sort();
    optimized.dedup();
    // server.ts's sources (`../../src/server.ts`) resolve against the given map.
    let server = root.join("maps/src/server.ts").display().to_string();
    assert_eq!(
        optimized,
        [
            format!("JS:*handleRequest {server}:7:23"),
            format!("JS:*hashText {RECORDED_ROOT}/build/tsc/http/parse.js:6:18"),
            format!("JS:*parseHeader {RECORDED_ROOT}/build/tsc/http/parse.js:13:21"),
            format!("JS:*serve {server}:15:15"),
        ]
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn annotations_land_on_typescript_lines_under_the_source_root() {
    let annotations_path = common::tempdir().join("sourcemaps-annotations.txt");
    let annotations_text = annotations_path.display().to_string();
    let output = run(
        "minified",
        &testdata(),
        &[
            "-o",
            "/dev/null",
            "--annotate",
            "github",
            "--annotate-output",
            &annotations_text,
            "--source-root",
            RECORDED_ROOT,
        ],
    );
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let annotations = std::fs::read_to_string(&annotations_path).unwrap();
    let files: Vec<&str> =
        annotations.lines().map(|line| line.split_once("file=").unwrap().1.split_once(',').unwrap().0).collect();
    assert!(!files.is_empty());
    assert!(files.iter().all(|file| *file == "src/http/parse.ts" || *file == "src/server.ts"), "{annotations}");
    // The hottest line is the multiply in hashText's loop.
    assert!(
        annotations.lines().any(|line| line.starts_with("::notice file=src/http/parse.ts,line=11,")),
        "{annotations}"
    );
    std::fs::remove_file(&annotations_path).unwrap();
}

#[test]
fn scripts_not_on_this_machine_need_no_maps() {
    // The recorded tree read from an empty one: a machine without the
    // scripts, whose text comes from the log; their maps are no problem.
    let root = common::tempdir().join("sourcemaps-elsewhere");
    std::fs::create_dir_all(&root).unwrap();
    let output = run("tsc", &root, &["--strict"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), folded_without_maps("tsc"));
    std::fs::remove_dir_all(&root).unwrap();
}
