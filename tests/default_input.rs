//! The command as users type it: `v8inline --log LOG --jitdump DUMP` in a
//! terminal, in the directory of a recording, without `perf script |`.
//! Standard input is then a terminal (a pseudo-terminal made by util-linux
//! `script`), so v8inline reads `./perf.data` as `--perf-data ./perf.data`
//! would and says so in one line; without `./perf.data` it exits 2 with a
//! usage message. Either way it returns at once instead of waiting on the
//! terminal: each run is killed and fails the test after a bound.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{gunzip, temp_dir};

/// How long a run may take before it counts as waiting on the terminal.
const BOUND: Duration = Duration::from_secs(30);

/// The bundled perf.data recording, decompressed into `directory` under its
/// recorded names: perf.data, codspeed-v8-25489.log, jit-25489.dump.
fn unpack_recording(directory: &Path, with_perf_data: bool) {
    let recording = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data");
    let mut names = vec!["codspeed-v8-25489.log", "jit-25489.dump"];
    if with_perf_data {
        names.push("perf.data");
    }
    for name in names {
        let bytes = gunzip(&recording.join(format!("{name}.gz")));
        std::fs::write(directory.join(name), bytes).unwrap();
    }
}

/// The documented command, as a shell would run it.
fn documented_command() -> String {
    format!("'{}' --log codspeed-v8-25489.log --jitdump jit-25489.dump", env!("CARGO_BIN_EXE_v8inline"))
}

/// Runs the shell command `command` in `directory` under `script`, whose
/// pseudo-terminal is its standard input, standard output and standard
/// error, with nothing typed on it; returns what the terminal showed
/// (newlines as `\n`) and the exit code. Fails if it takes longer than
/// [`BOUND`].
fn run_in_terminal(directory: &Path, command: &str) -> (String, Option<i32>) {
    let started = Instant::now();
    let mut child = Command::new("script")
        .args(["--quiet", "--return", "--command", command, "/dev/null"])
        .current_dir(directory)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script (Debian package bsdutils) runs commands in a pseudo-terminal");
    // The user's keyboard: open, nothing typed (script would pass an end of
    // file on to the terminal).
    let keyboard = child.stdin.take().unwrap();
    // Read while it runs: a full pipe would stop it.
    let read_all = |mut stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            stream.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let shown = read_all(Box::new(child.stdout.take().unwrap()));
    let errors = read_all(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BOUND {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "{command}: still running after {BOUND:?} (waiting on the terminal?); it showed:\n{}",
                String::from_utf8_lossy(&shown.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(keyboard);
    assert_eq!(String::from_utf8_lossy(&errors.join().unwrap()), "", "script's own errors");
    (String::from_utf8(shown.join().unwrap()).unwrap().replace("\r\n", "\n"), status.code())
}

/// Runs v8inline in `directory` with standard input not a terminal.
fn run_in(directory: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).current_dir(directory).output().unwrap()
}

#[test]
fn reads_perf_data_in_a_terminal() {
    let directory = temp_dir("default-input", "with-perf-data");
    unpack_recording(&directory, true);
    // Standard error to a file: its first line is the note, the rest is what
    // the explicit --perf-data run prints (this machine's binaries and kernel
    // may differ from the recording's: the same warnings either way).
    let (shown, exit_code) = run_in_terminal(&directory, &format!("{} 2>stderr.txt", documented_command()));
    let explicit = run_in(
        &directory,
        &["--log", "codspeed-v8-25489.log", "--jitdump", "jit-25489.dump", "--perf-data", "./perf.data"],
    );
    assert_eq!(explicit.status.code(), Some(0), "{}", String::from_utf8_lossy(&explicit.stderr));
    let folded = String::from_utf8(explicit.stdout).unwrap();
    assert!(folded.contains(";JS:*kernel "), "expanded folded stacks expected, got:\n{folded}");
    assert_eq!(exit_code, Some(0), "{shown}");
    assert_eq!(shown, folded);
    let message = std::fs::read_to_string(directory.join("stderr.txt")).unwrap();
    assert_eq!(
        message,
        format!(
            "v8inline: no PERF_SCRIPT given and standard input is a terminal: reading ./perf.data as --perf-data \
             ./perf.data would\n{}",
            String::from_utf8_lossy(&explicit.stderr)
        )
    );
}

#[test]
fn usage_in_a_terminal_without_perf_data() {
    let directory = temp_dir("default-input", "without-perf-data");
    unpack_recording(&directory, false);
    let (shown, exit_code) = run_in_terminal(&directory, &documented_command());
    assert_eq!(exit_code, Some(2), "{shown}");
    assert_eq!(
        shown,
        "v8inline: no samples to read: standard input is a terminal and there is no ./perf.data. Give samples one of \
         three ways:\n  \
         perf script | v8inline --log LOG --jitdump DUMP          a perf script on standard input\n  \
         v8inline --log LOG --jitdump DUMP PERF_SCRIPT            a perf script file (.gz too)\n  \
         v8inline --log LOG --jitdump DUMP --perf-data perf.data  a perf.data, read directly\n\
         Or record a program and read it in one step: v8inline record -- node app.js (or npm run bench, deno run app.js)\n"
    );
}

#[test]
fn reads_standard_input_when_it_is_not_a_terminal() {
    let directory = temp_dir("default-input", "pipe");
    unpack_recording(&directory, true);
    // A pipe that closes at once: no samples, not ./perf.data.
    let output = run_in(&directory, &["--log", "codspeed-v8-25489.log", "--jitdump", "jit-25489.dump"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert_eq!(output.stdout, b"");
}
