//! `v8inline record` of what real projects run: npm, pnpm and yarn scripts,
//! node's test runner, forked workers, shells that start several nodes,
//! `npm exec` and nodes started by their own path; every recording kept;
//! the main job's output options. Needs perf (`perf record -e cpu-clock`)
//! and node and npm on PATH; skipped with a message otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use v8inline::internals::output::cpuprofile::CpuProfile;

/// A fresh directory with the test programs and a package.json whose
/// `bench` script runs `node deep.js 300`.
fn project(name: &str) -> Option<PathBuf> {
    if let Some(reason) = v8inline::internals::commands::record::perf_unavailable_reason("perf".as_ref()) {
        eprintln!("SKIPPED: perf cannot record here ({reason})");
        return None;
    }
    let on_path = |program: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).any(|dir| dir.join(program).is_file())
    };
    if !on_path("node") || !on_path("npm") {
        eprintln!("SKIPPED: node and npm are not both on PATH");
        return None;
    }
    let directory = std::env::temp_dir().join(format!("v8inline-record-project-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/programs");
    for program in ["deep.js", "lib.js"] {
        std::fs::copy(programs.join(program), directory.join(program)).unwrap();
    }
    std::fs::write(
        directory.join("package.json"),
        r#"{ "name": "project", "version": "1.0.0", "private": true, "scripts": { "bench": "node deep.js 300" } }"#,
    )
    .unwrap();
    Some(directory)
}

/// `v8inline record ARGS...` in `directory`.
fn record(directory: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_v8inline")).current_dir(directory).arg("record").args(args).output().unwrap()
}

fn errors(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The folded stacks with an inlined `combine` of deep.js under `kernel`.
fn inlined_stacks(folded: &str, directory: &Path) -> usize {
    let script = directory.join("deep.js").display().to_string();
    folded
        .lines()
        .filter(|line| {
            line.split(';').collect::<Vec<_>>().windows(2).any(|pair| {
                pair[0].contains(&format!("kernel {script}"))
                    && pair[1].contains(&format!("combine {script}"))
                    && pair[1].ends_with("_[i]")
            })
        })
        .count()
}

#[test]
fn an_npm_script_is_recorded_with_npm_and_its_node_and_a_second_recording_is_kept() {
    let Some(directory) = project("npm") else { return };
    let first = record(&directory, &["--frequency", "499", "--", "npm", "run", "bench"]);
    let first_errors = errors(&first);
    assert!(first.status.success(), "{first_errors}");
    // npm itself is a node, and so is the script's.
    assert!(first_errors.contains("v8inline: recorded 2 processes: pid "), "{first_errors}");
    assert!(first_errors.contains(" (node deep.js 300, "), "{first_errors}");
    assert!(first_errors.contains("wrote v8inline-profile/profile.folded"), "{first_errors}");
    let folded = std::fs::read_to_string(directory.join("v8inline-profile/profile.folded")).unwrap();
    assert!(inlined_stacks(&folded, &directory) > 0, "no kernel;combine_[i] stack in\n{folded}");
    // The second recording goes next to the first, which stays whole.
    let first_perf_data = std::fs::metadata(directory.join("v8inline-profile/perf.data")).unwrap().len();
    let second = record(&directory, &["--frequency", "499", "--", "npm", "run", "bench"]);
    let second_errors = errors(&second);
    assert!(second.status.success(), "{second_errors}");
    assert!(second_errors.contains("wrote v8inline-profile-2/profile.folded"), "{second_errors}");
    assert_eq!(std::fs::metadata(directory.join("v8inline-profile/perf.data")).unwrap().len(), first_perf_data);
    assert_eq!(std::fs::read_to_string(directory.join("v8inline-profile/profile.folded")).unwrap(), folded);
    let second_folded = std::fs::read_to_string(directory.join("v8inline-profile-2/profile.folded")).unwrap();
    assert!(inlined_stacks(&second_folded, &directory) > 0);
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn both_nodes_a_shell_starts_are_recorded() {
    let Some(directory) = project("shell") else { return };
    let output =
        record(&directory, &["--output-dir", "out", "--", "sh", "-c", "node deep.js 200 & node deep.js 200; wait"]);
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    assert!(errors.contains("v8inline: recorded 2 processes: pid "), "{errors}");
    assert_eq!(errors.matches(" (node deep.js 200, ").count(), 2, "{errors}");
    // Each process's code log and jitdump, paired by pid: both expand.
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    let cpuprofile_pids: std::collections::BTreeSet<&str> = errors
        .split("pid ")
        .skip(1)
        .filter_map(|rest| rest.split(' ').next())
        .filter(|pid| pid.bytes().all(|byte| byte.is_ascii_digit()))
        .collect();
    assert!(cpuprofile_pids.len() >= 2, "{errors}");
    assert!(inlined_stacks(&folded, &directory) > 0);
    // Each process is its own root.
    for pid in &cpuprofile_pids {
        assert!(folded.lines().any(|line| line.starts_with(&format!("node-{pid};"))), "no root node-{pid}");
    }
    let firefox = String::from_utf8(common::gunzip(&directory.join("out/profile.firefox.json.gz"))).unwrap();
    for pid in &cpuprofile_pids {
        assert!(firefox.contains(&format!(r#""pid":"{pid}""#)), "no process {pid} in the Firefox profile");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn npx_of_a_local_command_is_recorded() {
    let Some(directory) = project("npx") else { return };
    // A package's command, as npx finds it in node_modules/.bin: a script
    // that env starts with the node of PATH.
    let bin = directory.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    let command = bin.join("deep-cli");
    std::fs::write(&command, "#!/usr/bin/env node\nrequire('../../deep.js');\n").unwrap();
    let mut permissions = std::fs::metadata(&command).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&command, permissions).unwrap();
    let output = record(&directory, &["--output-dir", "out", "--", "npx", "--no-install", "deep-cli", "300"]);
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    assert!(errors.contains(" (node "), "{errors}");
    assert!(!errors.contains("not expanded:"), "{errors}");
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    assert!(inlined_stacks(&folded, &directory) > 0, "no kernel;combine_[i] stack in\n{folded}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn a_named_directory_with_a_recording_is_refused_without_force() {
    let Some(directory) = project("force") else { return };
    let first = record(&directory, &["--output-dir", "out", "--", "node", "deep.js", "50"]);
    assert!(first.status.success(), "{}", errors(&first));
    // The command's node runs by its path, once with the flags (not through
    // the script on PATH, which would add them a second time).
    assert!(errors(&first).contains("v8inline: recorded 1 process: pid "), "{}", errors(&first));
    assert!(errors(&first).contains(" (node deep.js 50, "), "{}", errors(&first));
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    let refused = record(&directory, &["--output-dir", "out", "--", "node", "deep.js", "50"]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        errors(&refused),
        "v8inline: out: holds a recording already: give another --output-dir, or --force to replace it\n"
    );
    assert_eq!(std::fs::read_to_string(directory.join("out/profile.folded")).unwrap(), folded);
    let forced = record(&directory, &["--output-dir", "out", "--force", "--", "node", "deep.js", "50"]);
    assert!(forced.status.success(), "{}", errors(&forced));
    // Only the new process's code log is left.
    let logs = std::fs::read_dir(directory.join("out"))
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().file_name().to_string_lossy().ends_with(".log"))
        .count();
    assert_eq!(logs, 1);
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn record_takes_the_main_jobs_output_options() {
    let Some(directory) = project("outputs") else { return };
    let output = record(
        &directory,
        &[
            "--output-dir",
            "out",
            "--js-only",
            "--pprof",
            "profile.pb.gz",
            "--summary",
            "markdown",
            "--summary-output",
            "summary.md",
            "--source-root",
            ".",
            "--",
            "node",
            "deep.js",
            "300",
        ],
    );
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    assert!(errors.contains("profile.pb.gz"), "{errors}");
    // --js-only: JavaScript frames only (each has its script), as V8's own
    // profiler writes them.
    let cpuprofile: CpuProfile =
        serde_json::from_slice(&std::fs::read(directory.join("out/profile.cpuprofile")).unwrap()).unwrap();
    let special = ["(root)", "(program)", "(garbage collector)", "(idle)"];
    for node in &cpuprofile.nodes {
        let frame = &node.call_frame;
        assert!(
            special.contains(&frame.function_name.as_str()) || !frame.url.is_empty(),
            "a frame that is not JavaScript: {:?} {:?}",
            frame.function_name,
            frame.url
        );
    }
    assert!(cpuprofile.nodes.iter().any(|node| node.call_frame.function_name == "combine"));
    assert!(directory.join("profile.pb.gz").is_file());
    // --source-root: the summary names deep.js relative to the project.
    let summary = std::fs::read_to_string(directory.join("summary.md")).unwrap();
    assert!(summary.contains("deep.js:"), "{summary}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn a_node_that_npm_exec_starts_by_its_own_path_is_run_again_with_the_flags() {
    let Some(directory) = project("exec") else { return };
    let output = record(&directory, &["--output-dir", "out", "--", "npm", "exec", "--", "node", "deep.js", "200"]);
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    // npm 7+ puts its own node's directory first on PATH, so its node does
    // not start through the script on PATH; the preload in NODE_OPTIONS
    // runs it again with the flags.
    assert!(errors.contains("v8inline: recorded 2 processes: pid "), "{errors}");
    assert!(errors.contains("/node deep.js 200, "), "{errors}");
    assert!(errors.contains(" samples, run again with the flags by pid "), "{errors}");
    assert!(!errors.contains("not expanded:"), "{errors}");
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    assert!(inlined_stacks(&folded, &directory) > 0, "no kernel;combine_[i] stack in\n{folded}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn another_node_started_by_its_path_is_run_again_with_the_flags_it_knows() {
    // node 26 by its path beside the node of PATH, as `npx node@26` runs it.
    let Some(node26) = common::node_binary(26) else {
        eprintln!("SKIPPED: no node 26 (testdata/record.sh installs it)");
        return;
    };
    let Some(directory) = project("by-path") else { return };
    let command = format!("'{}' deep.js 200", node26.display());
    let output = record(&directory, &["--output-dir", "out", "--", "sh", "-c", &command]);
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    let real_node26 = std::fs::canonicalize(&node26).unwrap();
    assert!(errors.contains("v8inline: recorded 1 process: pid "), "{errors}");
    assert!(errors.contains(&format!("({} deep.js 200, ", real_node26.display())), "{errors}");
    assert!(errors.contains(", run again with the flags by pid "), "{errors}");
    // It knows --perf-prof-path: its jitdump went into the recording.
    assert!(!errors.contains("does not know"), "{errors}");
    assert!(!errors.contains("not expanded:"), "{errors}");
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    assert!(inlined_stacks(&folded, &directory) > 0, "no kernel;combine_[i] stack in\n{folded}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn a_test_runners_processes_are_each_recorded_with_what_they_ran() {
    // `npm test` running node's test runner, which starts a node per file.
    let Some(directory) = project("test-runner") else { return };
    std::fs::write(
        directory.join("package.json"),
        r#"{ "name": "project", "version": "1.0.0", "private": true, "scripts": { "test": "node --test" } }"#,
    )
    .unwrap();
    std::fs::create_dir_all(directory.join("test")).unwrap();
    for file in ["a.test.js", "b.test.js"] {
        std::fs::write(
            directory.join("test").join(file),
            "require('node:test')('deep', () => { process.argv[2] = '200'; require('../deep.js'); });\n",
        )
        .unwrap();
    }
    let output = record(&directory, &["--output-dir", "out", "--", "npm", "test"]);
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    // npm, the runner and a node per test file, each with its command line.
    assert!(errors.contains("v8inline: recorded 4 processes: pid "), "{errors}");
    assert!(errors.contains("npm test, "), "{errors}");
    for command in ["node --test", "node test/a.test.js", "node test/b.test.js"] {
        assert!(errors.contains(&format!(" ({command}, ")), "no {command:?} in {errors}");
    }
    assert!(!errors.contains("not expanded:"), "{errors}");
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    assert!(inlined_stacks(&folded, &directory) > 0, "no kernel;combine_[i] stack in\n{folded}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn a_forked_node_given_an_execargv_of_its_own_gets_the_flags_and_keeps_its_channel() {
    // As test runners start workers: `fork` with `execArgv: []` and messages
    // both ways over the IPC channel.
    let Some(directory) = project("fork") else { return };
    std::fs::write(
        directory.join("parent.js"),
        "const child = require('child_process').fork(__dirname + '/child.js', ['200'], { execArgv: [] });\n\
         child.on('message', (message) => { console.log('parent heard', message.pid > 0); child.send('bye'); });\n\
         child.on('exit', (code) => { console.log('child exited', code); });\n",
    )
    .unwrap();
    std::fs::write(
        directory.join("child.js"),
        "require('./deep.js');\n\
         process.send({ pid: process.pid });\n\
         process.on('message', (message) => { console.log('child heard', message); process.exit(5); });\n",
    )
    .unwrap();
    let output = record(&directory, &["--output-dir", "out", "--", "node", "parent.js"]);
    let errors = errors(&output);
    assert!(output.status.success(), "{errors}");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.ends_with("parent heard true\nchild heard bye\nchild exited 5\n"), "{printed}");
    assert!(errors.contains("v8inline: recorded 2 processes: pid "), "{errors}");
    assert!(errors.contains(" (node parent.js, "), "{errors}");
    assert!(errors.contains(" (node child.js 200, "), "{errors}");
    assert!(!errors.contains("run again"), "{errors}");
    let folded = std::fs::read_to_string(directory.join("out/profile.folded")).unwrap();
    assert!(inlined_stacks(&folded, &directory) > 0, "no kernel;combine_[i] stack in\n{folded}");
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn pnpm_and_yarn_scripts_are_recorded() {
    // As .ci/run installs them; yarn 1, like npm, puts its node's directory
    // first on PATH, so its script's node is run again with the flags.
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/package-managers/node_modules/.bin");
    if !bin.join("pnpm").is_file() || !bin.join("yarn").is_file() {
        eprintln!("SKIPPED: no pnpm and yarn in {} (.ci/run installs them)", bin.display());
        return;
    }
    let Some(directory) = project("package-managers") else { return };
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    for manager in ["pnpm", "yarn"] {
        let output_dir = format!("out-{manager}");
        let output = Command::new(env!("CARGO_BIN_EXE_v8inline"))
            .current_dir(&directory)
            .env("PATH", &path)
            .args(["record", "--output-dir", &output_dir, "--", manager, "run", "bench"])
            .output()
            .unwrap();
        let errors = errors(&output);
        assert!(output.status.success(), "{manager}: {errors}");
        assert!(errors.contains("v8inline: recorded 2 processes: pid "), "{manager}: {errors}");
        assert!(errors.contains(&format!("{manager} run bench, ")), "{manager}: {errors}");
        assert!(errors.contains("node deep.js 300, "), "{manager}: {errors}");
        assert!(!errors.contains("not expanded:"), "{manager}: {errors}");
        let folded = std::fs::read_to_string(directory.join(&output_dir).join("profile.folded")).unwrap();
        assert!(inlined_stacks(&folded, &directory) > 0, "{manager}: no kernel;combine_[i] stack");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}
