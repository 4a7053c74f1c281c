//! What V8 gets wrong and what users get wrong when recording, through the
//! binary: `repair-jitdump` on the real node 26 and Deno jitdumps of
//! testdata/esmapp (DEBUG_INFO records V8 mis-sized), and a recording made
//! without `--log-code` (testdata/no-log-code).

mod common;

use std::path::{Path, PathBuf};

use common::{file_starting, gunzip, run, stderr, temp_dir};
use v8inline::internals::formats::jitdump::{self, ReadOptions};

/// The recordings of testdata/esmapp.
const RUNTIMES: [&str; 2] = ["node26", "deno"];

fn esmapp(runtime: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/esmapp").join(runtime)
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The records of a jitdump found the way perf inject and samply find them,
/// by trusting every `total_size`; `None` unless that reaches the end of the
/// file exactly.
fn records_by_declared_size(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let field = |offset: usize| Some(u32::from_le_bytes(bytes.get(offset..offset + 4)?.try_into().ok()?) as usize);
    let mut offset = field(8)?;
    let mut records = Vec::new();
    while offset < bytes.len() {
        let size = field(offset + 4)?;
        if size < 16 {
            return None;
        }
        records.push(bytes.get(offset..offset + size)?);
        offset += size;
    }
    Some(records)
}

#[test]
fn repair_jitdump_corrects_v8s_sizes_and_keeps_every_other_byte() {
    for runtime in RUNTIMES {
        let directory = temp_dir("v8_defects", runtime);
        let input = file_starting(&esmapp(runtime), "jit-");
        let original = gunzip(&input);
        let read = jitdump::read(&original, &ReadOptions::default()).unwrap();
        assert!(!read.mis_sized_debug_infos.is_empty(), "{runtime}: the recording is about mis-sized records");
        assert!(records_by_declared_size(&original).is_none(), "{runtime}: a reader trusting sizes fails on it");

        let repaired_path = directory.join(input.file_stem().unwrap()); // jit-PID.dump
        let output = run(&["repair-jitdump", text(&input), "-o", text(&repaired_path)]);
        assert!(output.status.success(), "{runtime}: {}", stderr(&output));
        let said = format!(
            "v8inline: {}: corrected {} DEBUG_INFO record(s) mis-sized by V8; wrote {} (",
            input.display(),
            read.mis_sized_debug_infos.len(),
            repaired_path.display()
        );
        assert!(stderr(&output).contains(&said), "{runtime}: {}", stderr(&output));

        // Read whole by a reader that trusts every size, each DEBUG_INFO
        // padded to 8 bytes as the format wants.
        let repaired = std::fs::read(&repaired_path).unwrap();
        let records = records_by_declared_size(&repaired).expect("the repaired file reads whole by its sizes");
        let is_debug_info = |record: &[u8]| u32::from_le_bytes(record[..4].try_into().unwrap()) == 2;
        assert!(records.iter().filter(|record| is_debug_info(record)).all(|record| record.len() % 8 == 0));
        // Undoing the corrections the tool reported gives the input back,
        // byte for byte: nothing else changed.
        let mut corrections = read.mis_sized_debug_infos.iter();
        let mut next_correction = corrections.next();
        let mut undone = repaired[..40].to_vec();
        for record in &records {
            let start = undone.len() as u64;
            match next_correction {
                Some(correction) if correction.record_offset == start => {
                    let mut record = record[..correction.entries_size as usize].to_vec();
                    record[4..8].copy_from_slice(&correction.declared_size.to_le_bytes());
                    record.resize(correction.written_size as usize, 0);
                    undone.extend_from_slice(&record);
                    next_correction = corrections.next();
                }
                _ => undone.extend_from_slice(record),
            }
        }
        assert_eq!(next_correction, None, "{runtime}: every correction is at a record");
        assert!(undone == original, "{runtime}: the repaired file is the input but for the corrections");

        // v8inline reads it without a word and folds the same stacks.
        let log = file_starting(&esmapp(runtime), "codspeed-v8-");
        let script = esmapp(runtime).join("perf.script.gz");
        let fold = |jitdump: &Path| run(&["--log", text(&log), "--jitdump", text(jitdump), text(&script), "--strict"]);
        let (with_original, with_repaired) = (fold(&input), fold(&repaired_path));
        assert!(with_repaired.status.success(), "{runtime}: {}", stderr(&with_repaired));
        assert_eq!(stderr(&with_repaired), "", "{runtime}");
        assert!(with_original.status.success(), "{runtime}: {}", stderr(&with_original));
        assert!(with_original.stdout == with_repaired.stdout, "{runtime}: the same folded stacks");

        // Repairing the repaired file changes nothing.
        let again = directory.join("again.dump");
        let output = run(&["repair-jitdump", text(&repaired_path), "-o", text(&again)]);
        assert!(stderr(&output).contains(": corrected 0 DEBUG_INFO record(s)"), "{}", stderr(&output));
        assert!(std::fs::read(&again).unwrap() == repaired);
    }
}

#[test]
fn repair_jitdump_never_overwrites_its_input() {
    let directory = temp_dir("v8_defects", "overwrite");
    let input = directory.join("jit-1.dump");
    std::fs::write(&input, gunzip(&file_starting(&esmapp("node26"), "jit-"))).unwrap();
    let before = std::fs::read(&input).unwrap();
    // The same file under another name too.
    let other_name = directory.join(".").join("jit-1.dump");
    for output_path in [&input, &other_name] {
        let output = run(&["repair-jitdump", text(&input), "-o", text(output_path)]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert_eq!(
            stderr(&output),
            format!("v8inline: repair-jitdump does not overwrite its input {}: give another -o\n", input.display())
        );
        assert!(std::fs::read(&input).unwrap() == before);
    }
}

/// node run with --perf-prof but without --log-code writes its default log,
/// `isolate-*-v8.log`, with no code record: v8inline finds it next to the
/// jitdump and says which flag is missing, naming the file it found.
#[test]
fn a_recording_without_log_code_is_named_as_such() {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/no-log-code");
    let jitdump = file_starting(&directory, "jit-");
    let log = file_starting(&directory, "isolate-");
    let log_text = String::from_utf8(gunzip(&log)).unwrap();
    assert!(log_text.starts_with("v8-version,") && !log_text.contains("\ncode-creation,"), "the log has no code");
    let script = directory.join("perf.script.gz");
    for strict in [false, true] {
        let mut args = vec!["--jitdump", text(&jitdump), text(&script)];
        if strict {
            args.push("--strict");
        }
        let output = run(&args);
        assert_eq!(output.status.code(), Some(if strict { 1 } else { 0 }));
        let errors = stderr(&output);
        let expected = format!(
            "v8inline:     {}: {{N}} of {{N}} samples that ran JavaScript did not expand: the code log has no code \
             records: node was run without --log-code (it writes this log with its default events all the same); \
             run node with --log-code beside --perf-prof (Deno: --v8-flags=--log-code,--perf-prof), or record with \
             `v8inline record -- node ...`",
            log.display()
        );
        let line = errors
            .lines()
            .find(|line| line.contains("samples that ran JavaScript did not expand"))
            .unwrap_or_else(|| panic!("{errors}"));
        let numbers_as_n: String = line
            .split(' ')
            .map(|word| if !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()) { "{N}" } else { word })
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(numbers_as_n, expected);
        assert!(!errors.contains("do not join"), "{errors}");
    }
}

/// The `jitted-PID-N.so` files in `directory`.
fn jitted_files(directory: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("jitted-"))
        .collect()
}

/// `perf inject -j` stops at the first record V8 mis-sized and writes a
/// `jitted-PID-N.so` for the code loads before it only; after
/// `repair-jitdump` it writes one for every code load. perf finds the
/// jitdump at the path node mapped it from, in the directory the recording
/// ran in (testdata/esmapp/record.sh), so the test puts it there.
#[test]
fn perf_inject_reads_the_repaired_jitdump_whole() {
    let perf_works =
        std::process::Command::new("perf").arg("--version").output().is_ok_and(|output| output.status.success());
    if !perf_works {
        eprintln!("skipped: perf is not installed");
        return;
    }
    let recording = esmapp("node26");
    let input = file_starting(&recording, "jit-");
    let original = gunzip(&input);
    let loads = jitdump::read(&original, &ReadOptions::default()).unwrap().loads.len();
    let directory = temp_dir("v8_defects", "perf-inject");
    let perf_data = directory.join("perf.data");
    std::fs::write(&perf_data, gunzip(&recording.join("perf.data.gz"))).unwrap();
    // Where node wrote the jitdump: record.sh's fixed working directory.
    let recorded_at = Path::new("/tmp/v8inline-esmapp");
    std::fs::create_dir_all(recorded_at).unwrap();
    let jitdump_path = recorded_at.join(input.file_stem().unwrap());
    let inject = |jitdump: &[u8]| -> usize {
        for stale in jitted_files(recorded_at) {
            std::fs::remove_file(stale).unwrap();
        }
        std::fs::write(&jitdump_path, jitdump).unwrap();
        let injected = directory.join("perf.jit.data");
        // A build-id cache of the test's own: perf inject otherwise adds
        // every jitted file to ~/.debug, on every run.
        let output = std::process::Command::new("perf")
            .arg("--buildid-dir")
            .arg(directory.join("buildid"))
            .args(["inject", "-j", "-i", text(&perf_data), "-o", text(&injected)])
            .output()
            .unwrap();
        assert!(output.status.success(), "perf inject: {}", stderr(&output));
        let written = jitted_files(recorded_at).len();
        for file in jitted_files(recorded_at) {
            std::fs::remove_file(file).unwrap();
        }
        written
    };
    let before = inject(&original);
    let output = run(&["repair-jitdump", text(&input), "-o", text(&directory.join("repaired.dump"))]);
    assert!(output.status.success(), "{}", stderr(&output));
    let after = inject(&std::fs::read(directory.join("repaired.dump")).unwrap());
    eprintln!(
        "perf inject -j: {before} of {loads} code loads written as .so files before repair-jitdump, {after} after"
    );
    assert_eq!(after, loads);
    assert!(before < loads, "perf inject is expected to stop at V8's first mis-sized record");
    let _ = std::fs::remove_file(&jitdump_path);
}

/// V8's defect beside real damage, through the binary: a node 26 jitdump
/// cut after its first mis-sized record. The records before the cut are
/// read (the mis-sized one among them, noted), the cut is a warning, and
/// `--strict` refuses the run for the cut, not for V8's defect.
#[test]
fn a_cut_jitdump_with_mis_sized_records_warns_and_strict_refuses_it() {
    let recording = esmapp("node26");
    let original = gunzip(&file_starting(&recording, "jit-"));
    let read = jitdump::read(&original, &ReadOptions::default()).unwrap();
    let first = read.mis_sized_debug_infos[0];
    let cut_at = (first.record_offset + u64::from(first.written_size)) as usize + 100;
    let directory = temp_dir("v8_defects", "cut");
    let jitdump_path = directory.join(file_starting(&recording, "jit-").file_stem().unwrap());
    std::fs::write(&jitdump_path, &original[..cut_at]).unwrap();
    let log = file_starting(&recording, "codspeed-v8-");
    let script = recording.join("perf.script.gz");
    for strict in [false, true] {
        let mut args = vec!["--log", text(&log), "--jitdump", text(&jitdump_path), text(&script)];
        if strict {
            args.push("--strict");
        }
        let output = run(&args);
        let errors = stderr(&output);
        assert_eq!(output.status.code(), Some(if strict { 1 } else { 0 }), "{errors}");
        let note = format!(
            "v8inline: note: {}: 1 debug-info record(s) mis-sized by V8 (cross-script inlining), read by their entries",
            jitdump_path.display()
        );
        assert!(errors.contains(&note), "{errors}");
        assert!(errors.contains("jitdump(s) cut short"), "{errors}");
        assert_eq!(output.stdout.is_empty(), strict, "strict writes nothing");
    }
}
