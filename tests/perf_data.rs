//! `--perf-data`: perf.data read directly must fold exactly as `perf script`
//! of the same recording does (`testdata/perf-data`, written by
//! `testdata/record.sh perf-data`, its `perf record -z` twin
//! `testdata/perf-data-z`, and the real npm-package app of
//! `testdata/realapp`, written by its `record.sh`).
//!
//! Native frames are named from the binaries on this machine, as perf script
//! names them when it runs; the recording keeps the build ids perf saw, and
//! files that changed or are missing since are not symbolized (with a warning).
//! So the byte-for-byte comparison holds where the recording was made;
//! elsewhere the JavaScript frames are compared.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data")
}

fn file_starting_with(prefix: &str) -> String {
    file_in(&recording(), prefix)
}

fn file_in(directory: &Path, prefix: &str) -> String {
    let path = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", directory.display()));
    path.display().to_string()
}

/// Runs `v8inline` with `args`; returns (success, stdout, stderr).
fn v8inline(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(args).output().unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn fold_in(directory: &Path, input: &[&str], extra: &[&str]) -> (String, String) {
    let log = file_in(directory, "codspeed-v8-");
    let jitdump = file_in(directory, "jit-");
    let mut args = vec!["--log", &log, "--jitdump", &jitdump];
    args.extend_from_slice(extra);
    args.extend_from_slice(input);
    let (success, folded, errors) = v8inline(&args);
    assert!(success, "{args:?}: {errors}");
    (folded, errors)
}

fn is_js_frame(frame: &str) -> bool {
    ["JS:", "LazyCompile:", "Function:", "Eval:", "Script:"].iter().any(|tag| frame.starts_with(tag))
}

/// Folded stacks reduced to their JavaScript frames, summed.
fn javascript_only(folded: &str) -> std::collections::BTreeMap<String, u64> {
    let mut stacks = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = stack.split(';').filter(|frame| is_js_frame(frame)).collect();
        *stacks.entry(frames.join(";")).or_default() += count.parse::<u64>().unwrap();
    }
    stacks
}

/// Folds the recording in `directory` from its perf.data (on two threads and
/// on one) and from its perf script with each option set, and compares: byte
/// for byte where the
/// recording was made, the JavaScript frames elsewhere. `inlined` is a frame
/// an expanded stack must hold.
fn assert_perf_data_folds_as_perf_script(directory: &Path, inlined: &str) {
    let perf_data = file_in(directory, "perf.data");
    let perf_script = file_in(directory, "perf.script");
    for extra in [&[][..], &["--all"], &["--tid", "--addrs"]] {
        let (from_data, notes) = fold_in(directory, &["--perf-data", &perf_data], extra);
        // Read on one thread and folded on another, or all on one: the same.
        let one_thread = [extra, &["--threads", "1"][..]].concat();
        let (from_data_on_one_thread, notes_on_one_thread) =
            fold_in(directory, &["--perf-data", &perf_data], &one_thread);
        assert!(from_data == from_data_on_one_thread, "{extra:?}: perf.data folds differently on one thread");
        assert_eq!(notes, notes_on_one_thread, "{extra:?}");
        let (from_script, _) = fold_in(directory, &[&perf_script], extra);
        // perf script prints only thread ids by default, so inferno names the
        // root `node-?/TID`; perf.data has the pid.
        let pid = file_in(directory, "jit-").rsplit('-').next().unwrap().split('.').next().unwrap().to_string();
        let from_script = from_script.replace("node-?/", &format!("node-{pid}/"));
        assert!(from_data.contains(inlined), "no {inlined} frame");
        let other_machine = ["build id differs", "of another kernel", "no symbols", "no kernel symbols"];
        if other_machine.iter().any(|sign| notes.contains(sign)) {
            // Not the machine of the recording: compare what does not depend on it.
            assert_eq!(javascript_only(&from_data), javascript_only(&from_script), "{extra:?}");
        } else {
            let differing: Vec<(&str, &str)> =
                from_data.lines().zip(from_script.lines()).filter(|(data, script)| data != script).take(3).collect();
            assert!(
                from_data == from_script,
                "{} {extra:?}: perf.data and perf script fold differently ({} and {} lines), e.g. {differing:?}",
                directory.display(),
                from_data.lines().count(),
                from_script.lines().count()
            );
        }
    }
}

#[test]
fn perf_data_folds_as_perf_script_does() {
    assert_perf_data_folds_as_perf_script(&recording(), "square /tmp/v8inline-testdata/perf-data/deep.js");
}

/// `PERF_RECORD_COMPRESSED`: records compressed with zstd (`perf record -z`).
const COMPRESSED: u32 = 81;
/// `PERF_RECORD_SAMPLE`.
const SAMPLE: u32 = 9;

/// The types of the records of a perf.data's data section as they lie in the
/// file (`perf_file_header`: the data section's offset and size at byte 40;
/// records: `type: u32, misc: u16, size: u16`).
fn record_types_in_file(bytes: &[u8]) -> Vec<u32> {
    let word = |offset: usize| u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap()) as usize;
    let (mut offset, end) = (word(40), word(40) + word(48));
    let mut types = Vec::new();
    while offset < end {
        types.push(u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap()));
        offset += u16::from_le_bytes(bytes[offset + 6..offset + 8].try_into().unwrap()) as usize;
    }
    assert_eq!(offset, end);
    types
}

#[test]
fn perf_data_recorded_with_z_folds_as_perf_script_does() {
    // `perf record -z` (testdata/record.sh perf-data-z): every sample is
    // inside a zstd-compressed record.
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data-z");
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(directory.join("perf.data.gz")).unwrap()),
        &mut bytes,
    )
    .unwrap();
    let types = record_types_in_file(&bytes);
    assert!(types.contains(&COMPRESSED), "{types:?}");
    assert!(!types.contains(&SAMPLE), "{types:?}");
    assert_perf_data_folds_as_perf_script(&directory, "square /tmp/v8inline-testdata/perf-data-z/deep.js");
}

#[test]
fn perf_data_of_a_real_app_folds_as_perf_script_does() {
    let realapp = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/realapp");
    assert_perf_data_folds_as_perf_script(
        &realapp,
        "JS:*pp$8.parseStatement /tmp/v8inline-realapp/node_modules/acorn/dist/acorn.js",
    );
}

#[test]
fn perf_data_finds_the_jitdump_next_to_it() {
    // No --jitdump: jit-PID.dump.gz next to the perf.data is found by pid,
    // and the code log next to the jitdump.
    let perf_data = file_starting_with("perf.data");
    let (success, folded, errors) = v8inline(&["--perf-data", &perf_data, "--stats"]);
    assert!(success, "{errors}");
    assert!(folded.contains("square /tmp/v8inline-testdata/perf-data/deep.js"), "{errors}");
}

#[test]
fn broken_perf_data_is_an_input_error() {
    let directory = std::env::temp_dir().join(format!("v8inline-perf-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let broken = directory.join("perf.data");
    std::fs::write(&broken, b"PERFILE2 but not really a perf.data file").unwrap();
    let broken = broken.display().to_string();
    let (success, _, errors) = v8inline(&["--perf-data", &broken]);
    assert!(!success);
    assert!(errors.contains(&broken), "{errors}");
    let (success, _, errors) = v8inline(&["--perf-data", "/nonexistent/perf.data"]);
    assert!(!success);
    assert!(errors.contains("/nonexistent/perf.data"), "{errors}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn perf_data_written_to_a_pipe_is_refused_saying_how_to_record_instead() {
    // A real `perf record -o -` (testdata/record.sh perf-data-pipe): its
    // 16-byte header was read as a file's 104 and reported as an
    // "implausible attribute size".
    let pipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data-pipe/perf.data.gz");
    let pipe = pipe.display().to_string();
    let (success, output, errors) = v8inline(&["--perf-data", &pipe]);
    assert!(!success);
    assert_eq!(output, "");
    assert_eq!(
        errors,
        format!(
            "v8inline: {pipe}: a perf.data written to a pipe (perf record -o -; header of 16 bytes), which \
             --perf-data does not read: record to a file (perf record -o perf.data), or pipe it through perf \
             script (perf record -o - ... | perf script -i - | v8inline)\n"
        )
    );
}

#[test]
fn cut_or_damaged_perf_data_never_panics() {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(file_starting_with("perf.data")).unwrap()),
        &mut bytes,
    )
    .unwrap();
    let directory = std::env::temp_dir().join(format!("v8inline-perf-data-cuts-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("perf.data");
    let path_text = path.display().to_string();
    let length = bytes.len();
    let cuts = (0..12).map(|step| length * step / 12).chain([8, 100, 104, length - 1]);
    for cut in cuts {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(["--perf-data", &path_text]).output().unwrap();
        assert!(matches!(output.status.code(), Some(0 | 1)), "cut at {cut}: {output:?}");
    }
    // Flipped bytes through the data section.
    for position in (200..length).step_by(length / 12) {
        let mut damaged = bytes.clone();
        damaged[position] ^= 0xff;
        std::fs::write(&path, &damaged).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(["--perf-data", &path_text]).output().unwrap();
        assert!(matches!(output.status.code(), Some(0 | 1)), "byte {position} flipped: {output:?}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

/// The byte range of the string of `HEADER_ARCH` (feature bit 6) in a
/// perf.data file's bytes: `struct perf_file_header` (the kernel's
/// `tools/perf/util/header.h`) puts the feature sections' table after the
/// data section, one (offset, size) pair per feature bit set, in bit order;
/// a string feature is a u32 length and the padded string.
fn arch_string_range(perf_data: &[u8]) -> std::ops::Range<usize> {
    const HEADER_ARCH: usize = 6;
    let u64_at = |offset: usize| u64::from_le_bytes(perf_data[offset..offset + 8].try_into().unwrap()) as usize;
    let features_table = u64_at(40) + u64_at(48);
    let feature_bits = &perf_data[72..104];
    let is_set = |bit: usize| feature_bits[bit / 8] & (1 << (bit % 8)) != 0;
    assert!(is_set(HEADER_ARCH), "the recording names its architecture");
    let index = (0..HEADER_ARCH).filter(|&bit| is_set(bit)).count();
    let section = u64_at(features_table + index * 16);
    let length = u32::from_le_bytes(perf_data[section..section + 4].try_into().unwrap()) as usize;
    section + 4..section + 4 + length
}

#[test]
fn perf_data_of_another_architecture_is_refused_naming_it() {
    // The real recording, its header's arch changed to s390x (as a
    // perf.data copied from such a machine has it).
    let mut bytes = common::gunzip(&recording().join("perf.data.gz"));
    let arch = arch_string_range(&bytes);
    assert_eq!(&bytes[arch.start..arch.start + 7], b"x86_64\0");
    bytes[arch.start..arch.start + 7].copy_from_slice(b"s390x\0\0");
    let directory = common::temp_dir("perf_data", "another_architecture");
    let foreign = directory.join("perf.data");
    std::fs::write(&foreign, &bytes).unwrap();
    let foreign = foreign.display().to_string();
    let (success, output, errors) = v8inline(&["--perf-data", &foreign]);
    assert!(!success);
    assert_eq!(output, "");
    assert_eq!(
        errors,
        format!(
            "v8inline: {foreign}: recorded on s390x (the header's arch feature): v8inline reads perf.data recorded \
             on x86_64; fold it where it was recorded (perf script there, piped to v8inline)\n"
        )
    );
}

#[test]
fn a_sample_whose_callchain_length_overflows_is_skipped_before_the_crate_parses_it() {
    // The perf_data fuzz target's finding (fuzz/regressions/, its first byte
    // the target's flags): linux-perf-event-reader 0.10.2 multiplies a
    // SAMPLE's callchain length by 8 unchecked, a panic with overflow
    // checks. The record is refused before the crate sees it.
    let finding = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/perf_data-crash-5adfb46c9f633e77058d58406f4d2f3b73182ec0");
    let bytes = std::fs::read(finding).unwrap();
    let directory = common::temp_dir("perf_data", "callchain_overflow");
    let perf_data = directory.join("perf.data");
    std::fs::write(&perf_data, &bytes[1..]).unwrap();
    let perf_data = perf_data.display().to_string();
    let (success, _, errors) = v8inline(&["--perf-data", &perf_data]);
    assert!(success, "{errors}");
    assert!(
        errors.contains(&format!(
            "{perf_data}: byte offset 2968: SAMPLE record of 120 bytes: expected the fields its event's sample format \
             declares, a callchain of 18446744073709551615 addresses, more than any record holds"
        )),
        "{errors}"
    );
    let (success, _, errors) = v8inline(&["--strict", "--perf-data", &perf_data]);
    assert!(!success, "{errors}");
}
