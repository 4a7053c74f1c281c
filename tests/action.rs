//! The GitHub Action's steps (`scripts/benchmark-ci.sh`, which action.yml
//! runs) on a temporary git repository: a base commit of a small benchmark
//! and a head commit that makes one of its functions slower, with GitHub's
//! files (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP, GITHUB_WORKSPACE)
//! pointed at temporary files. The script runs the built binary
//! (`V8INLINE_BINARY`), not the npm registry's. Needs node and git on PATH;
//! skipped with a message otherwise. Records with perf where it may, else
//! with V8's own sampler (as `record` does).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The benchmark at base: `slowPart` and `fastPart` about equal, in a loop
/// that runs a fixed time, measured with `performance.measure`.
const BENCHMARK: &str = r#"const WORK = 100;
function slowPart(x) {
  let sum = 0;
  for (let i = 0; i < WORK; i++) sum += (x * i) % 7;
  return sum;
}
function fastPart(x) {
  let sum = 0;
  for (let i = 0; i < 100; i++) sum += (x + i) % 5;
  return sum;
}
function kernel(n) {
  let total = 0;
  for (let i = 0; i < n; i++) total += slowPart(i) + fastPart(i);
  return total;
}
performance.mark("kernel start");
let result = 0;
const end = Date.now() + 700;
while (Date.now() < end) result += kernel(1000);
performance.measure("kernel loop", "kernel start");
console.log(result > 0 ? "done" : "never");
"#;

fn on_path(program: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).any(|dir| dir.join(program).is_file())
}

fn git(repository: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(repository)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A repository on branch `feature`, one commit after `main`: `slowPart`
/// does four times the work. The benchmark is `benchmarks/bench.js`, run in
/// `benchmarks` (the Action's working-directory).
fn repository(root: &Path) -> PathBuf {
    let repository = root.join("repository");
    std::fs::create_dir_all(repository.join("benchmarks")).unwrap();
    git(&repository, &["init", "--quiet"]);
    let benchmark = repository.join("benchmarks/bench.js");
    std::fs::write(&benchmark, BENCHMARK).unwrap();
    git(&repository, &["add", "benchmarks/bench.js"]);
    git(&repository, &["commit", "--quiet", "-m", "base"]);
    git(&repository, &["checkout", "--quiet", "-b", "feature"]);
    std::fs::write(&benchmark, BENCHMARK.replace("const WORK = 100;", "const WORK = 400;")).unwrap();
    git(&repository, &["commit", "--quiet", "-am", "head: slowPart four times the work"]);
    repository
}

/// Whether `compare` takes recording directories and `--fail-on-regression`
/// (#39); until it does, the script runs a stand-in.
fn compare_takes_recordings() -> bool {
    let help = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(["compare", "--help"]).output().unwrap();
    String::from_utf8_lossy(&help.stdout).contains("--fail-on-regression")
}

/// The binary for the script: the built one, or while `compare` does not
/// yet take recording directories, a stand-in that gives it each
/// directory's profile.folded and exits 1 where `--format github` annotated
/// a function (it matches functions by absolute path, so every function of
/// the head is new to it).
fn v8inline_for_the_script(root: &Path) -> PathBuf {
    let binary = env!("CARGO_BIN_EXE_v8inline");
    if compare_takes_recordings() {
        return PathBuf::from(binary);
    }
    eprintln!("NOTE: compare takes no recording directories yet: the script runs a stand-in for it");
    let stand_in = root.join("v8inline-before-39");
    std::fs::write(
        &stand_in,
        format!(
            r#"#!/usr/bin/env bash
[ "$1" = compare ] || exec {binary:?} "$@"
args=(); fail=false
for argument in "${{@:2}}"; do
  if [ "$argument" = --fail-on-regression ]; then fail=true
  elif [ -f "$argument/profile.folded" ]; then args+=("$argument/profile.folded")
  else args+=("$argument"); fi
done
output=$({binary:?} compare "${{args[@]}}") || exit $?
[ -z "$output" ] || printf '%s\n' "$output"
if $fail && grep -q '^::warning' <<<"$output"; then exit 1; fi
"#
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    stand_in
}

/// What one run of the script left.
struct ActionRun {
    output: Output,
    summary: String,
    github_output: String,
    recordings: PathBuf,
}

fn run_action(root: &Path, repository: &Path, fail_on_regression: bool) -> ActionRun {
    let summary = root.join("step-summary.md");
    let github_output = root.join("github-output");
    let runner_temp = root.join("runner-temp");
    for file in [&summary, &github_output] {
        std::fs::write(file, "").unwrap();
    }
    std::fs::create_dir_all(&runner_temp).unwrap();
    let output = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/benchmark-ci.sh"))
        .current_dir(repository)
        .env("V8INLINE_RUN", "node bench.js")
        .env("V8INLINE_INSTALL", "")
        .env("V8INLINE_FAIL_ON_REGRESSION", fail_on_regression.to_string())
        .env("V8INLINE_BINARY", v8inline_for_the_script(root))
        .env_remove("V8INLINE_BASE_REF")
        .env("V8INLINE_WORKING_DIRECTORY", "benchmarks")
        .env_remove("V8INLINE_SETUP_PERF")
        .env("GITHUB_BASE_REF", "main")
        .env("GITHUB_WORKSPACE", repository)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &github_output)
        .env("RUNNER_TEMP", &runner_temp)
        .output()
        .unwrap();
    ActionRun {
        summary: std::fs::read_to_string(&summary).unwrap(),
        github_output: std::fs::read_to_string(&github_output).unwrap(),
        recordings: runner_temp.join("v8inline-recordings"),
        output,
    }
}

#[test]
fn the_action_records_base_and_head_and_reports_the_slower_function() {
    if !on_path("node") || !on_path("git") {
        eprintln!("SKIPPED: node and git are not both on PATH");
        return;
    }
    let root = common::temp_dir("action", "regression");
    let origin = repository(&root);
    // As actions/checkout leaves a pull request: the head alone, one commit
    // deep; the script fetches the base branch.
    let url = format!("file://{}", origin.display());
    git(&root, &["clone", "--quiet", "--depth", "1", "--branch", "feature", &url, "checkout"]);
    let repository = root.join("checkout");
    let base_here =
        Command::new("git").current_dir(&repository).args(["rev-parse", "--verify", "--quiet", "main"]).output();
    assert!(!base_here.unwrap().status.success());

    let run = run_action(&root, &repository, true);
    let log = String::from_utf8_lossy(&run.output.stdout);
    let errors = String::from_utf8_lossy(&run.output.stderr);
    assert!(log.starts_with("fetching main from origin\n"), "{log}");
    // fail-on-regression: the four times slower function is a regression.
    assert_eq!(run.output.status.code(), Some(1), "{log}\n{errors}");
    assert!(
        log.contains("::error title=v8inline benchmark::a regression beyond noise against main (fail-on-regression)"),
        "{log}"
    );
    // Both recordings, for the artifact, named in the step's output.
    assert_eq!(run.github_output, format!("recordings={}\n", run.recordings.display()));
    for side in ["base", "head"] {
        let folded = std::fs::read_to_string(run.recordings.join(side).join("profile.folded")).unwrap();
        assert!(folded.contains("slowPart"), "{side}: no slowPart in\n{folded}");
    }
    // The job summary: the markdown comparison naming the function.
    assert!(run.summary.contains("slowPart"), "{}", run.summary);
    if compare_takes_recordings() {
        // record finds the performance.measure window, compare names it.
        assert!(run.summary.contains("kernel loop"), "{}", run.summary);
    }
    // The annotations in the log: slowPart's first, at its line of bench.js,
    // the path relative to the repository (not the working-directory).
    let annotations: Vec<&str> = log.lines().filter(|line| line.starts_with("::warning ")).collect();
    assert!(!annotations.is_empty(), "no annotation in\n{log}");
    assert!(annotations[0].starts_with("::warning file=benchmarks/bench.js,line=2,"), "{log}");
    assert!(annotations[0].contains("slowPart"), "{log}");
    if compare_takes_recordings() {
        // fastPart's share shrank: only a function whose own time grew.
        assert!(!annotations.iter().any(|line| line.contains("fastPart")), "{log}");
    }
    // The base's worktree is gone.
    assert_eq!(git(&repository, &["worktree", "list"]).lines().count(), 1);

    // Without fail-on-regression: the same report, and success.
    let run = run_action(&root, &repository, false);
    let log = String::from_utf8_lossy(&run.output.stdout);
    assert_eq!(run.output.status.code(), Some(0), "{log}\n{}", String::from_utf8_lossy(&run.output.stderr));
    assert!(run.summary.contains("slowPart"), "{}", run.summary);
    assert!(log.lines().any(|line| line.starts_with("::warning ") && line.contains("slowPart")), "{log}");
    assert!(!log.contains("::error"), "{log}");
}

#[test]
fn the_action_says_what_is_missing() {
    if !on_path("git") {
        eprintln!("SKIPPED: no git on PATH");
        return;
    }
    let root = common::temp_dir("action", "no-base");
    let repository = repository(&root);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/benchmark-ci.sh");
    let run = |environment: &[(&str, &str)]| {
        let mut command = Command::new(&script);
        command
            .current_dir(&repository)
            .env_remove("GITHUB_BASE_REF")
            .env_remove("V8INLINE_BASE_REF")
            .env("GITHUB_STEP_SUMMARY", root.join("summary.md"))
            .env("GITHUB_OUTPUT", root.join("output"))
            .env("RUNNER_TEMP", &*root);
        for (name, value) in environment {
            command.env(name, value);
        }
        command.output().unwrap()
    };
    // Not a pull request and no base-ref.
    let output = run(&[("V8INLINE_RUN", "node bench.js")]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "::error title=v8inline benchmark::no base to compare with: set the input base-ref \
         (GITHUB_BASE_REF is set only for pull_request events)\n"
    );
    let output = run(&[("V8INLINE_RUN", "node bench.js"), ("V8INLINE_FAIL_ON_REGRESSION", "yes")]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "::error title=v8inline benchmark::fail-on-regression must be true or false, not 'yes'\n"
    );
    let output = run(&[("V8INLINE_RUN", "node bench.js"), ("V8INLINE_WORKING_DIRECTORY", "packages/none")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stdout).contains("working-directory packages/none: no such directory"));
}
