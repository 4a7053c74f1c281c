//! The outputs beside folded stacks, from the CLI on the real recordings:
//! pprof (decoded back, and by an independent reader), the JSON report
//! (against V8's own CPU profile), GitHub annotations (the workflow command
//! syntax), the markdown summary, and `compare`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{NODE_VERSIONS, function_at_line, gunzip, jitdump_path, log_path, recording_dir, tempdir, v8inline};
use v8inline::internals::output::json::JsonReport;
use v8inline::internals::output::pprof::{Profile, read_pprof};

/// The arguments that fold a recording's raw perf script.
fn recording_args(version: u32) -> Vec<String> {
    vec![
        "--log".to_string(),
        log_path(version).display().to_string(),
        "--jitdump".to_string(),
        jitdump_path(version).display().to_string(),
        "--no-disk-sources".to_string(),
        recording_dir(version).join("perf.script.gz").display().to_string(),
    ]
}

/// Runs v8inline on a recording with `extra` arguments; returns stdout.
fn run(version: u32, extra: &[&str]) -> String {
    let mut args = recording_args(version);
    args.extend(extra.iter().map(|arg| arg.to_string()));
    v8inline(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Where the recordings' scripts ran: the source root of their annotations.
fn script_dir(version: u32) -> String {
    format!("/tmp/v8inline-testdata/node{version}")
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

/// A frame name reduced to `function script:line` (JavaScript) or kept as it
/// is (native), so folded names (`JS:*square /a.js:16:16`, node 18's
/// `LazyCompile:*square /a.js:16`) and pprof system names (`square
/// /a.js:16:16`) compare.
fn function_key(name: &str) -> String {
    let body = match name.split_once(':') {
        Some((tag, rest)) if ["JS", "LazyCompile", "Function", "Script", "Eval"].contains(&tag) => {
            // V8's markers: `o` (on-stack replacement), the tier, `'`.
            let rest = rest.strip_prefix('o').filter(|rest| rest.starts_with(['~', '^', '+', '*'])).unwrap_or(rest);
            rest.trim_start_matches(['~', '^', '+', '*', '\''])
        }
        _ => name,
    };
    let body = if body.starts_with(' ') { format!("(anonymous){body}") } else { body.to_string() };
    // Drop a trailing column: node 18's jitdump names have none.
    let parts: Vec<&str> = body.rsplitn(3, ':').collect();
    if parts.len() == 3 && parts[0].parse::<u32>().is_ok() && parts[1].parse::<u32>().is_ok() {
        format!("{}:{}", parts[2], parts[1])
    } else {
        body
    }
}

/// The folded stacks of a pprof profile, root first, frames named by
/// [`function_key`] of their Function's system name, with the second value.
fn pprof_stacks(profile: &Profile) -> BTreeMap<String, u64> {
    let string = |index: i64| profile.string_table[index as usize].as_str();
    let mut stacks = BTreeMap::new();
    for sample in &profile.sample {
        let mut frames = Vec::new();
        for location_id in &sample.location_id {
            let location = &profile.location[*location_id as usize - 1];
            assert_eq!(location.id, *location_id);
            for line in &location.line {
                let function = &profile.function[line.function_id as usize - 1];
                frames.push(function_key(string(function.system_name)));
            }
        }
        frames.reverse();
        *stacks.entry(frames.join(";")).or_default() += sample.value[1] as u64;
    }
    stacks
}

/// Folded text with frames named by [`function_key`].
fn folded_stacks(folded: &str) -> BTreeMap<String, u64> {
    let mut stacks = BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let key = stack.split(';').map(function_key).collect::<Vec<_>>().join(";");
        *stacks.entry(key).or_default() += count.parse::<u64>().unwrap();
    }
    stacks
}

/// pprof holds the same stacks as the folded output, one Location per PC
/// whose Lines are the inline frames, innermost first, each at a line inside
/// its own function.
#[test]
fn pprof_locations_carry_the_inline_frames_of_the_folded_stacks() {
    let dir = tempdir();
    for version in NODE_VERSIONS {
        let pprof_path = dir.join(format!("node{version}.pb.gz"));
        let folded = run(version, &["--pprof", &path_text(&pprof_path)]);
        let profile = read_pprof(&std::fs::read(&pprof_path).unwrap()).unwrap();
        let string = |index: i64| profile.string_table[index as usize].as_str();
        let types: Vec<(&str, &str)> =
            profile.sample_type.iter().map(|value_type| (string(value_type.r#type), string(value_type.unit))).collect();
        assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
        let (from_pprof, from_folded) = (pprof_stacks(&profile), folded_stacks(&folded));
        let differences: Vec<(&String, Option<&u64>, Option<&u64>)> = from_pprof
            .keys()
            .chain(from_folded.keys())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter(|stack| from_pprof.get(*stack) != from_folded.get(*stack))
            .map(|stack| (stack, from_pprof.get(stack), from_folded.get(stack)))
            .take(3)
            .collect();
        assert!(differences.is_empty(), "node {version}: (stack, pprof, folded): {differences:#?}");
        let sample_count: i64 = profile.sample.iter().map(|sample| sample.value[0]).sum();
        let script = String::from_utf8(gunzip(&recording_dir(version).join("perf.script.gz"))).unwrap();
        let perf_samples = script.lines().filter(|line| line.contains(" cpu-clock:")).count();
        assert_eq!(sample_count as usize, perf_samples, "node {version}: every sample counted once");

        let mut inline_chains = BTreeSet::new();
        let mut checked_lines = 0;
        for location in &profile.location {
            let functions: Vec<&str> =
                location.line.iter().map(|line| string(profile.function[line.function_id as usize - 1].name)).collect();
            if location.line.len() > 1 {
                assert_ne!(location.address, 0, "node {version}: inline frames belong to a sampled PC");
                inline_chains.insert(functions.join(" < "));
            }
            for (line, function) in location.line.iter().zip(&functions) {
                let file = string(profile.function[line.function_id as usize - 1].filename);
                if !(file.ends_with("/deep.js") || file.ends_with("/lib.js")) {
                    continue;
                }
                if let Some(known) = function_at_line(line.line as u64) {
                    assert_eq!(known, *function, "node {version}: line {} of {file} is in {known}", line.line);
                    checked_lines += 1;
                } else {
                    assert!(
                        !["mix", "scale", "square", "weigh", "combine", "kernel"].contains(function),
                        "node {version}: {function} at line {} outside its body",
                        line.line
                    );
                }
            }
        }
        assert!(checked_lines > 50, "node {version}: {checked_lines} lines checked");
        assert!(
            inline_chains.iter().any(|chain| chain.starts_with("square < weigh < combine < kernel")),
            "node {version}: {inline_chains:?}"
        );
    }
}

/// An independent pprof reader, DataDog's `pprof-format` from npm, decodes
/// the file to the same samples. `.ci/run` installs it into
/// target/pprof-reader; without it this test says so and checks nothing.
#[test]
fn pprof_decodes_with_the_pprof_format_package() {
    let reader = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pprof-reader/node_modules/pprof-format");
    if !reader.exists() {
        eprintln!("skipped: npm install --prefix target/pprof-reader pprof-format@2 (done by .ci/run)");
        return;
    }
    let dir = tempdir();
    let pprof_path = dir.join("reader.pb.gz");
    run(24, &["--pprof", &path_text(&pprof_path)]);
    let script = r#"
        const { Profile } = require(process.argv[1]);
        const bytes = require('zlib').gunzipSync(require('fs').readFileSync(process.argv[2]));
        const profile = Profile.decode(bytes);
        const strings = profile.stringTable.strings;
        const name = (id) => strings[Number(profile.function[Number(id) - 1].name)];
        const deepest = profile.location.reduce((best, location) => location.line.length > best.line.length ? location : best);
        console.log(JSON.stringify({
            samples: profile.sample.reduce((sum, sample) => sum + Number(sample.value[0]), 0),
            nanoseconds: profile.sample.reduce((sum, sample) => sum + Number(sample.value[1]), 0),
            locations: profile.location.length,
            inlined_locations: profile.location.filter((location) => location.line.length > 1).length,
            deepest: deepest.line.map((line) => name(line.functionId)),
        }));
    "#;
    let output = Command::new("node")
        .args(["-e", script, &path_text(&reader), &path_text(&pprof_path)])
        .output()
        .expect("node runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let decoded: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let ours = read_pprof(&std::fs::read(&pprof_path).unwrap()).unwrap();
    let name = |id: u64| ours.string_table[ours.function[id as usize - 1].name as usize].clone();
    let deepest = ours
        .location
        .iter()
        .fold(&ours.location[0], |best, location| if location.line.len() > best.line.len() { location } else { best });
    let expected = serde_json::json!({
        "samples": ours.sample.iter().map(|sample| sample.value[0]).sum::<i64>(),
        "nanoseconds": ours.sample.iter().map(|sample| sample.value[1]).sum::<i64>(),
        "locations": ours.location.len(),
        "inlined_locations": ours.location.iter().filter(|location| location.line.len() > 1).count(),
        "deepest": deepest.line.iter().map(|line| name(line.function_id)).collect::<Vec<_>>(),
    });
    assert_eq!(decoded, expected);
    assert!(decoded["inlined_locations"].as_u64().unwrap() > 10, "{decoded}");
}

/// V8's own `--cpu-prof` positionTicks: ticks per line of deep.js or lib.js.
/// Lines are keyed without their script: node 18's profiler puts the lines
/// of lib.js code inlined into deep.js under deep.js's URL. The two files'
/// functions are on different lines (see `function_at_line`).
fn v8_line_ticks(version: u32) -> BTreeMap<u64, u64> {
    let profile: serde_json::Value =
        serde_json::from_slice(&gunzip(&recording_dir(version).join("deep.cpuprofile.gz"))).unwrap();
    let mut ticks = BTreeMap::new();
    for node in profile["nodes"].as_array().unwrap() {
        let url = node["callFrame"]["url"].as_str().unwrap_or("");
        if !(url.ends_with("/deep.js") || url.ends_with("/lib.js")) {
            continue;
        }
        for tick in node["positionTicks"].as_array().into_iter().flatten() {
            *ticks.entry(tick["line"].as_u64().unwrap()).or_default() += tick["ticks"].as_u64().unwrap();
        }
    }
    ticks
}

/// Total-variation distance of two weightings, each normalized.
fn distance<K: Ord + Clone>(left: &BTreeMap<K, u64>, right: &BTreeMap<K, u64>) -> f64 {
    let (left_total, right_total) = (left.values().sum::<u64>() as f64, right.values().sum::<u64>() as f64);
    let keys: BTreeSet<&K> = left.keys().chain(right.keys()).collect();
    keys.iter()
        .map(|key| {
            let left_share = *left.get(*key).unwrap_or(&0) as f64 / left_total;
            let right_share = *right.get(*key).unwrap_or(&0) as f64 / right_total;
            (left_share - right_share).abs()
        })
        .sum::<f64>()
        / 2.0
}

/// The JSON report's self time per source line and per function agrees with
/// V8's own profiler on the same program; its numbers add up.
#[test]
fn json_report_lines_match_v8_cpu_profile() {
    for version in NODE_VERSIONS {
        let report = JsonReport::parse(&run(version, &["--report", "json"])).unwrap();
        assert_eq!(report.schema, "v8inline-report/1");
        assert_eq!(report.unit, "samples");
        assert_eq!(report.event.as_deref(), Some("cpu-clock"));
        let mut our_lines = BTreeMap::new();
        let mut our_functions = BTreeMap::new();
        for line in &report.lines {
            let file = line.file.rsplit('/').next().unwrap().to_string();
            if file != "deep.js" && file != "lib.js" {
                continue;
            }
            *our_lines.entry(u64::from(line.line)).or_default() += line.weights.self_weight;
            if let Some(function) = function_at_line(u64::from(line.line)) {
                *our_functions.entry(function).or_default() += line.weights.self_weight;
            }
        }
        let v8_lines = v8_line_ticks(version);
        let mut v8_functions = BTreeMap::new();
        for (line, ticks) in &v8_lines {
            if let Some(function) = function_at_line(*line) {
                *v8_functions.entry(function).or_default() += ticks;
            }
        }
        let (line_distance, function_distance) =
            (distance(&our_lines, &v8_lines), distance(&our_functions, &v8_functions));
        eprintln!(
            "node {version}: distance to V8's profile: lines {line_distance:.3}, functions {function_distance:.3}"
        );
        assert!(function_distance < 0.10, "node {version}: functions {function_distance:.3}");
        assert!(line_distance < 0.15, "node {version}: lines {line_distance:.3}");

        // Every sample is some function's self time, and tiers split it exactly.
        let self_total: u64 = report.functions.iter().map(|function| function.weights.self_weight).sum();
        assert_eq!(self_total, report.total, "node {version}");
        for function in &report.functions {
            assert!(function.weights.inclusive >= function.weights.self_weight, "{}", function.name);
            let tier_self: u64 = function.tiers.values().map(|tier| tier.self_weight).sum();
            assert_eq!(tier_self, function.weights.self_weight, "node {version}: {}", function.name);
        }
        let square = report.functions.iter().find(|function| function.name == "square").unwrap();
        assert!(square.tiers.contains_key("inlined"), "node {version}: {:?}", square.tiers);
        assert!(square.inlined_into.iter().any(|host| host.name == "weigh" || host.name == "kernel"));
    }
}

/// One parsed workflow command.
#[derive(Debug)]
struct WorkflowCommand {
    severity: String,
    properties: BTreeMap<String, String>,
    message: String,
}

/// Parses `::severity key=value,key=value::message` and undoes GitHub's
/// escapes, failing on anything the runner would not accept.
fn parse_workflow_command(line: &str) -> WorkflowCommand {
    let unescape = |text: &str| {
        text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
    };
    let rest = line.strip_prefix("::").unwrap_or_else(|| panic!("not a workflow command: {line}"));
    let (head, message) = rest.split_once("::").unwrap_or_else(|| panic!("no message: {line}"));
    let (severity, properties) = head.split_once(' ').unwrap();
    assert!(["notice", "warning", "error"].contains(&severity), "{line}");
    let properties = properties
        .split(',')
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or_else(|| panic!("bad property {pair:?} in {line}"));
            assert!(!value.contains(':') && !value.contains(','), "unescaped property in {line}");
            (key.to_string(), unescape(value))
        })
        .collect();
    assert!(!message.contains('\n') && !message.contains('\r'));
    WorkflowCommand { severity: severity.to_string(), properties, message: unescape(message) }
}

/// `--annotate github` writes valid workflow commands on the hottest lines
/// and functions of the files under --source-root, at most --annotate-top.
#[test]
fn github_annotations_point_at_hot_lines_under_the_source_root() {
    for version in [20, 24] {
        let root = script_dir(version);
        let text = run(version, &["--annotate", "github", "--source-root", &root]);
        let commands: Vec<WorkflowCommand> = text.lines().map(parse_workflow_command).collect();
        assert_eq!(commands.len(), 10, "node {version}: the default --annotate-top\n{text}");
        let report = JsonReport::parse(&run(version, &["--report", "json"])).unwrap();
        let hottest_javascript = report.functions.iter().find(|function| function.file.is_some()).unwrap();
        assert_eq!(
            commands[0].properties["file"],
            hottest_javascript.file.as_ref().unwrap().rsplit('/').next().unwrap()
        );
        assert_eq!(commands[0].properties["line"], hottest_javascript.line.unwrap().to_string());
        for command in &commands {
            assert_eq!(command.severity, "notice");
            let file = &command.properties["file"];
            assert!(file == "deep.js" || file == "lib.js", "relative to the root: {file}");
            let line: u64 = command.properties["line"].parse().unwrap();
            let program =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs").join(file))
                    .unwrap();
            assert!(line as usize <= program.lines().count(), "{file}:{line} exists");
            // The function the annotation names has this line in its body.
            if let Some(function) = function_at_line(line) {
                assert!(command.message.contains(function), "{file}:{line} is in {function}: {}", command.message);
            }
            assert!(command.properties["title"].starts_with("v8inline: "));
        }
        assert!(commands.iter().any(|command| command.message.contains("inlined into")));

        let three = run(version, &["--annotate", "github", "--source-root", &root, "--annotate-top", "3"]);
        assert_eq!(three.lines().collect::<Vec<_>>(), text.lines().take(3).collect::<Vec<_>>());
        let elsewhere = run(version, &["--annotate", "github", "--source-root", "/nonexistent/project"]);
        assert_eq!(elsewhere, "", "no file is under the root");
    }
}

/// `--summary markdown` ranks functions by self and inclusive time and says
/// where functions ran inlined; --summary-output appends.
#[test]
fn markdown_summary_notes_inlined_functions() {
    let dir = tempdir();
    let summary_path = dir.join("summary.md");
    std::fs::write(&summary_path, "# existing\n").unwrap();
    let root = script_dir(24);
    let folded = run(
        24,
        &["--summary", "markdown", "--summary-output", &path_text(&summary_path), "--source-root", &root, "--top", "5"],
    );
    assert!(!folded.is_empty(), "folded stacks still go to standard output");
    let summary = std::fs::read_to_string(&summary_path).unwrap();
    assert!(summary.starts_with("# existing\n### v8inline profile: "), "{summary}");
    let report = JsonReport::parse(&run(24, &["--report", "json"])).unwrap();
    let tables: Vec<Vec<Vec<&str>>> = summary
        .split("**")
        .filter(|part| part.contains("|---"))
        .map(|table| {
            table
                .lines()
                .filter(|line| line.starts_with("| ") && !line.starts_with("| Self"))
                .map(|row| row.trim_matches('|').split(" | ").map(str::trim).collect())
                .collect()
        })
        .collect();
    assert_eq!(tables.len(), 2, "{summary}");
    for table in &tables {
        assert_eq!(table.len(), 5, "--top 5\n{summary}");
        assert!(table.iter().all(|row| row.len() == 5), "{summary}");
    }
    let top_self = &report.functions[0];
    assert!(tables[0][0][2].starts_with(&format!("`{}`", top_self.name)), "{summary}");
    assert_eq!(tables[0][0][0], format!("{:.1}%", top_self.weights.self_share * 100.0));
    let square_row = summary.lines().find(|line| line.contains("`square`")).expect("square is among the top 5");
    assert!(square_row.contains("inlined into `"), "{square_row}");
    assert!(square_row.contains("| deep.js:16 |"), "{square_row}");
}

/// Two outputs cannot share standard output.
#[test]
fn outputs_competing_for_standard_output_are_a_usage_error() {
    let mut args = recording_args(24);
    args.extend(["--report", "json", "--summary", "markdown"].map(String::from));
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(&args).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "v8inline: --report and --summary would all write to standard output: give all but one a file \
         (--report-output, --summary-output, --annotate-output)\n"
    );
}

/// Writes `text` to a file in the scratch directory.
fn scratch_file(name: &str, text: &str) -> PathBuf {
    let path = tempdir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `compare` of a profile with itself, as folded stacks and as its JSON
/// report, finds nothing; a profile where square's stacks weigh three times
/// more shows square as the worst regression, by the exact amount.
#[test]
fn compare_ranks_regressions_first() {
    let folded = run(24, &[]);
    let report = run(24, &["--report", "json"]);
    let base_folded = scratch_file("base.folded", &folded);
    let base_report = scratch_file("base.json", &report);
    // A JSON report has no stacks to charge native frames to their
    // JavaScript caller: kept apart on both sides.
    let same = v8inline(&["compare", &path_text(&base_folded), &path_text(&base_report), "--separate-native"]);
    assert!(same.contains("\n  no function's share changed\n"), "{same}");
    // One profile a side: compare says what it cannot see.
    assert!(same.lines().last().unwrap().starts_with("note: one run per side: the noise between runs"), "{same}");

    let mut square_weight = 0u64;
    let mut total = 0u64;
    let heavier: String = folded
        .lines()
        .map(|line| {
            let (stack, count) = line.rsplit_once(' ').unwrap();
            let count: u64 = count.parse().unwrap();
            let is_square = stack.rsplit(';').next().unwrap().contains("square ");
            let count = if is_square { count * 3 } else { count };
            square_weight += if is_square { count } else { 0 };
            total += count;
            format!("{stack} {count}\n")
        })
        .collect();
    let head = scratch_file("head.folded", &heavier);
    let table = v8inline(&[
        "compare",
        &path_text(&base_report),
        &path_text(&head),
        "--source-root",
        &script_dir(24),
        "--separate-native",
    ]);
    // After the verdict line and the header.
    let first_row: Vec<&str> = table.lines().nth(2).unwrap().split_whitespace().collect();
    let base_square = JsonReport::parse(&report).unwrap().functions.into_iter().find(|f| f.name == "square").unwrap();
    let expected_change = (square_weight as f64 / total as f64 - base_square.weights.self_share) * 100.0;
    assert_eq!(first_row[0], format!("{expected_change:+.2}"), "{table}");
    assert_eq!(first_row[first_row.len() - 2..], ["square", "deep.js:16"], "{table}");

    let markdown = v8inline(&["compare", &path_text(&base_folded), &path_text(&head), "--format", "markdown"]);
    let first_row = markdown.lines().skip_while(|line| !line.starts_with("|---")).nth(1).unwrap();
    assert!(first_row.contains("| `square` |"), "{markdown}");
    let github = v8inline(&[
        "compare",
        &path_text(&base_folded),
        &path_text(&head),
        "--format",
        "github",
        "--source-root",
        &script_dir(24),
    ]);
    let commands: Vec<WorkflowCommand> = github.lines().map(parse_workflow_command).collect();
    assert_eq!(commands[0].severity, "warning");
    assert_eq!((commands[0].properties["file"].as_str(), commands[0].properties["line"].as_str()), ("deep.js", "16"));

    let svg_path = tempdir().join("difference.svg");
    v8inline(&["compare", &path_text(&base_folded), &path_text(&head), "--flamegraph", &path_text(&svg_path)]);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.contains("square /tmp/v8inline-testdata/node24/deep.js:16:16"));
    v8inline(&["compare", &path_text(&base_folded), &path_text(&head), "--flamegraph", &path_text(&svg_path)]);
    assert_eq!(std::fs::read_to_string(&svg_path).unwrap(), svg, "deterministic");

    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .args(["compare", &path_text(&base_report), &path_text(&head), "--flamegraph", &path_text(&svg_path)])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "v8inline: a differential flame graph needs two folded files, not JSON reports\n"
    );
}
