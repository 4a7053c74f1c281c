//! Every node and Deno process that the command starts gets the expansion
//! flags, however it is started (npm, pnpm and yarn scripts, `npm exec`,
//! shell scripts, `child_process`, test runners' workers):
//!
//! - node: a `node` first on PATH, a shell script that runs the node PATH
//!   would have found, with the flags (node refuses `--log-code` in
//!   `NODE_OPTIONS`). It writes its pid and arguments down, so that the
//!   report can say which node ran what. `child_process.fork` passes a
//!   node's flags on to its children by itself (`process.execArgv`).
//! - Deno: `DENO_V8_FLAGS`, which every deno reads before its `--v8-flags`.
//!
//! A node started by a path of its own, not through PATH (npx's `node@26`
//! package puts its binary first on PATH), cannot be reached; the perf.data
//! tells that it ran ([`crate::sources::perf_data::recorded_processes`]),
//! and `record` names it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where the `node` script goes in the output directory (removed after).
pub(crate) const SHIM_DIRECTORY: &str = ".v8inline-shim";
/// The file beside it where each node it starts writes its pid and arguments.
const STARTED_FILE: &str = "started";

/// The first executable `name` in the directories of `path` (PATH's value).
pub(crate) fn find_on_path(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path).map(|directory| directory.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// Writes the `node` script that runs `real_node` with `flags` into the
/// output directory; returns the directory to put first on PATH.
pub(crate) fn write_node_shim(output_dir: &Path, real_node: &Path, flags: &[OsString]) -> std::io::Result<PathBuf> {
    let directory = output_dir.join(SHIM_DIRECTORY);
    // A run that was killed leaves its list of started nodes behind.
    remove_node_shim(output_dir);
    std::fs::create_dir_all(&directory)?;
    let mut script = b"#!/bin/sh\n# v8inline record: the node PATH had, with the flags the expansion needs.\n".to_vec();
    script.extend_from_slice(b"printf '%s %s\\n' \"$$\" \"$*\" >> ");
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
    std::fs::write(&path, script)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(directory)
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

/// PATH's value with `directory` first.
pub(crate) fn path_with_first(directory: &Path, path: Option<&OsStr>) -> OsString {
    let mut value = directory.as_os_str().to_owned();
    if let Some(path) = path.filter(|path| !path.is_empty()) {
        value.push(":");
        value.push(path);
    }
    value
}

/// The nodes the script started, by pid: their arguments as the script saw
/// them.
pub(crate) fn started_nodes(output_dir: &Path) -> std::collections::BTreeMap<u32, String> {
    let text = std::fs::read_to_string(output_dir.join(SHIM_DIRECTORY).join(STARTED_FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (pid, arguments) = line.split_once(' ')?;
            Some((pid.parse().ok()?, arguments.to_string()))
        })
        .collect()
}

/// Removes the script and the list of the nodes it started.
pub(crate) fn remove_node_shim(output_dir: &Path) {
    let _ = std::fs::remove_dir_all(output_dir.join(SHIM_DIRECTORY));
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
        let shim =
            write_node_shim(&output_dir, &fake_node, &["--perf-prof".into(), "--logfile=/a b/x.log".into()]).unwrap();
        let output = std::process::Command::new(shim.join("node")).args(["app.js", "a b"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "[--perf-prof]\n[--logfile=/a b/x.log]\n[app.js]\n[a b]\n");
        let started = started_nodes(&output_dir);
        assert_eq!(started.values().collect::<Vec<_>>(), ["app.js a b"]);
        remove_node_shim(&output_dir);
        assert!(!shim.exists());
        std::fs::remove_dir_all(&output_dir).unwrap();
    }

    #[test]
    fn path_gets_the_directory_first() {
        assert_eq!(path_with_first(Path::new("/s"), Some(OsStr::new("/usr/bin:/bin"))), "/s:/usr/bin:/bin");
        assert_eq!(path_with_first(Path::new("/s"), None), "/s");
    }
}
