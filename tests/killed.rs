//! Workers killed by a signal lose none of their sampled JavaScript, on the
//! real recordings of `testdata/killed` (`testdata/killed/record.sh`): per
//! runtime (node 18, 20, 22, 24, 26 and Deno), one perf recording of a
//! parent that spawns deep.js eight times in turn, twice left to exit on its
//! own and six times killed (SIGTERM, then SIGKILL, each at a random early,
//! mid-run and late moment). A killed child's jitdump ends at its last 4 KiB
//! flush; its code log is whole, and gives what the jitdump lost.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::gunzip;
use v8inline::internals::diagnostics::WarningKind;
use v8inline::internals::model::timeline::Timeline;
use v8inline::internals::v8::expand::ProcessSamples;
use v8inline::{CodeLogOptions, FoldOptions, FoldedProfile, FrameKind, SampleInput};

/// The runtimes recorded in testdata/killed.
const RUNTIMES: [&str; 6] = ["node18", "node20", "node22", "node24", "node26", "deno"];

/// `testdata/killed/<runtime>`.
fn recording(runtime: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/killed").join(runtime)
}

/// How a child of the recording ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// It exited on its own.
    Exited,
    /// The parent sent SIGTERM after this many milliseconds.
    Terminated { millis: u64 },
    /// The parent sent SIGKILL after this many milliseconds.
    Killed { millis: u64 },
}

/// A child of the recording, from `children.txt`.
#[derive(Debug, Clone, Copy)]
struct Child {
    pid: u32,
    ending: Ending,
}

/// `children.txt`: `PID SIGNAL MILLIS EXIT_CODE EXIT_SIGNAL` per child.
fn children(runtime: &str) -> Vec<Child> {
    let text = std::fs::read_to_string(recording(runtime).join("children.txt")).unwrap();
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let millis = fields[2].parse().unwrap();
            let ending = match fields[1] {
                "none" => Ending::Exited,
                "SIGTERM" => Ending::Terminated { millis },
                "SIGKILL" => Ending::Killed { millis },
                other => panic!("{runtime}: unknown signal {other}"),
            };
            // The child died of the signal it was sent, or exited with 0.
            let expected_exit = match ending {
                Ending::Exited => ["0", "null"],
                Ending::Terminated { .. } => ["null", "SIGTERM"],
                Ending::Killed { .. } => ["null", "SIGKILL"],
            };
            assert_eq!(fields[3..], expected_exit, "{runtime}: {line}");
            Child { pid: fields[0].parse().unwrap(), ending }
        })
        .collect()
}

/// The files of the recording whose names start with `prefix`.
fn files(runtime: &str, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(recording(runtime))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    found.sort();
    found
}

/// The jitdump of a child.
fn jitdump_of(runtime: &str, pid: u32) -> PathBuf {
    recording(runtime).join(format!("jit-{pid}.dump.gz"))
}

/// A JavaScript function: name and script.
type JsFunction = (String, String);

/// One sample of a child: the function its innermost JavaScript frame ran
/// (`None` when it ran none).
struct ChildSample {
    function: Option<JsFunction>,
}

/// The whole recording folded once, every child's logs and jitdump given.
struct Folded {
    profile: FoldedProfile,
}

fn fold(runtime: &str) -> Folded {
    let mut code_logs = CodeLogOptions::default();
    code_logs.logs = files(runtime, "isolate-");
    code_logs.jitdumps = files(runtime, "jit-");
    let mut options = FoldOptions::default();
    options.code_logs = code_logs;
    options.timeline = true;
    let input = SampleInput::PerfData(recording(runtime).join("perf.data.gz"));
    let profile = v8inline::fold(&input, &options).unwrap_or_else(|error| panic!("{runtime}: {error}"));
    Folded { profile }
}

impl Folded {
    /// The counts of a child's samples that ran JavaScript.
    fn process(&self, pid: u32) -> &ProcessSamples {
        let processes = &self.profile.expansion().processes;
        processes.iter().find(|process| process.pid == Some(pid)).unwrap_or_else(|| panic!("no process {pid}"))
    }

    /// A child's samples, in time order.
    fn samples(&self, pid: u32) -> Vec<ChildSample> {
        let timeline: &Timeline = self.profile.timeline().expect("a timeline was asked for");
        timeline
            .samples
            .iter()
            .filter(|sample| timeline.thread(sample.thread).pid == Some(pid))
            .map(|sample| ChildSample {
                function: timeline.frames(sample.stack).find(|frame| is_javascript(frame.kind)).map(|frame| {
                    let function = timeline.frames.function(frame.function);
                    (function.name.clone(), function.file.clone().unwrap_or_default())
                }),
            })
            .collect()
    }
}

/// Whether a frame is a JavaScript function's (of any tier, or inlined).
fn is_javascript(kind: FrameKind) -> bool {
    matches!(
        kind,
        FrameKind::Interpreted | FrameKind::Sparkplug | FrameKind::Maglev | FrameKind::TurboFan | FrameKind::Inlined
    )
}

/// Self counts per JavaScript function of the first `count` samples (CPU
/// time: on a busy machine the wall time a child ran says little of how far
/// it got).
fn self_counts(samples: &[ChildSample], count: usize) -> BTreeMap<JsFunction, u64> {
    let mut counts = BTreeMap::new();
    for sample in samples.iter().take(count) {
        if let Some(function) = &sample.function {
            *counts.entry(function.clone()).or_default() += 1;
        }
    }
    counts
}

/// Total-variation distance between the shares of two counts: half the L1
/// distance, 0 for the same shares, 1 for disjoint ones.
fn total_variation(a: &BTreeMap<JsFunction, u64>, b: &BTreeMap<JsFunction, u64>) -> f64 {
    let (total_a, total_b) = (a.values().sum::<u64>() as f64, b.values().sum::<u64>() as f64);
    assert!(total_a > 0.0 && total_b > 0.0, "no JavaScript samples");
    let share = |counts: &BTreeMap<JsFunction, u64>, total: f64, function: &JsFunction| {
        counts.get(function).copied().unwrap_or(0) as f64 / total
    };
    let functions: BTreeSet<&JsFunction> = a.keys().chain(b.keys()).collect();
    functions.iter().map(|function| (share(a, total_a, function) - share(b, total_b, function)).abs()).sum::<f64>()
        / 2.0
}

/// How far the killed child's shares may be from the unkilled runs': the
/// mean of its distances to the two is at most this many times the distance
/// between the two unkilled runs over the same window (the V8 noise floor:
/// two runs of one program, each its own optimizer's choices and perf's
/// sampling), plus [`FLOOR_SLACK`]. Measured on the committed recordings:
/// see [`killed_children_profile_as_unkilled_ones`].
const WITHIN_FLOOR: f64 = 1.5;

/// Added to the floor: over a short window (an early kill leaves a few
/// hundred samples) two unkilled runs can agree by chance far better than
/// sampling noise allows a third to.
const FLOOR_SLACK: f64 = 0.05;

/// The least share of a killed child's JavaScript samples that must be named.
const NAMED_AT_LEAST: f64 = 0.99;

/// Every child killed by SIGTERM or SIGKILL, early, mid-run or late, on
/// every runtime: at least 99 % of its JavaScript samples named (resolved to
/// a code object of the jitdump or, past its cut, of the code log), its
/// expanded self shares per function within the noise floor of the two
/// unkilled runs over as many samples from their start, and not a warning
/// about the input (only, where it applies, about the machine reading it):
/// each cut jitdump is a note.
///
/// The samples named from the code log alone are what a reader of the
/// jitdump alone loses: their innermost JavaScript frames become `[unknown]`
/// and each counts for its caller (the top-level script). On every runtime
/// some killed child had more of them than the bound allows, so the bound
/// tells a profile with the code log from one without it.
///
/// Measured on the committed recordings (killed child vs the two unkilled
/// runs, mean total-variation distance / floor between the two unkilled
/// runs; samples from the code log alone): every killed child 100 % named;
/// node 18: 0.161/0.158 (0 %), 0.098/0.123 (0 %), 0.054/0.049 (96 %) by
/// SIGTERM, 0.141/0.163 (86 %), 0.079/0.116 (0 %), 0.050/0.045 (95 %) by
/// SIGKILL; node 20: 0.121/0.155, 0.084/0.081, 0.037/0.029 (0 % each),
/// 0.208/0.297 (75 %), 0.072/0.089 (0 %), 0.045/0.030 (97 %); node 22:
/// 0.079/0.106 (0 %), 0.037/0.055 (97 %), 0.036/0.054 (98 %), 0.048/0.081
/// (97 %), 0.058/0.039 (0 %), 0.032/0.058 (26 %); node 24: 0.068/0.089 (95
/// %), 0.036/0.047 (59 %), 0.036/0.036 (71 %), 0.064/0.074 (0 %),
/// 0.054/0.041 (63 %), 0.036/0.032 (78 %); node 26: 0.120/0.105 (83 %),
/// 0.031/0.038 (88 %), 0.031/0.019 (97 %), 0.059/0.088 (77 %), 0.042/0.034
/// (94 %), 0.052/0.026 (97 %); Deno: 0.189/0.241 (0 %), 0.104/0.110 (84 %),
/// 0.081/0.077 (96 %), 0.279/0.368 (71 %), 0.142/0.182 (79 %), 0.073/0.089
/// (91 %). A child whose hot code the jitdump had flushed before the kill
/// (later code pushed it out) lost nothing.
#[test]
fn killed_children_profile_as_unkilled_ones() {
    for runtime in RUNTIMES {
        // The largest share of a killed child's samples named from the code
        // log alone, beside the bound of that child.
        let mut most_from_log: Option<(f64, f64)> = None;
        let children = children(runtime);
        let folded = fold(runtime);
        let diagnostics = folded.profile.diagnostics();
        // Nothing is wrong with the input. Read on another machine than the
        // one that recorded it, its kernel and vDSO frames are not named, and
        // that is said (tests/machine_identity.rs checks that it changes none
        // of the figures below).
        let input_problems: Vec<WarningKind> =
            diagnostics.kinds().map(|(kind, _)| kind).filter(|kind| !kind.is_about_the_reading_machine()).collect();
        assert!(input_problems.is_empty(), "{runtime}: {input_problems:?}:\n{diagnostics}");
        let messages = diagnostics.to_string();
        let unkilled: Vec<Child> = children.iter().copied().filter(|child| child.ending == Ending::Exited).collect();
        let [first, second] = unkilled[..] else { panic!("{runtime}: two unkilled children expected") };
        let first_samples = folded.samples(first.pid);
        let second_samples = folded.samples(second.pid);
        for child in children.iter().filter(|child| child.ending != Ending::Exited) {
            let pid = child.pid;
            let jitdump = gunzip(&jitdump_of(runtime, pid));
            assert_eq!(jitdump.len() % 4096, 0, "{runtime}: {pid}'s jitdump is not cut at a flush");
            let note = messages
                .lines()
                .find(|line| line.contains(&format!("jit-{pid}.dump.gz: ")))
                .unwrap_or_else(|| panic!("{runtime}: no note on {pid}'s jitdump:\n{messages}"));
            assert!(note.starts_with("v8inline: note: "), "{note}");
            assert!(note.ends_with("every sampled frame of the process resolved"), "{note}");

            let process = folded.process(pid);
            let total = process.total();
            let unnamed = process.unknown_address + process.unknown_code_index;
            let named = 1.0 - unnamed as f64 / total as f64;

            // Up to the kill: as many samples (of CPU time) as the killed child had.
            let samples = folded.samples(pid);
            let until = samples.len();
            let killed = self_counts(&samples, until);
            let (first_counts, second_counts) =
                (self_counts(&first_samples, until), self_counts(&second_samples, until));
            let floor = total_variation(&first_counts, &second_counts);
            let (to_first, to_second) =
                (total_variation(&killed, &first_counts), total_variation(&killed, &second_counts));
            let mean = (to_first + to_second) / 2.0;
            eprintln!(
                "{runtime} {:?}: {total} JavaScript samples of {until}, {:.2} % named ({} from the code log \
                 alone, {:.1} %), TVD to the unkilled runs {to_first:.3} / {to_second:.3} (mean {mean:.3}), floor \
                 {floor:.3}",
                child.ending,
                named * 100.0,
                process.from_code_log,
                process.from_code_log as f64 * 100.0 / total as f64,
            );
            assert!(total >= 50, "{runtime}: {pid} ({:?}) ran too little JavaScript to judge: {total}", child.ending);
            assert!(named >= NAMED_AT_LEAST, "{runtime} {:?}: {unnamed} of {total} not named", child.ending);
            let bound = WITHIN_FLOOR * floor + FLOOR_SLACK;
            assert!(mean <= bound, "{runtime} {:?}: {mean:.3} from the unkilled runs, floor {floor:.3}", child.ending);
            let from_log = process.from_code_log as f64 / total as f64;
            if most_from_log.is_none_or(|(most, _)| from_log > most) {
                most_from_log = Some((from_log, bound));
            }
        }
        let (most, bound) = most_from_log.unwrap();
        assert!(most > bound, "{runtime}: no killed child lost more to the cut ({most:.3}) than the bound {bound:.3}");
    }
}

/// `v8inline record` of a shell that kills its node children as test
/// runners do, with SIGTERM and SIGKILL (node on PATH, live): each killed
/// child's jitdump is a note, not a warning, every sampled frame resolved,
/// and `--strict` passes.
#[test]
fn record_of_killed_children_passes_strict() {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason})");
        return;
    }
    let directory = std::env::temp_dir().join(format!("v8inline-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let killed = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/killed");
    std::fs::copy(killed.join("steady.js"), directory.join("steady.js")).unwrap();
    std::fs::copy(killed.join("../programs/lib.js"), directory.join("lib.js")).unwrap();
    let script = "for signal in TERM KILL; do node steady.js 2500 & child=$!; sleep 1.5; kill -$signal $child; \
                  wait $child; done; exit 0";
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(&directory)
        .args(["record", "--strict", "--stats", "--output-dir", "out", "--", "sh", "-c", script])
        .output()
        .unwrap();
    let messages = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{messages}");
    assert!(!messages.contains("v8inline: warning"), "{messages}");
    let jitdumps: Vec<String> = std::fs::read_dir(directory.join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("jit-") && name.ends_with(".dump"))
        .collect();
    assert_eq!(jitdumps.len(), 2, "{jitdumps:?}");
    for jitdump in jitdumps {
        let note = messages
            .lines()
            .find(|line| line.contains(&format!("/out/{jitdump}: ")))
            .unwrap_or_else(|| panic!("no note on {jitdump}:\n{messages}"));
        assert!(note.starts_with("v8inline: note: "), "{note}");
        assert!(note.ends_with("every sampled frame of the process resolved"), "{note}");
    }
    assert!(messages.contains("v8inline:   passed through, address in no code object: 0\n"), "{messages}");
    let _ = std::fs::remove_dir_all(&directory);
}

/// V8's own ticks (`node --prof`, no perf, no jitdump) of a child killed
/// with SIGKILL: its log is whole to its last line, so `--ticks` names and
/// expands every tick, with `--strict` (node on PATH, live).
#[test]
fn ticks_of_a_killed_child_all_resolve() {
    let directory = std::env::temp_dir().join(format!("v8inline-killed-ticks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let killed = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/killed");
    std::fs::copy(killed.join("steady.js"), directory.join("steady.js")).unwrap();
    std::fs::copy(killed.join("../programs/lib.js"), directory.join("lib.js")).unwrap();
    let Ok(mut child) = std::process::Command::new("node")
        .current_dir(&directory)
        .args(["--prof", "--log-code", "--logfile=prof-%p.log", "steady.js", "2500"])
        .stdout(std::process::Stdio::null())
        .spawn()
    else {
        eprintln!("SKIPPED: no node on PATH");
        return;
    };
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let log = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().ends_with(&format!("-prof-{}.log", child.id())))
        .expect("the child's --prof log");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .args(["--ticks", &log.display().to_string(), "--strict", "--stats"])
        .output()
        .unwrap();
    let messages = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{messages}");
    assert!(!messages.contains("warning"), "{messages}");
    assert!(messages.contains("v8inline:   passed through, address in no code object: 0\n"), "{messages}");
    let folded = String::from_utf8(output.stdout).unwrap();
    let inlined: u64 = folded
        .lines()
        .filter(|line| line.contains("JS:*kernel ") && line.contains(";JS:*combine "))
        .map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert!(inlined > 100, "{folded}");
    let _ = std::fs::remove_dir_all(&directory);
}

/// `repair-jitdump` of a killed child's cut jitdump (node 26, SIGKILL at
/// 522 ms): the code log beside it is found, the code objects created
/// after the cut are named as the log's alone (no jitted .so can hold
/// them), the cut is a warning naming its byte offset, and the copy keeps
/// every byte.
#[test]
fn repair_jitdump_of_a_cut_jitdump_names_what_only_the_log_has() {
    let pid = 15156;
    assert!(children("node26").iter().any(|child| child.pid == pid && child.ending == Ending::Killed { millis: 522 }));
    let directory = common::temp_dir("killed", "repair");
    let jitdump = directory.join(format!("jit-{pid}.dump"));
    std::fs::write(&jitdump, gunzip(&jitdump_of("node26", pid))).unwrap();
    let log = files("node26", "isolate-")
        .into_iter()
        .find(|path| path.to_string_lossy().contains(&format!("-{pid}-")))
        .unwrap();
    let log_name = log.file_name().unwrap().to_string_lossy().trim_end_matches(".gz").to_string();
    std::fs::write(directory.join(&log_name), gunzip(&log)).unwrap();
    let repaired = directory.join("repaired.dump");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(&*directory)
        .args(["repair-jitdump", &format!("jit-{pid}.dump"), "-o", "repaired.dump"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "note: jit-{pid}.dump: 1 code object(s) created after the cut are only in its process's code log \
             ./{log_name}: no record of the jitdump holds their code bytes"
        )),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("jit-{pid}.dump: byte offset 2563039: expected a whole record of 3152 bytes, the file ends 1057 bytes later (cut short)")), "{stderr}");
    assert_eq!(std::fs::read(&repaired).unwrap(), std::fs::read(&jitdump).unwrap());
}
