//! One diagnostics channel: every reader's warnings reach the summary and
//! `--strict`, through the built binary. For each damaged input (a perf.data
//! with a record that does not parse, one cut in the middle, one with a
//! broken record, one whose `perf record` was killed, a tick log with a garbled line, a perf script with a
//! garbage line inside a sample, a cut jitdump, a garbled code log) a run
//! without `--strict` exits 0, writes its output and names the problem, the
//! file and its line or byte offset on standard error; with `--strict` it
//! prints the same summary, exits 1 and writes no output file.
//!
//! Warnings that depend on the machine (a perf.data recorded on another
//! kernel, libraries of a tick log missing here) may come on top of the ones
//! a test makes: the tests look for theirs and check the rest of the summary
//! by its form.

mod common;

use std::path::{Path, PathBuf};

use common::{gunzip, jitdump_path, log_path, recording_dir, run, stderr, temp_dir};

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// The sum of the counts of folded stacks.
fn total_count(folded: &str) -> u64 {
    folded.lines().map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum()
}

/// The count in the summary's headline `v8inline: warning: N input problem(s); ...`.
fn problem_count(message: &str) -> u64 {
    let rest = message.strip_prefix("v8inline: warning: ").unwrap_or_else(|| panic!("no summary:\n{message}"));
    rest.split_once(' ').unwrap().0.parse().unwrap()
}

/// Runs `args` with `-o FILE`: exit 0, the folded stacks in FILE, and each of
/// `expected` (whole lines of the summary) on standard error. Then with
/// `--strict`: the same summary, the failure after it, exit 1, no file.
/// Returns the folded stacks and the summary.
fn warns_then_fails_strictly(directory: &Path, args: &[impl AsRef<str>], expected: &[String]) -> (String, String) {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let output_path = directory.join("out.folded");
    let output_text = text(&output_path);
    let mut lenient = args.clone();
    lenient.extend(["-o", &output_text]);
    let output = run(&lenient);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {message}");
    assert!(output.stdout.is_empty());
    let folded = std::fs::read_to_string(&output_path).unwrap();
    assert!(total_count(&folded) > 0, "{args:?}: nothing folded");
    // One summary: a headline, then count and description lines, each
    // followed by its examples.
    let count = problem_count(&message);
    assert!(message.starts_with(&format!(
        "v8inline: warning: {count} input problem(s); the rest of the input was used:\nv8inline:   "
    )));
    let kind_counts: u64 = message
        .lines()
        .filter_map(|line| line.strip_prefix("v8inline:   ").filter(|rest| !rest.starts_with(' ')))
        .map(|rest| rest.split_once(' ').unwrap().0.parse::<u64>().unwrap())
        .sum();
    assert_eq!(kind_counts, count, "{message}");
    for fragment in expected {
        assert!(message.contains(fragment.as_str()), "expected {fragment:?} in:\n{message}");
    }

    let strict_path = directory.join("strict.folded");
    let strict_text = text(&strict_path);
    let mut strict = vec!["--strict"];
    strict.extend_from_slice(&args);
    strict.extend(["-o", &strict_text]);
    let output = run(&strict);
    assert_eq!(output.status.code(), Some(1), "{strict:?}: {}", stderr(&output));
    assert!(!strict_path.exists(), "--strict wrote {strict_text}");
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr(&output),
        format!("{message}v8inline: --strict: {count} input problem(s), listed above; no output written\n")
    );
    (folded, message)
}

// --- perf.data ------------------------------------------------------------------

/// The bundled perf.data recording's files.
fn perf_data_file(prefix: &str) -> PathBuf {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data");
    std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap()
}

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap())
}

/// `PERF_RECORD_SAMPLE`.
const SAMPLE: u32 = 9;
/// The sample format of the bundled recording: IP, TID, TIME, PERIOD,
/// CALLCHAIN (`perf record -g`); so a sample's body is ip, pid and tid, time,
/// period, the callchain's length and its addresses.
const SAMPLE_FORMAT: u64 = 0x1 | 0x2 | 0x4 | 0x100 | 0x20;
const PERIOD_IN_BODY: usize = 24;
const CALLCHAIN_LENGTH_IN_BODY: usize = 32;

/// A record of the data section.
#[derive(Debug, Clone, Copy)]
struct PerfRecord {
    offset: usize,
    record_type: u32,
    size: usize,
}

impl PerfRecord {
    fn period(&self, bytes: &[u8]) -> u64 {
        assert_eq!(self.record_type, SAMPLE);
        u64_at(bytes, self.offset + 8 + PERIOD_IN_BODY)
    }

    fn end(&self) -> usize {
        self.offset + self.size
    }
}

/// The whole records of a perf.data's `bytes` from byte `start` up to byte
/// `end`, walked by their headers (`type: u32, misc: u16, size: u16`); a
/// record reaching past `end` is not whole.
fn records_between(bytes: &[u8], start: usize, end: usize) -> Vec<PerfRecord> {
    assert_eq!(&bytes[..8], b"PERFILE2");
    let attributes = u64_at(bytes, 24) as usize;
    assert_eq!(u64_at(bytes, attributes + 24), SAMPLE_FORMAT, "the sample format the test relies on");
    let mut records = Vec::new();
    let mut offset = start;
    while offset + 8 <= end {
        let record_type = u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap());
        let size = u16::from_le_bytes(bytes[offset + 6..offset + 8].try_into().unwrap()) as usize;
        if offset + size > end {
            break;
        }
        records.push(PerfRecord { offset, record_type, size });
        offset += size;
    }
    records
}

/// The decompressed bundled perf.data and its records (`perf_file_header`:
/// the data section's offset and size at byte 40).
fn perf_data() -> (Vec<u8>, Vec<PerfRecord>) {
    let bytes = gunzip(&perf_data_file("perf.data"));
    let (data_offset, data_size) = (u64_at(&bytes, 40) as usize, u64_at(&bytes, 48) as usize);
    let records = records_between(&bytes, data_offset, data_offset + data_size);
    assert_eq!(records.last().unwrap().end(), data_offset + data_size);
    (bytes, records)
}

fn samples(records: &[PerfRecord]) -> Vec<PerfRecord> {
    records.iter().copied().filter(|record| record.record_type == SAMPLE).collect()
}

/// `--perf-data PATH` with the recording's code log and jitdump.
/// Writes `bytes` (a damaged perf.data) to `path`; the arguments that fold it.
fn write_perf_data(path: &Path, bytes: &[u8]) -> Vec<String> {
    std::fs::write(path, bytes).unwrap();
    perf_data_args(&text(path))
}

fn perf_data_args(path: &str) -> Vec<String> {
    ["--perf-data", path, "--log", &text(&perf_data_file("codspeed-v8-")), "--jitdump", &text(&perf_data_file("jit-"))]
        .map(str::to_string)
        .to_vec()
}

/// Folds the undamaged perf.data: the folded stacks and standard error.
fn perf_data_reference(directory: &Path, bytes: &[u8]) -> (String, String) {
    let whole = directory.join("whole.perf.data");
    std::fs::write(&whole, bytes).unwrap();
    let args = perf_data_args(&text(&whole));
    let output = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(output.status.success(), "{}", stderr(&output));
    let message = stderr(&output);
    (String::from_utf8(output.stdout).unwrap(), message)
}

#[test]
fn a_perf_data_sample_that_does_not_parse_is_skipped_and_fails_strict() {
    let directory = temp_dir("strict", "perf-data-flipped");
    let (mut bytes, records) = perf_data();
    let (reference, reference_message) = perf_data_reference(&directory, &bytes);
    // A callchain length of 2^40 and more, in the tenth sample: its addresses
    // would go far past the record's end.
    let damaged = samples(&records)[10];
    bytes[damaged.offset + 8 + CALLCHAIN_LENGTH_IN_BODY + 5] ^= 0xff;
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[format!(
            "v8inline:   1 perf.data record(s) skipped: body not as the record type requires\n\
             v8inline:     {}: byte offset {}: SAMPLE record of {} bytes: expected the fields its event's sample format declares, ",
            text(&path),
            damaged.offset,
            damaged.size
        )],
    );
    assert!(!reference_message.contains("perf.data record(s) skipped"), "{reference_message}");
    // Only that sample is missing.
    assert_eq!(total_count(&folded), total_count(&reference) - damaged.period(&bytes));
}

/// `PERF_RECORD_MMAP2`.
const MMAP2: u32 = 10;

#[test]
fn an_mmap2_record_with_a_build_id_longer_than_20_bytes_is_skipped_and_fails_strict() {
    // Found by fuzz/fuzz_targets/perf_data.rs: linux-perf-event-reader 0.10
    // asserts that the build id of an MMAP2 record (misc bit 14) is at most
    // 20 bytes long, and aborted the process on this one.
    let directory = temp_dir("strict", "perf-data-build-id");
    let (mut bytes, records) = perf_data();
    let (reference, _) = perf_data_reference(&directory, &bytes);
    let mmap2 = *records.iter().find(|record| record.record_type == MMAP2).unwrap();
    let misc = u16::from_le_bytes(bytes[mmap2.offset + 4..mmap2.offset + 6].try_into().unwrap()) | 1 << 14;
    bytes[mmap2.offset + 4..mmap2.offset + 6].copy_from_slice(&misc.to_le_bytes());
    // The build id's length, after pid, tid, address, length, page offset.
    bytes[mmap2.offset + 8 + 32] = 254;
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[format!(
            "v8inline:   1 perf.data record(s) skipped: body not as the record type requires\n\
             v8inline:     {}: byte offset {}: MMAP2 record of {} bytes: expected the fields its event's sample \
             format declares, a build id of 254 bytes, more than the 20 an MMAP2 record holds\n",
            text(&path),
            mmap2.offset,
            mmap2.size
        )],
    );
    // Every sample is kept; only the frames in that mapping lose their names.
    assert_eq!(total_count(&folded), total_count(&reference));
}

/// `PERF_RECORD_COMM`.
const COMM: u32 = 3;

#[test]
fn line_breaks_in_perf_data_thread_and_file_names_stay_on_one_folded_line() {
    // Found by fuzz/fuzz_targets/perf_data.rs: an MMAP2 path with a line
    // break split a folded line in two. The process's COMM name `node` and
    // the path of its MMAP2 record of /usr/bin/node get one each.
    let directory = temp_dir("strict", "perf-data-line-breaks");
    let (mut bytes, records) = perf_data();
    let (reference, _) = perf_data_reference(&directory, &bytes);
    let mut names_changed = 0;
    for record in &records {
        // COMM: pid, tid, name; MMAP2: 64 bytes of fields, then the path.
        let name_offset = match record.record_type {
            COMM => 8,
            MMAP2 => 64,
            _ => continue,
        };
        let name = &mut bytes[record.offset + 8 + name_offset..record.end()];
        if name.starts_with(b"node\0") || name.starts_with(b"/usr/bin/node\0") {
            let length = name.iter().position(|&byte| byte == 0).unwrap();
            name[length - 2] = b'\n';
            names_changed += 1;
        }
    }
    assert!(names_changed >= 2, "{names_changed}");
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let output = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let folded = String::from_utf8(output.stdout).unwrap();
    // Every line is `stack count`; none was split. The root is the comm
    // with its space made `_`, as inferno makes it.
    for line in folded.lines() {
        let (_, count) = line.rsplit_once(' ').unwrap();
        assert!(count.parse::<u64>().is_ok(), "{line:?}");
    }
    assert_eq!(total_count(&folded), total_count(&reference));
    let counted_under = |folded: &str, root: &str| -> u64 {
        total_count(
            &folded.lines().filter(|line| line.starts_with(root)).map(|line| format!("{line}\n")).collect::<String>(),
        )
    };
    // Its frames in /usr/bin/node are not symbolized now (the file has
    // another name), so stacks merge; the samples under the root are the same.
    assert_eq!(counted_under(&folded, "no_e;"), counted_under(&reference, "node;"));
    assert!(folded.contains(";[no e];"), "{folded}");
}

/// `PERF_RECORD_AUXTRACE`.
const AUXTRACE: u32 = 71;

#[test]
fn an_auxtrace_record_declaring_more_trace_data_than_the_file_holds_ends_the_reading_and_fails_strict() {
    // Found by fuzz/fuzz_targets/perf_data.rs: linux-perf-data allocates the
    // trace data an AUXTRACE record declares (its body's first field) before
    // reading it, and aborted the process on 46 TB.
    auxtrace_record_ends_the_reading("perf-data-auxtrace", false);
}

#[test]
fn an_auxtrace_record_across_the_end_of_the_data_section_ends_the_reading_and_fails_strict() {
    // Found by fuzz/fuzz_targets/perf_data.rs: an AUXTRACE record that the
    // data section ends inside, in a file that goes on after it.
    // linux-perf-data still reads it whole and allocated the 46 TB it
    // declared: the process aborted.
    auxtrace_record_ends_the_reading("perf-data-auxtrace-across-the-end", true);
}

/// The 11th sample of the recording turned into an AUXTRACE record
/// declaring 2^45 bytes of trace data; with `data_section_ends_inside`, the
/// data section ends 16 bytes into it (no feature sections: they would
/// start at the new data end). The samples before it are folded, then
/// `--strict` refuses the file.
fn auxtrace_record_ends_the_reading(directory_name: &str, data_section_ends_inside: bool) {
    let directory = temp_dir("strict", directory_name);
    let (mut bytes, records) = perf_data();
    let damaged = samples(&records)[10];
    bytes[damaged.offset..damaged.offset + 4].copy_from_slice(&AUXTRACE.to_le_bytes());
    let trace_size: u64 = 1 << 45;
    bytes[damaged.offset + 8..damaged.offset + 16].copy_from_slice(&trace_size.to_le_bytes());
    let data_offset = u64_at(&bytes, 40) as usize;
    if data_section_ends_inside {
        bytes[48..56].copy_from_slice(&((damaged.offset + 16 - data_offset) as u64).to_le_bytes());
        bytes[72..104].fill(0);
    }
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let data_end = data_offset + u64_at(&bytes, 48) as usize;
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[format!(
            "v8inline:   1 perf.data file(s) with a broken record: reading stopped there\n\
             v8inline:     {}: byte offset {}: expected an AUXTRACE record and the {trace_size} bytes of trace data \
             it declares, the data section ends {} bytes after its start; the records before it were used\n",
            text(&path),
            damaged.offset,
            data_end - damaged.offset
        )],
    );
    let before: u64 = samples(&records)[..10].iter().map(|sample| sample.period(&bytes)).sum();
    assert_eq!(total_count(&folded), before);
}

/// `PERF_RECORD_FINISHED_ROUND`.
const FINISHED_ROUND: u32 = 68;

#[test]
fn a_finished_round_record_with_a_body_ends_the_reading_and_fails_strict() {
    // Found by fuzz/fuzz_targets/perf_data.rs: linux-perf-data reads the
    // header of a FINISHED_ROUND record alone and takes its body for the
    // next record; there an AUXTRACE header declaring 32 TB of trace data
    // aborted the process.
    let directory = temp_dir("strict", "perf-data-finished-round");
    let (mut bytes, records) = perf_data();
    let damaged = samples(&records)[10];
    bytes[damaged.offset..damaged.offset + 4].copy_from_slice(&FINISHED_ROUND.to_le_bytes());
    let body = damaged.offset + 8;
    bytes[body..body + 4].copy_from_slice(&AUXTRACE.to_le_bytes());
    bytes[body + 6..body + 8].copy_from_slice(&48u16.to_le_bytes());
    bytes[body + 8..body + 16].copy_from_slice(&(1u64 << 45).to_le_bytes());
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[format!(
            "v8inline:   1 perf.data file(s) with a broken record: reading stopped there\n\
             v8inline:     {}: byte offset {}: expected a FINISHED_ROUND record of 8 bytes (a header alone), found \
             one of {} bytes; the records before it were used\n",
            text(&path),
            damaged.offset,
            damaged.size
        )],
    );
    let before: u64 = samples(&records)[..10].iter().map(|sample| sample.period(&bytes)).sum();
    assert_eq!(total_count(&folded), before);
}

/// `PERF_RECORD_COMPRESSED`: its body is zstd data.
const COMPRESSED: u32 = 81;

/// The bundled `perf record -z` recording's perf.data, its records and
/// where its data section ends.
fn compressed_perf_data() -> (Vec<u8>, Vec<PerfRecord>, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data-z/perf.data.gz");
    let bytes = gunzip(&path);
    let (data_offset, data_size) = (u64_at(&bytes, 40) as usize, u64_at(&bytes, 48) as usize);
    let records = records_between(&bytes, data_offset, data_offset + data_size);
    assert_eq!(records.last().unwrap().end(), data_offset + data_size);
    (bytes, records, data_offset + data_size)
}

/// `bytes` with the records of its data section between byte `start` and
/// byte `end` replaced by `replacement`, the data size set and no feature
/// sections (their offsets would have moved).
fn replace_records(bytes: &[u8], start: usize, end: usize, data_end: usize, replacement: &[u8]) -> Vec<u8> {
    let mut replaced = [&bytes[..start], replacement, &bytes[end..data_end]].concat();
    let data_size = replaced.len() as u64 - u64_at(bytes, 40);
    replaced[48..56].copy_from_slice(&data_size.to_le_bytes());
    replaced[72..104].fill(0);
    replaced
}

#[test]
fn a_compressed_record_expanding_to_gigabytes_ends_the_reading_and_fails_strict() {
    // linux-perf-data decompresses each compressed record whole into
    // memory. perf writes one zstd frame over all of them; the last one's
    // data is replaced by blocks going on with that frame: 16,380 RLE blocks
    // of 128 KiB of one byte, 64 KB that expand to 2 GiB.
    let directory = temp_dir("strict", "perf-data-zstd-bomb");
    let (bytes, records, data_end) = compressed_perf_data();
    let compressed: Vec<PerfRecord> =
        records.iter().copied().filter(|record| record.record_type == COMPRESSED).collect();
    assert_eq!(compressed.len(), 3);
    let last = compressed[2];
    let rle_block_header = ((128u32 << 10) << 3 | 1 << 1).to_le_bytes();
    let bomb: Vec<u8> =
        (0..16_380).flat_map(|_| [rle_block_header[0], rle_block_header[1], rle_block_header[2], 0x10]).collect();
    let mut record = Vec::new();
    record.extend_from_slice(&COMPRESSED.to_le_bytes());
    record.extend_from_slice(&0u16.to_le_bytes());
    record.extend_from_slice(&u16::try_from(8 + bomb.len()).unwrap().to_le_bytes());
    record.extend_from_slice(&bomb);
    let damaged = replace_records(&bytes, last.offset, last.end(), data_end, &record);
    let path = directory.join("perf.data");
    std::fs::write(&path, &damaged).unwrap();
    // The same recording without its last compressed record.
    let without = replace_records(&bytes, last.offset, last.end(), data_end, &[]);
    let without_path = directory.join("without.perf.data");
    std::fs::write(&without_path, &without).unwrap();
    let output = run(&["--perf-data", &text(&without_path)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let reference = String::from_utf8(output.stdout).unwrap();
    assert!(total_count(&reference) > 0);

    let compressed_bytes: usize = compressed[..2].iter().map(|record| record.size - 8).sum::<usize>() + bomb.len();
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &["--perf-data", &text(&path)],
        &[format!(
            "v8inline:   1 perf.data file(s) with a broken record: reading stopped there\n\
             v8inline:     {}: byte offset {}: expected compressed records whose records take at most 1000 times \
             their size in memory (plus 1048576 bytes), the {compressed_bytes} bytes of compressed data up to this \
             one's end take more than ",
            text(&path),
            last.offset
        )],
    );
    // Every record before it.
    assert_eq!(folded, reference);
}

#[test]
fn a_perf_data_cut_in_the_middle_is_read_up_to_the_cut_and_fails_strict() {
    let directory = temp_dir("strict", "perf-data-cut");
    let (bytes, records) = perf_data();
    let cut_at = bytes.len() / 2;
    let path = directory.join("perf.data");
    std::fs::write(&path, &bytes[..cut_at]).unwrap();
    let whole_records: Vec<PerfRecord> = records.iter().copied().filter(|record| record.end() <= cut_at).collect();
    let data_offset = u64_at(&bytes, 40) as usize;
    let args = perf_data_args(&text(&path));
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[format!(
            "v8inline:   1 perf.data file(s) cut short: the whole records before the cut were used\n\
             v8inline:     {}: byte offset {data_offset}: expected a data section of {} bytes, the file ends {} bytes \
             into it (cut short); the records up to byte offset {} were used, the feature sections (build ids, event \
             names) are lost\n",
            text(&path),
            u64_at(&bytes, 48),
            cut_at - data_offset,
            whole_records.last().unwrap().end()
        )],
    );
    // Every whole sample before the cut, nothing else.
    let periods: u64 = samples(&whole_records).iter().map(|sample| sample.period(&bytes)).sum();
    assert_eq!(total_count(&folded), periods);

    // The same cut through gzip: the stream stops early, then the file.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, &bytes).unwrap();
    let compressed = encoder.finish().unwrap();
    let compressed_path = directory.join("perf.data.gz");
    std::fs::write(&compressed_path, &compressed[..compressed.len() / 2]).unwrap();
    let args = perf_data_args(&text(&compressed_path));
    let gz_name = text(&compressed_path);
    warns_then_fails_strictly(
        &directory,
        &args,
        &[
            format!(
                "v8inline:   1 compressed file(s) cut short: what was before the cut was used\n\
                 v8inline:     {gz_name}: expected a gzip stream to its end, it stops after "
            ),
            format!(
                "v8inline:   1 perf.data file(s) cut short: the whole records before the cut were used\n\
                 v8inline:     {gz_name}: byte offset {data_offset}: expected a data section of "
            ),
        ],
    );
}

#[test]
fn a_broken_perf_data_record_ends_the_reading_there_and_fails_strict() {
    let directory = temp_dir("strict", "perf-data-broken");
    let (mut bytes, records) = perf_data();
    // The tenth sample's size is 4, less than its own header: the records
    // cannot be framed from there on.
    let broken = samples(&records)[10];
    bytes[broken.offset + 6..broken.offset + 8].copy_from_slice(&4u16.to_le_bytes());
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[format!(
            "v8inline:   1 perf.data file(s) with a broken record: reading stopped there\n\
             v8inline:     {}: byte offset {}: expected a whole record, The specified size in the perf event header \
             was smaller than the header itself; the records before it were used\n",
            text(&path),
            broken.offset
        )],
    );
    // Every sample before it, also those linux-perf-data had read ahead in
    // the same round.
    let before: u64 = samples(&records)[..10].iter().map(|sample| sample.period(&bytes)).sum();
    assert_eq!(total_count(&folded), before);
}

/// The summary line and example of an unfinished perf.data at `path` of
/// `file_length` bytes, whose records start at `data_offset` and were used
/// up to `data_end`.
fn unfinished_warning(path: &Path, data_offset: usize, data_end: usize, file_length: usize) -> String {
    format!(
        "v8inline:   1 perf.data file(s) of a recording that was not finished (perf record killed): the whole \
         records written were used\n\
         v8inline:     {}: byte offset 48: expected the size of the data section, found 0: the recording was not \
         finished (perf record was killed before it could write the header); the whole records from byte offset \
         {data_offset} up to byte offset {data_end} of the file's {file_length} bytes were used, the feature \
         sections (build ids, event names) are missing\n",
        text(path)
    )
}

/// The files of `testdata/perf-data-z/killed`: a `perf record` killed with
/// SIGKILL while node ran on (`testdata/record.sh perf-data-z`).
fn killed_file(prefix: &str) -> PathBuf {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/perf-data-z/killed");
    std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap()
}

/// `--perf-data PATH` with the killed recording's code log and jitdump.
fn killed_args(path: &Path) -> Vec<String> {
    ["--perf-data", &text(path), "--log", &text(&killed_file("codspeed-v8-")), "--jitdump", &text(&killed_file("jit-"))]
        .map(str::to_string)
        .to_vec()
}

#[test]
fn a_perf_data_of_a_killed_perf_record_is_read_to_its_last_whole_record_and_fails_strict() {
    let directory = temp_dir("strict", "perf-data-killed");
    let bytes = gunzip(&killed_file("perf.data"));
    // As perf left it: the data size never written, no feature sections.
    let data_offset = u64_at(&bytes, 40) as usize;
    assert_eq!(u64_at(&bytes, 48), 0);
    let records = records_between(&bytes, data_offset, bytes.len());
    let data_end = records.last().unwrap().end();
    let path = directory.join("perf.data");
    std::fs::write(&path, &bytes).unwrap();
    let args = killed_args(&path);
    let (folded, _) =
        warns_then_fails_strictly(&directory, &args, &[unfinished_warning(&path, data_offset, data_end, bytes.len())]);
    // Every sample written before the kill, expanded.
    let periods: u64 = samples(&records).iter().map(|sample| sample.period(&bytes)).sum();
    assert_eq!(samples(&records).len(), 379);
    assert_eq!(total_count(&folded), periods);
    assert!(folded.contains(";JS:*square /tmp/v8inline-testdata/perf-data-z/killed/deep.js:"), "{folded}");

    // The same file with the data size perf would have written at its end
    // (and no features): the same stacks, and no warning of an unfinished recording.
    let mut finished = bytes.clone();
    finished[48..56].copy_from_slice(&((data_end - data_offset) as u64).to_le_bytes());
    finished[72..104].fill(0); // no feature sections follow
    let finished_path = directory.join("finished.perf.data");
    std::fs::write(&finished_path, &finished).unwrap();
    let args = killed_args(&finished_path);
    let output = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("not finished"), "{}", stderr(&output));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), folded);

    // Killed in the middle of writing a record: the records before it.
    let middle = records[records.len() / 2];
    let cut_path = directory.join("cut.perf.data");
    std::fs::write(&cut_path, &bytes[..middle.offset + middle.size / 2]).unwrap();
    let args = killed_args(&cut_path);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &args,
        &[unfinished_warning(&cut_path, data_offset, middle.offset, middle.offset + middle.size / 2)],
    );
    let before = records_between(&bytes, data_offset, middle.offset);
    let periods: u64 = samples(&before).iter().map(|sample| sample.period(&bytes)).sum();
    assert_eq!(total_count(&folded), periods);
}

#[test]
fn a_perf_data_with_data_size_zero_and_no_features_is_read_as_unfinished_and_fails_strict() {
    // The bundled recording as a killed perf leaves it: the header's data
    // size 0 (its feature bits still set) and nothing after the records.
    let directory = temp_dir("strict", "perf-data-zeroed");
    let (mut bytes, records) = perf_data();
    let (reference, _) = perf_data_reference(&directory, &bytes);
    let data_offset = u64_at(&bytes, 40) as usize;
    let data_end = records.last().unwrap().end();
    bytes.truncate(data_end);
    bytes[48..56].fill(0);
    let path = directory.join("perf.data");
    let args = write_perf_data(&path, &bytes);
    let (folded, _) =
        warns_then_fails_strictly(&directory, &args, &[unfinished_warning(&path, data_offset, data_end, data_end)]);
    assert_eq!(total_count(&folded), total_count(&reference));
}

// --- Tick logs --------------------------------------------------------------------

/// The node 20 `--prof` log.
fn prof_log() -> PathBuf {
    let directory = recording_dir(20).join("prof");
    std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with(".log.gz"))
        .unwrap()
}

#[test]
fn a_garbled_tick_line_is_skipped_and_fails_strict() {
    let directory = temp_dir("strict", "ticks");
    let log = String::from_utf8(gunzip(&prof_log())).unwrap();
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    // The 100th tick's PC is not an address.
    let index = lines.iter().enumerate().filter(|(_, line)| line.starts_with("tick,")).nth(100).unwrap().0;
    let fields: Vec<&str> = lines[index].split(',').collect();
    lines[index] = format!("tick,0xGARBLED,{}", fields[2..].join(","));
    let path = directory.join(prof_log().file_stem().unwrap());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let reference = run(&["--ticks", &text(&prof_log())]);
    assert!(reference.status.success());
    let reference_message = stderr(&reference);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &["--ticks", &text(&path)],
        &[format!(
            "v8inline:   1 code-log line(s) skipped: fields not as V8 writes them\n\
             v8inline:     {}:{}: tick: field 2: expected a pc\n",
            text(&path),
            index + 1
        )],
    );
    assert!(!reference_message.contains("code-log line(s) skipped"), "{reference_message}");
    // One count per tick: all but the garbled one.
    assert_eq!(total_count(&folded), total_count(&String::from_utf8(reference.stdout).unwrap()) - 1);
}

#[test]
fn a_compressed_tick_log_cut_short_is_used_up_to_the_cut_and_fails_strict() {
    let directory = temp_dir("strict", "ticks-cut");
    let compressed = std::fs::read(prof_log()).unwrap();
    let path = directory.join(prof_log().file_name().unwrap());
    std::fs::write(&path, &compressed[..compressed.len() * 3 / 4]).unwrap();
    let name = text(&path);
    let (folded, _) = warns_then_fails_strictly(
        &directory,
        &["--ticks", &name],
        &[format!(
            "v8inline:   1 compressed file(s) cut short: what was before the cut was used\n\
             v8inline:     {name}: expected a gzip stream to its end, it stops after "
        )],
    );
    let whole_ticks =
        String::from_utf8(gunzip(&prof_log())).unwrap().lines().filter(|line| line.starts_with("tick,")).count();
    assert!(total_count(&folded) < whole_ticks as u64);
}

// --- Perf script, jitdump, code log ------------------------------------------------

/// The node 20 recording's log, jitdump and perf script, decompressed into
/// `directory` under their own names (they pair up by pid).
struct Node20 {
    log: PathBuf,
    jitdump: PathBuf,
    script: PathBuf,
}

fn node20_in(directory: &Path) -> Node20 {
    let decompressed = |source: &Path| {
        let path = directory.join(source.file_stem().unwrap());
        std::fs::write(&path, gunzip(source)).unwrap();
        path
    };
    Node20 {
        log: decompressed(&log_path(20)),
        jitdump: decompressed(&jitdump_path(20)),
        script: decompressed(&recording_dir(20).join("perf.script.gz")),
    }
}

impl Node20 {
    fn args(&self) -> [String; 6] {
        ["--log", &text(&self.log), "--jitdump", &text(&self.jitdump), "--no-disk-sources", &text(&self.script)]
            .map(str::to_string)
    }

    /// Folds the files, expecting no warning.
    fn reference(&self) -> String {
        let args = self.args();
        let output = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(output.status.success());
        assert_eq!(stderr(&output), "", "the real recording folds without warnings");
        String::from_utf8(output.stdout).unwrap()
    }

    /// [`warns_then_fails_strictly`] with the files; this recording's summary
    /// depends on nothing of the machine, so it is `expected` exactly.
    fn check(&self, directory: &Path, expected: &str) -> String {
        let args = self.args();
        let (folded, message) = warns_then_fails_strictly(directory, &args, &[expected.to_string()]);
        assert_eq!(message, expected);
        folded
    }
}

#[test]
fn a_garbage_line_inside_a_perf_script_sample_is_skipped_and_fails_strict() {
    let directory = temp_dir("strict", "perf-script");
    let files = node20_in(&directory);
    let reference = files.reference();
    // After the first stack line of the first sample.
    let script = std::fs::read_to_string(&files.script).unwrap();
    let mut lines: Vec<&str> = script.split_inclusive('\n').collect();
    let first_stack_line = lines.iter().position(|line| line.starts_with('\t')).unwrap();
    lines.insert(first_stack_line + 1, "\tgarbage, not a frame\n");
    std::fs::write(&files.script, lines.concat()).unwrap();
    let folded = files.check(
        &directory,
        &format!(
            "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
             v8inline:   1 perf-script line(s) skipped: not a stack line `address symbol (module)`\n\
             v8inline:     {}:{}: \"\\tgarbage, not a frame\"\n",
            text(&files.script),
            first_stack_line + 2
        ),
    );
    // The sample around it is folded as usual.
    assert_eq!(folded, reference);
}

#[test]
fn a_cut_jitdump_is_used_up_to_the_cut_and_fails_strict() {
    let directory = temp_dir("strict", "jitdump");
    let files = node20_in(&directory);
    let bytes = std::fs::read(&files.jitdump).unwrap();
    // In the middle of the record that holds the middle byte: records are
    // `id: u32, total_size: u32, timestamp: u64, ...` after the header.
    let cut_at = bytes.len() / 2;
    let mut record = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let record_size = loop {
        let size = u32::from_le_bytes(bytes[record + 4..record + 8].try_into().unwrap()) as usize;
        if record + size > cut_at {
            break size;
        }
        record += size;
    };
    let cut_at = record + record_size / 2;
    std::fs::write(&files.jitdump, &bytes[..cut_at]).unwrap();
    // The code of every JavaScript sample was loaded after the cut: the code
    // log has it (tests/killed.rs), so only the cut is said.
    files.check(
        &directory,
        &format!(
            "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
             v8inline:   1 jitdump(s) cut short: the whole records before the cut were used\n\
             v8inline:     {jitdump}: byte offset {record}: expected a whole record of {record_size} bytes, the file \
             ends {} bytes later (cut short); reading stopped\n",
            cut_at - record,
            jitdump = text(&files.jitdump),
        ),
    );
}

/// The node 20 log with the position table of the `code-source-info` of the
/// TurboFan code at `address` garbled; the line of its `code-creation`.
fn garble_position_table(files: &Node20, address: &str) -> usize {
    let log = std::fs::read_to_string(&files.log).unwrap();
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    let creation = lines.iter().position(|line| line.starts_with("code-creation,") && line.contains(address)).unwrap();
    let info = lines.iter().position(|line| line.starts_with(&format!("code-source-info,{address},"))).unwrap();
    let mut fields: Vec<&str> = lines[info].split(',').collect();
    fields[5] = "C1C2O3";
    lines[info] = fields.join(",");
    std::fs::write(&files.log, lines.join("\n") + "\n").unwrap();
    creation + 1
}

#[test]
fn a_garbled_table_of_sampled_code_leaves_its_samples_unexpanded_and_fails_strict() {
    let directory = temp_dir("strict", "code-log-table");
    let files = node20_in(&directory);
    let reference = files.reference();
    // The first TurboFan code of `kernel`, where most samples are.
    let address = "0x7f3a177ea5c0";
    let creation_line = garble_position_table(&files, address);
    let log_name = text(&files.log);
    let folded = files.check(
        &directory,
        &format!(
            "v8inline: warning: 1 input problem(s); the rest of the input was used:\n\
             v8inline:   1 code-source-info table(s) of sampled code that do not parse (not used) or have ids out \
             of range or parent chains that loop (inline stacks cut there)\n\
             v8inline:     {log_name}:{creation_line}: the code-source-info of this code-creation: field 6 \
             (positions): unexpected text at byte 2, expected C<n>O<n>[I<n>]\n"
        ),
    );
    // Its samples keep the one frame of the code object, as without the log.
    assert_eq!(total_count(&folded), total_count(&reference));
    let leaf = |folded: &str| {
        let kernel_leaf = ";JS:*kernel /tmp/v8inline-testdata/node20/deep.js:32:16 ";
        folded
            .lines()
            .filter(|line| line.contains(kernel_leaf))
            .map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum::<u64>()
    };
    assert!(leaf(&folded) > leaf(&reference) + 100, "{} {}", leaf(&folded), leaf(&reference));
    // `lookup` of an address in it says so too, and refuses it with --strict.
    let lookup = ["lookup", "--log", &log_name, "--jitdump", &text(&files.jitdump), "0x7f3a177ea696"];
    let output = run(&lookup);
    assert_eq!(output.status.code(), Some(0));
    assert!(stderr(&output).contains("field 6 (positions): unexpected text at byte 2"), "{}", stderr(&output));
    let mut strict = lookup.to_vec();
    strict.insert(1, "--strict");
    let output = run(&strict);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
}

#[test]
fn a_garbled_table_of_code_no_sample_needs_is_not_read() {
    // Tables are checked when first decoded: one of code that no sample ran
    // in changes nothing (issue 14: the check was a quarter of reading a log
    // without script sources).
    let directory = temp_dir("strict", "code-log-unsampled-table");
    let files = node20_in(&directory);
    let reference = files.reference();
    let script = std::fs::read_to_string(&files.script).unwrap();
    let log = std::fs::read_to_string(&files.log).unwrap();
    let unsampled = log
        .lines()
        .filter(|line| line.starts_with("code-creation,JS,") && line.ends_with(",*"))
        .map(|line| line.split(',').nth(4).unwrap())
        .find(|address| {
            let start = u64::from_str_radix(&address[2..], 16).unwrap();
            // No frame within its first 4 KB (its size is at most that here).
            !script
                .lines()
                .filter_map(|line| line.trim_start().split(' ').next())
                .any(|frame| u64::from_str_radix(frame, 16).is_ok_and(|pc| (start..start + 4096).contains(&pc)))
        })
        .unwrap()
        .to_string();
    garble_position_table(&files, &unsampled);
    assert_eq!(files.reference(), reference);
}

#[test]
fn a_garbled_code_log_line_is_skipped_and_fails_strict() {
    let directory = temp_dir("strict", "code-log");
    let files = node20_in(&directory);
    let log = std::fs::read_to_string(&files.log).unwrap();
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    // The kind field of an optimized code-creation garbled: the line is
    // skipped, and so the code-source-info of that code object after it
    // (one whose address no other code object had).
    let address_of = |line: &str| line.split(',').nth(4).map(str::to_string);
    let mut creations_at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in lines.iter().filter(|line| line.starts_with("code-creation,")) {
        *creations_at.entry(address_of(line).unwrap()).or_default() += 1;
    }
    let (index, address) = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.starts_with("code-creation,JS,") && line.ends_with(",*"))
        .map(|(index, line)| (index, address_of(line).unwrap()))
        .find(|(_, address)| creations_at[address] == 1)
        .unwrap();
    let mut fields: Vec<&str> = lines[index].split(',').collect();
    fields[2] = "garbled";
    lines[index] = fields.join(",");
    let source_info = index
        + lines[index..].iter().position(|line| line.starts_with(&format!("code-source-info,{address},"))).unwrap();
    std::fs::write(&files.log, lines.join("\n") + "\n").unwrap();
    let log_name = text(&files.log);
    files.check(
        &directory,
        &format!(
            "v8inline: warning: 2 input problem(s); the rest of the input was used:\n\
             v8inline:   1 code-log line(s) skipped: fields not as V8 writes them\n\
             v8inline:     {log_name}:{}: code-creation: field 3: expected a code kind\n\
             v8inline:   1 code-source-info record(s) skipped: no code-creation before them\n\
             v8inline:     {log_name}:{}: code-source-info for {address} with no code-creation before it\n",
            index + 1,
            source_info + 1
        ),
    );
}
