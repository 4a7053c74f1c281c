//! The main job end to end on the real recordings: golden folded stacks,
//! count conservation, raw and injected perf scripts agreeing, byte-identical
//! pass-through against inferno, and self shares against V8's own profiler.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::{
    NODE_VERSIONS, assert_matches_expected, function_at_line, gunzip, jitdump_path, log_path, recording_dir,
    recording_file, tempdir, v8inline,
};
use inferno::collapse::Collapse;

fn fold_recording(version: u32, script: &str, extra: &[&str]) -> String {
    let log = log_path(version).display().to_string();
    let jitdump = jitdump_path(version).display().to_string();
    let script = recording_dir(version).join(script).display().to_string();
    let mut args = vec!["--log", &log, "--jitdump", &jitdump, "--no-disk-sources"];
    args.extend_from_slice(extra);
    args.push(&script);
    v8inline(&args)
}

/// `stack count` lines into (stack, count).
fn parse_folded(folded: &str) -> Vec<(&str, u64)> {
    folded
        .lines()
        .map(|line| {
            let (stack, count) = line.rsplit_once(' ').unwrap();
            (stack, count.parse().unwrap())
        })
        .collect()
}

/// The period of every sample of a perf script, summed: what the folded
/// counts must add up to (inferno counts periods).
fn sum_of_periods(script: &[u8]) -> u64 {
    String::from_utf8_lossy(script)
        .lines()
        .filter(|line| !line.starts_with(char::is_whitespace) && line.contains("cpu-clock:"))
        .map(|line| {
            let before_event = line.split("cpu-clock:").next().unwrap().trim_end();
            before_event.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        })
        .sum()
}

fn is_js_frame(frame: &str) -> bool {
    ["JS:", "LazyCompile:", "Function:", "Eval:", "Script:"].iter().any(|tag| frame.starts_with(tag))
}

#[test]
fn golden_folded_stacks_with_inlined_frames() {
    for version in NODE_VERSIONS {
        let folded = fold_recording(version, "perf.script.gz", &[]);
        // square is only ever inlined: its frame exists only by expansion.
        let inlined_square = parse_folded(&folded)
            .iter()
            .filter(|(stack, _)| stack.contains("kernel /tmp/") && stack.contains("square /tmp/"))
            .count();
        assert!(inlined_square > 0, "node {version}: no expanded square frame");
        assert_matches_expected(&folded, &recording_dir(version).join("expected/perf.folded"));
        let annotated = fold_recording(version, "perf.script.gz", &["--annotate-inline", "--annotate-jit"]);
        assert!(annotated.contains("square /tmp/v8inline-testdata/"), "node {version}");
        for (stack, _) in parse_folded(&annotated) {
            for frame in stack.split(';').filter(|frame| is_js_frame(frame)) {
                assert!(frame.ends_with("_[i]") || frame.ends_with("_[j]"), "node {version}: {frame}");
            }
        }
        assert!(annotated.lines().any(|line| line.contains("square") && line.contains("_[i]")));
    }
}

#[test]
fn counts_add_up_to_the_samples_read() {
    for version in NODE_VERSIONS {
        for script in ["perf.script.gz", "perf-inject.script.gz"] {
            let input = gunzip(&recording_dir(version).join(script));
            let folded = fold_recording(version, script, &[]);
            let written: u64 = parse_folded(&folded).iter().map(|(_, count)| count).sum();
            assert_eq!(written, sum_of_periods(&input), "node {version} {script}");
        }
    }
}

/// Raw addresses (resolved through the jitdump at the sample's time) and
/// `perf inject -j` frames (by code index) give the same JavaScript stacks.
#[test]
fn raw_and_injected_scripts_give_the_same_javascript_stacks() {
    for version in NODE_VERSIONS {
        let javascript_stacks = |script: &str| {
            let mut stacks: BTreeMap<String, u64> = BTreeMap::new();
            for (stack, count) in parse_folded(&fold_recording(version, script, &[])) {
                let frames: Vec<&str> = stack.split(';').filter(|frame| is_js_frame(frame)).collect();
                *stacks.entry(frames.join(";")).or_default() += count;
            }
            stacks
        };
        let raw = javascript_stacks("perf.script.gz");
        let injected = javascript_stacks("perf-inject.script.gz");
        assert!(raw.len() > 20, "node {version}");
        assert_eq!(raw, injected, "node {version}");
    }
}

fn inferno_fold(script: &[u8], configure: impl FnOnce(&mut inferno::collapse::perf::Options)) -> String {
    let mut options = inferno::collapse::perf::Options::default();
    options.nthreads = 1;
    configure(&mut options);
    let mut folder = inferno::collapse::perf::Folder::from(options);
    let mut output = Vec::new();
    folder.collapse(script, &mut output).unwrap();
    String::from_utf8(output).unwrap()
}

/// Frames that are not V8 JIT code come out exactly as inferno-collapse-perf
/// writes them, with every option.
#[test]
fn profiles_without_v8_frames_are_byte_identical_to_inferno() {
    let native = recording_dir(0).with_file_name("native/perf.script.gz");
    let script = gunzip(&native);
    let native = native.display().to_string();
    let log = log_path(20).display().to_string();
    let jitdump = jitdump_path(20).display().to_string();
    type Configure = fn(&mut inferno::collapse::perf::Options);
    let cases: [(&[&str], Configure); 5] = [
        (&[], |_| {}),
        (&["--pid"], |options| options.include_pid = true),
        (&["--tid", "--addrs"], |options| {
            options.include_tid = true;
            options.include_addrs = true;
        }),
        (&["--all"], |options| {
            options.annotate_jit = true;
            options.annotate_kernel = true;
        }),
        (&["--skip-after", "PyEval_EvalCode"], |options| options.skip_after = vec!["PyEval_EvalCode".to_string()]),
    ];
    for (flags, configure) in cases {
        let expected = inferno_fold(&script, configure);
        assert!(expected.lines().count() > 50);
        // With a V8 profile loaded (another process) and with none.
        let mut with_profile = vec!["--log", &log, "--jitdump", &jitdump];
        with_profile.extend_from_slice(flags);
        with_profile.push(&native);
        assert_eq!(v8inline(&with_profile), expected, "{flags:?}");
        let mut without = flags.to_vec();
        without.push(&native);
        assert_eq!(v8inline(&without), expected, "{flags:?} without inputs");
    }
    // A node profile with no code log or jitdump passes through unchanged.
    let node_script = recording_dir(20).join("perf-inject.script.gz");
    let dir = tempdir();
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).arg(&node_script).current_dir(&dir).output().unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8(output.stdout).unwrap(), inferno_fold(&gunzip(&node_script), |_| {}));
}

fn shares(counts: &BTreeMap<String, u64>) -> BTreeMap<String, f64> {
    let total: u64 = counts.values().sum();
    counts.iter().map(|(name, count)| (name.clone(), *count as f64 / total as f64)).collect()
}

/// V8's own CPU profile of the same program (`node --cpu-prof`): its
/// positionTicks lines say where the time went, inlined or not. The self
/// share per function of v8inline's expanded profile must match it within
/// sampling noise (total-variation distance).
#[test]
fn self_shares_match_v8_cpu_profile() {
    for version in NODE_VERSIONS {
        let profile: serde_json::Value =
            serde_json::from_slice(&gunzip(&recording_file(version, "deep.cpuprofile"))).unwrap();
        let mut v8_counts: BTreeMap<String, u64> = BTreeMap::new();
        for node in profile["nodes"].as_array().unwrap() {
            let url = node["callFrame"]["url"].as_str().unwrap_or("");
            if !(url.ends_with("/deep.js") || url.ends_with("/lib.js")) {
                continue;
            }
            for tick in node["positionTicks"].as_array().into_iter().flatten() {
                if let Some(function) = function_at_line(tick["line"].as_u64().unwrap()) {
                    *v8_counts.entry(function.to_string()).or_default() += tick["ticks"].as_u64().unwrap();
                }
            }
        }
        let mut our_counts: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, count) in parse_folded(&fold_recording(version, "perf.script.gz", &[])) {
            let leaf = stack.rsplit(';').next().unwrap();
            let Some((code_name, location)) = leaf.split_once(' ') else { continue };
            if !(location.contains("/deep.js:") || location.contains("/lib.js:")) {
                continue;
            }
            let function = code_name.rsplit(|character: char| !character.is_alphanumeric()).next().unwrap();
            *our_counts.entry(function.to_string()).or_default() += count;
        }
        let (v8_shares, our_shares) = (shares(&v8_counts), shares(&our_counts));
        let names: std::collections::BTreeSet<&String> = v8_shares.keys().chain(our_shares.keys()).collect();
        let distance: f64 = names
            .iter()
            .map(|name| (v8_shares.get(*name).unwrap_or(&0.0) - our_shares.get(*name).unwrap_or(&0.0)).abs())
            .sum::<f64>()
            / 2.0;
        eprintln!(
            "node {version}: total-variation distance {distance:.3}\n  V8   {v8_shares:.3?}\n  ours {our_shares:.3?}"
        );
        assert!(distance < 0.10, "node {version}: distance {distance:.3}");
        // The functions that only exist inlined carry real time in both.
        for inlined in ["square", "weigh", "scale"] {
            assert!(our_shares.get(inlined).copied().unwrap_or(0.0) > 0.02, "node {version}: {inlined} {our_shares:?}");
        }
    }
}

/// `--flamegraph` writes a deterministic SVG in which the inlined functions
/// have frames of their own, colored apart from their JIT host, labelled
/// `function file:line`, with counts in milliseconds.
#[test]
fn flamegraph_shows_inlined_functions() {
    let dir = tempdir();
    let render = |name: &str| {
        let svg = dir.join(name);
        let log = log_path(24).display().to_string();
        let jitdump = jitdump_path(24).display().to_string();
        let script = recording_dir(24).join("perf.script.gz").display().to_string();
        let folded =
            v8inline(&["--log", &log, "--jitdump", &jitdump, "--flamegraph", &svg.display().to_string(), &script]);
        (std::fs::read_to_string(svg).unwrap(), folded)
    };
    let (svg, folded) = render("a.svg");
    assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
    // The folded output carries the annotations the colors come from.
    assert!(folded.contains("square /tmp/v8inline-testdata/node24/deep.js:16:16_[i]"), "{folded}");
    // Labels hide the annotations; the inlined frame has its own title,
    // with the full name and its time (cpu-clock periods are nanoseconds).
    assert!(svg.contains("square /tmp/v8inline-testdata/node24/deep.js:16:16 ("), "no inlined square frame");
    assert!(!svg.contains("_[i]"));
    let titles: Vec<&str> = svg.split("<title>").skip(1).filter_map(|rest| rest.split("</title>").next()).collect();
    assert!(titles.iter().all(|title| title.contains(" ms, ")), "a frame count not in ms: {titles:?}");
    let total_ms = svg.split("<title>all (").nth(1).and_then(|rest| rest.split(" ms, 100%)").next()).unwrap();
    assert!(total_ms.replace(',', "").parse::<u64>().unwrap() > 500, "all: {total_ms}");
    assert!(
        svg.contains(">cpu-clock: 1,022 samples, 1.03 s of CPU time; frames under 0.1% not drawn</text>"),
        "subtitle"
    );
    // Labels lead with the function, file name and line.
    assert!(svg.contains(r#"fg:label="square deep.js:16""#), "no square label");
    assert!(svg.contains(r#"fg:label="kernel deep.js:32""#), "no kernel label");
    let (again, _) = render("b.svg");
    assert_eq!(svg, again, "the SVG must not change between runs");
}

/// `jitted-PID-N.so` frames name the process whose jitdump they index: with
/// only another process's jitdump loaded they are passed through exactly as
/// without any, not resolved to that process's code objects.
#[test]
fn injected_frames_of_another_process_pass_through() {
    let script = recording_dir(20).join("perf-inject.script.gz").display().to_string();
    let other_log = log_path(22).display().to_string();
    let other_jitdump = jitdump_path(22).display().to_string();
    let with_other_process = v8inline(&["--log", &other_log, "--jitdump", &other_jitdump, &script]);
    let without_profiles = v8inline(&["--jitdump-dir", "/nonexistent", &script]);
    assert_eq!(with_other_process, without_profiles);
    assert!(with_other_process.contains("jitted-") || with_other_process.contains("JS:"), "JIT frames present");
}

/// `--skip-after` names a JavaScript function whatever its tier: by its
/// name, `NAME FILE:LINE` or its frame's whole name (on node 20's recording
/// kernel ran optimized, `JS:*`, and in Sparkplug code, `JS:^`); every stack
/// through it then starts at it. One that names no frame is said, and is no
/// input problem (`--strict` passes).
#[test]
fn skip_after_names_a_javascript_function_in_any_tier() {
    let perf_script = common::recording_file(20, "perf.script").display().to_string();
    let log = common::log_path(20).display().to_string();
    let jitdump = common::jitdump_path(20).display().to_string();
    let kernel = "/tmp/v8inline-testdata/node20/deep.js:32";
    for wanted in ["kernel", &format!("kernel {kernel}"), &format!("JS:~kernel {kernel}:16")] {
        let output = common::run(&[
            &perf_script,
            "--log",
            &log,
            "--jitdump",
            &jitdump,
            "--strict",
            "--skip-after",
            wanted,
            "--skip-after",
            "kernel /tmp/v8inline-testdata/node20/deep.js:33",
        ]);
        assert!(output.status.success(), "{wanted}: {}", common::stderr(&output));
        assert_eq!(
            common::stderr(&output),
            "v8inline: warning: --skip-after \"kernel /tmp/v8inline-testdata/node20/deep.js:33\" names no frame: no \
             stack was cut (a JavaScript function is named by NAME, NAME FILE:LINE or its frame's whole name, in any \
             tier)\n"
        );
        let folded = String::from_utf8(output.stdout).unwrap();
        let mut cut_at = std::collections::BTreeSet::new();
        for line in folded.lines() {
            let frames: Vec<&str> = line.rsplit_once(' ').unwrap().0.split(';').collect();
            if let Some(position) = frames.iter().position(|frame| frame.contains(&format!("kernel {kernel}:16"))) {
                assert_eq!(position, 0, "{wanted}: {line}");
                cut_at.insert(frames[0]);
            }
        }
        assert_eq!(
            cut_at.into_iter().collect::<Vec<_>>(),
            [format!("JS:*kernel {kernel}:16"), format!("JS:^kernel {kernel}:16")],
            "{wanted}"
        );
    }
}
