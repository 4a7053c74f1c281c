//! `compare` on arbitrary inputs: a `u32` length (little-endian) splits the
//! bytes into BASE and HEAD. A side whose first byte is odd is a recording
//! directory (the rest split at `0xFF` bytes into its `benchmarks.json`,
//! `recording.json`, whole-run `profile.folded` and one benchmark's
//! `profile.folded`, at the `directory` its JSON names if that is
//! `b`); a side whose first byte is 3 modulo 4 is a side directory as
//! `v8inline bench` writes it (the rest split at the first `0xFE` into its
//! `runs.json` and up to three runs `run-01`… split at `0xFD`, each a
//! recording directory as above); else one file (folded stacks or a JSON
//! report). Every format and
//! the differential flame graphs and the page are rendered: an error is fine, a panic is
//! not; the markdown stays under GitHub's comment limit.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use v8inline::{CompareOptions, ComparisonFormat, compare_files};

fuzz_target!(|bytes: &[u8]| {
    let Some((length, rest)) = bytes.split_first_chunk::<4>() else { return };
    let length = (u32::from_le_bytes(*length) as usize).min(rest.len());
    let (base_bytes, head_bytes) = rest.split_at(length);
    let work = std::env::temp_dir().join(format!("v8inline-fuzz-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let base = write_side(&work.join("base"), base_bytes);
    let head = write_side(&work.join("head"), head_bytes);
    for format in [ComparisonFormat::Text, ComparisonFormat::Markdown, ComparisonFormat::Github] {
        let mut options = CompareOptions::new(base.clone(), head.clone());
        options.format = format;
        options.flame_graph = format == ComparisonFormat::Text;
        // The page too (its charts on any figures).
        options.html = (format == ComparisonFormat::Markdown).then(|| work.join("report.html"));
        options.source_root = Some(work.clone());
        if let Ok(comparison) = compare_files(&options) {
            if format == ComparisonFormat::Markdown {
                assert!(comparison.text.len() < 65_536);
            }
            if format == ComparisonFormat::Github {
                assert!(comparison.text.lines().filter(|line| line.starts_with("::warning")).count() <= options.top);
            }
        }
    }
});

/// Writes one side: a side directory of runs, a recording directory or a
/// file.
fn write_side(path: &Path, bytes: &[u8]) -> PathBuf {
    match bytes.split_first() {
        Some((first, rest)) if first % 4 == 3 => {
            let mut parts = rest.splitn(2, |byte| *byte == 0xFE);
            let runs_json = parts.next().unwrap_or_default();
            std::fs::create_dir_all(path).unwrap();
            std::fs::write(path.join("runs.json"), runs_json).unwrap();
            for (index, run) in parts.next().unwrap_or_default().split(|byte| *byte == 0xFD).take(3).enumerate() {
                write_recording(&path.join(format!("run-{:02}", index + 1)), run);
            }
            path.to_owned()
        }
        Some((first, rest)) if first % 2 == 1 => {
            write_recording(path, rest);
            path.to_owned()
        }
        _ => {
            let file = path.with_extension("folded");
            std::fs::write(&file, bytes).unwrap();
            file
        }
    }
}

/// Writes a recording directory: `benchmarks.json`, `recording.json`, the
/// whole run's and benchmark `b`'s `profile.folded`, split at `0xFF`.
fn write_recording(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.join("b")).unwrap();
    let mut parts = bytes.split(|byte| *byte == 0xFF);
    for name in ["benchmarks.json", "recording.json", "profile.folded", "b/profile.folded"] {
        std::fs::write(path.join(name), parts.next().unwrap_or_default()).unwrap();
    }
}
