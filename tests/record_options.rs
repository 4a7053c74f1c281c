//! `v8inline record` with the main job's input and folding options, and
//! what it says of a recording that is not the user's doing: node's
//! `--cpu-prof` (V8 then logs no JavaScript code), npm's own process, a
//! worker killed while it wrote its jitdump. Real runs under perf of the
//! node on PATH (and node 26 where installed); skipped with a message where
//! perf cannot record.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh working directory with deep.js and lib.js.
fn work_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("v8inline-record-options-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs");
    for program in ["deep.js", "lib.js"] {
        std::fs::copy(programs.join(program), directory.join(program)).unwrap();
    }
    directory
}

/// Whether perf cannot record here (said).
fn perf_missing() -> bool {
    match v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        Some(reason) => {
            eprintln!("SKIPPED: perf cannot record here ({reason})");
            true
        }
        None => false,
    }
}

/// `v8inline record --output-dir out ARGS...` in `directory`, with these
/// environment variables.
fn record(directory: &Path, args: &[&str], environment: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .args(["record", "--frequency", "499", "--output-dir", "out"])
        .args(args)
        .envs(environment.iter().copied())
        .env_remove("NODE_OPTIONS")
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The node on PATH, and node 26 where installed.
fn nodes() -> Vec<(String, PathBuf)> {
    let mut nodes = vec![("node on PATH".to_string(), PathBuf::from("node"))];
    if let Some(node) = common::node_binary(26) {
        nodes.push(("node 26".to_string(), node));
    }
    nodes
}

/// With node's `--cpu-prof` V8 writes nothing to its code log while it profiles
/// (node 20: 0 of 249 code-creations of JavaScript; node 26: 0 of 85):
/// record says so before the command runs, and the warning after it names
/// `--cpu-prof`, not `--log-code`.
#[test]
fn cpu_prof_is_named_as_the_cause_before_and_after_the_run() {
    if perf_missing() {
        return;
    }
    for (what, node) in nodes() {
        let directory = work_directory(&format!("cpu-prof-{}", what.replace(' ', "-")));
        let node = node.display().to_string();
        let output = record(&directory, &["--", &node, "--cpu-prof", "deep.js", "200"], &[]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{what}: {message}");
        assert!(
            message.starts_with(
                "v8inline: warning: the command holds --cpu-prof: node's --cpu-prof runs V8's CPU profiler, and \
                 V8 writes nothing to its code log while it profiles: no frame will be expanded; drop it: record \
                 writes a .cpuprofile itself (profile.cpuprofile in the output directory), with the inlined \
                 functions\n"
            ),
            "{what}: {message}"
        );
        assert!(
            message.contains(
                "samples that ran JavaScript did not expand: the code log has code records, but none of \
                 JavaScript: V8's CPU profiler ran (node --cpu-prof, or an inspector's Profiler.start), and V8 \
                 writes nothing to its code log while it profiles; record without --cpu-prof (v8inline record \
                 writes a .cpuprofile itself, with the inlined functions)"
            ),
            "{what}: {message}"
        );
        assert!(!message.contains("recorded without --log-code"), "{what}: {message}");
        assert!(message.contains(" 0 JIT frames expanded into inlined functions"), "{what}: {message}");
    }
    // node 22 and later take --cpu-prof from NODE_OPTIONS too.
    if let Some(node) = common::node_binary(26) {
        let directory = work_directory("cpu-prof-node-options");
        let node = node.display().to_string();
        let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .current_dir(&directory)
            .args(["record", "--output-dir", "out", "--", &node, "deep.js", "200"])
            .env("NODE_OPTIONS", "--cpu-prof")
            .output()
            .unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{message}");
        assert!(message.starts_with("v8inline: warning: NODE_OPTIONS holds --cpu-prof: "), "{message}");
        assert!(message.contains("V8's CPU profiler ran (node --cpu-prof"), "{message}");
        // The flags were known all the same (node 20 on PATH refuses
        // --cpu-prof in NODE_OPTIONS when asked for its V8 flags).
        assert!(!message.contains("does not know"), "{message}");
    }
}

/// The main job's options that shape what is read and folded are
/// record's too: `--tid` roots, `--skip-after` by a function's name in any
/// tier, `--stats`, `--strict` (a clean recording passes), and a
/// `--skip-after` that names no frame is said.
#[test]
fn record_takes_the_main_jobs_input_and_folding_options() {
    if perf_missing() {
        return;
    }
    let directory = work_directory("options");
    let output = record(
        &directory,
        &[
            "--no-source-maps",
            "--no-disk-sources",
            "--substitute-path",
            "/nowhere=/elsewhere",
            "--source-map",
            "/nowhere/app.js=/nowhere/app.js.map",
            "--strict",
            "--stats",
            "--tid",
            "--skip-after",
            "kernel",
            "--skip-after",
            "no_such_function",
            "--",
            "node",
            "deep.js",
            "400",
        ],
        &[],
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    assert!(
        message.contains(
            "v8inline: warning: --skip-after \"no_such_function\" names no frame: no stack was cut (a JavaScript \
             function is named by NAME, NAME FILE:LINE or its frame's whole name, in any tier)\n"
        ),
        "{message}"
    );
    assert!(!message.contains("input problem"), "{message}");
    assert!(message.contains("\nv8inline: samples: "), "--stats: {message}");
    assert!(message.contains("\nv8inline:   expanded into inlined functions: "), "--stats: {message}");
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    let script = directory.join("deep.js").display().to_string();
    let is_kernel = |frame: &str| frame.starts_with("JS:") && frame.contains(&format!("kernel {script}:"));
    let mut cut_tiers = std::collections::BTreeSet::new();
    for line in folded.lines() {
        let frames: Vec<&str> = line.rsplit_once(' ').unwrap().0.split(';').collect();
        match frames.iter().position(|frame| is_kernel(frame)) {
            // Cut at kernel: it is the root-most frame, whatever its tier.
            Some(position) => {
                assert_eq!(position, 0, "{line}");
                cut_tiers.insert(frames[0].chars().nth(3).unwrap());
            }
            // Not cut: a root per thread, `node-PID/TID`.
            None => {
                let root = frames[0];
                let ids = root.strip_prefix("node-").unwrap_or_else(|| panic!("root {root}: {line}"));
                let (pid, tid) = ids.split_once('/').unwrap_or_else(|| panic!("root {root}: {line}"));
                assert!(pid.parse::<u32>().is_ok() && tid.parse::<u32>().is_ok(), "{line}");
            }
        }
    }
    assert!(cut_tiers.contains(&'*'), "no stack cut at the optimized kernel: {cut_tiers:?}\n{folded}");
}

/// npm's own node, recorded beside the user's program it runs, is npm's
/// business: a short program of the user's still gets its warning (and
/// `--strict` refuses it), npm's process only a line under `--stats`; a
/// program that expands passes `--strict` through npm.
#[test]
fn npm_run_warns_only_of_the_users_program() {
    if perf_missing() {
        return;
    }
    if Command::new("npm").arg("--version").output().is_err() {
        eprintln!("SKIPPED: npm is not on PATH");
        return;
    }
    let directory = work_directory("npm");
    std::fs::write(
        directory.join("package.json"),
        r#"{"name": "npm-noise", "version": "1.0.0", "private": true,
            "scripts": {"short": "node --max-opt=1 short.js", "long": "node deep.js 400"}}"#,
    )
    .unwrap();
    // Never optimized (as a run too short for TurboFan, whatever the
    // machine's speed): its samples ran interpreted or Sparkplug code.
    std::fs::write(
        directory.join("short.js"),
        "function add(a, b) { return a + b; }\n\
         function loop(n) { let s = 0; for (let i = 0; i < n; i++) s = add(s, i % 7); return s; }\n\
         let t = 0; for (let k = 0; k < 200; k++) t += loop(100000); console.log(t);\n",
    )
    .unwrap();
    let output = record(&directory, &["--stats", "--", "npm", "run", "short"], &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    let warnings: Vec<&str> = message.lines().take_while(|line| !line.starts_with("v8inline: recorded ")).collect();
    let warnings = warnings.join("\n");
    assert!(warnings.contains("v8inline: warning: 1 input problem(s)"), "{message}");
    assert!(warnings.contains("v8inline:   1 V8 process(es) whose JavaScript mostly did not expand"), "{message}");
    assert!(!warnings.contains("node_modules/npm/"), "npm's own warned of: {message}");
    assert!(message.contains("\nv8inline: not the user's, so no warning: npm's own process: "), "{message}");

    let directory_strict = work_directory("npm-strict");
    for file in ["package.json", "short.js"] {
        std::fs::copy(directory.join(file), directory_strict.join(file)).unwrap();
    }
    let output = record(&directory_strict, &["--strict", "--", "npm", "run", "short"], &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "a short program is refused: {message}");
    assert!(message.contains("--strict: 1 input problem(s), listed above; no output written"), "{message}");

    let output = record(&directory_strict, &["--strict", "--force", "--", "npm", "run", "long"], &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "npm's own noise refused: {message}");
    assert!(!message.contains("warning"), "{message}");
}

/// A worker killed with a signal (as test runners stop theirs) leaves its
/// jitdump cut where its buffer was last flushed, inside a record: with
/// every sampled frame resolved that is a note, not a warning, and
/// `--strict` passes.
#[test]
fn a_killed_workers_jitdump_is_a_note() {
    if perf_missing() {
        return;
    }
    let directory = work_directory("killed");
    // Optimizes kernel, then compiles more code (records after the hot
    // code's, so that it was flushed) and waits to be killed.
    std::fs::write(
        directory.join("worker.js"),
        "const deep = require('./deep-kernel.js');\n\
         const end = Date.now() + 1200; let sum = 0;\n\
         while (Date.now() < end) sum += deep.kernel(2000, 1);\n\
         for (let i = 0; i < 300; i++) new Function('x', `return x + ${i}`)(i);\n\
         console.log('ready', sum); setInterval(() => {}, 1000);\n",
    )
    .unwrap();
    let deep = std::fs::read_to_string(directory.join("deep.js")).unwrap();
    let kernel_only = deep.split("// Shapes change per phase").next().unwrap();
    std::fs::write(directory.join("deep-kernel.js"), format!("{kernel_only}\nmodule.exports = {{ kernel }};\n"))
        .unwrap();
    let output = record(
        &directory,
        &["--strict", "--", "sh", "-c", "node worker.js & worker=$!; sleep 4; kill $worker; wait $worker; exit 0"],
        &[],
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    let note = message.lines().find(|line| line.starts_with("v8inline: note: ")).unwrap_or_else(|| panic!("{message}"));
    assert!(note.contains("/out/jit-") && note.contains("(cut short); reading stopped"), "{note}");
    // Then, when code objects were lost, what the code log gave (issue 47).
    assert!(
        note.contains(": where its process last flushed it before it was killed (test runners stop their workers so)")
            && note.ends_with("; every sampled frame of the process resolved"),
        "{note}"
    );
    let jitdump = note.strip_prefix("v8inline: note: ").unwrap().split(": ").next().unwrap();
    assert_eq!(std::fs::metadata(jitdump).unwrap().len() % 4096, 0, "{jitdump}");
    assert!(!message.contains("warning"), "{message}");
}
