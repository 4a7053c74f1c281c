//! Damaged and odd inputs: cut, byte-swapped, garbled, huge or inconsistent
//! code logs, jitdumps and perf scripts never stop the run, lose nothing
//! that was whole, and are reported with their place; every error message a
//! user can meet, through the built binary, with its exit code.
//!
//! Covered elsewhere and not repeated here: every cut of the real jitdumps
//! and the byte-swapped real jitdumps (tests/jitdump.rs), hand-made jitdump
//! headers and records (src/jitdump/tests.rs), inline walks over cyclic or
//! out-of-range tables (src/inline_stack.rs), a code-source-info with no
//! code-creation in `lookup` (tests/lookup.rs).

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{jitdump_path, log_path, recording_dir, run, stderr, temp_dir};
use v8inline::internals::collapse::{CollapseOptions, CollapseSummary};
use v8inline::internals::diagnostics::{Diagnostics, WarningKind};
use v8inline::internals::formats::jitdump::{self, ReadOptions};
use v8inline::internals::formats::v8log::{CodeLog, LogWarningKind};
use v8inline::internals::pipeline::collapse_with;
use v8inline::internals::v8::code_logs::CodeLogs;
use v8inline::internals::v8::expand::{ExpandOptions, V8Expander};
use v8inline::internals::v8::inline_map::{InlineMap, SourceOptions};

fn gunzip(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
    bytes
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

// --- Cut code logs ------------------------------------------------------------

/// Lines of a log ending in a newline within `prefix`, and how many of them
/// are `code-creation` and `code-source-info` records (counted without the
/// reader).
struct WholeLines {
    lines: u64,
    code_creations: usize,
    source_infos: usize,
}

fn whole_lines(prefix: &[u8]) -> WholeLines {
    let mut counted = WholeLines { lines: 0, code_creations: 0, source_infos: 0 };
    for line in prefix.split_inclusive(|&byte| byte == b'\n').filter(|line| line.ends_with(b"\n")) {
        counted.lines += 1;
        counted.code_creations += usize::from(line.starts_with(b"code-creation,"));
        counted.source_infos += usize::from(line.starts_with(b"code-source-info,"));
    }
    counted
}

/// A cut log has the code objects of its whole lines, each equal to the one
/// of the full log, positions included once their line is whole; a cut
/// inside a line is one `CutShort` warning on that line.
fn check_log_cut(full: &CodeLog, bytes: &[u8], cut_at: usize) {
    let prefix = &bytes[..cut_at];
    let log = CodeLog::parse(prefix);
    let whole = whole_lines(prefix);
    let context = format!("cut at byte {cut_at}");
    assert_eq!(log.code_objects.len(), whole.code_creations, "{context}");
    let with_positions = log.code_objects.iter().filter(|object| object.source_info.is_some()).count();
    assert_eq!(with_positions, whole.source_infos, "{context}");
    for (cut_object, full_object) in log.code_objects.iter().zip(&full.code_objects) {
        assert_eq!(
            (cut_object.address, cut_object.size, log.object_name(cut_object), cut_object.tier, cut_object.log_line),
            (
                full_object.address,
                full_object.size,
                full.object_name(full_object),
                full_object.tier,
                full_object.log_line
            ),
            "{context}"
        );
        if let Some(info) = log.source_tables(cut_object) {
            let full_info = full.source_tables(full_object).unwrap();
            assert_eq!(info.positions, full_info.positions, "{context}");
            assert_eq!(info.inlining_positions, full_info.inlining_positions, "{context}");
            assert_eq!(info.inlined_functions, full_info.inlined_functions, "{context}");
        }
    }
    if cut_at == 0 || bytes[cut_at - 1] == b'\n' {
        assert_eq!(log.warning_count, 0, "{context}: {:?}", log.warnings);
        assert_eq!(log.line_count, whole.lines, "{context}");
    } else {
        assert_eq!(log.warning_count, 1, "{context}");
        let warning = &log.warnings[0];
        assert_eq!((warning.kind, warning.line), (LogWarningKind::CutShort, whole.lines + 1), "{context}");
        let line_start = prefix.iter().rposition(|&byte| byte == b'\n').map_or(0, |newline| newline + 1);
        assert_eq!(
            warning.message,
            format!(
                "expected a line ending in a newline, the file ends {} bytes into it (cut short); line skipped",
                cut_at - line_start
            )
        );
    }
}

#[test]
fn every_cut_of_a_real_code_log_keeps_the_whole_lines_and_reports_the_cut() {
    for version in [18, 20] {
        let bytes = gunzip(&log_path(version));
        let full = CodeLog::parse(&bytes);
        assert_eq!(full.warning_count, 0, "{:?}", full.warnings);
        let whole = whole_lines(&bytes);
        assert_eq!(full.code_objects.len(), whole.code_creations);
        // Every code-source-info of a real log describes its own code object.
        assert_eq!(full.code_objects.iter().filter(|object| object.source_info.is_some()).count(), whole.source_infos);

        let line_ends: Vec<usize> =
            bytes.iter().enumerate().filter(|(_, byte)| **byte == b'\n').map(|(position, _)| position + 1).collect();
        // Around every line end of the first 100 lines and of every 16th line
        // after; every byte of the first code-source-info with inlining and
        // of the code-creation before it; and every 4999th byte.
        let mut cuts: Vec<usize> = (0..=64).collect();
        for (index, &end) in line_ends.iter().enumerate() {
            if index < 100 || index % 16 == 0 {
                cuts.extend([end - 1, end, end + 1]);
            }
        }
        let inlining_line = line_ends
            .windows(2)
            .position(|pair| {
                let line = &bytes[pair[0]..pair[1]];
                line.starts_with(b"code-source-info,") && line.split(|&byte| byte == b',').nth(7) != Some(b"\n")
            })
            .unwrap();
        cuts.extend(line_ends[inlining_line - 1]..=line_ends[inlining_line + 1]);
        cuts.extend((0..bytes.len()).step_by(4999));
        cuts.push(bytes.len());
        cuts.retain(|&cut_at| cut_at <= bytes.len());
        cuts.sort_unstable();
        cuts.dedup();
        for &cut_at in &cuts {
            check_log_cut(&full, &bytes, cut_at);
        }
        eprintln!("node {version}: {} cuts of the code log checked", cuts.len());
    }
}

// --- Real inputs, damaged, through the binary ---------------------------------

/// The node 20 recording's log, jitdump and raw perf script, decompressed
/// into `directory` (named so that they pair up by pid).
struct Recording {
    log: PathBuf,
    jitdump: PathBuf,
    script: PathBuf,
}

fn node20_in(directory: &Path) -> Recording {
    let recording = Recording {
        log: directory.join("codspeed-v8-13233.log"),
        jitdump: directory.join("jit-13233.dump"),
        script: directory.join("perf.script"),
    };
    std::fs::write(&recording.log, gunzip(&log_path(20))).unwrap();
    std::fs::write(&recording.jitdump, gunzip(&jitdump_path(20))).unwrap();
    std::fs::write(&recording.script, gunzip(&recording_dir(20).join("perf.script.gz"))).unwrap();
    recording
}

/// Folds with the given files, `--no-disk-sources`; extra arguments first.
fn fold(log: &Path, jitdump: &Path, script: &Path, extra: &[&str]) -> Output {
    let (log, jitdump, script) = (path_text(log), path_text(jitdump), path_text(script));
    let mut args: Vec<&str> = extra.to_vec();
    args.extend(["--log", &log, "--jitdump", &jitdump, "--no-disk-sources", &script]);
    run(&args)
}

fn folded_ok(output: &Output) -> String {
    assert!(output.status.success(), "{}", stderr(output));
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The real node 20 fold: what damaged copies must still give.
fn node20_reference(recording: &Recording) -> String {
    let output = fold(&recording.log, &recording.jitdump, &recording.script, &[]);
    assert_eq!(stderr(&output), "", "the real recording folds without warnings");
    folded_ok(&output)
}

#[test]
fn a_jitdump_header_larger_than_40_bytes_is_skipped_whole() {
    let directory = temp_dir("robustness", "large-header");
    let recording = node20_in(&directory);
    let reference = node20_reference(&recording);
    // A 64-byte header: V8 writes 40, the specification lets it grow.
    let mut bytes = std::fs::read(&recording.jitdump).unwrap();
    bytes[8..12].copy_from_slice(&64u32.to_le_bytes());
    bytes.splice(40..40, [0xAB; 24]);
    std::fs::write(&recording.jitdump, &bytes).unwrap();
    let output = fold(&recording.log, &recording.jitdump, &recording.script, &[]);
    assert_eq!(stderr(&output), "");
    assert_eq!(folded_ok(&output), reference);
}

#[test]
fn garbage_binary_and_non_utf8_lines_are_skipped_counted_and_shown() {
    let directory = temp_dir("robustness", "garbage");
    let recording = node20_in(&directory);
    let reference = node20_reference(&recording);

    // The log: garbage, binary and non-UTF-8 lines, and a record with a
    // non-UTF-8 field, between real lines.
    let log = std::fs::read(&recording.log).unwrap();
    let mut lines: Vec<&[u8]> = log.split_inclusive(|&byte| byte == b'\n').collect();
    lines.insert(5, b"this is not a log record\n");
    lines.insert(6, b"\x00\x01\x02\xff\xfe binary\x00\n");
    lines.insert(7, b"code-creation,JS,\xff\xfe,1,0x10,4,f,0x20,*\n");
    lines.insert(8, b"\xc3\x28\xa0\xa1 not UTF-8\n");
    std::fs::write(&recording.log, lines.concat()).unwrap();

    // The perf script: a garbage line between samples, a binary line inside
    // a sample, and a sample whose symbol is not UTF-8.
    let script = std::fs::read(&recording.script).unwrap();
    let text_start = script.windows(2).position(|pair| pair == b"\n\n").unwrap() + 2;
    let mut damaged = script[..text_start].to_vec();
    damaged.extend_from_slice(b"garbage between samples\n");
    let second_sample_stack = text_start + script[text_start..].iter().position(|&byte| byte == b'\n').unwrap() + 1;
    damaged.extend_from_slice(&script[text_start..second_sample_stack]);
    damaged.extend_from_slice(b"\t\x00\x01\xff\xfe\n");
    damaged.extend_from_slice(&script[second_sample_stack..]);
    damaged.extend_from_slice(b"node 13233 999.000000: 1 cpu-clock: \n\t1234 caf\xe9+0x1 (/usr/bin/node)\n\n");
    std::fs::write(&recording.script, damaged).unwrap();

    let output = fold(&recording.log, &recording.jitdump, &recording.script, &[]);
    let folded = folded_ok(&output);
    // Everything else is used: the reference stacks plus the new sample,
    // its symbol decoded lossily.
    let mut expected: Vec<&str> = reference.lines().collect();
    expected.push("node;caf\u{FFFD} 1");
    expected.sort_unstable();
    assert_eq!(folded.lines().collect::<Vec<_>>(), expected);

    let log_name = path_text(&recording.log);
    let script_name = path_text(&recording.script);
    assert_eq!(
        stderr(&output),
        format!(
            "v8inline: warning: 3 input problem(s); the rest of the input was used:\n\
             v8inline:   1 code-log line(s) skipped: fields not as V8 writes them\n\
             v8inline:     {log_name}:8: code-creation: field 3: expected a code kind\n\
             v8inline:   1 perf-script line(s) skipped: not an event line `comm pid ...:`\n\
             v8inline:     {script_name}:6: \"garbage between samples\"\n\
             v8inline:   1 perf-script line(s) skipped: not a stack line `address symbol (module)`\n\
             v8inline:     {script_name}:8: \"\\t\\0\\u{{1}}\u{FFFD}\u{FFFD}\"\n"
        )
    );

    // --strict: the same warnings, then failure and no output file.
    let output_path = directory.join("out.folded");
    let output =
        fold(&recording.log, &recording.jitdump, &recording.script, &["--strict", "-o", &path_text(&output_path)]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).ends_with("v8inline: --strict: 3 input problem(s), listed above; no output written\n"));
    assert!(!output_path.exists());
}

#[test]
fn lines_over_a_megabyte_are_read() {
    let directory = temp_dir("robustness", "long-lines");
    let recording = node20_in(&directory);
    let reference = node20_reference(&recording);
    let long_name = "x".repeat(2 << 20);

    // A 2 MB garbage line and a 2 MB code-creation name in the log.
    let mut log = std::fs::read(&recording.log).unwrap();
    log.extend_from_slice(format!("{long_name}\n").as_bytes());
    log.extend_from_slice(format!("code-creation,JS,10,1,0x10,4,{long_name},0x20,~\n").as_bytes());
    std::fs::write(&recording.log, log).unwrap();
    // A 2 MB garbage line and a sample with a 2 MB symbol in the script.
    let mut script = std::fs::read(&recording.script).unwrap();
    script.extend_from_slice(
        format!("{long_name}\n\nnode 13233 999.0: 1 cpu-clock: \n\t1 {long_name} (m)\n\n").as_bytes(),
    );
    std::fs::write(&recording.script, script).unwrap();

    let output = fold(&recording.log, &recording.jitdump, &recording.script, &[]);
    let folded = folded_ok(&output);
    assert_eq!(folded.len(), reference.len() + "node;".len() + long_name.len() + " 1\n".len());
    assert!(folded.contains(&format!("node;{long_name} 1\n")));
    let message = stderr(&output);
    assert!(message.contains("v8inline:   1 perf-script line(s) skipped: not an event line"), "{message}");
    // Examples are cut to 512 bytes.
    assert!(message.len() < 2000, "{}", message.len());
}

#[test]
fn cut_and_damaged_inputs_are_warned_about_with_their_place() {
    let directory = temp_dir("robustness", "cut");
    let recording = node20_in(&directory);
    // The log cut inside its last line, the jitdump inside a record.
    let log = std::fs::read(&recording.log).unwrap();
    std::fs::write(&recording.log, &log[..log.len() - 10]).unwrap();
    let jitdump = std::fs::read(&recording.jitdump).unwrap();
    std::fs::write(&recording.jitdump, &jitdump[..jitdump.len() - 100]).unwrap();
    let output = fold(&recording.log, &recording.jitdump, &recording.script, &[]);
    folded_ok(&output);
    let log_lines = log.iter().filter(|&&byte| byte == b'\n').count();
    let last_line_length = log.len() - 1 - log[..log.len() - 1].iter().rposition(|&byte| byte == b'\n').unwrap() - 1;
    let message = stderr(&output);
    assert!(
        message.contains(&format!(
            "v8inline:   1 code log(s) cut short: last line skipped\nv8inline:     {}:{log_lines}: expected a line ending in a newline, the file ends {} bytes into it (cut short); line skipped\n",
            path_text(&recording.log),
            last_line_length + 1 - 10
        )),
        "{message}"
    );
    assert!(message.contains("v8inline:   1 jitdump(s) cut short: the whole records before the cut were used\n"));
    assert!(
        message.contains(&format!("v8inline:     {}: byte offset ", path_text(&recording.jitdump)))
            && message.contains("(cut short); reading stopped\n"),
        "{message}"
    );
    assert_eq!(fold(&recording.log, &recording.jitdump, &recording.script, &["--strict"]).status.code(), Some(1));
}

#[test]
fn compressed_inputs_cut_short_are_used_up_to_the_cut() {
    let directory = temp_dir("robustness", "cut-gz");
    let cut_copy = |source: &Path, name: &str| {
        let compressed = std::fs::read(source).unwrap();
        let path = directory.join(name);
        std::fs::write(&path, &compressed[..compressed.len() * 3 / 4]).unwrap();
        path
    };
    let script = cut_copy(&recording_dir(20).join("perf.script.gz"), "perf.script.gz");
    let log = cut_copy(&log_path(20), "codspeed-v8-13233.log.gz");
    let jitdump = cut_copy(&jitdump_path(20), "jit-13233.dump.gz");
    let output = fold(&log, &jitdump, &script, &[]);
    let folded = folded_ok(&output);
    // What was decompressed before the cut is folded: a whole sample count
    // of the full script's samples.
    let full_script = gunzip(&recording_dir(20).join("perf.script.gz"));
    let samples_in_full = full_script.windows(2).filter(|pair| pair == b"\n\n").count() as u64;
    let written: u64 = folded.lines().map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum();
    assert!(written > 0 && written < samples_in_full * 1_003_009, "{written}");
    let message = stderr(&output);
    assert!(message.contains("compressed file(s) cut short: what was before the cut was used\n"), "{message}");
    for path in [&log, &jitdump] {
        assert!(
            message.contains(&format!("{}: expected a gzip stream to its end, it stops after ", path_text(path))),
            "{message}"
        );
    }
    assert!(message.contains(&format!("{}: expected a gzip stream to its end, it stops after ", path_text(&script))));
    assert!(message.contains(" samples (cut short)\n"), "{message}");
    assert_eq!(fold(&log, &jitdump, &script, &["--strict"]).status.code(), Some(1));
}

#[test]
fn missing_logs_unreadable_discovered_jitdumps_and_shared_logs_are_warned_about() {
    // A jitdump alone: no log next to it.
    let directory = temp_dir("robustness", "alone");
    let recording = node20_in(&directory);
    std::fs::remove_file(&recording.log).unwrap();
    let output = run(&["--jitdump", &path_text(&recording.jitdump), &path_text(&recording.script)]);
    assert!(output.status.success());
    assert_eq!(
        stderr(&output),
        format!(
            "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
             v8inline:   1 jitdump(s) without a code log: their frames pass through unexpanded\n\
             v8inline:     {}: no code log found for pid 13233 (looked for isolate-0x*-13233-*.log and *-13233.log in $CODSPEED_V8_LOG and next to the jitdump)\n",
            path_text(&recording.jitdump)
        )
    );

    // jit-PID.dump found for a sampled pid but unusable.
    std::fs::write(&recording.jitdump, b"JiTD but not really a jitdump header").unwrap();
    let output = run(&["--jitdump-dir", &path_text(&directory), &path_text(&recording.script)]);
    assert!(output.status.success());
    assert!(stderr(&output).contains(&format!(
        "v8inline:   1 jitdump(s) of sampled processes unreadable: not used\n\
         v8inline:     {}: byte offset 0: expected a 40-byte jitdump header, the file has only 36 bytes\n",
        path_text(&recording.jitdump)
    )));
    // Its log read beside it (two threads) or after it (one): the same.
    let one_thread = run(&["--threads", "1", "--jitdump-dir", &path_text(&directory), &path_text(&recording.script)]);
    assert_eq!((stderr(&one_thread), one_thread.stdout), (stderr(&output), output.stdout));

    // Two isolates in one log.
    let recording = node20_in(&directory);
    let mut log = std::fs::read(&recording.log).unwrap();
    log.extend_from_slice(b"v8-version,11,3,244,8,-node.38,0\n");
    std::fs::write(&recording.log, log).unwrap();
    let output = fold(&recording.log, &recording.jitdump, &recording.script, &[]);
    assert!(output.status.success());
    assert!(stderr(&output).contains(&format!(
        "v8inline:   1 code log(s) written by several isolates at once: damaged lines skipped, every whole record used\n\
         v8inline:     {}: written by several isolates at once (2 v8-version records): 0 damaged line(s) skipped; \
         record with one log per isolate (V8's default: drop --no-logfile-per-isolate; V8 then writes \
         isolate-0x<address>-<pid>-<logfile> per isolate, v8inline record does so) and give them all, or none \
         to find them beside the jitdump\n",
        path_text(&recording.log)
    )));
}

// --- Error messages and exit codes --------------------------------------------

/// Runs `args`, expects `code` and exactly `message` on standard error.
fn assert_fails(args: &[&str], code: i32, message: &str) {
    let output = run(args);
    assert_eq!(output.status.code(), Some(code), "{args:?}: {}", stderr(&output));
    assert_eq!(stderr(&output), message, "{args:?}");
    assert!(output.stdout.is_empty(), "{args:?}");
}

#[test]
fn every_error_names_its_file_and_exits_1() {
    let directory = temp_dir("robustness", "errors");
    let recording = node20_in(&directory);
    let (log, jitdump, script) =
        (path_text(&recording.log), path_text(&recording.jitdump), path_text(&recording.script));
    let missing = path_text(&directory.join("missing"));
    let not_found = "No such file or directory (os error 2)";

    assert_fails(&["--log", &log, "--jitdump", &jitdump, &missing], 1, &format!("v8inline: {missing}: {not_found}\n"));
    assert_fails(
        &["--log", &missing, "--jitdump", &jitdump, &script],
        1,
        &format!("v8inline: {missing}: {not_found}\n"),
    );
    assert_fails(&["--log", &log, "--jitdump", &missing, &script], 1, &format!("v8inline: {missing}: {not_found}\n"));
    assert_fails(&["lookup", "--log", &missing, "0x1"], 1, &format!("v8inline: {missing}: {not_found}\n"));

    // Unusable jitdump headers: offset and expectation.
    let header = |magic: u32, version: u32, size: u32, length: usize| {
        let mut bytes = Vec::new();
        for field in [magic, version, size, 62, 0, 13233, 0, 0, 0, 0] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.resize(length, 0);
        bytes
    };
    let bad_headers: [(Vec<u8>, &str); 5] = [
        (
            header(0x4A69_5444, 1, 40, 12),
            "byte offset 0: expected a 40-byte jitdump header, the file has only 12 bytes",
        ),
        (
            header(0x1234_5678, 1, 40, 40),
            "byte offset 0: expected magic 0x4A695444 (\"JiTD\") in either byte order, found 0x12345678",
        ),
        (header(0x4A69_5444, 7, 40, 40), "byte offset 4: expected jitdump version 1 or 2, found 7"),
        (header(0x4A69_5444, 1, 16, 40), "byte offset 8: expected a header total_size of at least 40, found 16"),
        (
            header(0x4A69_5444, 1, 4096, 40),
            "byte offset 8: expected a header total_size within the file (40 bytes), found 4096",
        ),
    ];
    for (bytes, expected) in bad_headers {
        std::fs::write(&recording.jitdump, bytes).unwrap();
        assert_fails(
            &["--log", &log, "--jitdump", &jitdump, &script],
            1,
            &format!("v8inline: {jitdump}: {expected}\n"),
        );
    }

    // A perf.data whose header cannot be read: the byte offset. (Its first
    // 16 bytes say a file's header of 104 bytes follows, not a pipe's.)
    let short_perf_data = directory.join("short.perf.data");
    let mut short = b"PERFILE2".to_vec();
    short.extend(104u64.to_le_bytes());
    std::fs::write(&short_perf_data, short).unwrap();
    let short_perf_data = path_text(&short_perf_data);
    assert_fails(
        &["--perf-data", &short_perf_data],
        1,
        &format!(
            "v8inline: {short_perf_data}: the header section (104 bytes at byte offset 0) does not fit in the file \
             (16 bytes)\n"
        ),
    );

    // A corrupt compressed input (a cut one is a warning, see below).
    let compressed_log = directory.join("codspeed-v8-13233.log.gz");
    std::fs::write(&compressed_log, b"\x1f\x8b\x08\x00 not deflate").unwrap();
    let compressed_log = path_text(&compressed_log);
    assert_fails(
        &["--log", &compressed_log, &script],
        1,
        &format!("v8inline: {compressed_log}: corrupt deflate stream\n"),
    );

    // Outputs that cannot be written.
    let unwritable = path_text(&directory.join("no-such-directory/out"));
    assert_fails(&["-o", &unwritable, &script], 1, &format!("v8inline: {unwritable}: {not_found}\n"));
    // (The folded stacks are written before the flame graph is.)
    let output = run(&["--flamegraph", &unwritable, &script]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), format!("v8inline: {unwritable}: {not_found}\n"));
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let output =
            Command::new(env!("CARGO_BIN_EXE_v8inline")).arg(&script).stdout(Stdio::from(full)).output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(stderr(&output), "v8inline: standard output: No space left on device (os error 28)\n");
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_fails(&["lookup", "0x1"], 2, "v8inline: lookup needs --log and/or --jitdump\n");
    let log = path_text(&log_path(20));
    assert_fails(&["lookup", "--log", &log, "zz"], 2, "v8inline: zz: expected a hexadecimal address\n");
    assert_fails(&["lookup", "--log", &log, "0x1@soon"], 2, "v8inline: 0x1@soon: expected ADDRESS@NANOSECONDS\n");
    let other_log = path_text(&log_path(18));
    assert_fails(
        &["lookup", "--log", &log, "--log", &other_log, "--no-disk-sources", "0x1"],
        2,
        "v8inline: lookup takes one process, got 2: give one --log/--jitdump pair\n",
    );
    // clap's own messages: the flag, then usage.
    for (args, needle) in [
        (&["--no-such-flag"][..], "unexpected argument '--no-such-flag'"),
        (&["--substitute-path", "nothing-to-replace"][..], "expected FROM=TO, got \"nothing-to-replace\""),
        (&["--log"][..], "a value is required for '--log <LOG>'"),
        (&["lookup", "--log", "x"][..], "the following required arguments were not provided"),
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).starts_with("error: ") && stderr(&output).contains(needle), "{}", stderr(&output));
    }
}

#[test]
fn lookup_reports_warnings_and_honours_strict() {
    let directory = temp_dir("robustness", "lookup-strict");
    let recording = node20_in(&directory);
    let mut log = std::fs::read(&recording.log).unwrap();
    log.extend_from_slice(b"code-source-info,0x999,1,0,1,C0O0,,\n");
    std::fs::write(&recording.log, log).unwrap();
    let (log, jitdump) = (path_text(&recording.log), path_text(&recording.jitdump));
    let lines = std::fs::read(&recording.log).unwrap().iter().filter(|&&byte| byte == b'\n').count();
    let summary = format!(
        "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
         v8inline:   1 code-source-info record(s) skipped: no code-creation before them\n\
         v8inline:     {log}:{lines}: code-source-info for 0x999 with no code-creation before it\n"
    );
    let output = run(&["lookup", "--log", &log, "--jitdump", &jitdump, "0x1"]);
    assert!(output.status.success());
    assert_eq!(stderr(&output), summary);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "0x1: unknown: no JIT code object covers this address\n");
    assert_fails(
        &["lookup", "--strict", "--log", &log, "--jitdump", &jitdump, "0x1"],
        1,
        &format!("{summary}v8inline: --strict: 1 input problem(s), listed above; no output written\n"),
    );
}

// --- Hand-made edge cases through the library -------------------------------

/// Builds a little-endian jitdump of CODE_LOAD records.
struct JitDumpWriter {
    bytes: Vec<u8>,
    pid: u32,
}

impl JitDumpWriter {
    fn new(pid: u32) -> JitDumpWriter {
        let mut bytes = Vec::new();
        for field in [0x4A69_5444u32, 1, 40, 62, 0xDEAD_BEEF, pid] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.extend_from_slice(&[0; 16]);
        JitDumpWriter { bytes, pid }
    }

    fn load(mut self, timestamp: u64, address: u64, size: u64, code_index: u64, name: &str) -> JitDumpWriter {
        let total_size = 16 + 40 + name.len() + 1 + size as usize;
        self.bytes.extend_from_slice(&0u32.to_le_bytes());
        self.bytes.extend_from_slice(&(total_size as u32).to_le_bytes());
        self.bytes.extend_from_slice(&timestamp.to_le_bytes());
        self.bytes.extend_from_slice(&self.pid.to_le_bytes());
        self.bytes.extend_from_slice(&self.pid.to_le_bytes());
        for field in [address, address, size, code_index] {
            self.bytes.extend_from_slice(&field.to_le_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.bytes.resize(self.bytes.len() + size as usize, 0xCC);
        self
    }
}

/// Folds `script` with a profile made of `log` and `jitdump`, in memory.
fn fold_in_memory(log: &str, jitdump: &JitDumpWriter, script: &str) -> (String, CollapseSummary, Diagnostics) {
    let mut log = CodeLog::parse(log.as_bytes());
    log.path = "v8.log".into();
    let mut diagnostics = Diagnostics::new();
    diagnostics.add_code_log(&log);
    let jitdump = jitdump::read(&jitdump.bytes, &ReadOptions::default()).unwrap();
    assert!(jitdump.warnings.is_empty(), "{:?}", jitdump.warnings);
    let map = InlineMap::new(vec![log], Some(&jitdump), SourceOptions::default());
    let mut expander =
        V8Expander::new(CodeLogs::from_maps(vec![(map.pid.unwrap_or(0), map)]), ExpandOptions::default());
    let mut folded = Vec::new();
    let summary = collapse_with(script.as_bytes(), &CollapseOptions::default(), &mut expander, &mut folded).unwrap();
    // Tables are checked when a sample needs them.
    expander.code_logs().add_table_problems(&mut diagnostics);
    (String::from_utf8(folded).unwrap(), summary, diagnostics)
}

/// `outer` at 0x1000 inlines `middle`, which inlines `inner`, with the
/// inlining table and inlined functions given; plus the code of `other`
/// loaded later over the second half of `outer`.
fn edge_case_log(inlining: &str, inlined_functions: &str) -> String {
    format!(
        "code-creation,JS,10,1,0x6000,16,inner /a.js:5:1,0x100,~\n\
         code-creation,JS,10,1,0x6100,16,middle /a.js:3:1,0x200,~\n\
         code-creation,JS,10,2,0x1000,256,outer /a.js:1:1,0x300,*\n\
         code-source-info,0x1000,1,0,100,C0O1C16O50I0C32O60I1,{inlining},{inlined_functions}\n\
         code-creation,JS,10,3,0x1080,256,other /a.js:9:1,0x400,*\n"
    )
}

fn edge_case_jitdump() -> JitDumpWriter {
    JitDumpWriter::new(42).load(1_000_000_000, 0x1000, 256, 7, "JS:*outer /a.js:1:1").load(
        3_000_000_000,
        0x1080,
        256,
        8,
        "JS:*other /a.js:9:1",
    )
}

/// One sample at `time` seconds whose leaf is `address`, called from main.
fn sample(time: &str, address: u64) -> String {
    format!(
        "node 42 {time}: 1 cpu-clock: \n\t{address:x} [unknown] (/tmp/perf-42.map)\n\t401000 main+0x10 (/usr/bin/node)\n\n"
    )
}

#[test]
fn inline_stacks_expand_and_survive_bad_tables() {
    let script = sample("2.000000", 0x1000 + 40);
    let expanded = "node;main;JS:*outer /a.js:1:1;JS:*middle /a.js:3:1;JS:*inner /a.js:5:1 1\n";
    let problem = |what: &str| Some(format!("v8.log:3: the code-source-info of this code-creation: {what}"));
    let cases = [
        // The sound table: inner inlined into middle inlined into outer.
        ("F0O10F1O20I0", "S0x200S0x100", expanded, None),
        // A parent chain with a cycle (0 -> 1 -> 0): the walk ends.
        (
            "F0O10I1F1O20I0",
            "S0x200S0x100",
            expanded,
            problem("inlining position 0: expected a parent chain that ends, it loops"),
        ),
        // An inlining id past the table: only the code object's own frame.
        (
            "F0O10",
            "S0x200S0x100",
            "node;main;JS:*outer /a.js:1:1 1\n",
            problem("position entry 2: expected an inlining id below 1, found 1"),
        ),
        // A function index past the inlined functions: that frame is left out.
        (
            "F0O10F5O20I0",
            "S0x200S0x100",
            "node;main;JS:*outer /a.js:1:1;JS:*middle /a.js:3:1 1\n",
            problem("inlining position 1: expected a function index below 2, found 5"),
        ),
        // An SFI no code-creation named.
        (
            "F0O10F1O20I0",
            "S0x200S0x999",
            "node;main;JS:*outer /a.js:1:1;JS:*middle /a.js:3:1;JS:*[unknown function] 1\n",
            None,
        ),
    ];
    for (inlining, functions, expected, expected_problem) in cases {
        let (folded, summary, diagnostics) =
            fold_in_memory(&edge_case_log(inlining, functions), &edge_case_jitdump(), &script);
        assert_eq!(folded, expected, "{inlining} {functions}");
        assert_eq!(summary.total_count, 1);
        let found = diagnostics.tally(WarningKind::LogBadInliningTable).map(|tally| tally.examples[0].clone());
        assert_eq!(found, expected_problem, "{inlining} {functions}");
    }
}

/// Found by the `pipeline` fuzz target: names with line breaks (escaped
/// `\n` in the log, a raw one in the jitdump) broke folded lines apart.
#[test]
fn names_with_line_breaks_stay_on_one_folded_line() {
    let log = edge_case_log("F0O10F1O20I0", "S0x200S0x100").replace("middle /a.js", "mid\\ndle /a.js");
    let jitdump = JitDumpWriter::new(42).load(1_000_000_000, 0x1000, 256, 7, "JS:*outer\r\n/a.js:1:1");
    let (folded, _, _) = fold_in_memory(&log, &jitdump, &sample("2.000000", 0x1000 + 40));
    assert_eq!(folded, "node;main;JS:*outer  /a.js:1:1;JS:*mid dle /a.js:3:1;JS:*inner /a.js:5:1 1\n");
}

#[test]
fn a_code_source_info_without_code_creation_leaves_the_frame_unexpanded() {
    let log =
        edge_case_log("F0O10F1O20I0", "S0x200S0x100").replace("code-source-info,0x1000,", "code-source-info,0x1001,");
    let (folded, _, diagnostics) = fold_in_memory(&log, &edge_case_jitdump(), &sample("2.000000", 0x1000 + 40));
    assert_eq!(folded, "node;main;JS:*outer /a.js:1:1 1\n");
    assert_eq!(diagnostics.tally(WarningKind::LogSourceInfoWithoutCode).unwrap().count, 1);
}

#[test]
fn overlapping_code_objects_resolve_by_sample_time() {
    let log = edge_case_log("F0O10F1O20I0", "S0x200S0x100");
    let script = [
        // Before `other` was loaded over it: `outer` (offset 0xa0, in `inner`).
        sample("2.000000", 0x10a0),
        // After: `other`.
        sample("4.000000", 0x10a0),
        // Past `outer`, inside `other` only, before `other` was loaded:
        // taken as `other` anyway (a clock mismatch).
        sample("2.000000", 0x1110),
        // In neither.
        sample("4.000000", 0x2000),
    ]
    .concat();
    let (folded, summary, _) = fold_in_memory(&log, &edge_case_jitdump(), &script);
    assert_eq!(
        folded,
        "node;main;JS:*other /a.js:9:1 2\n\
         node;main;JS:*outer /a.js:1:1;JS:*middle /a.js:3:1;JS:*inner /a.js:5:1 1\n\
         node;main;[perf-42.map] 1\n"
    );
    assert_eq!((summary.samples_kept, summary.total_count), (4, 4));
}

#[test]
fn samples_without_frames_are_counted_not_written() {
    let script = [
        "node 42 1.0: 1 cpu-clock: \n\n".to_string(),
        sample("2.000000", 0x1000 + 40),
        "node 42 3.0: 5 cpu-clock: \n".to_string(),
    ]
    .concat();
    let (folded, summary, _) =
        fold_in_memory(&edge_case_log("F0O10F1O20I0", "S0x200S0x100"), &edge_case_jitdump(), &script);
    assert_eq!(folded.lines().count(), 1);
    assert_eq!(
        (summary.samples_read, summary.samples_without_frames, summary.samples_kept, summary.total_count),
        (3, 2, 1, 1)
    );
}

#[test]
fn compare_names_the_file_and_line_it_cannot_read() {
    let directory = temp_dir("robustness", "compare");
    let good = directory.join("good.folded");
    std::fs::write(&good, "node;main 5\nnode;main;f 3\n").unwrap();
    let good = path_text(&good);
    let bad_folded = directory.join("bad.folded");
    std::fs::write(&bad_folded, "node;main 5\nno count here\nnode;f x\n").unwrap();
    let bad_folded = path_text(&bad_folded);
    assert_fails(
        &["compare", &good, &bad_folded],
        1,
        &format!(
            "v8inline: {bad_folded}:2: expected a folded stack line `frame;frame;... count`, got \"no count here\" (1 more such lines)\n"
        ),
    );
    let bad_report = directory.join("bad.json");
    std::fs::write(&bad_report, "{\"not\": \"a report\"}").unwrap();
    let bad_report = path_text(&bad_report);
    let output = run(&["compare", &bad_report, &good]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with(&format!("v8inline: {bad_report}: not a v8inline JSON report: ")),
        "{}",
        stderr(&output)
    );
    let missing = path_text(&directory.join("missing.folded"));
    assert_fails(
        &["compare", &good, &missing],
        1,
        &format!("v8inline: {missing}: No such file or directory (os error 2)\n"),
    );
}

/// Found by the `jitdump` fuzz target: a record too small to frame the
/// rest was reported twice by the streamed read, once per window.
#[test]
fn streamed_jitdump_reads_equal_in_memory_reads_on_damaged_files() {
    let whole = JitDumpWriter::new(42)
        .load(1_000_000_000, 0x1000, 256, 7, "JS:*outer /a.js:1:1")
        .load(3_000_000_000, 0x1080, 256, 8, "JS:*other /a.js:9:1")
        .bytes;
    let second_record = 40 + 16 + 40 + "JS:*outer /a.js:1:1".len() + 1 + 256;
    let mut damaged = Vec::new();
    for total_size in [0u32, 8, 15] {
        let mut bytes = whole.clone();
        bytes[second_record + 4..second_record + 8].copy_from_slice(&total_size.to_le_bytes());
        damaged.push(bytes);
    }
    damaged.extend([whole[..whole.len() - 1].to_vec(), whole[..second_record + 10].to_vec(), whole.clone()]);
    for bytes in damaged {
        for options in [ReadOptions::default(), ReadOptions { debug_info: true }] {
            let in_memory = jitdump::read(&bytes, &options).unwrap();
            let streamed = jitdump::read_stream(bytes.as_slice(), &options).unwrap().unwrap();
            assert_eq!(streamed, in_memory, "{} bytes", bytes.len());
            assert!(in_memory.warnings.len() <= 1, "{:?}", in_memory.warnings);
        }
    }
}

// --- Where outputs go ------------------------------------------------------------

#[test]
fn outputs_replace_files_whole_and_write_streams_as_they_are() {
    use std::os::unix::fs::FileTypeExt;
    let directory = temp_dir("robustness", "output-kinds");
    let recording = node20_in(&directory);
    let reference = node20_reference(&recording);
    // A file another name links to: the link is replaced by the output,
    // the file it pointed to is left as it was.
    let outside = directory.join("outside.txt");
    std::fs::write(&outside, "not the user's output").unwrap();
    let link = directory.join("out.folded");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let link_text = path_text(&link);
    folded_ok(&fold(&recording.log, &recording.jitdump, &recording.script, &["-o", &link_text]));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not the user's output");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&link).unwrap(), reference);
    // /dev/null and a flame graph to /dev/null: written, and still the device
    // (as root, a rename over it would have put a file in its place).
    let output = fold(
        &recording.log,
        &recording.jitdump,
        &recording.script,
        &["-o", "/dev/null", "--flamegraph", "/dev/null", "--cpuprofile", "/dev/null"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(std::fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
    // No temporary file is left beside the outputs.
    let mut names: Vec<String> = std::fs::read_dir(&*directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["codspeed-v8-13233.log", "jit-13233.dump", "out.folded", "outside.txt", "perf.script"]);
}
