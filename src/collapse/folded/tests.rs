//! The folder's own tests.

use super::*;
use crate::collapse::task_root;
use crate::expansion::NoExpansion;
use crate::pipeline::{FoldOptions, fold_perf_script_with};

/// The bundled real app's stacks, folded without expansion.
fn realapp_folder() -> Folder {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/realapp/perf.script.gz");
    let input = io::BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap()));
    let options = FoldOptions { threads: Some(1), ..FoldOptions::default() };
    fold_perf_script_with(input, &options, false, || NoExpansion).unwrap().folder
}

/// Rendered on a second thread, in pieces of any size, the text is the
/// same as on one.
#[test]
fn text_rendered_beside_the_writer_is_the_text_written_alone() {
    let folder = realapp_folder();
    let mut alone = Vec::new();
    let lines = folder.write_folded(&mut alone).unwrap();
    assert!(lines > 1000, "{lines} stacks");
    for piece_bytes in [1, 4096, RENDERED_PIECE_BYTES] {
        let mut beside = Vec::new();
        assert_eq!(folder.write_folded_in_pieces(&mut beside, 2, piece_bytes).unwrap(), lines);
        assert!(beside == alone, "pieces of {piece_bytes} bytes: the texts differ");
    }
}

/// A writer that fails stops the renderer: the error comes back, and
/// nothing waits forever to hand over a piece.
#[test]
fn a_failing_writer_stops_the_renderer() {
    struct FailsAfter(usize);
    impl Write for FailsAfter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.0 < bytes.len() {
                return Err(io::Error::other("disk full"));
            }
            self.0 -= bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let folder = realapp_folder();
    let error = folder.write_folded_in_pieces(FailsAfter(10_000), 2, 1).unwrap_err();
    assert_eq!(error.to_string(), "disk full");
}

/// Each stack renders as its frames joined by `;`, whatever the stack
/// rendered before it shares with it: more, fewer, none or all frames.
#[test]
fn a_rendered_path_renders_each_stack_whole() {
    let names = ["root", "a", "b;c", "", "leaf"];
    let name = |id: FrameId| names[id.index()];
    let stacks: [&[usize]; 8] =
        [&[0, 1, 2], &[0, 1, 2, 4], &[0, 1], &[0, 3, 3], &[0, 3, 3], &[4], &[0, 1, 2, 3, 4], &[1, 0]];
    let mut path = RenderedPath::default();
    for root_first in stacks {
        let innermost_first: Vec<FrameId> = root_first.iter().rev().map(|&index| FrameId::from_index(index)).collect();
        path.render(&innermost_first, name);
        let expected = root_first.iter().map(|&index| names[index]).collect::<Vec<_>>().join(";");
        assert_eq!(String::from_utf8_lossy(&path.text), expected, "stack {root_first:?}");
    }
}

/// A benchmark's stacks start at the benchmark: the task function (the
/// outermost frame of the user's code) under its root, what ran it folded
/// into the root; a stack without the task keeps what lies past the start
/// it shares with the task's stacks, the process's root at least.
#[test]
fn stacks_start_at_the_benchmark_then_its_task() {
    let script = "\
node 7/7 [000] 1.000000: 1000 cpu-clock:
\t    aaaa leaf+0x1 (/usr/bin/node)
\t    bbbb JS:~task /app/bench.js:3:1 (/tmp/perf-7.map)
\t    cccc JS:~run /app/node_modules/tinybench/dist/index.js:10:1 (/tmp/perf-7.map)
\t    dddd main+0x2 (/usr/bin/node)

node 7/7 [000] 1.001000: 1000 cpu-clock:
\t    eeee now+0x1 (/usr/bin/node)
\t    cccc JS:~run /app/node_modules/tinybench/dist/index.js:10:1 (/tmp/perf-7.map)
\t    dddd main+0x2 (/usr/bin/node)

node 7/7 [000] 1.002000: 1000 cpu-clock:
\t    ffff getenv+0x1 (/usr/lib/libc.so.6)

";
    let mut options = FoldOptions { threads: Some(1), ..FoldOptions::default() };
    options.collapse.one_root_per_process = true;
    let folded = fold_perf_script_with(script.as_bytes(), &options, false, || NoExpansion).unwrap();
    let mut folder = folded.folder;
    folder.name_process_roots();
    let root = folder.start_at_task(&task_root::root_frame_name("sum; of squares"), task_root::code_owner);
    let mut text = Vec::new();
    folder.write_folded(&mut text).unwrap();
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "sum, of squares;JS:~task /app/bench.js:3:1;leaf 1000\nsum, of squares;getenv 1000\nsum, of squares;now 1000\n"
    );
    assert!(root.task_found);
    assert_eq!(root.folded_frames, ["node", "main", "JS:~run /app/node_modules/tinybench/dist/index.js:10:1"]);
}
