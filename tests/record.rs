//! `v8inline record`: real node runs of node 18-26 and Deno runs under perf,
//! and the fallback to V8's `--prof` sampler when perf is not on the PATH.
//!
//! Runs every node of 18-26 that is installed (`testdata/record.sh` puts
//! them in /opt/nodes; node on PATH counts), at least one. Deno is the npm
//! package's binary in /opt/deno (`.ci/run` installs it), or deno on PATH;
//! without it the Deno tests are skipped with a message. Where `perf record
//! -e cpu-clock` cannot work, the perf runs are skipped with a message; the
//! fallbacks run everywhere.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::NODE_VERSIONS;
use v8inline::internals::output::cpuprofile::CpuProfile;

/// A fresh working directory with the test programs.
fn work_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("v8inline-record-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs");
    for program in ["deep.js", "lib.js", "workers.js", "forker.js", "launcher.js"] {
        std::fs::copy(programs.join(program), directory.join(program)).unwrap();
    }
    directory
}

/// Runs `v8inline record -- NODE deep.js 400` in `directory` with `path` as
/// PATH; returns standard error.
fn record(directory: &Path, node: &Path, path: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .env("PATH", path)
        .args(["record", "--frequency", "499", "--output-dir", "out", "--"])
        .arg(node)
        .args(["deep.js", "400"])
        .output()
        .unwrap();
    let errors = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{}: {errors}", node.display());
    errors
}

/// Checks the outputs: inlined JavaScript frames in the folded stacks, the
/// flame graph, the `.cpuprofile` (combine a node under kernel) and the
/// Firefox profile (combine a frame in its category).
fn assert_inlined_profile(directory: &Path, what: &str) {
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    let script = directory.join("deep.js").display().to_string();
    let inlined_combine = folded
        .lines()
        .filter(|line| {
            let frames: Vec<&str> = line.split(';').collect();
            frames.windows(2).any(|pair| {
                pair[0].contains(&format!("kernel {script}"))
                    && pair[1].contains(&format!("combine {script}"))
                    && pair[1].ends_with("_[i]")
            })
        })
        .count();
    assert!(inlined_combine > 0, "{what}: no kernel;combine_[i] stack in\n{folded}");
    let svg = std::fs::read_to_string(directory.join("out/flamegraph.svg")).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("combine"), "{what}: flame graph without combine");
    let cpuprofile: CpuProfile =
        serde_json::from_slice(&std::fs::read(directory.join("out/profile.cpuprofile")).unwrap()).unwrap();
    let name = |id: u32| &cpuprofile.nodes.iter().find(|node| node.id == id).unwrap().call_frame.function_name;
    let combine_under_kernel = cpuprofile
        .nodes
        .iter()
        .any(|node| name(node.id) == "kernel" && node.children.iter().any(|&child| name(child) == "combine"));
    assert!(combine_under_kernel, "{what}: no combine node under kernel in profile.cpuprofile");
    let firefox = String::from_utf8(common::gunzip(&directory.join("out/profile.firefox.json.gz"))).unwrap();
    assert!(firefox.contains(&format!("combine {script}:26:17")), "{what}: no combine frame in the Firefox profile");
    assert!(firefox.contains(r#""name":"JavaScript: inlined""#), "{what}: Firefox profile without its categories");
}

/// The installed nodes of 18-26, or else the node on PATH.
fn installed_nodes() -> Vec<(String, PathBuf)> {
    let mut nodes: Vec<(String, PathBuf)> = NODE_VERSIONS
        .into_iter()
        .filter_map(|version| common::node_binary(version).map(|node| (version.to_string(), node)))
        .collect();
    if nodes.is_empty() {
        let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|directory| directory.join("node"))
            .find(|path| path.is_file());
        nodes.extend(on_path.map(|node| ("on PATH".to_string(), node)));
    }
    assert!(!nodes.is_empty(), "no node installed");
    for version in NODE_VERSIONS {
        if common::node_binary(version).is_none() {
            eprintln!("node {version} is not installed: not tested (testdata/record.sh installs it)");
        }
    }
    nodes
}

#[test]
fn records_node_18_to_26_under_perf() {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason}); the fallback test still runs");
        return;
    }
    let path = std::env::var("PATH").unwrap();
    for (version, node) in installed_nodes() {
        let directory = work_directory(&format!("perf{version}"));
        let errors = record(&directory, &node, &path);
        assert!(!errors.contains("perf is not usable"), "node {version}: {errors}");
        assert!(directory.join("out/perf.data").is_file(), "node {version}");
        // The jitdump is in the output directory, also where node has no
        // --perf-prof-path (18, 20), and not left in the working directory.
        let out: Vec<String> = std::fs::read_dir(directory.join("out"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(out.iter().any(|name| name.starts_with("jit-") && name.ends_with(".dump")), "node {version}: {out:?}");
        // One log per isolate: isolate-0x<address>-<pid>-codspeed-v8-<pid>.log.
        assert!(
            out.iter().any(|name| name.starts_with("isolate-0x") && name.contains("-codspeed-v8-")),
            "node {version}: {out:?}"
        );
        assert!(
            !std::fs::read_dir(&directory).unwrap().any(|entry| entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("jit-")),
            "node {version}: jitdump left in the working directory"
        );
        assert!(errors.contains("JIT frames expanded"), "node {version}: {errors}");
        assert_inlined_profile(&directory, &format!("node {version} under perf"));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}

/// Runs `v8inline record -- NODE --expose-gc workers.js 1500` in
/// `directory` with `path` as PATH; returns standard error.
fn record_workers(directory: &Path, node: &Path, path: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .env("PATH", path)
        .args(["record", "--frequency", "997", "--output-dir", "out", "--"])
        .arg(node)
        .args(["--expose-gc", "workers.js", "1500"])
        .output()
        .unwrap();
    let errors = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{}: {errors}", node.display());
    errors
}

/// The files of the output directory whose names contain `part` and end
/// with `suffix`.
fn output_files(directory: &Path, part: &str, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory.join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(part) && name.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// Per thread (`--tid` root) that ran deep.js's `kernel` (`script` as V8
/// names deep.js: its path, or its `file://` URL under Deno): the time in
/// `kernel` and the time of stacks where `combine`, `weigh` and `square` are
/// inlined under it (`kernel;combine_[i];weigh_[i];square_[i]`).
fn inlined_chain_by_thread(folded: &str, script: &str) -> std::collections::BTreeMap<String, (u64, u64)> {
    let mut threads: std::collections::BTreeMap<String, (u64, u64)> = std::collections::BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let count: u64 = count.parse().unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        let Some(kernel) = frames.iter().position(|frame| frame.contains(&format!("kernel {script}:"))) else {
            continue;
        };
        let thread = threads.entry(frames[0].to_string()).or_default();
        thread.0 += count;
        let chain = &frames[kernel + 1..];
        let inlined =
            |function: &str, frame: &&str| frame.contains(&format!("{function} {script}:")) && frame.ends_with("_[i]");
        if chain.len() >= 3
            && ["combine", "weigh", "square"].iter().zip(chain).all(|(function, frame)| inlined(function, frame))
        {
            thread.1 += count;
        }
    }
    threads
}

/// `record` of a worker_threads program (the main thread and two workers
/// each in deep.js's chain): V8 writes one log per isolate, and every
/// thread expands the whole inlined chain from its own isolate's log.
#[test]
fn records_every_worker_thread_under_perf() {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason}); the fallback test still runs");
        return;
    }
    let path = std::env::var("PATH").unwrap();
    for (version, node) in installed_nodes() {
        let directory = work_directory(&format!("workers{version}"));
        let errors = record_workers(&directory, &node, &path);
        assert!(!errors.contains("warning"), "node {version}: {errors}");
        let logs = output_files(&directory, "-codspeed-v8-", ".log");
        assert_eq!(logs.len(), 3, "node {version}: one log per isolate: {logs:?}");
        assert!(logs.iter().all(|name| name.starts_with("isolate-0x")), "node {version}: {logs:?}");
        assert_eq!(output_files(&directory, "jit-", ".dump").len(), 1, "node {version}");
        // Each thread of the recording, folded again with thread ids.
        let folded = Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .args(["--perf-data", "out/perf.data", "--tid", "--annotate-inline"])
            .current_dir(&directory)
            .output()
            .unwrap();
        assert!(folded.status.success(), "node {version}: {}", String::from_utf8_lossy(&folded.stderr));
        let script = directory.join("deep.js").display().to_string();
        let threads = inlined_chain_by_thread(&String::from_utf8(folded.stdout).unwrap(), &script);
        assert_eq!(threads.len(), 3, "node {version}: three threads ran kernel: {threads:?}");
        for (thread, (kernel_time, chain_time)) in &threads {
            assert!(*chain_time > 0 && *chain_time < *kernel_time, "node {version}, {thread}: {threads:?}");
        }
        assert_inlined_profile(&directory, &format!("node {version}, worker threads"));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}

/// Without perf, V8's own ticks of every isolate are folded, each with its
/// isolate's code objects: every tick of the three logs is in the profile.
#[test]
fn records_every_worker_thread_with_v8_ticks() {
    let (version, node) = installed_nodes().pop().unwrap();
    let directory = work_directory(&format!("workers-ticks{version}"));
    let errors = record_workers(&directory, &node, "/nonexistent");
    assert!(errors.contains("perf is not usable: perf is not installed"), "node {version}: {errors}");
    let logs = output_files(&directory, "-prof-", ".log");
    assert_eq!(logs.len(), 3, "node {version}: one log per isolate: {logs:?}");
    let ticks: usize = logs
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(directory.join("out").join(name)).unwrap();
            text.lines().filter(|line| line.starts_with("tick,")).count()
        })
        .sum();
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    let folded_ticks: usize =
        folded.lines().map(|line| line.rsplit_once(' ').unwrap().1.parse::<usize>().unwrap()).sum();
    assert_eq!(folded_ticks, ticks, "node {version}");
    assert!(errors.contains(&format!("v8inline: {ticks} samples, ")), "node {version}: {errors}");
    assert_inlined_profile(&directory, &format!("node {version}, worker threads with --prof"));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn falls_back_to_v8_ticks_without_perf() {
    let nodes = installed_nodes();
    // The oldest and the newest installed.
    let ends = [nodes.first(), nodes.last()];
    for (version, node) in ends.into_iter().flatten().take(if nodes.len() > 1 { 2 } else { 1 }) {
        let directory = work_directory(&format!("ticks{version}"));
        // A PATH without perf (node is given by its full path).
        let errors = record(&directory, node, "/nonexistent");
        assert!(errors.contains("perf is not usable: perf is not installed"), "node {version}: {errors}");
        assert!(errors.contains("node --prof"), "node {version}: {errors}");
        assert!(!directory.join("out/perf.data").exists());
        assert_inlined_profile(&directory, &format!("node {version} with --prof"));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}

#[test]
fn record_needs_a_command() {
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline")).args(["record", "--"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn falls_back_when_perf_may_not_record() {
    let (version, node) = installed_nodes().remove(0);
    let directory = work_directory(&format!("denied{version}"));
    // A perf that fails as perf does under perf_event_paranoid or seccomp.
    let fake_bin = directory.join("bin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    let fake_perf = fake_bin.join("perf");
    std::fs::write(
        &fake_perf,
        "#!/bin/sh\necho 'Error:' >&2\necho 'Access to performance monitoring and observability operations is limited.' >&2\nexit 255\n",
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&fake_perf).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&fake_perf, permissions).unwrap();
    let errors = record(&directory, &node, &format!("{}:/usr/bin:/bin", fake_bin.display()));
    assert!(
        errors.contains(
            "perf is not usable: `perf stat -e cpu-clock` failed (exit status: 255): Access to performance monitoring"
        ),
        "node {version}: {errors}"
    );
    assert!(!directory.join("out/perf.data").exists());
    assert_inlined_profile(&directory, &format!("node {version}, perf not permitted"));
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Deno's binary: the npm package's (`npm install --prefix /opt/deno deno`,
/// as `.ci/run` installs it), or deno on PATH.
fn deno_binary() -> Option<PathBuf> {
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|directory| directory.join("deno"))
        .collect::<Vec<_>>();
    // The package for this platform: @deno/linux-x64-glibc, linux-arm64-glibc.
    let platform_packages = std::fs::read_dir("/opt/deno/node_modules/@deno")
        .into_iter()
        .flatten()
        .map(|entry| entry.unwrap().path().join("deno"));
    platform_packages
        .chain([PathBuf::from("/opt/deno/node_modules/deno/deno")])
        .chain(on_path)
        .filter(|path| path.is_file())
        .find(|path| {
            Command::new(path)
                .arg("--version")
                .output()
                .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).starts_with("deno "))
        })
}

/// Deno's binary, or `None` after saying why the test is skipped.
fn deno_or_skip() -> Option<PathBuf> {
    let deno = deno_binary();
    if deno.is_none() {
        eprintln!(
            "SKIPPED: deno is not installed (`npm install --prefix /opt/deno deno` installs it, as .ci/run does)"
        );
    }
    deno
}

/// A fresh working directory with deep.js, lib.js and the Deno programs
/// (testdata/programs/deno) beside them.
fn deno_work_directory(name: &str) -> PathBuf {
    let directory = work_directory(name);
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs/deno");
    for program in
        ["package.json", "deno.json", "main.js", "deep_test.js", "deep_bench.js", "workers.mjs", "deep_worker.mjs"]
    {
        std::fs::copy(programs.join(program), directory.join(program)).unwrap();
    }
    directory
}

/// What `v8inline record` printed.
struct RecordOutput {
    stdout: String,
    stderr: String,
}

/// Runs `v8inline record --output-dir out -- COMMAND...` in `directory`
/// with `path` as PATH (Deno's directory first, for `deno task`).
fn record_command(directory: &Path, deno: &Path, command: &[&str], path: &str) -> RecordOutput {
    let deno_directory = deno.parent().unwrap().display().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(directory)
        .env("PATH", format!("{deno_directory}:{path}"))
        .env("DENO_NO_UPDATE_CHECK", "1")
        .env_remove("DENO_V8_FLAGS")
        .args(["record", "--frequency", "997", "--output-dir", "out", "--"])
        .arg(deno)
        .args(command)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "deno {command:?}: {stderr}");
    RecordOutput { stdout: String::from_utf8_lossy(&output.stdout).into_owned(), stderr }
}

/// Checks the whole inlined chain of deep.js in the folded stacks of a Deno
/// recording: `kernel;combine_[i];weigh_[i];square_[i]`, the script named by
/// its `file://` URL as Deno names it.
fn assert_deno_inlined_chain(directory: &Path, what: &str) {
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    let script = format!("file://{}", directory.join("deep.js").display());
    let chains = folded
        .lines()
        .filter(|line| {
            let stack = line.rsplit_once(' ').map_or(*line, |(stack, _count)| stack);
            let frames: Vec<&str> = stack.split(';').collect();
            frames.windows(4).any(|window| {
                window[0].contains(&format!("kernel {script}:32:"))
                    && ["combine", "weigh", "square"].iter().zip(&window[1..]).all(|(function, frame)| {
                        frame.contains(&format!("{function} {script}:")) && frame.ends_with("_[i]")
                    })
            })
        })
        .count();
    assert!(chains > 0, "{what}: no kernel;combine_[i];weigh_[i];square_[i] stack in\n{folded}");
}

/// Checks the flame graph of a Deno recording: counts in `unit`, the
/// subtitle starting `subtitle`, deep.js's functions labelled by name, file
/// name and line.
fn assert_deno_flamegraph(directory: &Path, subtitle: &str, unit: &str, what: &str) {
    let svg = std::fs::read_to_string(directory.join("out/flamegraph.svg")).unwrap();
    assert!(svg.contains(&format!(">{subtitle}")), "{what}: no subtitle {subtitle}");
    let all = svg.split("<title>all (").nth(1).and_then(|rest| rest.split(')').next()).unwrap();
    assert!(all.ends_with(&format!(" {unit}, 100%")), "{what}: all ({all})");
    for label in ["kernel deep.js:32", "combine deep.js:26", "weigh deep.js:20", "square deep.js:16"] {
        assert!(svg.contains(&format!("fg:label=\"{label}\"")), "{what}: no frame labelled {label}");
    }
}

/// The files of a recording are in the output directory, none in the
/// working directory.
fn assert_files_in_output_directory(directory: &Path, what: &str) {
    let names = |directory: &Path| -> Vec<String> {
        std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let out = names(&directory.join("out"));
    assert!(out.iter().any(|name| name.starts_with("jit-") && name.ends_with(".dump")), "{what}: {out:?}");
    assert!(out.iter().any(|name| name.contains("codspeed-v8-") && name.ends_with(".log")), "{what}: {out:?}");
    let here = names(directory);
    assert!(!here.iter().any(|name| name.starts_with("jit-") || name.ends_with(".log")), "{what}: {here:?}");
}

#[test]
fn records_deno_run_under_perf() {
    let Some(deno) = deno_or_skip() else { return };
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason}); the fallback test still runs");
        return;
    }
    let directory = deno_work_directory("deno-run");
    let path = std::env::var("PATH").unwrap();
    // The user's own --v8-flags are merged with record's.
    let output = record_command(&directory, &deno, &["run", "-A", "--v8-flags=--expose-gc", "main.js", "1500"], &path);
    assert!(output.stdout.contains("gc: function"), "--expose-gc lost: {}", output.stdout);
    assert!(output.stdout.contains("rounds="), "{}", output.stdout);
    assert!(!output.stderr.contains("does not know"), "{}", output.stderr);
    assert!(!output.stderr.contains("perf is not usable"), "{}", output.stderr);
    assert!(output.stderr.contains("JIT frames expanded"), "{}", output.stderr);
    assert!(directory.join("out/perf.data").is_file());
    assert_files_in_output_directory(&directory, "deno run");
    assert_deno_inlined_chain(&directory, "deno run");
    assert_deno_flamegraph(&directory, "cpu-clock: ", "ms", "deno run");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn records_deno_test_bench_and_task_under_perf() {
    let Some(deno) = deno_or_skip() else { return };
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason}); the fallback test still runs");
        return;
    }
    let path = std::env::var("PATH").unwrap();
    // `deno task` takes no --v8-flags: the task's deno gets them from
    // DENO_V8_FLAGS.
    let commands: [(&str, &[&str]); 3] = [
        ("test", &["test", "-A", "deep_test.js"]),
        ("bench", &["bench", "-A", "deep_bench.js"]),
        ("task", &["task", "deep"]),
    ];
    for (name, command) in commands {
        let directory = deno_work_directory(&format!("deno-{name}"));
        let output = record_command(&directory, &deno, command, &path);
        assert!(!output.stderr.contains("does not know"), "deno {name}: {}", output.stderr);
        assert_files_in_output_directory(&directory, &format!("deno {name}"));
        assert_deno_inlined_chain(&directory, &format!("deno {name}"));
        assert_deno_flamegraph(&directory, "cpu-clock: ", "ms", &format!("deno {name}"));
        std::fs::remove_dir_all(&directory).unwrap();
    }
}

/// `record` of a Deno program with two Web Workers, each and the main
/// thread in deep.js's chain: one log per isolate, every thread expands the
/// whole inlined chain.
#[test]
fn records_every_deno_worker_under_perf() {
    let Some(deno) = deno_or_skip() else { return };
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason}); the fallback test still runs");
        return;
    }
    let directory = deno_work_directory("deno-workers");
    let path = std::env::var("PATH").unwrap();
    let output = record_command(&directory, &deno, &["run", "-A", "workers.mjs", "1500"], &path);
    assert!(!output.stderr.contains("warning"), "{}", output.stderr);
    assert_eq!(output.stdout.matches("rounds=").count(), 3, "{}", output.stdout);
    let logs = output_files(&directory, "-codspeed-v8-", ".log");
    assert_eq!(logs.len(), 3, "one log per isolate: {logs:?}");
    assert!(logs.iter().all(|name| name.starts_with("isolate-0x")), "{logs:?}");
    let folded = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .args(["--perf-data", "out/perf.data", "--tid", "--annotate-inline"])
        .current_dir(&directory)
        .output()
        .unwrap();
    assert!(folded.status.success(), "{}", String::from_utf8_lossy(&folded.stderr));
    let script = format!("file://{}", directory.join("deep.js").display());
    let threads = inlined_chain_by_thread(&String::from_utf8(folded.stdout).unwrap(), &script);
    assert_eq!(threads.len(), 3, "the main thread and two workers ran kernel: {threads:?}");
    for (thread, (kernel_time, chain_time)) in &threads {
        assert!(*chain_time > 0 && *chain_time < *kernel_time, "{thread}: {threads:?}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn deno_falls_back_to_v8_ticks_without_perf() {
    let Some(deno) = deno_or_skip() else { return };
    let directory = deno_work_directory("deno-ticks");
    // A PATH without perf (deno's own directory only).
    let output = record_command(&directory, &deno, &["run", "-A", "main.js", "1500"], "/nonexistent");
    assert!(output.stderr.contains("perf is not usable: perf is not installed"), "{}", output.stderr);
    assert!(output.stderr.contains("deno --v8-flags=--prof"), "{}", output.stderr);
    assert!(!output.stderr.contains("does not know"), "{}", output.stderr);
    assert!(!directory.join("out/perf.data").exists());
    let out: Vec<String> = std::fs::read_dir(directory.join("out"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(out.iter().any(|name| name.contains("prof-") && name.ends_with(".log")), "{out:?}");
    assert_deno_inlined_chain(&directory, "deno run with --prof");
    // V8's ticks count 1 each: samples.
    assert_deno_flamegraph(&directory, "V8 ticks: ", "samples", "deno run with --prof");
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Skips a test that needs perf: says why and returns `true`.
fn perf_missing() -> bool {
    match v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        Some(reason) => {
            eprintln!("SKIPPED: perf cannot record here ({reason})");
            true
        }
        None => false,
    }
}

/// Runs `v8inline record ARGS...` in `directory`.
fn record_in(directory: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_v8inline")).current_dir(directory).arg("record").args(args).output().unwrap()
}

/// Whether the user `nobody` can create a file in `directory`.
fn nobody_can_write(directory: &Path) -> bool {
    let probe = directory.join("written-by-nobody");
    let status = Command::new("runuser")
        .args(["-u", "nobody", "--", "touch"])
        .arg(&probe)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let _ = std::fs::remove_file(&probe);
    status.success()
}

/// Issue 37, 3: `--output-dir` in a directory another user owns (and may
/// write): the `node` script and the preload that nodes execute are not
/// there but in a directory of the recording user's own, mode 0700, that
/// `nobody` cannot write; the recording still goes where it was asked.
#[test]
fn code_that_nodes_run_is_kept_out_of_an_output_directory_another_user_writes() {
    use std::os::unix::fs::MetadataExt;
    if perf_missing() {
        return;
    }
    let directory = work_directory("shared-output");
    let shared = directory.join("prof");
    std::fs::create_dir(&shared).unwrap();
    let nobody = Command::new("id").args(["-u", "nobody"]).output().unwrap();
    let nobody: u32 = String::from_utf8_lossy(&nobody.stdout).trim().parse().unwrap();
    std::os::unix::fs::chown(&shared, Some(nobody), Some(nobody)).unwrap();
    assert!(nobody_can_write(&shared), "the test needs an output directory nobody writes");
    // A node started through PATH (the `node` script; perf puts its own
    // directory first) that tells where the script and the preload are.
    std::fs::write(
        directory.join("where.js"),
        "let x = 0; for (let i = 0; i < 3e7; i++) x += i % 7;\n\
         const script = (d) => { try { return require('fs').readFileSync(d + '/node', 'utf8').startsWith('#!') } catch (_) { return false } };\n\
         console.log(process.env.PATH.split(':').find(script));\n\
         console.log(/--require \"([^\"]+)\"/.exec(process.env.NODE_OPTIONS)[1]);\n",
    )
    .unwrap();
    let output = record_in(&directory, &["--output-dir", "prof", "--", "sh", "-c", "node where.js"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let [script_directory, preload] = lines[..] else { panic!("{stdout}") };
    let script_directory = Path::new(script_directory);
    let preload_directory = Path::new(preload).parent().unwrap();
    for code_directory in [script_directory, preload_directory] {
        assert!(!code_directory.starts_with(&shared), "{} is in the output directory", code_directory.display());
    }
    // The script's directory was the recording's own, removed after it.
    assert!(script_directory.starts_with(preload_directory), "{stdout}");
    assert!(!script_directory.exists(), "{} left behind", script_directory.display());
    let metadata = std::fs::metadata(preload_directory).unwrap();
    assert_eq!((metadata.uid(), metadata.mode() & 0o777), (0, 0o700), "{}", preload_directory.display());
    assert!(!nobody_can_write(preload_directory));
    // The recording is where it was asked, with nothing of the shim.
    assert!(shared.join("profile.folded").is_file(), "{stderr}");
    assert!(!shared.join(".v8inline-shim").exists());
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Issue 37, 11: a node that the command starts in the background and that
/// starts after `record` returned runs as it would without v8inline: the
/// preload `NODE_OPTIONS` names is still there, and does nothing.
#[test]
fn a_node_started_after_record_returns_runs_unrecorded() {
    if perf_missing() {
        return;
    }
    let directory = work_directory("late-node");
    std::fs::write(
        directory.join("late.js"),
        "console.log('late ran, --log-code:', process.execArgv.includes('--log-code'));\n",
    )
    .unwrap();
    let output = record_in(
        &directory,
        &[
            "--output-dir",
            "out",
            "--",
            "sh",
            "-c",
            // The late node waits (30 s at most) for the file the test
            // makes once record has returned: "after" by construction, not
            // by a sleep that a loaded machine outruns.
            "(for i in $(seq 300); do [ -e go ] && break; sleep 0.1; done; node late.js) > late.txt 2>&1 & \
             node -e 'let x = 0; for (let i = 0; i < 3e7; i++) x += i % 7'",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::write(directory.join("go"), "").unwrap();
    let late = (0..100)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            std::fs::read_to_string(directory.join("late.txt")).ok().filter(|text| text.ends_with('\n'))
        })
        .expect("the late node wrote nothing in 10 s");
    assert_eq!(late, "late ran, --log-code: false\n");
    std::fs::remove_dir_all(&directory).unwrap();
}

/// A node program that prints `mine` and keeps the CPU busy for a while.
const BUSY_NODE: &str = "console.log('mine'); let x = 0; for (let i = 0; i < 5e7; i++) x += i % 7;";

/// Issue 37, 4: two records at once in one directory, both with the
/// default output directory: each gets a directory of its own and both
/// complete (they shared `v8inline-profile`, one perf.data was clobbered
/// and the other program died without its preload).
#[test]
fn two_records_at_once_get_two_directories() {
    if perf_missing() {
        return;
    }
    let directory = work_directory("two-at-once");
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .current_dir(&directory)
            .args(["record", "--", "node", "-e", BUSY_NODE])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let runs = [start(), start()];
    let mut written = Vec::new();
    for run in runs {
        let output = run.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "mine\n");
        let folded = stderr.lines().find_map(|line| line.strip_prefix("v8inline: wrote ")).unwrap().to_string();
        written.push(folded.split(',').next().unwrap().to_string());
    }
    written.sort();
    assert_eq!(written, ["v8inline-profile-2/profile.folded", "v8inline-profile/profile.folded"]);
    for output_dir in ["v8inline-profile", "v8inline-profile-2"] {
        let folded = std::fs::read_to_string(directory.join(output_dir).join("profile.folded")).unwrap();
        assert!(!folded.is_empty(), "{output_dir}");
        assert!(directory.join(output_dir).join("perf.data").is_file(), "{output_dir}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Issue 37, 5: an output directory with `%` in its name (V8 expands `%p`
/// in `--logfile`): the code log goes there, escaped, not to the program's
/// output, and the jitdump is not left in the working directory; so does
/// one named `-` (V8's name for standard output, never given as such).
#[test]
fn an_output_directory_with_percent_or_dash_gets_the_code_logs() {
    if perf_missing() {
        return;
    }
    let directory = work_directory("percent");
    for output_dir in ["p%p", "a%%b%", "-"] {
        let output = record_in(&directory, &["--output-dir", output_dir, "--", "node", "-e", BUSY_NODE]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{output_dir}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "mine\n", "{output_dir}");
        assert!(stderr.contains("v8inline: recorded 1 process: pid "), "{output_dir}: {stderr}");
        assert!(!stderr.contains("not expanded"), "{output_dir}: {stderr}");
        let out = directory.join(output_dir);
        assert_eq!(output_files_in(&out, "-codspeed-v8-", ".log").len(), 1, "{output_dir}");
        assert_eq!(output_files_in(&out, "jit-", ".dump").len(), 1, "{output_dir}");
        assert!(out.join("profile.folded").is_file(), "{output_dir}");
        assert_eq!(output_files_in(&directory, "jit-", ".dump"), Vec::<String>::new(), "{output_dir}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

/// The same with Deno: `p%p` reaches its V8 escaped too.
#[test]
fn deno_records_into_an_output_directory_with_percent() {
    let Some(deno) = deno_or_skip() else { return };
    if perf_missing() {
        return;
    }
    let directory = deno_work_directory("deno-percent");
    let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(&directory)
        .env("DENO_NO_UPDATE_CHECK", "1")
        .env_remove("DENO_V8_FLAGS")
        .args(["record", "--output-dir", "p%p", "--"])
        .arg(&deno)
        .args(["run", "-A", "main.js", "500"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("code-creation"));
    let out = directory.join("p%p");
    assert_eq!(output_files_in(&out, "-codspeed-v8-", ".log").len(), 1, "{stderr}");
    assert_eq!(output_files_in(&directory, "jit-", ".dump"), Vec::<String>::new());
    std::fs::remove_dir_all(&directory).unwrap();
}

/// The files of `directory` whose names contain `part` and end with `suffix`.
fn output_files_in(directory: &Path, part: &str, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(part) && name.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// Issue 37, 13: `record` exits with the program's status, after writing
/// the outputs: its exit code, or 128 + the signal that ended it.
#[test]
fn record_exits_with_the_programs_status() {
    if perf_missing() {
        return;
    }
    let directory = work_directory("program-status");
    let busy = "let x = 0; for (let i = 0; i < 3e7; i++) x += i % 7;";
    let cases = [
        ("exit", format!("{busy} process.exit(3)"), 3, "the command exited with exit status: 3"),
        ("throw", format!("{busy} throw new Error('failed')"), 1, "the command exited with exit status: 1"),
        ("abort", format!("{busy} process.abort()"), 134, "the command exited with signal: 6 (SIGABRT)"),
    ];
    for (name, code, status, message) in cases {
        let output = record_in(&directory, &["--output-dir", name, "--", "node", "-e", &code]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(status), "{name}: {stderr}");
        assert!(stderr.contains(&format!("v8inline: {message}")), "{name}: {stderr}");
        assert!(directory.join(name).join("profile.folded").is_file(), "{name}: {stderr}");
        assert!(directory.join(name).join("flamegraph.svg").is_file(), "{name}: {stderr}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Issue 37, 14: a command that is not found is said so, with a shell's
/// exit code (127; 126 for a file that is not executable), before perf
/// starts and before an output directory is made.
#[test]
fn a_command_that_is_not_found_is_said_so() {
    let directory = work_directory("not-found");
    std::fs::write(directory.join("not-executable"), "#!/bin/sh\n").unwrap();
    let cases = [
        ("no-such-command", 127, "v8inline: no-such-command: command not found\n"),
        ("./no-such-file", 127, "v8inline: ./no-such-file: command not found\n"),
        ("./not-executable", 126, "v8inline: ./not-executable: not an executable file\n"),
    ];
    for (command, status, message) in cases {
        let output = record_in(&directory, &["--", command, "app.js"]);
        assert_eq!(output.status.code(), Some(status), "{command}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), message);
        assert!(!directory.join("v8inline-profile").exists(), "{command}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Issue 37, 9: Ctrl-C (SIGINT to the process group, as a terminal sends
/// it) while the program runs: the program and perf stop, `record` writes
/// every output from what perf wrote, removes its own files, moves the
/// jitdump node left in the working directory into the recording, and
/// exits 130.
#[test]
fn ctrl_c_writes_the_profile_of_what_ran_and_exits_130() {
    use std::io::BufRead as _;
    use std::os::unix::process::CommandExt as _;
    if perf_missing() {
        return;
    }
    let directory = work_directory("ctrl-c");
    std::fs::write(
        directory.join("forever.js"),
        "const script = (d) => { try { return require('fs').readFileSync(d + '/node', 'utf8').startsWith('#!') } catch (_) { return false } };\n\
         console.log(process.env.PATH.split(':').find(script));\n\
         let x = 0; for (;;) { x += Math.sqrt(x % 7); }\n",
    )
    .unwrap();
    let mut record = Command::new(env!("CARGO_BIN_EXE_v8inline"))
        .current_dir(&directory)
        .args(["record", "--output-dir", "out", "--", "node", "forever.js"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(record.stdout.take().unwrap());
    let mut script_directory = String::new();
    stdout.read_line(&mut script_directory).unwrap();
    let script_directory = PathBuf::from(script_directory.trim_end());
    assert!(script_directory.is_dir(), "{}", script_directory.display());
    // Some samples of the loop.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let group = format!("-{}", record.id());
    assert!(Command::new("kill").args(["-INT", "--", &group]).status().unwrap().success());
    let output = record.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("v8inline: interrupted (signal 2): the command stopped; writing what was recorded"),
        "{stderr}"
    );
    for file in ["perf.data", "profile.folded", "flamegraph.svg", "profile.cpuprofile", "profile.firefox.json.gz"] {
        assert!(directory.join("out").join(file).is_file(), "{file}: {stderr}");
    }
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    assert!(folded.contains("forever.js"), "{folded}");
    assert!(!script_directory.exists(), "{} left behind", script_directory.display());
    assert_eq!(output_files_in(&directory.join("out"), "jit-", ".dump").len(), 1, "{stderr}");
    assert_eq!(output_files_in(&directory, "jit-", ".dump"), Vec::<String>::new());
    std::fs::remove_dir_all(&directory).unwrap();
}

/// A parent that forks the worker and waits (`forker.js`), and a launcher
/// that starts the real node (`launcher.js`, as tsx's bin script does): each
/// such process runs little JavaScript, never optimized, beside a child whose
/// JavaScript expands. No warning: their lines are told under `--stats`
/// only, as a small part of the profile; the child's chain is expanded.
#[test]
fn a_parent_that_waits_and_a_launcher_raise_no_warning() {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason})");
        return;
    }
    let path = std::env::var("PATH").unwrap();
    let node =
        common::node_binary(20).or_else(|| installed_nodes().into_iter().map(|(_, node)| node).next()).expect("a node");
    for (name, arguments) in [("forker", &["forker.js", "1500"][..]), ("launcher", &["launcher.js", "deep.js", "1500"])]
    {
        let directory = work_directory(name);
        let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .current_dir(&directory)
            .env("PATH", &path)
            .args(["record", "--output-dir", "out", "--"])
            .arg(&node)
            .args(arguments)
            .output()
            .unwrap();
        let errors = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{name}: {errors}");
        assert!(!errors.contains("v8inline: warning: "), "{name}: {errors}");
        assert!(errors.contains("recorded 2 processes"), "{name}: {errors}");
        assert_inlined_profile(&directory, name);

        // Under --stats, the parent's line: a small part of the profile.
        let perf_data = directory.join("out/perf.data");
        let stats = Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .current_dir(&directory)
            .args(["--stats", "-o", "/dev/null", "--perf-data"])
            .arg(&perf_data)
            .output()
            .unwrap();
        let stats = String::from_utf8_lossy(&stats.stderr).into_owned();
        let minor: Vec<&str> = stats
            .lines()
            .filter(|line| line.starts_with("v8inline: a small part of the profile, so no warning: "))
            .collect();
        assert_eq!(minor.len(), 1, "{name}: {stats}");
        assert!(
            minor[0].contains(" % of the profile's JavaScript, never optimized (a launcher, or a parent that waits): ")
        );
        assert!(!stats.contains("v8inline: warning: "), "{name}: {stats}");
    }
}

/// The real perf on PATH, for a wrapper to pass on to.
fn real_perf() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|directory| directory.join("perf"))
        .find(|path| path.is_file())
}

/// `perf record` is asked not to synthesize the machine's BPF programs
/// (`--no-bpf-event`, a second of each run) where its help lists the
/// option, and is not given it where it does not (perf before 5.1): each
/// time through a wrapper that writes down its arguments and runs the real
/// perf (the old one refuses the option as such a perf would).
#[test]
fn perf_records_without_bpf_events_where_it_knows_the_option() {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason})");
        return;
    }
    let perf = real_perf().expect("perf on PATH").display().to_string();
    let node = installed_nodes().remove(0).1;
    let old_perf_help = format!(
        "if [ \"$1 $2\" = 'record -h' ]; then {perf} record -h 2>&1 | grep -v bpf-event; exit 129; fi\ncase \"$*\" in *--no-bpf-event*) echo 'unknown option' >&2; exit 129;; esac\n"
    );
    for (name, knows, intercept) in [("new-perf", true, String::new()), ("old-perf", false, old_perf_help)] {
        let directory = work_directory(name);
        let wrapper_bin = directory.join("bin");
        std::fs::create_dir_all(&wrapper_bin).unwrap();
        let wrapper = wrapper_bin.join("perf");
        let log = directory.join("perf-arguments.txt");
        std::fs::write(
            &wrapper,
            format!("#!/bin/sh\necho \"$*\" >> {}\n{intercept}exec {perf} \"$@\"\n", log.display()),
        )
        .unwrap();
        let mut permissions = std::fs::metadata(&wrapper).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o700);
        std::fs::set_permissions(&wrapper, permissions).unwrap();
        let path = format!("{}:{}", wrapper_bin.display(), std::env::var("PATH").unwrap());
        let errors = record(&directory, &node, &path);
        let arguments = std::fs::read_to_string(&log).unwrap();
        let recording = arguments.lines().find(|line| line.starts_with("record -q ")).expect("perf record ran");
        assert_eq!(recording.contains(" --no-bpf-event "), knows, "{name}: {recording}\n{errors}");
        assert_inlined_profile(&directory, name);
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
