//! `v8inline compare` through the binary, on real recordings
//! (testdata/compare/record.sh: a program sorting and filtering versions
//! with semver, recorded with `v8inline record` as base, as a head whose
//! small `clampPart`, inlined by TurboFan into `versionKey`, does more work,
//! as that head with clampPart kept unoptimized, and as 10 unchanged pairs;
//! base and head checked out in two directories).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::tempdir;

fn recordings() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/compare/recordings")
}

fn recording(name: &str) -> String {
    recordings().join(name).display().to_string()
}

/// What a run of `v8inline compare ARGS` gave.
struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn compare(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).arg("compare").args(args).output().unwrap();
    Run {
        status: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A workflow command's properties and message: `::warning
/// file=F,line=L,title=T::message`, unescaped as GitHub's runner does.
struct Annotation {
    severity: String,
    file: String,
    line: String,
    title: String,
    message: String,
}

fn unescape(text: &str) -> String {
    text.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

fn annotations(stdout: &str) -> Vec<Annotation> {
    stdout
        .lines()
        .map(|line| {
            let rest = line.strip_prefix("::").unwrap_or_else(|| panic!("not a workflow command: {line}"));
            let (command, message) = rest.split_once("::").unwrap();
            let (severity, properties) = command.split_once(' ').unwrap();
            let property = |name: &str| {
                properties
                    .split(',')
                    .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
                    .map(unescape)
                    .unwrap_or_else(|| panic!("no {name} in {line}"))
            };
            Annotation {
                severity: severity.to_string(),
                file: property("file"),
                line: property("line"),
                title: property("title"),
                message: unescape(message),
            }
        })
        .collect()
}

/// Two recordings of unchanged code, 10 pairs: no regression (exit 0 with
/// --fail-on-regression), judged by the benchmark's time and by the
/// functions' self shares alone, and not one annotation.
#[test]
fn unchanged_code_raises_nothing() {
    for pair in 1..=10 {
        let (a, b) = (recording(&format!("unchanged-{pair}-a")), recording(&format!("unchanged-{pair}-b")));
        let run = compare(&[&a, &b, "--format", "github", "--fail-on-regression"]);
        assert_eq!((run.status, run.stdout.as_str()), (0, ""), "pair {pair}: {}", run.stderr);
        let run =
            compare(&[&format!("{a}/profile.folded.gz"), &format!("{b}/profile.folded.gz"), "--fail-on-regression"]);
        assert_eq!(run.status, 0, "pair {pair}, profiles alone: {}", run.stdout);
        assert!(run.stdout.starts_with("profile: ") && run.stdout.lines().next().unwrap().ends_with("; within noise"));
    }
}

/// Base against the head whose inlined clampPart does more work: the
/// benchmark regressed (median +22 %, beyond its 10 % floor), exit 1, and
/// the first annotation is clampPart's, at its line of app.js (relative to
/// the project root recording.json names), inlined into versionKey, naming
/// the benchmark and the change with its noise. Callers whose inclusive
/// share grew through it (versionKey, sortVersions, the main script) are
/// not annotated.
#[test]
fn the_slowed_inlined_function_is_annotated_first() {
    let run = compare(&[&recording("base"), &recording("head"), "--format", "github", "--fail-on-regression"]);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let found = annotations(&run.stdout);
    assert_eq!(found.len(), 1, "{}", run.stdout);
    let first = &found[0];
    assert_eq!(
        (first.severity.as_str(), first.file.as_str(), first.line.as_str()),
        ("warning", "app.js", "12"),
        "{}",
        run.stdout
    );
    assert_eq!(first.title, "v8inline: clampPart self +13.01 pp in sort and filter versions");
    assert_eq!(
        first.message,
        "clampPart (inlined into versionKey): self time +13.01 pp ± 4.57 pp (0.00% → 13.01%) in benchmark \
         \"sort and filter versions\", median time per iteration +22.2% ± 10.0%\n(one run per side: the noise \
         between runs (a neighbour slowing the machine for a second, V8 deciding differently in another process) is \
         not seen; `v8inline bench` runs several)"
    );
    for caller in ["versionKey", "sortVersions", "matching"] {
        assert!(!found.iter().any(|annotation| annotation.title.contains(&format!(" {caller} "))), "{caller}");
    }
    // Without --fail-on-regression the status is 0 whatever was found.
    assert_eq!(compare(&[&recording("base"), &recording("head"), "--format", "github"]).status, 0);
}

/// --top bounds the annotations in all; --threshold asks for a larger
/// growth besides beyond noise; --source-root makes `file=` relative to
/// another directory (the recorded scripts' own, here).
#[test]
fn annotation_count_and_fields() {
    let (base, head) = (recording("base"), recording("head"));
    let profiles = [format!("{base}/profile.folded.gz"), format!("{head}/profile.folded.gz")];
    // The profiles alone: every JavaScript function whose self share grew
    // beyond noise, largest first.
    let roots = ["--base-root", "/tmp/v8inline-compare/base", "--head-root", "/tmp/v8inline-compare/head"];
    let mut args: Vec<&str> = vec![&profiles[0], &profiles[1], "--format", "github", "--top", "10"];
    args.extend(roots);
    let all = annotations(&compare(&args).stdout);
    let titles: Vec<&str> = all.iter().map(|annotation| annotation.title.as_str()).collect();
    assert_eq!(titles, ["v8inline: clampPart self +13.01 pp"]);
    let run = compare(&[&base, &head, "--format", "github", "--top", "0"]);
    assert_eq!(run.stdout, "");
    let run = compare(&[&base, &head, "--format", "github", "--least-growth", "20"]);
    assert_eq!(run.stdout, "");
    let run = compare(&[&base, &head, "--format", "github", "--source-root", "/tmp"]);
    let found = annotations(&run.stdout);
    assert_eq!((found[0].file.as_str(), found[0].line.as_str()), ("v8inline-compare/head/app.js", "12"));
}

/// Base and head were checked out in /tmp/v8inline-compare/base and
/// /tmp/v8inline-compare/head: recording.json's project_root (or
/// --base-root/--head-root for bare folded stacks) makes their functions
/// match: semver's Range is one function at both sides, not a function
/// that vanished and one that appeared.
#[test]
fn base_and_head_in_two_directories_match() {
    let (base, head) = (recording("base"), recording("head"));
    let range_rows = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .filter(|line| line.contains(" Range "))
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    let run = compare(&[&base, &head, "--top", "1000"]);
    let rows = range_rows(&run.stdout);
    assert_eq!(rows.len(), 1, "{}", run.stdout);
    assert!(rows[0].ends_with(" Range node_modules/semver/classes/range.js:5"), "{}", rows[0]);
    assert!(!rows[0].contains("0.00% →"), "{}", rows[0]);

    let profiles = [format!("{base}/profile.folded.gz"), format!("{head}/profile.folded.gz")];
    // Without the roots every script's path differs: functions are matched
    // by script file name and function name, and compare says so.
    let by_name = compare(&[&profiles[0], &profiles[1], "--top", "1000"]);
    assert_eq!(range_rows(&by_name.stdout).len(), 1, "{}", by_name.stdout);
    assert!(
        by_name.stdout.lines().nth(1).unwrap().starts_with(
            "  29 functions matched by name across 16 scripts whose paths differ (another checkout without its \
             project root, or one side read through a source map): base's /tmp/v8inline-compare/base/app.js as \
             head's /tmp/v8inline-compare/head/app.js, "
        ),
        "{}",
        by_name.stdout
    );
    let matched = compare(&[
        &profiles[0],
        &profiles[1],
        "--top",
        "1000",
        "--base-root",
        "/tmp/v8inline-compare/base",
        "--head-root",
        "/tmp/v8inline-compare/head",
    ]);
    assert_eq!(range_rows(&matched.stdout).len(), 1, "{}", matched.stdout);
}

/// When V8 ran a function differently at head (clampPart no longer
/// inlined into versionKey, left in Sparkplug code), one line says so
/// under it: in the text, in the markdown comment, and in its annotation.
#[test]
fn the_tier_mix_line() {
    let line = "V8 no longer inlined it: base 100% inlined into versionKey (TurboFan); head 100% Sparkplug";
    let (head, interpreted) = (recording("head"), recording("head-interpreted"));
    let text = compare(&[&head, &interpreted]).stdout;
    let clamp = text.lines().position(|row| row.contains(" clampPart ")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(text.lines().nth(clamp + 1).map(str::trim), Some(line), "{text}");
    let markdown = compare(&[&head, &interpreted, "--format", "markdown"]).stdout;
    assert!(markdown.contains(&format!("> `clampPart`: {line}\n")), "{markdown}");
    // The benchmark regressed (+34 % median): versionKey's self time grew
    // as clampPart left it; clampPart's own share shrank: not annotated.
    let run = compare(&[&head, &interpreted, "--format", "github", "--fail-on-regression"]);
    assert_eq!(run.status, 1);
    let found = annotations(&run.stdout);
    assert_eq!(found[0].title, "v8inline: versionKey self +22.86 pp in sort and filter versions");
    assert!(!found.iter().any(|annotation| annotation.title.contains("clampPart")), "{}", run.stdout);
}

/// The markdown comment: the benchmark table, the functions that explain
/// the regression, and on a large input (3,000 functions whose shares
/// all moved) the rest in a collapsed <details>, cut to GitHub's
/// 65,536-character limit.
#[test]
fn markdown_is_a_pull_request_comment_under_the_limit() {
    let markdown = compare(&[&recording("base"), &recording("head"), "--format", "markdown"]).stdout;
    let expected_start = "### v8inline: 1 of 1 benchmarks regressed beyond noise\n\n\
        | Benchmark | Base | Head | Change | Verdict |\n|---|---:|---:|---:|---|\n\
        | sort and filter versions | 465 µs | 568 µs | +22.2% ± 10.0% | 🔴 regressed |\n";
    assert!(markdown.starts_with(expected_start), "{markdown}");
    assert!(
        markdown.contains(
            "| +13.01 pp ± 4.57 pp | 0.00% → 13.01% | – | `clampPart` inlined into `versionKey` | app.js:12 |"
        ),
        "{markdown}"
    );

    // A large suite: 400 benchmarks, each 20 % slower at head, in each of
    // which 20 functions' shares moved far beyond noise.
    let directory = tempdir().join("markdown-limit");
    for (side, head) in [("base", false), ("head", true)] {
        let mut benchmarks = Vec::new();
        for benchmark in 0..400 {
            let benchmark_directory = directory.join(side).join(format!("b{benchmark}"));
            std::fs::create_dir_all(&benchmark_directory).unwrap();
            // Counts of 1 are samples: a line of 1 makes them so.
            let folded: String = std::iter::once("node;idle 1\n".to_string())
                .chain((1..=40u64).map(|index| {
                    let weight = if head == (index <= 20) { 50_000 } else { 10_000 };
                    format!(
                        "node;JS:*main /p/app.js:1:1;JS:*function_{index} /p/src/module_{index}.js:{index}:1 {weight}\n"
                    )
                }))
                .collect();
            std::fs::write(benchmark_directory.join("profile.folded"), &folded).unwrap();
            let median = if head { 1200.0 } else { 1000.0 };
            benchmarks.push(format!(
                "{{\"name\": \"benchmark number {benchmark}\", \"directory\": \"b{benchmark}\", \"time_per_iteration\": \
                 {{\"mean\": {median}, \"stddev\": 10, \"median\": {median}, \"samples\": 1000}}}}"
            ));
            if benchmark == 0 {
                std::fs::write(directory.join(side).join("profile.folded"), &folded).unwrap();
            }
        }
        let json = format!("{{\"version\": 1, \"benchmarks\": [{}]}}", benchmarks.join(",\n"));
        std::fs::write(directory.join(side).join("benchmarks.json"), json).unwrap();
    }
    let run = compare(&[
        &directory.join("base").display().to_string(),
        &directory.join("head").display().to_string(),
        "--format",
        "markdown",
    ]);
    let markdown = run.stdout;
    assert!(markdown.starts_with("### v8inline: 400 of 400 benchmarks regressed beyond noise\n"), "{markdown}");
    assert!(markdown.chars().count() <= 65_536, "{} characters", markdown.chars().count());
    assert!(markdown.len() > 60_000, "{} bytes", markdown.len());
    assert!(markdown.contains("\n<details><summary>All other changes beyond noise</summary>\n"), "{markdown}");
    assert!(markdown.ends_with(" more rows not shown (GitHub's comment size limit).\n\n</details>\n"), "{markdown}");
}

/// --flamegraph draws head's stacks in record's icicle style, red where
/// they grew: clampPart's frames; with benchmarks, one OUT-<slug>.svg
/// each beside OUT.svg; --flamegraph-style classic draws inferno's look.
#[test]
fn differential_flame_graphs() {
    let directory = tempdir().join("differential");
    std::fs::create_dir_all(&directory).unwrap();
    let svg_path = directory.join("diff.svg");
    let run = compare(&[&recording("base"), &recording("head"), "--flamegraph", &svg_path.display().to_string()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let benchmark_svg = std::fs::read_to_string(directory.join("diff-sort-and-filter-versions.svg")).unwrap();
    assert!(svg.contains("frames under 0.1% not drawn"), "icicle style");
    // clampPart grew from nothing: its frames are the reddest.
    let clamp = svg
        .find(
            "<title>JS:clampPart /tmp/v8inline-compare/head/app.js:12:19 (168 samples, 10.51%; +10.51%; TurboFan 100%)",
        )
        .unwrap();
    let fill = &svg[clamp..][svg[clamp..].find("fill=\"rgb(").unwrap() + 10..];
    let rgb: Vec<u32> = fill[..fill.find(')').unwrap()].split(',').map(|part| part.trim().parse().unwrap()).collect();
    assert!(rgb[0] == 255 && rgb[1] < 120 && rgb[2] < 120, "{rgb:?}");
    assert!(benchmark_svg.contains("clampPart"));
    let run = compare(&[
        &recording("base"),
        &recording("head"),
        "--flamegraph",
        &svg_path.display().to_string(),
        "--flamegraph-style",
        "classic",
    ]);
    assert_eq!(run.status, 0);
    assert!(!std::fs::read_to_string(&svg_path).unwrap().contains("not drawn"));
}

/// A recording's JSON that is not record's names its file and line.
#[test]
fn a_broken_benchmarks_json_is_named() {
    let directory = tempdir().join("broken");
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::copy(recordings().join("base/profile.folded.gz"), directory.join("profile.folded.gz")).unwrap();
    std::fs::write(directory.join("benchmarks.json"), "{\"benchmarks\": [\n{\"name\": 3}]}").unwrap();
    let run = compare(&[&directory.display().to_string(), &recording("head")]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        format!(
            "v8inline: {}: invalid type: integer `3`, expected a string at line 2 column 10\n",
            directory.join("benchmarks.json").display()
        )
    );
}

/// A side directory whose runs.json is cut, lists no run, or names a run
/// that is not there: compare refuses it, naming the file (and the line
/// and column where it stops), and writes nothing on standard output.
#[test]
fn a_damaged_side_directory_is_named() {
    let side = tempdir().join("damaged-side");
    std::fs::create_dir_all(&side).unwrap();
    let runs_json = side.join("runs.json");
    let head = recording("head");
    let cases = [
        // Cut inside its first run, as a killed `bench` could leave it.
        (
            "{\"version\": 1, \"side\": \"base\",\n \"runs\": [{\"directory\": \"run-01\"",
            "EOF while parsing an object at line 2 column 32",
        ),
        ("{\"version\": 1, \"side\": \"base\", \"runs\": []}", "no runs"),
        // A schedule bench never writes, and a round that is not a number.
        (
            "{\"version\": 1, \"side\": \"base\", \"schedule\": \"trio\", \"runs\": []}",
            "unknown variant `trio`, expected `interleaved` or `duet` at line 1 column 49",
        ),
        (
            "{\"version\": 1, \"side\": \"base\", \"schedule\": \"duet\",\n \"runs\": [{\"directory\": \"run-01\", \"round\": -1}]}",
            "invalid value: integer `-1`, expected u32 at line 2 column 45",
        ),
    ];
    for (text, message) in cases {
        std::fs::write(&runs_json, text).unwrap();
        let run = compare(&[&side.display().to_string(), &head]);
        assert_eq!(run.status, 1, "{}", run.stderr);
        assert_eq!(run.stderr, format!("v8inline: {}: {message}\n", runs_json.display()));
        assert_eq!(run.stdout, "");
    }
    // A run that is not there is named by its own path.
    std::fs::write(
        &runs_json,
        "{\"version\": 1, \"side\": \"base\", \"runs\": [{\"directory\": \"run-07\", \"round\": 1}]}",
    )
    .unwrap();
    let run = compare(&[&side.display().to_string(), &head]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.starts_with(&format!("v8inline: {}", side.join("run-07").display())), "{}", run.stderr);
    assert_eq!(run.stdout, "");
}

fn benchsuite(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/benchsuite").join(name).display().to_string()
}

const BENCHMARKS: [&str; 2] = ["parse resource_map.yaml", "parse regen_apis_config.yaml"];

/// The real suite (yaml timed by tinybench, testdata/benchsuite): two
/// recordings of the published library, and the ten unchanged pairs, raise
/// no regression and no annotation. Their wall-clock medians moved by up
/// to +222 %; CPU per iteration and the functions' shares stay in noise.
#[test]
fn the_real_suite_unchanged_raises_nothing() {
    let mut pairs = vec![(benchsuite("base-1"), benchsuite("base-2"))];
    for pair in 1..=10 {
        pairs.push((benchsuite(&format!("noise/pair-{pair:02}-a")), benchsuite(&format!("noise/pair-{pair:02}-b"))));
    }
    for (a, b) in &pairs {
        let run = compare(&[a, b, "--format", "github", "--fail-on-regression"]);
        assert_eq!((run.status, run.stdout.as_str()), (0, ""), "{a} vs {b}: {}", run.stderr);
        let run = compare(&[a, b, "--fail-on-regression"]);
        assert_eq!(run.status, 0, "{a} vs {b}: {}", run.stdout);
        let verdicts: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("benchmark \"")).collect();
        assert_eq!(verdicts.len(), 2, "{}", run.stdout);
        assert!(verdicts.iter().all(|line| line.ends_with(": within noise")), "{a} vs {b}: {}", run.stdout);
    }
}

/// Base against the head whose isEmpty (inlined into the Lexer's
/// parsePlainScalar and others) does busy work: both benchmarks regressed,
/// exit 1, one annotation (--top bounds it) at isEmpty's line of the
/// head's lexer.js (73: head.patch adds a line above it), relative to the
/// source root given, naming both benchmarks and a caller it ran inlined
/// into. The markdown lists both benchmarks with their verdicts.
#[test]
fn the_real_suite_slowed_inlined_function_is_annotated() {
    let (base, head) = (benchsuite("base-1"), benchsuite("head"));
    let root = "/tmp/v8inline-benchsuite/head";
    let run = compare(&[&base, &head, "--format", "github", "--fail-on-regression", "--source-root", root]);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let found = annotations(&run.stdout);
    assert!(!found.is_empty() && found.len() <= 3, "{}", run.stdout);
    let first = &found[0];
    assert_eq!(
        (first.severity.as_str(), first.file.as_str(), first.line.as_str()),
        ("warning", "node_modules/yaml/dist/parse/lexer.js", "73")
    );
    assert!(first.title.starts_with("v8inline: isEmpty self +"), "{}", first.title);
    assert!(first.message.starts_with("isEmpty (inlined into parsePlainScalar"), "{}", first.message);
    for benchmark in BENCHMARKS {
        assert!(first.message.contains(&format!("in benchmark \"{benchmark}\"")), "{benchmark}: {}", first.message);
    }
    let run = compare(&[&base, &head, "--format", "github", "--top", "1", "--source-root", root]);
    assert_eq!(annotations(&run.stdout).len(), 1);

    let run = compare(&[&base, &head, "--fail-on-regression"]);
    assert_eq!(run.status, 1);
    let verdicts: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("benchmark \"")).collect();
    assert_eq!(verdicts.len(), 2, "{}", run.stdout);
    for (line, benchmark) in verdicts.iter().zip(BENCHMARKS) {
        assert!(line.starts_with(&format!("benchmark \"{benchmark}\": ")), "{line}");
        assert!(line.contains(" CPU per iteration, +") && line.ends_with(": regressed"), "{line}");
    }

    let run = compare(&[&base, &head, "--format", "markdown"]);
    assert!(run.stdout.starts_with("### v8inline: 2 of 2 benchmarks regressed beyond noise\n"), "{}", run.stdout);
    assert!(run.stdout.contains("| Benchmark | Base | Head | Change | Verdict |"));
    for benchmark in BENCHMARKS {
        let row = run.stdout.lines().find(|line| line.starts_with(&format!("| {benchmark} | "))).unwrap();
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 5, "{row}");
        assert!(cells[1].ends_with(" ms") && cells[2].ends_with(" ms") && cells[3].starts_with('+'), "{row}");
        assert_eq!(cells[4], "🔴 regressed", "{row}");
    }
}

/// The differential flame graph of the real suite: OUT.svg and one
/// OUT-<slug>.svg per benchmark, isEmpty's frames among them.
#[test]
fn the_real_suite_differential_flame_graphs() {
    let directory = tempdir();
    let out = directory.join("diff.svg");
    let run = compare(&[&benchsuite("base-1"), &benchsuite("head"), "--flamegraph", out.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for name in ["diff.svg", "diff-parse-resource-map-yaml.svg", "diff-parse-regen-apis-config-yaml.svg"] {
        let svg = std::fs::read_to_string(directory.join(name)).unwrap();
        assert!(svg.contains("<title>JS:isEmpty "), "{name}");
        // Every frame in inferno's differential colors, tiers merged or
        // not: grey (no change), red (grew: rgb(255,x,x)) or blue (shrank:
        // rgb(x,x,255)); never a tier's green or aqua. isEmpty grew.
        let mut is_empty_red = false;
        for frame in svg.split("<title>").skip(1) {
            let Some(fill) = frame.split("fill=\"rgb(").nth(1).and_then(|rest| rest.split(')').next()) else {
                continue;
            };
            let [r, g, b]: [u8; 3] =
                fill.split(',').map(|part| part.parse().unwrap()).collect::<Vec<_>>().try_into().unwrap();
            let grey_or_red = g == b && (r == g || r == 255);
            let blue = r == g && b == 255;
            let differential = grey_or_red || blue;
            assert!(differential, "{name}: rgb({fill}) in {}", &frame[..frame.len().min(200)]);
            is_empty_red |= frame.starts_with("JS:isEmpty ") && r == 255 && g < 255;
        }
        assert!(is_empty_red, "{name}");
    }
}

/// A side directory as `v8inline bench` writes it (runs.json), its runs
/// being these recordings (absolute paths: runs.json's directories are
/// joined to the side directory).
fn side_directory(directory: &Path, recordings: &[String]) -> String {
    std::fs::create_dir_all(directory).unwrap();
    let runs: Vec<String> = recordings
        .iter()
        .enumerate()
        .map(|(index, recording)| format!("{{\"directory\": {recording:?}, \"round\": {}}}", index + 1))
        .collect();
    let json = format!("{{\"version\": 1, \"side\": \"base\", \"runs\": [{}]}}", runs.join(", "));
    std::fs::write(directory.join("runs.json"), json).unwrap();
    directory.display().to_string()
}

/// Over several runs per side, on the real suite's unchanged recordings
/// (testdata/benchsuite/false-alarms-runs.sh: 11 rotations of 5 "a"
/// recordings against the 5 "b" beside them): no regression, no
/// annotation, no function beyond noise by the own-time rule; every
/// benchmark's interval holds ±5 % and more, so it is undecided, with its
/// interval and minimum detectable change printed.
#[test]
fn several_runs_of_unchanged_code_raise_nothing() {
    let mut a = vec![benchsuite("base-1")];
    let mut b = vec![benchsuite("base-2")];
    for pair in 1..=10 {
        a.push(benchsuite(&format!("noise/pair-{pair:02}-a")));
        b.push(benchsuite(&format!("noise/pair-{pair:02}-b")));
    }
    let directory = tempdir().join("runs-unchanged");
    for start in 0..11 {
        let pick = |side: &[String]| (0..5).map(|offset| side[(start + offset) % 11].clone()).collect::<Vec<_>>();
        let base = side_directory(&directory.join(format!("{start}/base")), &pick(&a));
        let head = side_directory(&directory.join(format!("{start}/head")), &pick(&b));
        let run = compare(&[&base, &head, "--format", "github", "--fail-on-regression"]);
        assert_eq!((run.status, run.stdout.as_str()), (0, ""), "rotation {start}: {}", run.stderr);
        let run = compare(&[&base, &head, "--top", "100000"]);
        let verdicts: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("benchmark \"")).collect();
        assert_eq!(verdicts.len(), 2, "{}", run.stdout);
        assert!(verdicts.iter().all(|line| line.contains("): undecided")), "rotation {start}: {}", run.stdout);
        assert!(!run.stdout.contains("  regressed") && !run.stdout.contains("  improved"), "{}", run.stdout);
        assert!(!run.stdout.contains("one run per side"), "{}", run.stdout);
        if start == 0 {
            assert_eq!(
                verdicts[0],
                "benchmark \"parse resource_map.yaml\": 5 → 5 runs, 29.1 ms → 30.0 ms CPU per iteration \
                 (geometric means of runs), +3.1% (interval -7.9% to +15.5%, minimum detectable change 17.6%): \
                 undecided; ±5 % would need about 143 rounds (138 more)"
            );
            // The comment and the job summary say it too.
            let markdown = compare(&[&base, &head, "--format", "markdown"]).stdout;
            assert!(markdown.contains("| 🟡 undecided: ±5 % would need about 143 rounds (138 more) |\n"), "{markdown}");
        }
    }
}

/// Three interleaved runs per side (testdata/action, recorded by its
/// record.sh): checksum made 3× slower regresses both benchmarks that run
/// it, checksum is annotated by the own-time rule at bench.mjs:6 with the
/// change's interval, and "count vowels" stays within ±5 %; the unchanged
/// head raises nothing. The markdown shows each change with its interval
/// and minimum detectable change.
#[test]
fn several_runs_find_the_slowed_function() {
    let action =
        |name: &str| Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/action").join(name).display().to_string();
    let (base, slower, unchanged) = (action("base"), action("slower"), action("unchanged"));
    let run = compare(&[&base, &slower, "--fail-on-regression"]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let verdicts: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("benchmark \"")).collect();
    assert_eq!(
        verdicts,
        [
            "benchmark \"checksum and words\": 3 → 3 runs, 6.22 µs → 11.0 µs fastest per iteration (geometric \
             means of runs), +76.7% (interval +47.6% to +111.5%, minimum detectable change 25.7%); CPU 7.36 µs → \
             13.4 µs, +81.8% (interval +65.0% to +100.3%, minimum detectable change 15.7%): regressed",
            "benchmark \"checksum alone\": 3 → 3 runs, 2.88 µs → 7.19 µs fastest per iteration (geometric means of \
             runs), +149.3% (interval +149.3% to +149.3%, minimum detectable change 5.0%); CPU 3.46 µs → 9.25 µs, \
             +167.2% (interval +148.8% to +187.0%, minimum detectable change 12.8%): regressed",
            "benchmark \"count vowels\": 3 → 3 runs, 4.33 µs → 4.34 µs fastest per iteration (geometric means of \
             runs), +0.2% (interval -0.8% to +1.2%, minimum detectable change 6.0%); CPU 5.10 µs → 5.12 µs, +0.3% \
             (interval -2.6% to +3.3%, minimum detectable change 8.1%): within noise",
        ]
    );
    let found = annotations(&compare(&[&base, &slower, "--format", "github"]).stdout);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].file.as_str(), found[0].line.as_str()), ("bench.mjs", "6"));
    assert_eq!(found[0].title, "v8inline: checksum self +19.21 pp in checksum and words, checksum alone");
    assert!(
        found[0].message.starts_with(
            "checksum (inlined into (anonymous)): self time +19.21 pp; own CPU time per iteration 3.27 µs → 8.50 µs \
             (medians of runs), +49.9% (interval +42.8% to +57.4%, minimum detectable change 10.2%) of the benchmark"
        ),
        "{}",
        found[0].message
    );
    let markdown = compare(&[&base, &slower, "--format", "markdown"]).stdout;
    assert!(
        markdown.contains(
            "| checksum alone | 2.88 µs | 7.19 µs | +149.3% (+149.3% to +149.3%; detectable 5.0%); CPU +167.2% \
             (+148.8% to +187.0%) | 🔴 regressed |\n"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("\n3 → 3 runs per side; each change with its interval"), "{markdown}");
    let run = compare(&[&base, &unchanged, "--format", "github", "--fail-on-regression"]);
    assert_eq!((run.status, run.stdout.as_str()), (0, ""));
    // One run against several: today's model, and it says what it cannot see.
    let single = compare(&[&format!("{base}/run-01"), &slower]);
    assert!(single.stdout.ends_with("note: one run per side: the noise between runs (a neighbour slowing the machine for a second, V8 deciding differently in another process) is not seen; `v8inline bench` runs several\n"), "{}", single.stdout);
    let markdown = compare(&[&format!("{base}/run-01"), &format!("{slower}/run-01"), "--format", "markdown"]).stdout;
    assert!(markdown.contains("_Note: one run per side: the noise between runs"), "{markdown}");
}

/// A side directory of duet runs, each run's round given.
fn duet_side_directory(directory: &Path, runs: &[(String, u32)]) -> String {
    std::fs::create_dir_all(directory).unwrap();
    let runs: Vec<String> =
        runs.iter().map(|(recording, round)| format!("{{\"directory\": {recording:?}, \"round\": {round}}}")).collect();
    let json =
        format!("{{\"version\": 1, \"side\": \"base\", \"schedule\": \"duet\", \"runs\": [{}]}}", runs.join(", "));
    std::fs::write(directory.join("runs.json"), json).unwrap();
    directory.display().to_string()
}

/// Two bench outputs (say, two CI jobs) merged by `compare --merge`: the
/// three rounds of testdata/action as rounds 1 and 2 of one output and
/// round 1 of another judge exactly as the three rounds of one output do,
/// each round paired within its own output; the comparison says it merged.
/// An output without a head side is named.
#[test]
fn merged_bench_outputs_judge_as_one() {
    let action = |name: &str, run: u32| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/action").join(name).join(format!("run-0{run}"))
    };
    let run_of = |name: &str, run: u32| action(name, run).display().to_string();
    let directory = tempdir();
    let sides = |output: &str, runs: &[(u32, u32)]| {
        let of = |name: &str| runs.iter().map(|&(run, round)| (run_of(name, run), round)).collect::<Vec<_>>();
        duet_side_directory(&directory.join(output).join("base"), &of("base"));
        duet_side_directory(&directory.join(output).join("head"), &of("slower"));
        directory.join(output).display().to_string()
    };
    let whole = sides("whole", &[(1, 1), (2, 2), (3, 3)]);
    let first = sides("first", &[(1, 1), (2, 2)]);
    let second = sides("second", &[(3, 1)]);
    let one = compare(&[&format!("{whole}/base"), &format!("{whole}/head"), "--format", "markdown"]);
    let merged = compare(&["--merge", &first, &second, "--format", "markdown"]);
    assert_eq!((one.status, merged.status), (0, 0), "{}{}", one.stderr, merged.stderr);
    assert!(
        merged.stdout.contains(
            "3 → 3 runs per side from 2 bench outputs, base and head at the same time in each round (duets), judged \
             as pairs within each output;"
        ),
        "{}",
        merged.stdout
    );
    let header = |text: &str| text.replace(" from 2 bench outputs", "").replace(" within each output", "");
    assert_eq!(header(&merged.stdout), one.stdout);
    assert!(one.stdout.contains("| checksum alone | 2.88 µs | 7.19 µs |"), "{}", one.stdout);
    // Were the rounds told apart by their number alone, round 1 would be
    // there twice a side and the runs judged unpaired, otherwise: as one
    // output of rounds 1, 2 and 1 is.
    let misnumbered = sides("misnumbered", &[(1, 1), (2, 2), (3, 1)]);
    let as_one = compare(&[&format!("{misnumbered}/base"), &format!("{misnumbered}/head"), "--format", "markdown"]);
    assert_ne!(as_one.stdout, one.stdout);
    // An output without a head side.
    std::fs::remove_file(directory.join("second/head/runs.json")).unwrap();
    let broken = compare(&["--merge", &first, &second]);
    assert_eq!(broken.status, 1, "{}", broken.stderr);
    assert!(
        broken.stderr.contains(&format!("{second}/head: not a side directory of `v8inline bench` (no runs.json)")),
        "{}",
        broken.stderr
    );
}
