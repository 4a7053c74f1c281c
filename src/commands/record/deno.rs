//! The thread of each Deno benchmark window written without one.
//!
//! `deno bench` runs each bench file on a thread of its own, whose id the
//! preload can read (`/proc/thread-self`) only under `--allow-all`: without
//! it, its windows say `"tid": null` (`deno_preload.cjs`). V8's jitdump
//! names the thread of every code object it writes (`JIT_CODE_LOAD`, on
//! perf's clock): the bench's isolate compiles its functions on its own
//! thread while the bench runs (its warm-up is inside the window), and no
//! other thread of that deno runs JavaScript meanwhile (`deno bench` runs
//! its files one after the other). A window's thread is the one that wrote
//! the most code objects inside it, else the last one to write before it.

use std::collections::HashMap;
use std::path::Path;

use crate::formats::jitdump::{ReadOptions, read_path};

/// The windows file of the recording's private directory (benchmarks.rs
/// and preload.cjs spell the same name).
const WINDOWS_FILE: &str = "windows";

/// A jitdump's code loads, as (timestamp, thread), in time order.
type CodeLoadThreads = Vec<(u64, u32)>;

/// Fills in the thread of each window of the private `directory`'s windows
/// file that has none, from `jit-PID.dump` in `jitdump_directory`; leaves
/// out and counts those whose thread is not found (no jitdump, or no code
/// load of that process before the window's end).
pub(crate) fn find_bench_threads(directory: &Path, jitdump_directory: &Path) -> usize {
    let path = directory.join(WINDOWS_FILE);
    let Ok(text) = std::fs::read_to_string(&path) else { return 0 };
    if !text.contains("\"tid\":null") {
        return 0;
    }
    let mut loads_by_pid: HashMap<u32, CodeLoadThreads> = HashMap::new();
    let mut left = 0;
    let mut rewritten = String::with_capacity(text.len());
    for line in text.lines() {
        let resolved = resolve_line(line, |pid| {
            loads_by_pid
                .entry(pid)
                .or_insert_with(|| code_load_threads(&jitdump_directory.join(format!("jit-{pid}.dump"))))
        });
        match resolved {
            LineThread::Unchanged => rewritten.push_str(line),
            LineThread::Found(line) => rewritten.push_str(&line),
            // Left out, and counted here rather than as unreadable.
            LineThread::NotFound => {
                left += 1;
                continue;
            }
        }
        rewritten.push('\n');
    }
    // The private directory is the recording's own: nothing else writes
    // the file now that the command has ended.
    let _ = crate::files::replace_file(&path, |output| output.write_all(rewritten.as_bytes()));
    left
}

/// What became of one line.
enum LineThread {
    /// It had a thread (or is not a window).
    Unchanged,
    /// The line with its thread.
    Found(String),
    /// A window without a thread, and none found.
    NotFound,
}

fn resolve_line<'a>(line: &str, loads_of: impl FnOnce(u32) -> &'a CodeLoadThreads) -> LineThread {
    let Ok(serde_json::Value::Object(mut window)) = serde_json::from_str::<serde_json::Value>(line) else {
        return LineThread::Unchanged;
    };
    if !window.get("tid").is_some_and(serde_json::Value::is_null) {
        return LineThread::Unchanged;
    }
    let number = |key: &str| window.get(key).and_then(serde_json::Value::as_u64);
    let (Some(pid), Some(start), Some(end)) = (number("pid"), number("start_ns"), number("end_ns")) else {
        return LineThread::NotFound;
    };
    let Ok(pid) = u32::try_from(pid) else { return LineThread::NotFound };
    match window_thread(loads_of(pid), start, end) {
        Some(tid) => {
            window.insert("tid".to_string(), tid.into());
            LineThread::Found(serde_json::Value::Object(window).to_string())
        }
        None => LineThread::NotFound,
    }
}

/// The thread that wrote the most code loads in `start..=end`, the lowest
/// id of those tied; else the last to write one before `start`.
fn window_thread(loads: &CodeLoadThreads, start: u64, end: u64) -> Option<u32> {
    let first = loads.partition_point(|&(timestamp, _)| timestamp < start);
    let last = loads.partition_point(|&(timestamp, _)| timestamp <= end);
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for &(_, tid) in &loads[first..last] {
        *counts.entry(tid).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(tid, count)| (count, std::cmp::Reverse(tid)))
        .map(|(tid, _)| tid)
        .or_else(|| loads[..first].last().map(|&(_, tid)| tid))
}

/// The code loads of the jitdump at `path`, in time order; none when it
/// cannot be read.
fn code_load_threads(path: &Path) -> CodeLoadThreads {
    let Ok(dump) = read_path(path, &ReadOptions::default()) else { return Vec::new() };
    let mut loads: CodeLoadThreads = dump.loads.iter().map(|load| (load.timestamp, load.tid)).collect();
    loads.sort_unstable();
    loads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_gets_the_thread_that_compiled_the_most_inside_it_else_the_last_before() {
        let loads: CodeLoadThreads = vec![(10, 1), (20, 7), (30, 7), (35, 1), (40, 7), (60, 8)];
        assert_eq!(window_thread(&loads, 15, 45), Some(7));
        assert_eq!(window_thread(&loads, 50, 55), Some(7), "none inside: the last before");
        assert_eq!(window_thread(&loads, 5, 10), Some(1), "ends included");
        assert_eq!(window_thread(&loads, 1, 5), None);
        assert_eq!(window_thread(&loads, 30, 35), Some(1), "a tie: the lowest id");
    }

    #[test]
    fn only_windows_without_a_thread_are_rewritten() {
        let loads: CodeLoadThreads = vec![(100, 42)];
        let line = r#"{"harness":"Deno.bench","name":"a \"b\"","pid":9,"tid":null,"start_ns":90,"end_ns":18446744073709551615,"time_per_iteration":null}"#;
        let LineThread::Found(found) = resolve_line(line, |pid| {
            assert_eq!(pid, 9);
            &loads
        }) else {
            panic!("not found")
        };
        assert_eq!(
            found,
            r#"{"end_ns":18446744073709551615,"harness":"Deno.bench","name":"a \"b\"","pid":9,"start_ns":90,"tid":42,"time_per_iteration":null}"#
        );
        let with_thread = r#"{"harness":"tinybench","name":"x","pid":9,"tid":9,"start_ns":1,"end_ns":2}"#;
        assert!(matches!(resolve_line(with_thread, |_| &loads), LineThread::Unchanged));
        let early = r#"{"harness":"Deno.bench","name":"x","pid":9,"tid":null,"start_ns":1,"end_ns":2}"#;
        assert!(matches!(resolve_line(early, |_| &loads), LineThread::NotFound));
    }
}
