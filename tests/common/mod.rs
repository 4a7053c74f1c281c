//! Shared helpers for the integration tests: the real recordings in testdata/.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The node versions recorded in testdata/.
pub const NODE_VERSIONS: [u32; 5] = [18, 20, 22, 24, 26];

/// `testdata/node<version>`.
pub fn recording_dir(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/node{version}"))
}

/// The one file in a recording whose name starts with `prefix`.
pub fn recording_file(version: u32, prefix: &str) -> PathBuf {
    let directory = recording_dir(version);
    let mut matches: Vec<PathBuf> = std::fs::read_dir(&directory)
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
