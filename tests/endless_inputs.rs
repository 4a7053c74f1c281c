//! Issue 37: endless or special files as inputs, and the outputs of
//! `repair-jitdump` (a hard link of its input, a full disk, a file size
//! limit). `/dev/zero`, `/dev/urandom` (devices) are refused at once; an
//! endless pipe ends in an error naming it within seconds; a line over the
//! readers' limit is a damaged line, skipped and counted. Each run is
//! bounded in time (`timeout`) and address space (`ulimit -v`, 1 GB).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{file_starting, gunzip, stderr, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_v8inline");

/// The most a run here may take: every input ends in seconds.
const TIME_LIMIT_SECONDS: u64 = 20;

fn esmapp() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/esmapp/node26")
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs `script` in sh with `$V8INLINE` the binary, under `ulimit -v`
/// 1 GB and `timeout`; the output and how long it took.
fn bounded(script: &str) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v 1000000 && {script}"))
        .env("V8INLINE", format!("timeout {TIME_LIMIT_SECONDS} {BINARY}"))
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    eprintln!("{elapsed:.2?}: {script}\n{}", stderr(&output));
    (output, elapsed)
}

/// The esmapp recording's jitdump (repaired), code log and perf script.
struct Inputs {
    jitdump: PathBuf,
    log: PathBuf,
    script: PathBuf,
}

fn inputs(directory: &Path) -> Inputs {
    let jitdump = directory.join("jit-17052.dump");
    let repaired = v8inline::internals::formats::jitdump::repair(&gunzip(&file_starting(&esmapp(), "jit-"))).unwrap();
    std::fs::write(&jitdump, repaired.bytes).unwrap();
    Inputs { jitdump, log: file_starting(&esmapp(), "codspeed-v8-"), script: esmapp().join("perf.script.gz") }
}

#[test]
fn devices_as_any_input_are_refused_at_once() {
    let directory = temp_dir("endless", "devices");
    let Inputs { jitdump, log, script } = inputs(&directory);
    let (jitdump, log, script) = (text(&jitdump), text(&log), text(&script));
    let out = directory.join("out.dump");
    let runs = [
        format!("$V8INLINE --log /dev/zero --jitdump {jitdump} {script}"),
        format!("$V8INLINE --log {log} --jitdump /dev/zero {script}"),
        format!("$V8INLINE --log {log} --jitdump {jitdump} /dev/zero"),
        "$V8INLINE --perf-data /dev/zero".to_string(),
        "$V8INLINE --ticks /dev/zero".to_string(),
        format!("$V8INLINE repair-jitdump /dev/zero -o {}", text(&out)),
        format!("$V8INLINE lookup --log /dev/zero --jitdump {jitdump} 0x1"),
        format!("$V8INLINE debuginfo --log /dev/zero --jitdump {jitdump} {}", text(&directory)),
    ];
    for run in runs {
        let (output, elapsed) = bounded(&run);
        assert_eq!(output.status.code(), Some(1), "{run}: {}", stderr(&output));
        assert_eq!(
            stderr(&output),
            "v8inline: /dev/zero: a character device (such as /dev/zero), not a file or a pipe\n",
            "{run}"
        );
        assert!(elapsed < Duration::from_secs(5), "{run}: {elapsed:?}");
    }
    assert!(!out.exists());
    let (output, _) = bounded(&format!("$V8INLINE --log /dev/urandom --jitdump {jitdump} {script}"));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).starts_with("v8inline: /dev/urandom: a character device"), "{}", stderr(&output));
}

/// `/dev/zero` through a pipe (as `<(cat /dev/zero)` or `cat /dev/zero |`
/// give it): no line end in 1 GiB (a code log, a perf script, on one
/// thread and on several), more than 256 MiB read whole (repair-jitdump,
/// --ticks): an error naming the input, in seconds, in under 1 GB.
#[test]
fn endless_pipes_end_in_an_error_naming_them() {
    let directory = temp_dir("endless", "pipes");
    let Inputs { jitdump, log, script } = inputs(&directory);
    let (jitdump, log, script) = (text(&jitdump), text(&log), text(&script));
    let out = directory.join("out.dump");
    let no_line_end_script = "no line end in 1024 MiB: no perf script text (an endless stream?)";
    let runs = [
        (
            format!("cat /dev/zero | $V8INLINE --log /dev/stdin --jitdump {jitdump} {script}"),
            "/dev/stdin: no line end in 1024 MiB: no code log (an endless stream?)".to_string(),
        ),
        (format!("cat /dev/zero | $V8INLINE --log {log} --jitdump {jitdump}"), format!("-: {no_line_end_script}")),
        (
            format!("cat /dev/zero | $V8INLINE --threads 1 --log {log} --jitdump {jitdump} -"),
            format!("-: {no_line_end_script}"),
        ),
        (
            format!("cat /dev/zero | $V8INLINE --log {log} --jitdump {jitdump} /dev/stdin"),
            format!("/dev/stdin: {no_line_end_script}"),
        ),
        (
            format!("cat /dev/zero | $V8INLINE repair-jitdump /dev/stdin -o {}", text(&out)),
            "/dev/stdin: no regular file, and more than 256 MiB read from it (an endless stream?): give a file"
                .to_string(),
        ),
        (
            "cat /dev/zero | $V8INLINE --ticks /dev/stdin".to_string(),
            "/dev/stdin: no regular file, and more than 256 MiB read from it (an endless stream?): give a file"
                .to_string(),
        ),
    ];
    for (run, message) in runs {
        let (output, elapsed) = bounded(&run);
        assert_eq!(output.status.code(), Some(1), "{run}: {}", stderr(&output));
        assert!(stderr(&output).ends_with(&format!("v8inline: {message}\n")), "{run}: {}", stderr(&output));
        assert!(elapsed < Duration::from_secs(15), "{run}: {elapsed:?}");
    }
    assert!(!out.exists(), "a failed repair leaves no output");
    // A finite pipe (`<(zcat jit.dump.gz)`) is read whole as a file is.
    let (output, _) = bounded(&format!("cat {jitdump} | $V8INLINE repair-jitdump /dev/stdin -o {}", text(&out)));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(jitdump).unwrap(), "a repaired jitdump is repaired as it is");
}

/// A line over 64 MiB is a damaged line: skipped and counted, in a code
/// log (mapped file and stream) and in a perf script (file, one thread and
/// several); `--strict` fails on it. The rest is used.
#[test]
fn a_line_over_the_limit_is_a_damaged_line() {
    let directory = temp_dir("endless", "long-line");
    let Inputs { jitdump, log, script } = inputs(&directory);
    let long = "x".repeat((64 << 20) + 1);
    let mut log_text = gunzip(&log);
    let second_line = log_text.iter().position(|&byte| byte == b'\n').unwrap() + 1;
    log_text.splice(second_line..second_line, format!("{long}\n").into_bytes());
    let long_log = directory.join("codspeed-v8-17052.log");
    std::fs::write(&long_log, &log_text).unwrap();
    drop(log_text);
    let reference = common::v8inline(&["--log", text(&log), "--jitdump", text(&jitdump), text(&script)]);
    let message = format!("{}:2", long_log.display());
    for via_pipe in [false, true] {
        let log_argument = if via_pipe { "/dev/stdin".to_string() } else { text(&long_log).to_string() };
        let run = format!(
            "{}$V8INLINE --log {log_argument} --jitdump {} {}",
            if via_pipe { format!("cat {} | ", text(&long_log)) } else { String::new() },
            text(&jitdump),
            text(&script)
        );
        let (output, _) = bounded(&run);
        assert_eq!(output.status.code(), Some(0), "{run}");
        assert!(String::from_utf8_lossy(&output.stdout) == reference, "{run}: the rest of the log is used");
        let said = stderr(&output);
        let name = if via_pipe { "/dev/stdin:2".to_string() } else { message.clone() };
        assert!(said.contains("1 code-log line(s) skipped"), "{run}: {said}");
        assert!(
            said.contains(&format!(
                "{name}: a line of {} bytes, more than the 64 MiB a line may have: skipped",
                long.len()
            )),
            "{run}: {said}"
        );
        let (strict, _) = bounded(&format!("{run} --strict"));
        assert_eq!(strict.status.code(), Some(1), "{run} --strict");
    }

    let mut script_text = gunzip(&script);
    script_text.splice(0..0, format!("{long}\n").into_bytes());
    let long_script = directory.join("perf.script");
    std::fs::write(&long_script, &script_text).unwrap();
    drop(script_text);
    for threads in ["1", "2"] {
        let run = format!(
            "$V8INLINE --threads {threads} --log {} --jitdump {} {}",
            text(&log),
            text(&jitdump),
            text(&long_script)
        );
        let (output, _) = bounded(&run);
        assert_eq!(output.status.code(), Some(0), "{run}");
        assert!(String::from_utf8_lossy(&output.stdout) == reference, "{run}");
        let said = stderr(&output);
        assert!(said.contains("1 perf-script line(s) skipped: not an event line"), "{run}: {said}");
        // Its place; the example is its start (a mapped file) or what
        // stands for it (a stream).
        assert!(said.contains(&format!("{}:1: \"", long_script.display())), "{run}: {said}");
    }
    // Streamed (standard input): a line well over the limit is dropped as
    // it is read, and what stands for it is the example.
    let mut script_text = gunzip(&script);
    script_text.splice(0..0, format!("{}\n", "x".repeat(80 << 20)).into_bytes());
    std::fs::write(&long_script, &script_text).unwrap();
    drop(script_text);
    for threads in ["1", "2"] {
        let run = format!(
            "cat {} | $V8INLINE --threads {threads} --log {} --jitdump {}",
            text(&long_script),
            text(&log),
            text(&jitdump)
        );
        let (output, _) = bounded(&run);
        assert_eq!(output.status.code(), Some(0), "{run}");
        assert!(String::from_utf8_lossy(&output.stdout) == reference, "{run}");
        let said = stderr(&output);
        assert!(said.contains(":1: \"<v8inline: a line of more than sixty-four MiB, skipped>\"\n"), "{run}: {said}");
    }
}

/// Issue 37: `repair-jitdump IN -o OUT` with OUT a hard link of IN
/// overwrote IN (only paths were compared).
#[test]
fn repair_refuses_an_output_that_is_its_input_by_inode() {
    let directory = temp_dir("endless", "repair-hard-link");
    let Inputs { jitdump, .. } = inputs(&directory);
    let before = std::fs::read(&jitdump).unwrap();
    let link = directory.join("link.dump");
    std::fs::hard_link(&jitdump, &link).unwrap();
    let output = common::run(&["repair-jitdump", text(&jitdump), "-o", text(&link)]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!("v8inline: repair-jitdump does not overwrite its input {}: give another -o\n", jitdump.display())
    );
    assert!(std::fs::read(&jitdump).unwrap() == before);
}

/// Issue 37: a failed repair (a full disk, `ulimit -f`) left a partial
/// output. It now leaves none, and an existing output as it was.
#[test]
fn a_failed_repair_leaves_no_partial_output() {
    let directory = temp_dir("endless", "repair-full");
    let Inputs { jitdump, .. } = inputs(&directory);
    let size = std::fs::metadata(&jitdump).unwrap().len();
    // ulimit -f (blocks of 1024 bytes): half the repaired size.
    let out = directory.join("out.dump");
    let (output, _) =
        bounded(&format!("ulimit -f {} && $V8INLINE repair-jitdump {} -o {}", size / 2048, text(&jitdump), text(&out)));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("File too large"), "{}", stderr(&output));
    assert!(!out.exists());
    let names: Vec<_> = std::fs::read_dir(&*directory).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    std::fs::write(&out, b"an earlier output").unwrap();
    let (output, _) =
        bounded(&format!("ulimit -f {} && $V8INLINE repair-jitdump {} -o {}", size / 2048, text(&jitdump), text(&out)));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(std::fs::read(&out).unwrap(), b"an earlier output");

    // A full tmpfs.
    let small = directory.join("small");
    std::fs::create_dir_all(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&small)
        .status()
        .is_ok_and(|status| status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs (not root?)");
        return;
    }
    let full_out = small.join("out.dump");
    let output = common::run(&["repair-jitdump", text(&jitdump), "-o", text(&full_out)]);
    let listed: Vec<_> = std::fs::read_dir(&small).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    let _ = Command::new("umount").arg(&small).status();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("No space left on device"), "{}", stderr(&output));
    assert!(listed.is_empty(), "{listed:?}");
}
