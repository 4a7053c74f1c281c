//! `v8inline bench --base TREE --head TREE -- COMMAND…`: runs COMMAND
//! under `record` in the base tree and the head tree, round after round.
//! A round runs both sides at the same time ([`Schedule::Duet`], the
//! default with two CPUs or more: a busy moment of the machine slows both,
//! and `compare` judges the round's two runs as a pair; Bulej et al.,
//! "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", ICPE
//! 2020), or one after the other in an order drawn at random
//! ([`Schedule::Interleaved`]: randomized multiple interleaved trials,
//! Abedi & Brecht, "Conducting Repeatable Experiments in Highly Variable
//! Cloud Computing Environments", ICPE 2017), so that a machine that drifts
//! slower or faster hits both sides alike. After each round (from
//! `min_rounds` on) every benchmark's CPU time per iteration is judged over
//! the runs (`compare`'s verdict, from
//! [`crate::output::compare::runs`]); it stops when no benchmark is
//! undecided or the budget is spent, as google/tachometer's auto-sample
//! does.
//!
//! Writes (the layout `compare` reads again; docs/benchmarks.md):
//! - `OUT/base/`, `OUT/head/`: side directories, each `runs.json` and one
//!   `record` directory per run (`run-01`, `run-02`…);
//! - `OUT/bench.json`: the command, the trees, each round's order and why it
//!   stopped;
//! - (by the binary, once the rounds end) `OUT/report.html`, the comparison
//!   as a page, and `OUT/diff.svg`, `OUT/diff-<benchmark>.svg`, the
//!   differential flame graphs it shows.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use crate::commands::compare::{BenchSide, RUNS_FILE};
use crate::commands::compare::{BenchmarkOutcome, CompareCommandError, CompareOptions, compare_files};
use crate::commands::record::{CommandStdout, RecordError, RecordOptions, record};
use crate::files::replace_file;
use crate::output::compare::noise::Verdict;
use crate::output::compare::runs::{DEFAULT_THRESHOLD, RunsChange, RunsVerdict, Schedule};
use crate::pipeline::outputs::{Destination, OutputRequest};

/// `bench.json`, the run's account.
pub const BENCH_FILE: &str = "bench.json";
/// The comparison as a page (`compare --html`), in the output directory.
pub const REPORT_FILE: &str = "report.html";
/// The differential flame graph of the whole runs, in the output directory;
/// each benchmark's beside it (`diff-<benchmark>.svg`).
pub const FLAME_GRAPH_FILE: &str = "diff.svg";

/// What to run and how long.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BenchOptions {
    /// The base's tree: COMMAND runs there.
    pub base_tree: PathBuf,
    /// The head's tree.
    pub head_tree: PathBuf,
    /// Where `base/`, `head/` and `bench.json` go: a directory that does not
    /// exist or is empty.
    pub output_dir: PathBuf,
    /// The benchmark command, as `record` takes it.
    pub command: Vec<OsString>,
    /// A benchmark is decided when its interval lies wholly beyond or
    /// wholly within ±threshold (0.05 is 5 %).
    pub threshold: f64,
    /// Rounds before the first judgement (at least 2: one run a side shows
    /// no spread).
    pub min_rounds: u32,
    /// At most this many rounds.
    pub max_rounds: u32,
    /// No round starts that would end after this much time, by the
    /// longest round so far.
    pub max_time: Duration,
    /// The seed of the rounds' orders (default: from the clock).
    pub seed: Option<u64>,
    /// Samples per second of each recording.
    pub frequency: u32,
    /// One side after the other, or both at once.
    pub schedule: Schedule,
    /// Keep each run's perf.data, jitdumps and code logs: by default they
    /// are removed once the run is folded ([`remove_raw_recording`]).
    pub keep_recordings: bool,
}

impl BenchOptions {
    /// Compares `base_tree` and `head_tree` with [`DEFAULT_THRESHOLD`],
    /// 3 to 30 rounds within 3 minutes.
    pub fn new(base_tree: PathBuf, head_tree: PathBuf, output_dir: PathBuf, command: Vec<OsString>) -> BenchOptions {
        BenchOptions {
            base_tree,
            head_tree,
            output_dir,
            command,
            threshold: DEFAULT_THRESHOLD,
            min_rounds: 3,
            max_rounds: 30,
            max_time: Duration::from_secs(180),
            seed: None,
            frequency: 997,
            schedule: default_schedule(),
            keep_recordings: false,
        }
    }
}

/// The schedule `bench` uses unless told: duets where this process may
/// run on two CPUs or more (on this project's busy 2-core machine they
/// lowered the smallest detectable change from 12.6 % to 9.2 % in 90 s,
/// docs/compare.md), else interleaved, since on one CPU the two sides
/// would only take turns.
pub fn default_schedule() -> Schedule {
    match std::thread::available_parallelism() {
        Ok(cpus) if cpus.get() >= 2 => Schedule::Duet,
        _ => Schedule::Interleaved,
    }
}

/// One round: both sides, in this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchRound {
    /// 1, 2…
    pub round: u32,
    /// The order the sides ran in (duets: started in, at once).
    pub order: [BenchSide; 2],
}

/// A run that ended: its command's exit status, and its wall time.
struct FinishedRun {
    exit: u8,
    elapsed: Duration,
}

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// No benchmark is undecided.
    AllDecided,
    /// `--max-rounds` reached.
    MaxRounds(u32),
    /// `--max-time` reached, or about to be: another round, as long as the
    /// longest so far, would have ended after it.
    MaxTime {
        /// `--max-time`.
        budget: Duration,
        /// The rounds' wall time when they stopped.
        elapsed: Duration,
    },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::AllDecided => write!(formatter, "all benchmarks decided"),
            StopReason::MaxRounds(rounds) => write!(formatter, "--max-rounds {rounds} reached"),
            StopReason::MaxTime { budget, elapsed } if elapsed >= budget => {
                write!(formatter, "--max-time {} spent", duration_text(*budget))
            }
            StopReason::MaxTime { budget, elapsed } => write!(
                formatter,
                "another round would overrun --max-time {} ({} spent)",
                duration_text(*budget),
                duration_text(*elapsed)
            ),
        }
    }
}

/// What `bench` did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Bench {
    /// Where it wrote (absolute).
    pub output_dir: PathBuf,
    /// The rounds that ran.
    pub rounds: Vec<BenchRound>,
    /// Why it stopped.
    pub stopped: StopReason,
    /// Wall time of the rounds.
    pub elapsed: Duration,
    /// The benchmarks both sides ran, judged over all runs (compare's
    /// verdicts after the last round).
    pub benchmarks: Vec<BenchmarkOutcome>,
}

impl Bench {
    /// Whether a benchmark is still undecided.
    pub fn undecided(&self) -> bool {
        self.benchmarks.iter().any(|benchmark| benchmark.verdict == Verdict::Undecided)
    }
}

/// Why `bench` could not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A usage error: what is wrong with the options.
    #[error("{0}")]
    Usage(String),
    /// The output directory cannot be used or written.
    #[error("{}: {source}", path.display())]
    Output {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A recording failed.
    #[error("{side} run {round}: {source}", side = side.name())]
    Record {
        /// Where.
        side: BenchSide,
        /// In which round.
        round: u32,
        /// Why.
        source: RecordError,
    },
    /// The command failed in a tree (bench.json's `failed` says where).
    #[error("the command failed at {side} (exit {code}) in round {round}: {}", directory.display(), side = side.name())]
    CommandFailed {
        /// Where.
        side: BenchSide,
        /// In which round.
        round: u32,
        /// Its exit status (as `record` exits).
        code: u8,
        /// The run's recording.
        directory: PathBuf,
    },
    /// The runs cannot be compared.
    #[error(transparent)]
    Compare(CompareCommandError),
}

/// `bench.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct BenchFile {
    /// 1.
    pub version: u32,
    /// The command, as given.
    pub command: Vec<String>,
    /// The base's tree, absolute.
    pub base_tree: PathBuf,
    /// The head's tree, absolute.
    pub head_tree: PathBuf,
    /// The seed of the rounds' orders.
    pub seed: u64,
    /// How the sides of a round ran (absent before duets: interleaved).
    #[serde(default)]
    pub schedule: Schedule,
    /// The rounds so far.
    pub rounds: Vec<BenchRound>,
    /// Why it stopped (absent while it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Where the command failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<FailedRun>,
    /// V8 flags bench added to the command's (none: add them to COMMAND).
    pub flags: Vec<String>,
}

/// A run whose command failed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailedRun {
    /// Where.
    pub side: BenchSide,
    /// In which round.
    pub round: u32,
    /// Its exit status.
    pub exit: u8,
}

/// A side directory's `runs.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct SideRuns {
    /// 1.
    pub version: u32,
    /// `base` or `head`.
    pub side: BenchSide,
    /// How the runs ran beside the other side's: `duet` runs of the same
    /// round ran at the same time and are judged as pairs.
    #[serde(default)]
    pub schedule: Schedule,
    /// The runs, in the order they ran.
    pub runs: Vec<SideRun>,
}

/// A run of a side.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SideRun {
    /// Its `record` directory, relative to the side directory.
    pub directory: PathBuf,
    /// The round it ran in.
    pub round: u32,
}

/// A small random generator (xorshift64*, Vigna 2016): the rounds' orders
/// need no more, and the seed in bench.json replays them.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn clock_seed() -> u64 {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|time| time.as_nanos()).unwrap_or(1);
    (nanos as u64) ^ (u64::from(std::process::id()) << 32)
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir().map(|directory| directory.join(path)).unwrap_or_else(|_| path.to_owned())
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), BenchError> {
    replace_file(path, |file| {
        serde_json::to_writer_pretty(&mut *file, value).map_err(std::io::Error::other)?;
        file.write_all(b"\n")
    })
    .map_err(|source| BenchError::Output { path: path.to_owned(), source })
}

/// Runs the rounds. `progress` hears a line per run and per round.
pub fn bench(options: &BenchOptions, progress: &mut dyn FnMut(&str)) -> Result<Bench, BenchError> {
    if options.min_rounds < 2 {
        return Err(BenchError::Usage("--min-rounds must be at least 2: one run a side shows no spread".into()));
    }
    if options.max_rounds < options.min_rounds {
        return Err(BenchError::Usage(format!(
            "--max-rounds {} is below --min-rounds {}",
            options.max_rounds, options.min_rounds
        )));
    }
    crate::commands::record::check_command(&options.command).map_err(|source| BenchError::Record {
        side: BenchSide::Base,
        round: 0,
        source,
    })?;
    let trees = [(BenchSide::Base, absolute(&options.base_tree)), (BenchSide::Head, absolute(&options.head_tree))];
    for (side, tree) in &trees {
        if !tree.is_dir() {
            return Err(BenchError::Usage(format!("--{} {}: no such directory", side.name(), tree.display())));
        }
    }
    let output_dir = absolute(&options.output_dir);
    let occupied = std::fs::read_dir(&output_dir).map(|mut entries| entries.next().is_some()).unwrap_or(false);
    if occupied {
        return Err(BenchError::Usage(format!(
            "{}: not empty (bench writes base/, head/ and bench.json into a new directory)",
            output_dir.display()
        )));
    }
    for side in [BenchSide::Base, BenchSide::Head] {
        let directory = output_dir.join(side.name());
        std::fs::create_dir_all(&directory).map_err(|source| BenchError::Output { path: directory, source })?;
    }
    let seed = options.seed.unwrap_or_else(clock_seed);
    let mut random = Xorshift(seed.max(1));
    let mut account = BenchFile {
        version: 1,
        command: options.command.iter().map(|part| part.to_string_lossy().into_owned()).collect(),
        base_tree: trees[0].1.clone(),
        head_tree: trees[1].1.clone(),
        seed,
        schedule: options.schedule,
        rounds: Vec::new(),
        stopped: None,
        failed: None,
        flags: Vec::new(),
    };
    let bench_path = output_dir.join(BENCH_FILE);
    write_json(&bench_path, &account)?;
    let mut runs: [Vec<SideRun>; 2] = [Vec::new(), Vec::new()];
    let started = Instant::now();
    let mut longest_round = Duration::ZERO;
    let (stopped, benchmarks) = loop {
        let round = account.rounds.len() as u32 + 1;
        let order = if random.next() >> 63 == 0 {
            [BenchSide::Base, BenchSide::Head]
        } else {
            [BenchSide::Head, BenchSide::Base]
        };
        account.rounds.push(BenchRound { round, order });
        write_json(&bench_path, &account)?;
        let round_started = Instant::now();
        let directories = order.map(|side| output_dir.join(side.name()).join(format!("run-{round:02}")));
        let ran = match options.schedule {
            Schedule::Interleaved => order
                .iter()
                .zip(&directories)
                .map(|(&side, directory)| timed_run(options, &trees[side as usize].1, directory))
                .collect::<Vec<_>>(),
            // Both at once, placed by the scheduler: pinning each side to
            // one of two CPUs measured no better (docs/compare.md).
            Schedule::Duet => std::thread::scope(|scope| {
                let handles: Vec<_> = order
                    .iter()
                    .zip(&directories)
                    .map(|(&side, directory)| {
                        let tree = &trees[side as usize].1;
                        scope.spawn(move || timed_run(options, tree, directory))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                    .collect()
            }),
        };
        let mut times = Vec::new();
        for ((side, directory), ran) in order.into_iter().zip(directories).zip(ran) {
            let index = side as usize;
            let FinishedRun { exit: code, elapsed } =
                ran.map_err(|source| BenchError::Record { side, round, source })?;
            if code != 0 {
                account.failed = Some(FailedRun { side, round, exit: code });
                write_json(&bench_path, &account)?;
                return Err(BenchError::CommandFailed { side, round, code, directory });
            }
            times.push(format!("{} {:.1} s", side.name(), elapsed.as_secs_f64()));
            runs[index].push(SideRun { directory: PathBuf::from(format!("run-{round:02}")), round });
            let runs_path = output_dir.join(side.name()).join(RUNS_FILE);
            write_json(
                &runs_path,
                &SideRuns { version: 1, side, schedule: options.schedule, runs: runs[index].clone() },
            )?;
        }
        longest_round = longest_round.max(round_started.elapsed());
        let mut judging = CompareOptions::new(output_dir.join("base"), output_dir.join("head"));
        judging.threshold = options.threshold;
        let benchmarks = compare_files(&judging).map_err(BenchError::Compare)?.benchmarks;
        let undecided = benchmarks.iter().filter(|benchmark| benchmark.verdict == Verdict::Undecided).count();
        let how = match options.schedule {
            Schedule::Interleaved => order.map(BenchSide::name).join(", "),
            Schedule::Duet => "duet".to_string(),
        };
        progress(&format!(
            "round {round} ({how}): {}; {} of {} benchmarks undecided",
            times.join(", "),
            undecided,
            benchmarks.len()
        ));
        for benchmark in &benchmarks {
            let judged = match &benchmark.runs {
                // The total undecided, a function slower by its own time.
                Some(change) if change.verdict == RunsVerdict::Undecided && benchmark.verdict != Verdict::Undecided => {
                    format!("{}; {} by a function's own time", change_text(change), benchmark.verdict.name())
                }
                Some(change) => change_text(change),
                None => benchmark.verdict.name().to_string(),
            };
            progress(&format!("  {}: {judged}", benchmark.name));
        }
        if round >= options.min_rounds && undecided == 0 {
            break (StopReason::AllDecided, benchmarks);
        }
        if round >= options.max_rounds {
            break (StopReason::MaxRounds(options.max_rounds), benchmarks);
        }
        if started.elapsed() + longest_round > options.max_time {
            break (StopReason::MaxTime { budget: options.max_time, elapsed: started.elapsed() }, benchmarks);
        }
    };
    account.stopped = Some(stopped.to_string());
    write_json(&bench_path, &account)?;
    let elapsed = started.elapsed();
    progress(&format!("{} rounds in {}: stopped because {stopped}", account.rounds.len(), duration_text(elapsed)));
    Ok(Bench { output_dir, rounds: account.rounds, stopped, elapsed, benchmarks })
}

/// Records one run in `tree` (the command's working directory and the
/// recording's project root), the command's output on standard error:
/// its exit status and how long it took.
fn timed_run(options: &BenchOptions, tree: &Path, directory: &Path) -> Result<FinishedRun, RecordError> {
    let started = Instant::now();
    let mut record_options = RecordOptions::new(options.command.clone(), directory.to_owned());
    record_options.frequency = options.frequency;
    record_options.outputs =
        vec![OutputRequest::Folded(Destination::File(directory.join(crate::commands::record::FOLDED_FILE)))];
    record_options.working_directory = Some(tree.to_owned());
    record_options.command_stdout = CommandStdout::ToStandardError;
    let recorded = record(&record_options, &mut |_| {})?;
    if !options.keep_recordings {
        remove_raw_recording(directory);
    }
    compress_profiles(directory);
    Ok(FinishedRun { exit: recorded.exit_code(), elapsed: started.elapsed() })
}

/// Removes what `record` read from a run's `directory` once it is folded:
/// its perf.data, jitdumps (`jit-PID.dump`) and code logs (`*.log`), which
/// are three quarters of a run (16 MB of a 16-22 MB run of the bench52
/// suite; 0.6-1.9 GB for a whole comparison, that the Action uploaded). What
/// compare reads stays: the profiles, benchmarks.json, recording.json. Only
/// regular files directly in the directory bench made for the run.
fn remove_raw_recording(directory: &Path) {
    let Ok(entries) = std::fs::read_dir(directory) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let raw =
            name == "perf.data" || (name.starts_with("jit-") && name.ends_with(".dump")) || name.ends_with(".log");
        if raw && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Gzips a run's folded profiles (the whole run's and each benchmark's:
/// `profile.folded` → `profile.folded.gz`, which compare reads alike): a
/// tenth of their size, so that the runs of a comparison stay small enough
/// to upload. A profile that cannot be compressed stays as it is.
fn compress_profiles(directory: &Path) {
    let folded = crate::commands::record::FOLDED_FILE;
    let mut profiles = vec![directory.join(folded)];
    if let Ok(benchmarks) = std::fs::read_dir(directory.join(crate::commands::record::benchmarks::BENCHMARKS_DIRECTORY))
    {
        profiles.extend(benchmarks.flatten().map(|entry| entry.path().join(folded)));
    }
    for plain in profiles {
        // Only a regular file bench's record wrote: never through a link.
        if !std::fs::symlink_metadata(&plain).is_ok_and(|metadata| metadata.is_file()) {
            continue;
        }
        let gzipped = plain.with_file_name(format!("{folded}.gz"));
        let compressed = std::fs::File::open(&plain).and_then(|mut input| {
            replace_file(&gzipped, |output| {
                let mut encoder = flate2::write::GzEncoder::new(output, flate2::Compression::fast());
                std::io::copy(&mut input, &mut encoder)?;
                encoder.finish().map(drop)
            })
        });
        if compressed.is_ok() {
            let _ = std::fs::remove_file(&plain);
        }
    }
}

/// `+3.2 % [-1.0 %, +7.5 %], could see ±9.1 %: undecided`.
pub fn change_text(change: &RunsChange) -> String {
    let percent = |value: f64| {
        if value.is_finite() { format!("{:+.1} %", value * 100.0) } else { "∞".to_string() }
    };
    format!(
        "{} [{}, {}], smallest detectable {}: {} ({} + {} runs)",
        percent(change.change),
        percent(change.interval.low),
        percent(change.interval.high),
        percent(change.minimum_detectable),
        change.verdict.name(),
        change.base_runs,
        change.head_runs
    )
}

/// `3m`, `90s`, `1m30s`, `1h`, `500ms`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err("an empty duration".into());
    }
    if let Ok(seconds) = rest.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).map_err(|error| format!("{text}: {error}"));
    }
    while !rest.is_empty() {
        let digits = rest.find(|character: char| !character.is_ascii_digit() && character != '.').unwrap_or(rest.len());
        let number: f64 =
            rest[..digits].parse().map_err(|_| format!("{text}: expected a number before a unit (3m, 90s, 1h)"))?;
        rest = &rest[digits..];
        let unit_end = rest.find(|character: char| character.is_ascii_digit()).unwrap_or(rest.len());
        let seconds = match &rest[..unit_end] {
            "ms" => number / 1000.0,
            "s" => number,
            "m" | "min" => number * 60.0,
            "h" => number * 3600.0,
            unit => return Err(format!("{text}: unknown unit {unit:?} (ms, s, m, h)")),
        };
        total += Duration::try_from_secs_f64(seconds).map_err(|error| format!("{text}: {error}"))?;
        rest = &rest[unit_end..];
    }
    Ok(total)
}

/// `3m`, `1m30s`, `12.5s`.
pub fn duration_text(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds >= 60.0 && (seconds % 60.0) < 0.05 {
        format!("{}m", (seconds / 60.0).round())
    } else if seconds >= 60.0 {
        format!("{}m{:.0}s", (seconds / 60.0).floor(), seconds % 60.0)
    } else {
        format!("{seconds:.1}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("3m"), Ok(Duration::from_secs(180)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("3 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-1").is_err());
        assert_eq!(duration_text(Duration::from_secs(180)), "3m");
        assert_eq!(duration_text(Duration::from_secs(95)), "1m35s");
        assert_eq!(duration_text(Duration::from_millis(12_340)), "12.3s");
    }

    #[test]
    fn stop_reasons_read_as_the_contract_spells_them() {
        assert_eq!(StopReason::AllDecided.to_string(), "all benchmarks decided");
        assert_eq!(StopReason::MaxRounds(20).to_string(), "--max-rounds 20 reached");
        let budget = Duration::from_secs(180);
        assert_eq!(
            StopReason::MaxTime { budget, elapsed: Duration::from_secs(181) }.to_string(),
            "--max-time 3m spent"
        );
        assert_eq!(
            StopReason::MaxTime { budget, elapsed: Duration::from_secs(150) }.to_string(),
            "another round would overrun --max-time 3m (2m30s spent)"
        );
    }

    #[test]
    fn orders_replay_from_the_seed() {
        let orders = |seed| {
            let mut random = Xorshift(seed);
            (0..64).map(|_| random.next() >> 63).collect::<Vec<_>>()
        };
        assert_eq!(orders(7), orders(7));
        let heads = orders(7).iter().filter(|bit| **bit == 1).count();
        assert!((20..=44).contains(&heads), "{heads} of 64");
    }
}
