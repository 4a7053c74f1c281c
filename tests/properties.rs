//! Invariants of the main job, as property tests over inputs made of real
//! node 20 samples (raw and `perf inject -j` scripts) shuffled, repeated and
//! interleaved with lines that are not perf-script lines:
//!
//! - the counts written equal the periods of the samples read;
//! - the output does not depend on how the input arrives (random small reads
//!   through a small buffer);
//! - expansion never drops a frame: every stack line gives at least one
//!   frame, and every frame that is not a raw JIT address is still there, in
//!   order;
//! - the same input gives byte-identical output, with a fresh expander or a
//!   reused one (its caches change nothing).

mod common;

use std::io::{BufReader, Read};
use std::sync::OnceLock;

use common::{jitdump_path, log_path, recording_dir};
use proptest::prelude::*;
use v8inline::internals::collapse::{CollapseOptions, CollapseSummary};
use v8inline::internals::expansion::{FrameExpander, NoExpansion};
use v8inline::internals::formats::jitdump::{self, ReadOptions};
use v8inline::internals::formats::v8log::CodeLog;
use v8inline::internals::pipeline::collapse_with;
use v8inline::internals::v8::code_logs::CodeLogs;
use v8inline::internals::v8::expand::{ExpandOptions, V8Expander};
use v8inline::internals::v8::inline_map::{InlineMap, SourceOptions};

fn gunzip(path: &std::path::Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()).read_to_end(&mut bytes).unwrap();
    bytes
}

/// One real sample: its text (event line, stack lines, blank line) and period.
struct RealSample {
    text: String,
    period: u64,
}

/// The node 20 recording, decompressed once.
struct Recording {
    log: Vec<u8>,
    jitdump: Vec<u8>,
    /// Samples of the raw script, then of the injected one.
    samples: Vec<RealSample>,
}

fn samples_of(script: &[u8]) -> Vec<RealSample> {
    String::from_utf8(script.to_vec())
        .unwrap()
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let event_line = block.lines().next().unwrap();
            let before_event = event_line.split("cpu-clock:").next().unwrap().trim_end();
            let period = before_event.rsplit(' ').next().unwrap().parse().unwrap();
            RealSample { text: format!("{block}\n\n"), period }
        })
        .collect()
}

fn recording() -> &'static Recording {
    static RECORDING: OnceLock<Recording> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let mut samples = samples_of(&gunzip(&recording_dir(20).join("perf.script.gz")));
        samples.extend(samples_of(&gunzip(&recording_dir(20).join("perf-inject.script.gz"))));
        Recording { log: gunzip(&log_path(20)), jitdump: gunzip(&jitdump_path(20)), samples }
    })
}

/// A fresh expander over the recording (nothing cached).
fn expander() -> V8Expander {
    let recording = recording();
    let jitdump = jitdump::read(&recording.jitdump, &ReadOptions::default()).unwrap();
    let map = InlineMap::new(vec![CodeLog::parse(&recording.log)], Some(&jitdump), SourceOptions::default());
    V8Expander::new(CodeLogs::from_maps(vec![(map.pid.unwrap_or(0), map)]), ExpandOptions::default())
}

/// What goes into a generated perf script, in order.
#[derive(Debug, Clone)]
enum Piece {
    /// A real sample, by index.
    Sample(usize),
    /// A real sample with a junk line after its event line.
    SampleWithJunkStackLine(usize, String),
    /// A line that is no event line, between samples.
    JunkLine(String),
    /// An event line with no stack lines.
    EmptySample(u64),
}

/// Text that can be neither an event line (no digit after a space) nor a
/// stack line (no space): letters, or bytes that are not UTF-8.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z_:;]{1,40}",
        proptest::collection::vec(0x80u8..=0xff, 1..20)
            .prop_map(|bytes| { String::from_utf8_lossy(&bytes).into_owned() }),
    ]
}

fn pieces() -> impl Strategy<Value = Vec<Piece>> {
    let sample_count = recording().samples.len();
    let piece = prop_oneof![
        6 => (0..sample_count).prop_map(Piece::Sample),
        1 => (0..sample_count, junk()).prop_map(|(index, junk)| Piece::SampleWithJunkStackLine(index, junk)),
        1 => junk().prop_map(Piece::JunkLine),
        1 => (1..1_000_000u64).prop_map(Piece::EmptySample),
    ];
    proptest::collection::vec(piece, 1..40)
}

/// The script text of `pieces` and the periods of the samples with frames.
fn script_of(pieces: &[Piece]) -> (Vec<u8>, u64, u64) {
    let samples = &recording().samples;
    let mut text = String::new();
    let mut periods = 0;
    let mut empty_samples = 0;
    for piece in pieces {
        match piece {
            Piece::Sample(index) => {
                text.push_str(&samples[*index].text);
                periods += samples[*index].period;
            }
            Piece::SampleWithJunkStackLine(index, junk) => {
                let sample = &samples[*index].text;
                let event_line_end = sample.find('\n').unwrap() + 1;
                text.push_str(&sample[..event_line_end]);
                text.push_str(&format!("\t{junk}\n"));
                text.push_str(&sample[event_line_end..]);
                periods += samples[*index].period;
            }
            Piece::JunkLine(junk) => text.push_str(&format!("{junk}\n")),
            Piece::EmptySample(period) => {
                text.push_str(&format!("node 13233 1.0: {period} cpu-clock: \n\n"));
                empty_samples += 1;
            }
        }
    }
    (text.into_bytes(), periods, empty_samples)
}

fn fold(input: impl std::io::BufRead, expander: impl FrameExpander + Send) -> (Vec<u8>, CollapseSummary) {
    let mut folded = Vec::new();
    let summary = collapse_with(input, &CollapseOptions::default(), expander, &mut folded).unwrap();
    (folded, summary)
}

/// A reader that hands out its bytes in the given chunk sizes (cycled).
struct ChunkedReader<'a> {
    bytes: &'a [u8],
    chunk_sizes: Vec<usize>,
    next_chunk: usize,
}

impl Read for ChunkedReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let size = self.chunk_sizes[self.next_chunk % self.chunk_sizes.len()].min(buffer.len()).min(self.bytes.len());
        self.next_chunk += 1;
        buffer[..size].copy_from_slice(&self.bytes[..size]);
        self.bytes = &self.bytes[size..];
        Ok(size)
    }
}

fn sum_of_counts(folded: &[u8]) -> u64 {
    String::from_utf8_lossy(folded).lines().map(|line| line.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum()
}

/// The frames of a one-sample fold, root first.
fn frames_of(folded: &[u8]) -> Vec<String> {
    let text = String::from_utf8(folded.to_vec()).unwrap();
    let mut lines = text.lines();
    let Some(line) = lines.next() else { return Vec::new() };
    assert_eq!(lines.next(), None);
    line.rsplit_once(' ').unwrap().0.split(';').map(str::to_owned).collect()
}

/// A raw JIT address as inferno names it: what expansion replaces by name.
fn is_raw_jit_frame(frame: &str) -> bool {
    frame == "[unknown]" || (frame.starts_with("[perf-") && frame.ends_with(".map]"))
}

/// Whether `needles` appear in `haystack` in order.
fn is_subsequence(needles: &[&String], haystack: &[String]) -> bool {
    let mut rest = haystack.iter();
    needles.iter().all(|needle| rest.any(|frame| frame == *needle))
}

proptest! {
    // Failures print their minimal input; nothing is written next to the tests.
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn counts_written_equal_the_periods_of_the_samples_read(pieces in pieces()) {
        let (script, periods, empty_samples) = script_of(&pieces);
        let (folded, summary) = fold(script.as_slice(), expander());
        prop_assert_eq!(sum_of_counts(&folded), periods);
        prop_assert_eq!(summary.total_count, periods);
        let with_frames = pieces.iter().filter(|piece| !matches!(piece, Piece::JunkLine(_) | Piece::EmptySample(_))).count();
        prop_assert_eq!(summary.samples_read, with_frames as u64 + empty_samples);
        prop_assert_eq!(summary.samples_kept, with_frames as u64);
        prop_assert_eq!(summary.samples_without_frames, empty_samples);
    }

    #[test]
    fn output_does_not_depend_on_how_the_input_arrives(
        pieces in pieces(),
        chunk_sizes in proptest::collection::vec(1usize..64, 1..16),
        buffer_capacity in 1usize..32,
    ) {
        let (script, _, _) = script_of(&pieces);
        let mut expander = expander();
        let (whole, whole_summary) = fold(script.as_slice(), &mut expander);
        let chunked = ChunkedReader { bytes: &script, chunk_sizes, next_chunk: 0 };
        let (pieced, pieced_summary) = fold(BufReader::with_capacity(buffer_capacity, chunked), &mut expander);
        prop_assert_eq!(whole, pieced);
        prop_assert_eq!(whole_summary, pieced_summary);
    }

    #[test]
    fn expansion_never_drops_a_frame(indexes in proptest::collection::vec(0..recording().samples.len(), 1..24)) {
        let mut expander = expander();
        for index in indexes {
            let sample = &recording().samples[index].text;
            let (passed_through, plain_summary) = fold(sample.as_bytes(), NoExpansion);
            let (expanded, summary) = fold(sample.as_bytes(), &mut expander);
            let plain_frames = frames_of(&passed_through);
            let expanded_frames = frames_of(&expanded);
            let stack_lines = sample.lines().filter(|line| line.starts_with('\t')).count() as u64;
            prop_assert_eq!(summary.stack_lines_expanded + summary.stack_lines_passed_through, stack_lines);
            prop_assert!(summary.expanded_frames >= summary.stack_lines_expanded);
            prop_assert!(expanded_frames.len() >= plain_frames.len(), "{:?}\n{:?}", plain_frames, expanded_frames);
            let kept: Vec<&String> = plain_frames.iter().filter(|frame| !is_raw_jit_frame(frame)).collect();
            prop_assert!(is_subsequence(&kept, &expanded_frames), "{:?}\n{:?}", kept, expanded_frames);
            prop_assert_eq!(plain_summary.total_count, summary.total_count);
        }
    }

    #[test]
    fn the_same_input_gives_byte_identical_output(pieces in pieces()) {
        let (script, _, _) = script_of(&pieces);
        let mut reused = expander();
        let (first, _) = fold(script.as_slice(), &mut reused);
        let (again, _) = fold(script.as_slice(), &mut reused);
        let (fresh, _) = fold(script.as_slice(), expander());
        prop_assert_eq!(&first, &again);
        prop_assert_eq!(&first, &fresh);
    }
}
