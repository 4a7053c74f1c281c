//! The command line's arguments (clap).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use v8inline::{CodeLogOptions, Destination, FlameGraphStyle, OutputChoices, ThreadSelection};
use v8inline::{SourceMapOptions, SourceMapOverride, SourceOptions};

/// Expand V8's inlined JavaScript frames in perf profiles.
///
/// Reads `perf script` output and writes folded stacks (as
/// inferno-collapse-perf does) in which each optimized V8 code object is
/// replaced by the JavaScript functions inlined into it.
#[derive(Parser, Debug)]
#[command(name = "v8inline", version, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) fold: FoldArgs,
}

/// The main job: perf script in, folded stacks out.
#[derive(Args, Debug)]
pub(crate) struct FoldArgs {
    /// `perf script` output to read; standard input when absent or `-`.
    /// Absent with standard input a terminal: ./perf.data, read as
    /// --perf-data reads it.
    #[arg(value_name = "PERF_SCRIPT")]
    pub(crate) perf_script: Option<PathBuf>,
    /// Write the folded stacks here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) inputs: InputArgs,
    /// Take the source position at the sampled PC itself rather than the
    /// instruction before it (what `lookup` prints for an address).
    #[arg(long)]
    pub(crate) exact_pc: bool,
    /// Append `_[i]` to inlined frames (inferno colors them).
    #[arg(long)]
    pub(crate) annotate_inline: bool,
    /// Append `_[j]` to JIT frames (inferno colors them).
    #[arg(long, alias = "jit")]
    pub(crate) annotate_jit: bool,
    /// Append `_[k]` to kernel frames (inferno-collapse-perf's --kernel).
    #[arg(long, alias = "kernel")]
    pub(crate) annotate_kernel: bool,
    /// All annotations: --annotate-inline --annotate-jit --annotate-kernel.
    #[arg(long)]
    pub(crate) all: bool,
    /// Include the PID in the root frame (inferno-collapse-perf's --pid).
    #[arg(long)]
    pub(crate) pid: bool,
    /// One root frame per process (per thread with --tid), named by its
    /// main thread's last name, as `record` folds: npm, sampled as `node`,
    /// `npm` and `npm run bench`, is one root, not three. Without it the
    /// roots are inferno's: one per name.
    #[arg(long)]
    pub(crate) one_root_per_process: bool,
    /// Include raw addresses where symbols cannot be found (inferno's --addrs).
    #[arg(long)]
    pub(crate) addrs: bool,
    /// Only fold samples of this event (default: the first event seen).
    #[arg(long, value_name = "EVENT")]
    pub(crate) event_filter: Option<String>,
    /// Also render a flame graph SVG here. Turns on the inline, JIT and
    /// kernel annotations (in the folded output too), which color the frames.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) flamegraph: Option<PathBuf>,
    /// Fold on this many threads (default: one per core). Output is the
    /// same; without --jitdump (pids looked up as samples come) it is 1.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    #[command(flatten)]
    pub(crate) folding: FoldingArgs,
    /// Fold V8's own samples instead of perf's: the `tick` records of this
    /// `node --prof --log-code` log (no perf needed; counts are ticks). Once
    /// per isolate's log: each is the code log of its own ticks.
    #[arg(long, value_name = "LOG", conflicts_with_all = ["perf_script", "perf_data"])]
    pub(crate) ticks: Vec<PathBuf>,
    /// Read perf's samples from this perf.data directly (no `perf script`).
    #[arg(long, value_name = "PERF_DATA", conflicts_with = "perf_script")]
    pub(crate) perf_data: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) outputs: OutputArgs,
}

/// How the stacks are folded and what is told of it: the main job's and
/// `record`'s.
#[derive(Args, Debug)]
pub(crate) struct FoldingArgs {
    /// Include the PID and TID in the root frame (implies --pid).
    #[arg(long)]
    pub(crate) tid: bool,
    /// Drop the frames below (callers of) this function; repeatable. A
    /// JavaScript function matches by name, by `NAME FILE:LINE` or by its
    /// frame's whole name, whatever its tier (`JS:*`, `JS:~`, ...).
    #[arg(long, value_name = "FUNCTION")]
    pub(crate) skip_after: Vec<String>,
    /// Print to standard error how many samples and frames were expanded,
    /// passed through or unresolved, and why.
    #[arg(long)]
    pub(crate) stats: bool,
}

/// Outputs beside the folded stacks.
#[derive(Args, Debug)]
pub(crate) struct OutputArgs {
    /// Also write a pprof profile (gzipped profile.proto): one location per
    /// sampled PC, its inlined functions as lines.
    #[arg(long, value_name = "FILE.pb.gz")]
    pub(crate) pprof: Option<PathBuf>,
    /// Write a report per function and source line (self and inclusive
    /// samples and shares, by tier); see --report-output.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) report: Option<ReportFormat>,
    /// Where --report goes (default: standard output, instead of the folded stacks).
    #[arg(long, value_name = "FILE", requires = "report")]
    pub(crate) report_output: Option<PathBuf>,
    /// Write a summary of the top functions by self and inclusive time; see --summary-output.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) summary: Option<SummaryFormat>,
    /// Where --summary goes (default: standard output, instead of the folded
    /// stacks); e.g. "$GITHUB_STEP_SUMMARY" (appended to).
    #[arg(long, value_name = "FILE", requires = "summary")]
    pub(crate) summary_output: Option<PathBuf>,
    /// Rows per table of --summary.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(crate) top: usize,
    /// Write CI annotations on the hottest functions and source lines; see --annotate-output.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) annotate: Option<AnnotateFormat>,
    /// Where --annotate goes (default: standard output, instead of the folded stacks).
    #[arg(long, value_name = "FILE", requires = "annotate")]
    pub(crate) annotate_output: Option<PathBuf>,
    /// At most this many annotations.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub(crate) annotate_top: usize,
    /// Annotate only files under this directory, with paths relative to it
    /// (also shortens paths in summaries). Default: the current directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) source_root: PathBuf,
    /// Also write a Chrome `.cpuprofile` (Chrome DevTools, VS Code,
    /// speedscope, CPUpro) of one thread, every sample at its time, each
    /// inlined function a node of its own: the thread with the most samples
    /// unless --cpuprofile-pid or --cpuprofile-tid picks one.
    #[arg(long, value_name = "FILE")]
    pub(crate) cpuprofile: Option<PathBuf>,
    /// In --cpuprofile keep only JavaScript frames, as V8's own profiler
    /// does: native and kernel time goes to the nearest JavaScript caller,
    /// samples without one to (program).
    #[arg(long)]
    pub(crate) js_only: bool,
    /// --cpuprofile holds a thread of this process (the one with the most
    /// samples). Not --pid, which names root frames as inferno does.
    #[arg(long, value_name = "PID")]
    pub(crate) cpuprofile_pid: Option<u32>,
    /// --cpuprofile holds this thread. Not --tid, which names root frames
    /// as inferno does.
    #[arg(long, value_name = "TID")]
    pub(crate) cpuprofile_tid: Option<u32>,
    /// How the flame graph is drawn: icicle (the roots at the top, frames
    /// under 0.1 % left out, recursion drawn once, labels that fit) or
    /// classic (inferno's look: the roots at the bottom, every frame).
    #[arg(long, value_name = "STYLE", default_value = "icicle")]
    pub(crate) flamegraph_style: FlameGraphStyleArg,
    /// Also write a Firefox Profiler profile (processed format): a process
    /// per pid, a thread per tid, every sample at its time, each inlined
    /// function a frame of its own; gzipped when FILE ends in `.gz`.
    #[arg(long, value_name = "FILE.json[.gz]")]
    pub(crate) firefox_profile: Option<PathBuf>,
}

/// Styles of the flame graph.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlameGraphStyleArg {
    /// The roots at the top, callees below: the program's structure first.
    Icicle,
    /// inferno's look: the roots at the bottom, every frame.
    Classic,
}

impl From<FlameGraphStyleArg> for FlameGraphStyle {
    fn from(style: FlameGraphStyleArg) -> FlameGraphStyle {
        match style {
            FlameGraphStyleArg::Icicle => FlameGraphStyle::Icicle,
            FlameGraphStyleArg::Classic => FlameGraphStyle::Classic,
        }
    }
}

/// Formats of --report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// JSON, schema `v8inline-report/1` (see the README).
    Json,
}

/// Formats of --summary.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SummaryFormat {
    /// A markdown table, e.g. for $GITHUB_STEP_SUMMARY.
    Markdown,
}

/// Formats of --annotate.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnnotateFormat {
    /// GitHub Actions workflow commands (`::notice file=...,line=...`).
    Github,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// addr2line for JIT code: print the inline stack at each address.
    Lookup(LookupArgs),
    /// Compare two profiles (folded stacks or JSON reports): each function's
    /// change of self and inclusive share, worst regression first.
    Compare(CompareArgs),
    /// Profile a command and every node and Deno process it starts, and
    /// write folded stacks, a flame graph, a `.cpuprofile` and a Firefox
    /// profile with inlined frames: `v8inline record -- node app.js`,
    /// `v8inline record -- npm run bench`, `v8inline record -- deno run -A app.js`.
    Record(RecordArgs),
    /// Run a benchmark command under `record` in a base tree and a head tree,
    /// in rounds (each round both, in a random order) until every benchmark is
    /// decided or the budget is spent, then compare them as `compare` does:
    /// `v8inline bench --base ../main --head . -- npm run bench`.
    Bench(BenchArgs),
    /// Write a copy of a jitdump with the DEBUG_INFO records that V8 (node
    /// 26, Deno) mis-sized given their true size, so that `perf inject -j`
    /// and samply read it whole.
    RepairJitdump(RepairJitDumpArgs),
    /// After `perf inject -j`, give each jitted-PID-N.so DWARF with the
    /// inlined JavaScript frames, for perf, addr2line, samply and hotspot.
    Debuginfo(DebuginfoArgs),
    /// A branch's benchmark results commit after commit (a directory, kept
    /// in the repository): `history add` one commit's result, `history
    /// report` its change points and the functions that moved there.
    #[command(subcommand)]
    History(HistoryCommand),
}

/// `history`'s subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum HistoryCommand {
    /// Add one commit's result (a `record` directory or a side directory of
    /// `bench`) to DIR/history.jsonl; the same commit again replaces its line.
    Add(HistoryAddArgs),
    /// Find the change points of every benchmark (E-divisive means) and
    /// name the functions whose own time moved there.
    Report(HistoryReportArgs),
}

#[derive(Args, Debug)]
pub(crate) struct HistoryAddArgs {
    /// The history's directory (created when missing).
    #[arg(long, value_name = "DIR")]
    pub(crate) history: PathBuf,
    /// The commit the result is of (default: `git rev-parse HEAD` of the
    /// working directory).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: Option<String>,
    /// The commit's date (default: its committer date, else now), e.g.
    /// 2026-12-07T17:00:00Z.
    #[arg(long, value_name = "DATE")]
    pub(crate) date: Option<String>,
    /// A `record` directory, or a side directory of `bench` (runs.json and
    /// its runs).
    #[arg(value_name = "RESULT")]
    pub(crate) result: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct HistoryReportArgs {
    /// The history's directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) history: PathBuf,
    /// Write the report here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// json: the change points; html: a page of trends (no network needed).
    #[arg(long, value_name = "FORMAT", default_value = "json")]
    pub(crate) format: HistoryFormat,
    /// Fail (exit 1, no output) when a line of the history is not an
    /// entry, instead of warning and reporting the other commits.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Keep a change point whose p-value (the t test's, times the splits
    /// its segment allows) is at most P; docs/history.md measures false
    /// change points and changes found from 0.005 to 0.05.
    #[arg(long, value_name = "P", default_value_t = v8inline::ChangePointOptions::default().significance,
          value_parser = parse_significance)]
    pub(crate) significance: f64,
}

/// Formats of `history report`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HistoryFormat {
    /// JSON, schema `v8inline-history-report/2` (docs/history.md).
    Json,
    /// A self-contained HTML page.
    Html,
}

#[derive(Args, Debug)]
pub(crate) struct DebuginfoArgs {
    #[command(flatten)]
    pub(crate) inputs: InputArgs,
    /// Where perf inject wrote the jitted-PID-N.so files (default: the jitdump's directory).
    #[arg(value_name = "DIR")]
    pub(crate) directory: Option<PathBuf>,
    /// perf's build-id cache, whose copies of the files are rewritten too (default: ~/.debug).
    #[arg(long, value_name = "DIR")]
    pub(crate) buildid_dir: Option<PathBuf>,
    /// Rewrite on this many threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
}

#[derive(Args, Debug)]
pub(crate) struct RepairJitDumpArgs {
    /// The jitdump (`jit-PID.dump`; `.gz` is read too).
    #[arg(value_name = "JITDUMP")]
    pub(crate) jitdump: PathBuf,
    /// Where to write the repaired copy (never the input itself).
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct RecordArgs {
    /// Samples per second.
    #[arg(long, default_value_t = 997, value_name = "HZ")]
    pub(crate) frequency: u32,
    /// Where the recording and its outputs go. Default: v8inline-profile,
    /// or v8inline-profile-2, -3, ... when it holds a recording.
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<PathBuf>,
    /// Replace the recording in --output-dir instead of refusing.
    #[arg(long, requires = "output_dir")]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) outputs: OutputArgs,
    #[command(flatten)]
    pub(crate) reading: ReadingArgs,
    #[command(flatten)]
    pub(crate) folding: FoldingArgs,
    /// The command: node or deno with their flags, script and arguments, or
    /// what starts them (npm run, npx, a shell script, a test runner); every
    /// node and Deno process it starts is recorded.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<std::ffi::OsString>,
    /// Then run `perf inject -j` (jitdumps repaired first) and give its
    /// jitted files DWARF with the inlined frames (`debuginfo`), for `perf
    /// report --inline`, samply and hotspot.
    #[arg(long)]
    pub(crate) inject: bool,
}

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// Before: a recording directory (as `record` writes it), a side
    /// directory (as `bench` writes it), folded stacks or a `--report json`
    /// file.
    #[arg(value_name = "BASE", required_unless_present = "merge")]
    pub(crate) base: Option<PathBuf>,
    /// After, of the same kind.
    #[arg(value_name = "HEAD", required_unless_present = "merge")]
    pub(crate) head: Option<PathBuf>,
    /// Instead of BASE and HEAD: the output directories of several `bench`
    /// runs of the same two trees (say, one per CI job), judged as one: the
    /// runs of every `base/` against those of every `head/`, each round's
    /// pair within its own output.
    #[arg(long, value_name = "OUT", num_args = 2.., conflicts_with_all = ["base", "head"])]
    pub(crate) merge: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) report: ComparisonReportArgs,
    /// With several runs per side: the least change of time per iteration,
    /// in percent, that is a regression or an improvement (of a benchmark,
    /// or by a function's own time).
    #[arg(long, value_name = "PERCENT", default_value_t = v8inline::DEFAULT_THRESHOLD * 100.0)]
    pub(crate) threshold: f64,
    /// With --format github: annotate only functions whose self share also
    /// grew by at least this many percentage points (besides beyond noise).
    #[arg(long, value_name = "POINTS", default_value_t = 0.0)]
    pub(crate) least_growth: f64,
    /// BASE's project root: its scripts are matched by their path relative
    /// to it (default: recording.json's project_root).
    #[arg(long, value_name = "DIR")]
    pub(crate) base_root: Option<PathBuf>,
    /// HEAD's project root.
    #[arg(long, value_name = "DIR")]
    pub(crate) head_root: Option<PathBuf>,
    /// Keep native, builtin and kernel frames as functions of their own
    /// instead of charging their time to the JavaScript function that
    /// called them (as V8's CPU profiler does).
    #[arg(long)]
    pub(crate) separate_native: bool,
    /// Also render a differential flame graph (needs folded stacks): HEAD's
    /// stacks, red where they grew, blue where they shrank; with
    /// benchmarks, one FILE-<benchmark>.svg each beside it.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) flamegraph: Option<PathBuf>,
    /// How --flamegraph is drawn.
    #[arg(long, value_name = "STYLE", default_value = "icicle")]
    pub(crate) flamegraph_style: FlameGraphStyleArg,
    /// Also write the comparison as one self-contained HTML page: the
    /// table of benchmarks, a plot of each benchmark's runs and change
    /// against the threshold, the functions that moved, and links to the
    /// flame graphs and the recordings' files.
    #[arg(long, value_name = "FILE.html")]
    pub(crate) html: Option<PathBuf>,
}

/// How `compare` and `bench` write the comparison, and whether a
/// regression fails.
#[derive(Args, Debug)]
pub(crate) struct ComparisonReportArgs {
    /// Output format: text, markdown (a pull request comment) or github
    /// (warnings on the functions whose own time grew beyond noise).
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub(crate) format: CompareFormat,
    /// Functions per benchmark (text, markdown), annotations in all (github).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) top: usize,
    /// Exit 1 when a benchmark (or, without benchmarks, the profile)
    /// regressed beyond noise.
    #[arg(long)]
    pub(crate) fail_on_regression: bool,
    /// Annotations and locations relative to this directory (default: the
    /// git toplevel of the working directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) source_root: Option<PathBuf>,
    /// Write the comparison here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// The base's tree (a checkout): COMMAND runs there.
    #[arg(long, value_name = "TREE")]
    pub(crate) base: PathBuf,
    /// The head's tree.
    #[arg(long, value_name = "TREE")]
    pub(crate) head: PathBuf,
    /// Where base/, head/ (every run's recording) and bench.json go: a new or
    /// empty directory.
    #[arg(long, value_name = "DIR", default_value = "v8inline-bench")]
    pub(crate) output_dir: PathBuf,
    /// A benchmark regressed (or improved) when its CPU time per iteration's
    /// interval over runs lies wholly beyond ±PERCENT, unchanged when wholly
    /// within, else undecided.
    #[arg(long, value_name = "PERCENT", default_value_t = v8inline::DEFAULT_THRESHOLD * 100.0)]
    pub(crate) threshold: f64,
    /// Rounds before bench may stop (at least 2).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) min_rounds: u32,
    /// Rounds at most.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub(crate) max_rounds: u32,
    /// Start no round that would end later than this (3m, 90s, 1h).
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = v8inline::parse_duration)]
    pub(crate) max_time: std::time::Duration,
    /// The seed of the rounds' random orders (default: from the clock; bench.json keeps it).
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// How a round runs the two sides: both at once, judged as pairs
    /// (duet; the default with two CPUs or more), or one after the other
    /// in a random order (interleaved; the default on one CPU).
    #[arg(long, value_name = "SCHEDULE")]
    pub(crate) schedule: Option<BenchSchedule>,
    #[command(flatten)]
    pub(crate) report: ComparisonReportArgs,
    /// Exit 1 also when a benchmark is still undecided once the budget is spent.
    #[arg(long)]
    pub(crate) fail_on_undecided: bool,
    /// Samples per second.
    #[arg(long, default_value_t = 997, value_name = "HZ")]
    pub(crate) frequency: u32,
    /// Keep each run's perf.data, jitdumps and code logs (by default a run
    /// keeps its profiles and benchmarks.json, what compare reads).
    #[arg(long)]
    pub(crate) keep_recordings: bool,
    /// The benchmark command, run in each tree (`npm run bench`, `node bench.mjs`).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<std::ffi::OsString>,
}

/// `bench --schedule`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BenchSchedule {
    /// One side after the other, in an order drawn at random each round.
    Interleaved,
    /// Both sides at once, so that a busy moment of the machine slows
    /// both; a round's two runs are judged as a pair.
    Duet,
}

impl From<BenchSchedule> for v8inline::Schedule {
    fn from(schedule: BenchSchedule) -> v8inline::Schedule {
        match schedule {
            BenchSchedule::Interleaved => v8inline::Schedule::Interleaved,
            BenchSchedule::Duet => v8inline::Schedule::Duet,
        }
    }
}

/// Formats of `compare`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompareFormat {
    /// Aligned text.
    Text,
    /// A pull request comment.
    Markdown,
    /// GitHub Actions warnings on the functions whose own time grew.
    Github,
}

/// Where the code logs, jitdumps and scripts are.
#[derive(Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// V8 code log (`node --log-code --logfile=...`); once per log: a process has one per isolate
    /// (`isolate-0x*-PID-*.log`). `.gz` is read too.
    #[arg(long = "log", value_name = "LOG")]
    pub(crate) logs: Vec<PathBuf>,
    /// V8 jitdump (`node --perf-prof` writes jit-PID.dump); once per process.
    #[arg(long = "jitdump", value_name = "DUMP")]
    pub(crate) jitdumps: Vec<PathBuf>,
    /// Without --jitdump, look for jit-PID.dump of each sampled pid here.
    #[arg(long, value_name = "DIR")]
    pub(crate) jitdump_dir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) reading: ReadingArgs,
}

/// How scripts and source maps are read, and what damaged input does: the
/// main job's, `record`'s, `lookup`'s and `debuginfo`'s.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReadingArgs {
    /// Do not read scripts from disk when the log carries no source.
    #[arg(long)]
    pub(crate) no_disk_sources: bool,
    /// Replace a path prefix of script names before reading them from disk (FROM=TO).
    #[arg(long = "substitute-path", value_name = "FROM=TO", value_parser = parse_substitution)]
    pub(crate) substitutions: Vec<(String, String)>,
    /// Use MAP as the source map of the script V8 names SCRIPT, whatever the
    /// script's `sourceMappingURL` says (repeatable).
    #[arg(long = "source-map", value_name = "SCRIPT=MAP", value_parser = parse_substitution)]
    pub(crate) source_maps: Vec<(String, String)>,
    /// Do not map frames through source maps: keep the positions in the
    /// JavaScript V8 ran.
    #[arg(long)]
    pub(crate) no_source_maps: bool,
    /// Fail (exit 1, no output) when any input line or record had to be
    /// skipped, instead of warning and using the rest.
    #[arg(long)]
    pub(crate) strict: bool,
}

#[derive(Args, Debug)]
pub(crate) struct LookupArgs {
    #[command(flatten)]
    pub(crate) inputs: InputArgs,
    /// Time of the addresses (jitdump clock, CLOCK_MONOTONIC ns): picks the
    /// code object live then. `ADDRESS@NS` sets it per address.
    #[arg(long, value_name = "NS")]
    pub(crate) time: Option<u64>,
    /// Addresses in hexadecimal, optionally `ADDRESS@NS`.
    #[arg(required = true, value_name = "ADDRESS")]
    pub(crate) addresses: Vec<String>,
    /// Read on this many threads (default: one per core): with 2 or more
    /// the jitdump is read while the code logs are.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
}

/// A significance level: a number strictly between 0 and 1.
pub(crate) fn parse_significance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value > 0.0 && value < 1.0 => Ok(value),
        _ => Err(format!("{text:?} is not a significance: give a number between 0 and 1, such as 0.005")),
    }
}

pub(crate) fn parse_substitution(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(from, to)| (from.to_string(), to.to_string()))
        .ok_or_else(|| format!("expected FROM=TO, got {text:?}"))
}

impl InputArgs {
    /// The code logs and sources these arguments name, read on one thread
    /// (a command sets `read_threads` from `--threads`).
    pub(crate) fn code_log_options(&self) -> CodeLogOptions {
        let mut options = CodeLogOptions::default();
        options.logs = self.logs.clone();
        options.jitdumps = self.jitdumps.clone();
        options.jitdump_dir = self.jitdump_dir.clone();
        options.codspeed_log_dir = std::env::var_os("CODSPEED_V8_LOG").map(PathBuf::from);
        options.sources = self.reading.source_options();
        options.read_threads = 1;
        options
    }
}

impl OutputArgs {
    /// The outputs these arguments ask for (the main job sets the folded
    /// stacks' file and the flame graph, `record` writes them in its
    /// directory); `stats` is `--stats`.
    pub(crate) fn choices(&self, stats: bool) -> OutputChoices {
        // Where a text output goes: its file, else standard output.
        let to = |path: &Option<PathBuf>| path.clone().map_or(Destination::StandardOutput, Destination::File);
        let mut choices = OutputChoices::default();
        choices.flamegraph_style = self.flamegraph_style.into();
        choices.pprof = self.pprof.clone();
        choices.report_json = (self.report == Some(ReportFormat::Json)).then(|| to(&self.report_output));
        // Appended to: $GITHUB_STEP_SUMMARY collects every step's summary.
        choices.summary_markdown = (self.summary == Some(SummaryFormat::Markdown))
            .then(|| self.summary_output.clone().map_or(Destination::StandardOutput, Destination::AppendTo));
        choices.summary_top = self.top;
        choices.github_annotations = (self.annotate == Some(AnnotateFormat::Github)).then(|| to(&self.annotate_output));
        choices.annotations_top = self.annotate_top;
        choices.source_root = self.source_root.clone();
        choices.cpuprofile = self.cpuprofile.clone();
        choices.cpuprofile_thread = ThreadSelection { pid: self.cpuprofile_pid, tid: self.cpuprofile_tid };
        choices.javascript_only = self.js_only;
        choices.firefox_profile = self.firefox_profile.clone();
        choices.stats = stats;
        choices
    }
}

impl ReadingArgs {
    /// Where scripts are read and how their source maps are found.
    pub(crate) fn source_options(&self) -> SourceOptions {
        let mut source_maps = SourceMapOptions::default();
        source_maps.enabled = !self.no_source_maps;
        source_maps.overrides = self
            .source_maps
            .iter()
            .map(|(script, map)| SourceMapOverride { script: script.clone(), map: PathBuf::from(map) })
            .collect();
        let mut sources = SourceOptions::default();
        sources.read_from_disk = !self.no_disk_sources;
        sources.path_substitutions = self.substitutions.clone();
        sources.source_maps = source_maps;
        sources
    }
}
