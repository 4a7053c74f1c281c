//! Frames named as well as the data allows, in every output (issue 41):
//! node 20's RegExp code keeps its whole source (`(?!...)` and all), and
//! the builtins of a runtime whose binary has no symbols (Deno) are named
//! from its code log's `code-creation,Builtin` records.

mod common;

use std::path::{Path, PathBuf};

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

/// Runs the main job on testdata/regexp (node 20) with `input` and every
/// output, and checks the regexp's whole name in each.
fn regexp_named_whole(input: &[&str], directory: &Path) {
    let recording = testdata("regexp");
    let log = file_starting(&recording, "codspeed-v8-");
    let jitdump = file_starting(&recording, "jit-");
    let path = |name: &str| directory.join(name).to_str().unwrap().to_string();
    let mut args: Vec<String> = input.iter().map(|arg| arg.to_string()).collect();
    args.extend(
        [
            "--log",
            log.to_str().unwrap(),
            "--jitdump",
            jitdump.to_str().unwrap(),
            "-o",
            &path("profile.folded"),
            "--flamegraph",
            &path("flamegraph.svg"),
            "--pprof",
            &path("profile.pb.gz"),
            "--cpuprofile",
            &path("profile.cpuprofile"),
            "--firefox-profile",
            &path("profile.firefox.json"),
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    v8inline(&args);
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
