//! Every node and Deno process that the command starts gets the expansion
//! flags, however it is started (npm, pnpm and yarn scripts, `npm exec`,
//! shell scripts, `child_process`, test runners' workers):
//!
//! - node through PATH: a `node` first on PATH, a shell script that runs
//!   the node PATH would have found, with the flags (node refuses
//!   `--log-code` in `NODE_OPTIONS`). It writes its pid and arguments down.
//! - node by a path of its own (`npm exec` and npx's `node@26` put their
//!   node's directory first on PATH): a preload first in `NODE_OPTIONS`
//!   (`preload.cjs`) runs the node again with the flags and passes its
//!   exit on; the re-run and the node that ran it are written down.
//! - forked nodes: `child_process.fork` passes a node's flags on
//!   (`process.execArgv`); where its caller gives an `execArgv` of its own,
//!   the preload puts the flags in front.
//! - Deno: `DENO_V8_FLAGS`, which every deno reads before its `--v8-flags`.
//!   Deno runs `NODE_OPTIONS`' preload too (`deno run`, `bench`, `test`):
//!   its Deno part (`deno_preload.cjs`) writes the benchmarks' windows.
//!
//! The script and the preload are in a directory only the user can write
//! (`super::private`), never in the output directory.
//!
//! The preload also writes down what every node with the flags runs, so that
//! the report can say which node ran what. A node that none of these reaches
//! (one given a `NODE_OPTIONS` of its own) is told by the perf.data
//! ([`crate::sources::perf_data::recorded_processes`]), and `record` names
//! it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::private::PrivateDirectory;

// The files the script and the preload write in the recording's private
// directory; preload.cjs spells the same names.
/// Each node's pid and command line.
const STARTED_FILE: &str = "started";
/// Each node the preload ran again, after the pid of the node that ran it.
const RERUN_FILE: &str = "rerun";
/// The pid of each node the preload asked for its flags (`node
/// --v8-options`): nodes without the flags, but not unreached.
const ASKED_FILE: &str = "asked";
/// The preload's configuration: the flags wanted, and those each node
/// binary already asked takes.
const CONFIGURATION_FILE: &str = "config.json";

/// The first executable `name` in the directories of `path` (PATH's value).
pub(crate) fn find_on_path(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path).map(|directory| directory.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// Writes the `node` script that runs `real_node` with `flags` into the
/// shim directory (the one to put first on PATH).
pub(crate) fn write_node_shim(directory: &Path, real_node: &Path, flags: &[OsString]) -> std::io::Result<()> {
    let mut script = b"#!/bin/sh\n# v8inline record: the node PATH had, with the flags the expansion needs.\n".to_vec();
    script.extend_from_slice(b"printf '%s node %s\\n' \"$$\" \"$*\" >> ");
    script.extend(shell_quoted(directory.join(STARTED_FILE).as_os_str()));
    // `exec` keeps the pid: the code log and jitdump are named by it.
    script.extend_from_slice(b"\nexec ");
    script.extend(shell_quoted(real_node.as_os_str()));
    for flag in flags {
        script.push(b' ');
        script.extend(shell_quoted(flag));
    }
    script.extend_from_slice(b" \"$@\"\n");
    let path = directory.join("node");
    crate::files::replace_file(&path, |output| output.write_all(&script))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// A node binary and the flags it was found to know.
pub(crate) struct KnownNode<'a> {
    pub(crate) binary: &'a Path,
    pub(crate) flags: &'a [OsString],
}

/// Writes the preload's configuration into the recording's `directory`:
/// it writes down what each node runs and runs a node without the flags
/// again with those of `wanted` its V8 knows (`known` saves asking the nodes
/// already asked). Returns the `--require` option for `NODE_OPTIONS`, or
/// `None` when a flag or path is not UTF-8 (JavaScript strings are text).
pub(crate) fn write_preload(
    private: &PrivateDirectory,
    wanted: &[(&'static str, OsString)],
    known: &[KnownNode],
) -> std::io::Result<Option<String>> {
    let text = |value: &OsStr| value.to_str().map(str::to_string);
    let Some(wanted) = wanted
        .iter()
        .map(|(name, argument)| Some((name.to_string(), text(argument)?)))
        .collect::<Option<Vec<(String, String)>>>()
    else {
        return Ok(None);
    };
    // node's process.execPath is the binary's real path.
    let Some(known) = known
        .iter()
        .map(|node| {
            let binary = std::fs::canonicalize(node.binary).unwrap_or_else(|_| node.binary.to_owned());
            let flags = node.flags.iter().map(|flag| text(flag)).collect::<Option<Vec<String>>>()?;
            Some((text(binary.as_os_str())?, flags))
        })
        .collect::<Option<std::collections::BTreeMap<String, Vec<String>>>>()
    else {
        return Ok(None);
    };
    let (Some(preload), Some(_)) = (text(private.preload().as_os_str()), text(private.path().as_os_str())) else {
        return Ok(None);
    };
    // A string: JavaScript reads it as a BigInt, not as a number that
    // would lose its last digits.
    let configuration = serde_json::json!({
        "wanted": wanted,
        "known": known,
        "realtime_minus_monotonic_ns": realtime_minus_monotonic_ns().to_string(),
    });
    crate::files::replace_file(&private.path().join(CONFIGURATION_FILE), |output| {
        serde_json::to_writer(output, &configuration).map_err(std::io::Error::other)
    })?;
    Ok(Some(format!("--require {}", node_options_quoted(&preload))))
}

/// CLOCK_REALTIME - CLOCK_MONOTONIC, in nanoseconds: the Deno part of the
/// preload reads its windows on the wall clock (Deno shows JavaScript no
/// reading of CLOCK_MONOTONIC, perf's clock) and moves them by it. The
/// narrowest of five monotonic readings around a wall-clock reading.
fn realtime_minus_monotonic_ns() -> i128 {
    fn read(clock: libc::clockid_t) -> i128 {
        let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given; both
        // clocks always exist on Linux.
        unsafe { libc::clock_gettime(clock, &mut time) };
        i128::from(time.tv_sec) * 1_000_000_000 + i128::from(time.tv_nsec)
    }
    let mut best: Option<(i128, i128)> = None;
    for _ in 0..5 {
        let before = read(libc::CLOCK_MONOTONIC);
        let wall = read(libc::CLOCK_REALTIME);
        let after = read(libc::CLOCK_MONOTONIC);
        let gap = after - before;
        if best.is_none_or(|(best_gap, _)| gap < best_gap) {
            best = Some((gap, wall - (before + gap / 2)));
        }
    }
    best.map_or(0, |(_, offset)| offset)
}

/// `text` in single quotes for sh, its own single quotes as `'\''`.
fn shell_quoted(text: &OsStr) -> Vec<u8> {
    let mut quoted = vec![b'\''];
    for &byte in text.as_bytes() {
        if byte == b'\'' {
            quoted.extend_from_slice(b"'\\''");
        } else {
            quoted.push(byte);
        }
    }
    quoted.push(b'\'');
    quoted
}

/// `text` in double quotes for `NODE_OPTIONS`, whose parser takes a
/// backslash to escape the next character there
/// ([`ParseNodeOptionsEnvVar`](https://github.com/nodejs/node/blob/main/src/node_options.cc)).
fn node_options_quoted(text: &str) -> String {
    let mut quoted = String::from('"');
    for character in text.chars() {
        if character == '"' || character == '\\' {
            quoted.push('\\');
        }
        quoted.push(character);
    }
    quoted.push('"');
    quoted
}

/// `NODE_OPTIONS` with `option` first, so that the preload's re-run starts
/// before the user's own preloads would run in the node it replaces.
pub(crate) fn node_options_with_first(option: &str, user: Option<&OsStr>) -> OsString {
    let mut value = OsString::from(option);
    if let Some(user) = user.filter(|user| !user.is_empty()) {
        value.push(" ");
        value.push(user);
    }
    value
}

/// PATH's value with `directory` first.
pub(crate) fn path_with_first(directory: &Path, path: Option<&OsStr>) -> OsString {
    let mut value = directory.as_os_str().to_owned();
    if let Some(path) = path.filter(|path| !path.is_empty()) {
        value.push(":");
        value.push(path);
    }
    value
}

/// The nodes the script or the preload saw, by pid: their command lines
/// (`node ARGUMENTS`, the binary's path for a re-run), the last line of a
/// pid the one that counts.
pub(crate) fn started_nodes(directory: &Path) -> std::collections::BTreeMap<u32, String> {
    let text = std::fs::read_to_string(directory.join(STARTED_FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (pid, command) = line.split_once(' ')?;
            Some((pid.parse().ok()?, command.to_string()))
        })
        .collect()
}

/// The nodes the preload ran again: the pid of each re-run, with the pid of
/// the node (without the flags) that ran it.
pub(crate) fn rerun_nodes(directory: &Path) -> std::collections::BTreeMap<u32, u32> {
    let text = std::fs::read_to_string(directory.join(RERUN_FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (runner, rerun) = line.split_once(' ')?;
            Some((rerun.parse().ok()?, runner.parse().ok()?))
        })
        .collect()
}

/// The nodes the preload asked for their flags: they ran no program.
pub(crate) fn asked_nodes(directory: &Path) -> std::collections::BTreeSet<u32> {
    let text = std::fs::read_to_string(directory.join(ASKED_FILE)).unwrap_or_default();
    text.lines().filter_map(|line| line.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_runs_the_real_node_with_the_flags_and_writes_its_pid_down() {
        let output_dir = std::env::temp_dir().join(format!("v8inline-shim-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&output_dir);
        // A stand-in for node that prints its arguments.
        std::fs::create_dir_all(&output_dir).unwrap();
        let fake_node = output_dir.join("it's node");
        std::fs::write(&fake_node, "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n").unwrap();
        std::fs::set_permissions(&fake_node, std::fs::Permissions::from_mode(0o755)).unwrap();
        let private = PrivateDirectory::create().unwrap();
        let shim = private.path().to_owned();
        write_node_shim(&shim, &fake_node, &["--perf-prof".into(), "--logfile=/a b/x.log".into()]).unwrap();
        let output = std::process::Command::new(shim.join("node")).args(["app.js", "a b"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "[--perf-prof]\n[--logfile=/a b/x.log]\n[app.js]\n[a b]\n");
        let started = started_nodes(&shim);
        assert_eq!(started.values().collect::<Vec<_>>(), ["node app.js a b"]);
        drop(private);
        assert!(!shim.exists());
        std::fs::remove_dir_all(&output_dir).unwrap();
    }

    #[test]
    fn the_preload_runs_a_node_without_the_flags_again_with_those_it_knows() {
        use std::os::unix::process::ExitStatusExt;
        let Some(node) = std::env::var_os("PATH").and_then(|path| find_on_path("node", &path)) else {
            eprintln!("SKIPPED: no node on PATH");
            return;
        };
        let output_dir = std::env::temp_dir().join(format!("v8inline-preload-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&output_dir);
        std::fs::create_dir_all(&output_dir).unwrap();
        // An ES-module project: the preload must stay CommonJS.
        std::fs::write(output_dir.join("package.json"), r#"{ "type": "module" }"#).unwrap();
        let private = PrivateDirectory::create().unwrap();
        let directory = private.path().to_owned();
        let logfile = format!("--logfile={}/log-%p.log", output_dir.display());
        let wanted = [
            ("log-code", OsString::from("--log-code")),
            ("logfile", OsString::from(&logfile)),
            ("no-such-v8-flag", OsString::from("--no-such-v8-flag")),
        ];
        // No node known: it asks this one.
        let option = write_preload(&private, &wanted, &[]).unwrap().unwrap();
        let node_options = node_options_with_first(&option, Some(OsStr::new("--no-warnings")));
        let run = |code: &str| {
            std::process::Command::new(&node)
                .current_dir(&output_dir)
                .env("NODE_OPTIONS", &node_options)
                .env(super::super::private::RECORD_VARIABLE, &directory)
                .args(["-e", code, "an argument"])
                .output()
                .unwrap()
        };
        let code = "console.log(process.execArgv.join(' '), process.argv.slice(1).join(' ')); process.exit(3)";
        let output = run(code);
        assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8_lossy(&output.stdout), format!("--log-code {logfile} -e {code} an argument\n"));
        let started = started_nodes(&directory);
        let rerun = rerun_nodes(&directory);
        assert_eq!(started.len(), 1);
        let (&pid, command) = started.iter().next().unwrap();
        let real_node = std::fs::canonicalize(&node).unwrap();
        assert_eq!(command, &format!("{} -e {code} an argument", real_node.display()));
        assert!(rerun.get(&pid).is_some_and(|&runner| runner != pid), "{rerun:?}");
        // node writes a log per isolate: `isolate-0x...-PID-log-PID.log`.
        let log_suffix = format!("-{pid}-log-{pid}.log");
        assert!(
            std::fs::read_dir(&output_dir).unwrap().any(|entry| entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(&log_suffix))
        );
        assert_eq!(asked_nodes(&directory).len(), 1);
        // The same binary again: its flags are not asked twice; a signal
        // that ends the run ends the node that ran it.
        let output = run("process.kill(process.pid, 'SIGTERM')");
        assert_eq!(output.status.signal(), Some(15));
        assert_eq!(asked_nodes(&directory).len(), 1);
        assert_eq!(rerun_nodes(&directory).len(), 2);
        // In a working directory that is gone (process.cwd() throws), the
        // node still runs, and exits as it would.
        let gone = output_dir.join("gone");
        let output = std::process::Command::new("sh")
            .current_dir(&output_dir)
            .env("NODE_OPTIONS", &node_options)
            .env(super::super::private::RECORD_VARIABLE, &directory)
            .arg("-c")
            .arg(format!("mkdir gone && cd gone && rmdir ../gone && '{}' -e 'console.log(8)'", node.display()))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "8\n", "{}", String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success());
        assert!(!gone.exists());
        let rerun = rerun_nodes(&directory);
        // A worker thread does not run its process again.
        let output = run("new (require('worker_threads').Worker)('console.log(7)', { eval: true })");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "7\n");
        assert_eq!(rerun_nodes(&directory).len(), rerun.len() + 1);
        // The node that ran it again is killed: the re-run ends too.
        let mut runner = std::process::Command::new(&node)
            .current_dir(&output_dir)
            .env("NODE_OPTIONS", &node_options)
            .env(super::super::private::RECORD_VARIABLE, &directory)
            .args(["-e", "setTimeout(() => {}, 30000)"])
            .spawn()
            .unwrap();
        let started_before = started_nodes(&directory);
        let rerun_pid = (0..100)
            .find_map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                started_nodes(&directory).into_keys().find(|pid| !started_before.contains_key(pid))
            })
            .expect("the re-run writes itself down");
        runner.kill().unwrap();
        runner.wait().unwrap();
        // It looks every 200 ms; a loaded machine may take longer.
        let ended = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            // Gone, or a zombie that nothing reaps here.
            std::fs::read_to_string(format!("/proc/{rerun_pid}/stat"))
                .map_or(true, |stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
        });
        assert!(
            ended,
            "the re-run {rerun_pid} outlived the node that ran it: {:?}",
            std::fs::read_to_string(format!("/proc/{rerun_pid}/stat"))
        );
        // After the recording (its directory gone, the preload kept): a node
        // with the same environment runs as it would without v8inline.
        drop(private);
        let output = run("console.log(process.execArgv.includes('--log-code'))");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "false\n", "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(0));
        std::fs::remove_dir_all(&output_dir).unwrap();
    }

    #[test]
    fn node_options_quotes_the_preload_and_keeps_the_users_options_after_it() {
        assert_eq!(node_options_quoted(r#"/a b/"c"\d.cjs"#), r#""/a b/\"c\"\\d.cjs""#);
        assert_eq!(
            node_options_with_first("--require \"/x\"", Some(OsStr::new("--max-old-space-size=99"))),
            "--require \"/x\" --max-old-space-size=99"
        );
        assert_eq!(node_options_with_first("--require \"/x\"", Some(OsStr::new(""))), "--require \"/x\"");
    }

    #[test]
    fn path_gets_the_directory_first() {
        assert_eq!(path_with_first(Path::new("/s"), Some(OsStr::new("/usr/bin:/bin"))), "/s:/usr/bin:/bin");
        assert_eq!(path_with_first(Path::new("/s"), None), "/s");
    }
}
