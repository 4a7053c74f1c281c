//! A word when nothing expands: when most samples of a V8 process that ran
//! JavaScript did not expand, one warning names the likely cause, and
//! `--strict` refuses the run. Each cause is made from the real recordings
//! by mixing them (node 20 and node 22 are different runs with different
//! pids), by removing the `code-source-info` records of a log, by shifting a
//! perf script's times, and with a run recorded with `--max-opt=1`
//! (testdata/interpreted: interpreted and Sparkplug code only). The
//! warning's whole text is checked, through the built binary, on several
//! threads and on one.

mod common;

use std::path::{Path, PathBuf};

use common::{NODE_VERSIONS, gunzip, jitdump_path, log_path, recording_dir, run, stderr, temp_dir};

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// The whole summary of one unexpanded process warning.
fn summary(example: &str) -> String {
    format!(
        "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
         v8inline:   1 V8 process(es) whose JavaScript mostly did not expand into inlined functions, with the likely \
         cause\n\
         v8inline:     {example}\n"
    )
}

/// Runs `args` on 3 threads and on 1: exit 0, folded stacks written and
/// exactly `expected` on standard error; then with `--strict`: the same
/// summary, the failure after it, exit 1, no output.
fn warns_exactly(directory: &Path, args: &[&str], expected: &str) {
    let output_path = directory.join("out.folded");
    let output_text = text(&output_path);
    for threads in ["3", "1"] {
        let mut lenient = args.to_vec();
        lenient.extend(["--threads", threads, "-o", &output_text]);
        let output = run(&lenient);
        assert_eq!(output.status.code(), Some(0), "{lenient:?}: {}", stderr(&output));
        assert_eq!(stderr(&output), expected, "{lenient:?}");
        assert!(std::fs::metadata(&output_path).unwrap().len() > 0, "{lenient:?}: nothing folded");
        std::fs::remove_file(&output_path).unwrap();
    }
    let mut strict = args.to_vec();
    strict.extend(["--strict", "-o", &output_text]);
    let output = run(&strict);
    assert_eq!(output.status.code(), Some(1), "{strict:?}: {}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!("{expected}v8inline: --strict: 1 input problem(s), listed above; no output written\n")
    );
    assert!(!output_path.exists(), "--strict wrote {output_text}");
}

/// `testdata/node<version>/perf.script.gz`.
fn perf_script(version: u32) -> PathBuf {
    recording_dir(version).join("perf.script.gz")
}

#[test]
fn samples_of_another_pid_than_the_jitdump_and_log() {
    let directory = temp_dir("unexpanded", "other-pid");
    let (jitdump, log) = (text(&jitdump_path(20)), text(&log_path(20)));
    let expected = summary(&format!(
        "{jitdump} and {log}: 1037 of 1037 samples that ran JavaScript did not expand: the samples are of pid \
         13278, the jitdump and code log are of pid 13233; give the jitdump and code log of pid 13278 \
         (jit-13278.dump, codspeed-v8-13278.log)"
    ));
    warns_exactly(&directory, &["--log", &log, "--jitdump", &jitdump, &text(&perf_script(22))], &expected);
}

#[test]
fn samples_of_a_pid_without_jitdump_among_several() {
    let directory = temp_dir("unexpanded", "pid-without-jitdump");
    let (jitdump_20, log_20) = (text(&jitdump_path(20)), text(&log_path(20)));
    let (jitdump_22, log_22) = (text(&jitdump_path(22)), text(&log_path(22)));
    let expected = summary(&format!(
        "942 of 942 samples that ran JIT code are of pid 13193, for which no jitdump was given or found: the \
         jitdumps and code logs are {jitdump_20} and {log_20} (pid 13233), {jitdump_22} and {log_22} (pid 13278); \
         give the jitdump and code log of pid 13193 (jit-13193.dump, codspeed-v8-13193.log)"
    ));
    let args = [
        "--log",
        &log_20,
        "--jitdump",
        &jitdump_20,
        "--log",
        &log_22,
        "--jitdump",
        &jitdump_22,
        &text(&perf_script(18)),
    ];
    warns_exactly(&directory, &args, &expected);
}

#[test]
fn code_log_without_code_source_info() {
    let directory = temp_dir("unexpanded", "no-source-info");
    // The node 20 log without its code-source-info lines, as V8 writes it
    // without source positions.
    let log = gunzip(&log_path(20));
    let stripped: Vec<&[u8]> =
        log.split_inclusive(|&byte| byte == b'\n').filter(|line| !line.starts_with(b"code-source-info,")).collect();
    assert_eq!(log.split_inclusive(|&byte| byte == b'\n').count() - stripped.len(), 565);
    let stripped_path = directory.join("codspeed-v8-13233.log");
    std::fs::write(&stripped_path, stripped.concat()).unwrap();
    let stripped_log = text(&stripped_path);
    let expected = summary(&format!(
        "{stripped_log}: 853 of 853 samples that ran JavaScript did not expand: the code log has no \
         code-source-info records (recorded without --log-code?); record with node --log-code, which logs the \
         source positions and inlined functions"
    ));
    let args = ["--log", &stripped_log, "--jitdump", &text(&jitdump_path(20)), &text(&perf_script(20))];
    warns_exactly(&directory, &args, &expected);
}

#[test]
fn code_log_and_jitdump_of_different_runs() {
    let directory = temp_dir("unexpanded", "different-runs");
    // A lone log and a lone jitdump pair up whatever their names.
    let (jitdump, log) = (text(&jitdump_path(20)), text(&log_path(22)));
    let expected = summary(&format!(
        "{jitdump} and {log}: 853 of 853 samples that ran JavaScript did not expand: the code log and the jitdump \
         do not join: 2486 of 2486 code loads of the jitdump have no code-creation of the same address and size in \
         the log (different runs? the log's name says pid 13278, the jitdump is of pid 13233); give the code log \
         and jitdump of the same run"
    ));
    warns_exactly(&directory, &["--log", &log, "--jitdump", &jitdump, &text(&perf_script(20))], &expected);
}

/// `perf script` text with every event line's time `seconds` earlier (the
/// time is the token `SECONDS.MICROSECONDS:`).
fn shift_times(script: &str, seconds: u64) -> String {
    let mut shifted = String::with_capacity(script.len());
    for line in script.split_inclusive('\n') {
        let time = line.split_whitespace().find(|token| {
            token.strip_suffix(':').and_then(|time| time.split_once('.')).is_some_and(|(whole, fraction)| {
                fraction.len() == 6
                    && [whole, fraction].iter().all(|digits| digits.bytes().all(|byte| byte.is_ascii_digit()))
            })
        });
        match time.filter(|_| !line.starts_with(char::is_whitespace)) {
            Some(token) => {
                let (whole, fraction) = token.strip_suffix(':').unwrap().split_once('.').unwrap();
                let earlier = format!("{}.{fraction}:", whole.parse::<u64>().unwrap() - seconds);
                shifted.push_str(&line.replacen(token, &earlier, 1));
            }
            None => shifted.push_str(line),
        }
    }
    shifted
}

#[test]
fn sample_times_before_the_jitdump_loads() {
    let directory = temp_dir("unexpanded", "clock");
    // perf's own clock instead of CLOCK_MONOTONIC: the node 20 samples 400 s
    // earlier than the jitdump's code loads.
    let script = String::from_utf8(gunzip(&perf_script(20))).unwrap();
    let shifted = shift_times(&script, 400);
    assert!(shifted.starts_with("node 13233   121.254550:    1003009 cpu-clock: \n"), "{}", &shifted[..80]);
    let shifted_path = directory.join("perf.script");
    std::fs::write(&shifted_path, shifted).unwrap();
    let (jitdump, log) = (text(&jitdump_path(20)), text(&log_path(20)));
    let expected = summary(&format!(
        "{jitdump} and {log}: 853 of 853 samples that ran JavaScript did not expand: 853 were taken before any code \
         at their address was loaded: the samples span 121.378 s to 122.967 s, the jitdump's code loads 521.307 s \
         to 522.978 s (perf recorded without -k mono, on another clock than the jitdump's CLOCK_MONOTONIC?); \
         record with perf record -k mono"
    ));
    warns_exactly(&directory, &["--log", &log, "--jitdump", &jitdump, &text(&shifted_path)], &expected);
}

#[test]
fn interpreted_and_sparkplug_code_only() {
    let directory = temp_dir("unexpanded", "interpreted");
    let recording = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/interpreted");
    let (jitdump, log) = (text(&recording.join("jit-6272.dump.gz")), text(&recording.join("codspeed-v8-6272.log.gz")));
    let expected = summary(&format!(
        "{jitdump} and {log}: 291 of 291 samples that ran JavaScript did not expand: 291 ran interpreted or \
         Sparkplug code, which inlines nothing (the hot functions were never optimized: a short run, or a flag \
         like --max-opt or --no-opt?); profile a longer run"
    ));
    let args = ["--log", &log, "--jitdump", &jitdump, &text(&recording.join("perf.script.gz"))];
    warns_exactly(&directory, &args, &expected);
}

/// The bundled recordings of one run (node 18 to 26, raw and after `perf
/// inject -j`, and the real app) expand and warn nothing, even though most
/// of their JIT frames are interpreted callers.
#[test]
fn recordings_of_one_run_do_not_warn() {
    let realapp = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/realapp");
    let mut runs: Vec<[PathBuf; 3]> = NODE_VERSIONS
        .iter()
        .flat_map(|&version| {
            ["perf.script.gz", "perf-inject.script.gz"]
                .map(|script| [log_path(version), jitdump_path(version), recording_dir(version).join(script)])
        })
        .collect();
    runs.push([
        realapp.join("codspeed-v8-11811.log.gz"),
        realapp.join("jit-11811.dump.gz"),
        realapp.join("perf.script.gz"),
    ]);
    for [log, jitdump, script] in runs {
        let args = ["--strict", "--log", &text(&log), "--jitdump", &text(&jitdump), &text(&script), "-o", "/dev/null"];
        let output = run(&args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        assert_eq!(stderr(&output), "", "{args:?}");
    }
}
