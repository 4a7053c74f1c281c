//! Frames named as well as the data allows, in every output (issue 41):
//! node 20's RegExp code keeps its whole source (`(?!...)` and all), and
//! the builtins of a runtime whose binary has no symbols (Deno) are named
//! from its code log's `code-creation,Builtin` records.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{file_starting, gunzip, temp_dir, v8inline};

/// `testdata/<name>`.
fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name)
}

/// The source of lone-surrogates.js's regular expression, as V8 names its
/// native code (`RegExp:` and the source).
const LONE_SURROGATE_SOURCE: &str =
    r"[\x00-\x7F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]";

/// The samples (perf's period is 1,003,009 ns at -F 997) whose stack holds
/// the regexp's code: counted by hand in testdata/regexp/perf.script.gz
/// (every stack with the code object's address in it).
const REGEXP_SAMPLES_COUNT: u64 = 79 * 1_003_009;

/// The sum of the counts of the folded stacks holding `frame`.
fn count_of_stacks_with(folded: &str, frame: &str) -> u64 {
    folded
        .lines()
        .filter(|line| line.rsplit_once(' ').unwrap().0.split(';').any(|name| name == frame))
        .map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum()
}

/// Runs the main job on `recording` (its code log starts `log_prefix`)
/// with `input`, every output into `directory`, and `extra` flags.
fn fold_with_every_output(
    recording: &Path,
    log_prefix: &str,
    input: &[&str],
    directory: &Path,
    extra: &[&str],
) -> Output {
    let log = file_starting(recording, log_prefix);
    let jitdump = file_starting(recording, "jit-");
    let path = |name: &str| directory.join(name).to_str().unwrap().to_string();
    let mut args: Vec<String> = input.iter().map(|arg| arg.to_string()).collect();
    args.extend([
        "--log".to_string(),
        log.to_str().unwrap().to_string(),
        "--jitdump".to_string(),
        jitdump.to_str().unwrap().to_string(),
        "-o".to_string(),
        path("profile.folded"),
        "--flamegraph".to_string(),
        path("flamegraph.svg"),
        "--pprof".to_string(),
        path("profile.pb.gz"),
        "--cpuprofile".to_string(),
        path("profile.cpuprofile"),
        "--firefox-profile".to_string(),
        path("profile.firefox.json"),
    ]);
    args.extend(extra.iter().map(|arg| arg.to_string()));
    common::run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Runs the main job on testdata/regexp (node 20) with `input` and every
/// output, and checks the regexp's whole name in each.
fn regexp_named_whole(input: &[&str], directory: &Path) {
    let output = fold_with_every_output(&testdata("regexp"), "codspeed-v8-", input, directory, &[]);
    assert!(output.status.success(), "{}", common::stderr(&output));
    let whole = format!("RegExp:{LONE_SURROGATE_SOURCE}");
    let folded = std::fs::read_to_string(directory.join("profile.folded")).unwrap();
    // --flamegraph annotates JIT frames in the folded text too.
    assert_eq!(count_of_stacks_with(&folded, &format!("{whole}_[j]")), REGEXP_SAMPLES_COUNT, "{input:?}");
    assert!(!folded.contains(r"[\uD800-\uDBFF]_[j]"), "a cut name in {input:?}");
    let svg = std::fs::read_to_string(directory.join("flamegraph.svg")).unwrap();
    assert!(svg.contains(&format!("<title>{whole} (")), "{input:?}: the flame graph's tooltip");
    // The timelines and pprof name the function by its source (their
    // JSON escapes the backslashes).
    let json_source = LONE_SURROGATE_SOURCE.replace('\\', "\\\\");
    for timeline in ["profile.cpuprofile", "profile.firefox.json"] {
        let text = std::fs::read_to_string(directory.join(timeline)).unwrap();
        assert!(text.contains(&format!("\"{json_source}\"")), "{input:?}: {timeline}");
    }
    let pprof = gunzip(&directory.join("profile.pb.gz"));
    let needle = LONE_SURROGATE_SOURCE.as_bytes();
    assert!(pprof.windows(needle.len()).any(|window| window == needle), "{input:?}: pprof");
}

#[test]
fn node20_regexp_code_keeps_its_whole_source_from_perf_script() {
    let directory = temp_dir("frame_names", "regexp-perf-script");
    let script = testdata("regexp/perf.script.gz");
    regexp_named_whole(&[script.to_str().unwrap()], &directory);
}

#[test]
fn node20_regexp_code_keeps_its_whole_source_from_perf_data() {
    let directory = temp_dir("frame_names", "regexp-perf-data");
    let perf_data = directory.join("perf.data");
    std::fs::write(&perf_data, gunzip(&testdata("regexp/perf.data.gz"))).unwrap();
    regexp_named_whole(&["--perf-data", perf_data.to_str().unwrap()], &directory);
}

/// The Deno binary testdata/deno-builtins and testdata/esmapp/deno were
/// recorded with, if it is installed at the same path and the same version:
/// the embedded builtins are found in it. `None` after saying why the test
/// is skipped.
fn recorded_deno_or_skip(recording: &Path) -> Option<PathBuf> {
    let deno = PathBuf::from("/opt/deno/node_modules/@deno/linux-x64-glibc/deno");
    let recorded_version = std::fs::read_to_string(recording.join("deno-version.txt")).unwrap();
    let installed_version = std::process::Command::new(&deno)
        .arg("--version")
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned());
    if installed_version.as_deref() != Some(recorded_version.as_str()) {
        eprintln!(
            "SKIPPED: {} is not the recorded {} (`npm install --prefix /opt/deno deno@2.9.6`)",
            deno.display(),
            recorded_version.lines().next().unwrap_or("")
        );
        return None;
    }
    Some(deno)
}

/// The leaf counts of the folded stacks, in samples of perf's period.
fn leaf_samples(folded: &str, period: u64) -> std::collections::BTreeMap<String, u64> {
    let mut leaves = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let leaf = stack.rsplit(';').next().unwrap();
        *leaves.entry(leaf.to_string()).or_default() += count.parse::<u64>().unwrap() / period;
    }
    leaves
}

/// Deno's period at -F 997.
const DENO_PERIOD: u64 = 1_003_009;

/// Runs the main job on testdata/deno-builtins with `input` and every
/// output; checks the builtins are named in each, as native frames.
fn deno_builtins_named(input: &[&str], directory: &Path) {
    let output = fold_with_every_output(&testdata("deno-builtins"), "isolate-", input, directory, &["--stats"]);
    let stderr = common::stderr(&output);
    assert!(output.status.success(), "{stderr}");
    // Counted in perf.script.gz: every `[unknown] (.../deno)` frame whose
    // file address lies in a builtin of the code log, the blob at file
    // offset 0x35cf000 (where the jitdump's builtin code bytes are in the
    // binary).
    assert!(
        stderr.contains("native frames named from the code log (builtins of a binary without symbols): 1910"),
        "{input:?}: {stderr}"
    );
    let folded = std::fs::read_to_string(directory.join("profile.folded")).unwrap();
    let leaves = leaf_samples(&folded, DENO_PERIOD);
    let leaf = |name: &str| leaves.get(name).copied().unwrap_or(0);
    // Native frames, as node's binary names them: no `_[j]`.
    assert_eq!(leaf("Builtins_ForInFilter"), 77, "{input:?}");
    assert_eq!(leaf("Builtins_KeyedLoadIC_Megamorphic"), 54, "{input:?}");
    assert_eq!(leaf("Builtins_KeyedLoadICTrampoline_Megamorphic"), 22, "{input:?}");
    // A bytecode handler: `StaModuleVariable` in the log.
    assert_eq!(leaf("Builtins_StaModuleVariableHandler"), 1, "{input:?}");
    assert!(!folded.contains("Builtins_ForInFilter_[j]"), "{input:?}");
    let svg = std::fs::read_to_string(directory.join("flamegraph.svg")).unwrap();
    assert!(svg.contains("<title>Builtins_ForInFilter ("), "{input:?}: the flame graph");
    for timeline in ["profile.cpuprofile", "profile.firefox.json"] {
        let text = std::fs::read_to_string(directory.join(timeline)).unwrap();
        assert!(text.contains("\"Builtins_KeyedLoadIC_Megamorphic\""), "{input:?}: {timeline}");
    }
    let pprof = gunzip(&directory.join("profile.pb.gz"));
    let needle = b"Builtins_ForInFilter";
    assert!(pprof.windows(needle.len()).any(|window| window == needle), "{input:?}: pprof");
}

#[test]
fn deno_builtins_are_named_from_the_code_log_in_perf_script() {
    let Some(_deno) = recorded_deno_or_skip(&testdata("deno-builtins")) else { return };
    let directory = temp_dir("frame_names", "deno-perf-script");
    let script = testdata("deno-builtins/perf.script.gz");
    deno_builtins_named(&[script.to_str().unwrap()], &directory);
}

#[test]
fn deno_builtins_are_named_from_the_code_log_in_perf_data() {
    let Some(_deno) = recorded_deno_or_skip(&testdata("deno-builtins")) else { return };
    let directory = temp_dir("frame_names", "deno-perf-data");
    let perf_data = directory.join("perf.data");
    std::fs::write(&perf_data, gunzip(&testdata("deno-builtins/perf.data.gz"))).unwrap();
    deno_builtins_named(&["--perf-data", perf_data.to_str().unwrap()], &directory);
}

/// The prettier app on Deno (testdata/esmapp/deno): of its 3,355 samples,
/// 2,102 have a leaf perf names only `[deno]`; 621 of those lie in the
/// embedded builtins and are named, 1,481 (Deno's own Rust and C++ code)
/// stay `[deno]`.
#[test]
fn deno_builtins_of_a_real_app_are_named() {
    let recording = testdata("esmapp/deno");
    let Some(_deno) = recorded_deno_or_skip(&recording) else { return };
    let folded = v8inline(&[
        recording.join("perf.script.gz").to_str().unwrap(),
        "--log",
        file_starting(&recording, "codspeed-v8-").to_str().unwrap(),
        "--jitdump",
        file_starting(&recording, "jit-").to_str().unwrap(),
    ]);
    let leaves = leaf_samples(&folded, DENO_PERIOD);
    assert_eq!(leaves["[deno]"], 1481);
    let builtins: u64 = leaves.iter().filter(|(name, _)| name.starts_with("Builtins_")).map(|(_, count)| count).sum();
    assert_eq!(builtins, 621);
    assert_eq!(leaves["Builtins_LoadIC_Megamorphic"], 139);
}

/// The count under each root frame of folded stacks.
fn root_counts(folded: &str) -> std::collections::BTreeMap<String, u64> {
    let mut roots = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        *roots.entry(stack.split(';').next().unwrap().to_string()).or_default() += count.parse::<u64>().unwrap();
    }
    roots
}

/// `v8inline record -- npm run bench` on node 22 (testdata/esmapp/node22):
/// npm (pid 13041) retitles itself `node`, `npm`, `npm run bench`, and its
/// `sh -c` child (13056) first samples under its parent's name. With pids
/// shown, each process is one root named by its main thread's last name;
/// without, the roots are names, as inferno's.
#[test]
fn a_process_that_retitles_itself_is_one_root() {
    let recording = testdata("esmapp/node22");
    let directory = temp_dir("frame_names", "one-root");
    let perf_data = directory.join("perf.data");
    std::fs::write(&perf_data, gunzip(&recording.join("perf.data.gz"))).unwrap();
    let log = file_starting(&recording, "isolate-");
    let jitdump = file_starting(&recording, "jit-");
    let fold = |extra: &[&str]| {
        let mut args = vec!["--perf-data", perf_data.to_str().unwrap(), "--log", log.to_str().unwrap(), "--jitdump"];
        args.push(jitdump.to_str().unwrap());
        args.extend_from_slice(extra);
        root_counts(&v8inline(&args))
    };
    // Before: npm's samples were under node-13041 (101,303,909),
    // npm-13041 (94,282,846), npm_run_bench-13041 (43,129,387) and
    // libuv-worker-13041 (2,006,018); sh's under npm_run_bench-13056 and
    // sh-13056; the app's under node-13057 and DelayedTaskSche-13057.
    let expected: std::collections::BTreeMap<String, u64> = [
        ("node-13057".to_string(), 5_776_328_831 + 1_003_009),
        ("npm_run_bench-13041".to_string(), 101_303_909 + 94_282_846 + 43_129_387 + 2_006_018),
        ("sh-13056".to_string(), 2 * 1_003_009),
    ]
    .into();
    assert_eq!(fold(&["--pid", "--one-root-per-process"]), expected);
    // --pid alone: inferno's roots, one per name (issue 45).
    let inferno_roots = fold(&["--pid"]);
    assert_eq!(inferno_roots["npm-13041"], 94_282_846);
    assert_eq!(inferno_roots["node-13041"], 101_303_909);
    assert_eq!(inferno_roots["npm_run_bench-13041"], 43_129_387);
    // Per thread: npm's main thread is one root; its other threads keep
    // their own names (node never renamed them).
    let per_thread = fold(&["--tid", "--one-root-per-process"]);
    assert!(per_thread.contains_key("npm_run_bench-13041/13041"), "{per_thread:?}");
    assert!(!per_thread.keys().any(|root| root.starts_with("npm-")), "{per_thread:?}");
    assert_eq!(per_thread.values().sum::<u64>(), expected.values().sum::<u64>());
    // No pids: a root per name, as inferno-collapse-perf names them.
    let by_name = fold(&[]);
    assert_eq!(
        by_name.keys().map(String::as_str).collect::<Vec<_>>(),
        ["DelayedTaskSche", "libuv-worker", "node", "npm", "npm_run_bench", "sh"]
    );
}
