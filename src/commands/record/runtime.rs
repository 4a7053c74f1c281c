//! The runtimes `record` starts and how each takes V8 flags: node among
//! its own flags, Deno in `--v8-flags=` or `DENO_V8_FLAGS`; which flags the
//! expansion wants (perf or the `--prof` fallback) and which a runtime's V8
//! knows.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Stdio};

use super::RecordError;

/// The JavaScript runtime of a command: how it takes V8 flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// node: V8 flags among its own flags, before the script.
    Node,
    /// Deno: V8 flags in one `--v8-flags=a,b,c` after the subcommands that
    /// take it (`run`, `test`, `bench`, ...), merged with the user's own;
    /// for the others (`deno task`, whose tasks start deno again) in
    /// `DENO_V8_FLAGS`, which every deno reads before its `--v8-flags`.
    Deno,
}

/// Deno's subcommands that take `--v8-flags=` and run JavaScript.
const DENO_V8_FLAG_SUBCOMMANDS: [&str; 6] = ["run", "serve", "test", "bench", "eval", "repl"];

impl Runtime {
    /// The runtime of a command's program, told by the binary's name:
    /// `deno`, or `node` (`nodejs`, `node26`); `None` for anything else (a
    /// launcher such as npm, npx or a shell, whose nodes get the flags from
    /// [`super::children`]).
    pub fn of(program: &OsStr) -> Option<Runtime> {
        let name = Path::new(program).file_name().and_then(OsStr::to_str)?;
        match name {
            "deno" => Some(Runtime::Deno),
            "node" | "nodejs" => Some(Runtime::Node),
            _ if name
                .strip_prefix("node")
                .is_some_and(|version| !version.is_empty() && version.bytes().all(|byte| byte.is_ascii_digit())) =>
            {
                Some(Runtime::Node)
            }
            _ => None,
        }
    }

    /// `node` or `deno`.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "node",
            Runtime::Deno => "deno",
        }
    }

    /// How to pass `--prof`, for messages.
    pub(crate) fn prof_command(self) -> &'static str {
        match self {
            Runtime::Node => "node --prof",
            Runtime::Deno => "deno --v8-flags=--prof",
        }
    }

    /// The runtime's arguments with `v8_flags` added, and the environment
    /// variables to set. `user_environment` is `DENO_V8_FLAGS` as the user
    /// set it.
    pub(crate) fn invocation(
        self,
        arguments: &[OsString],
        v8_flags: &[OsString],
        user_environment: Option<&OsStr>,
    ) -> Result<Invocation, RecordError> {
        match self {
            Runtime::Node => Ok(Invocation {
                arguments: v8_flags.iter().chain(arguments).cloned().collect(),
                environment: Vec::new(),
            }),
            Runtime::Deno => deno_invocation(arguments, v8_flags, user_environment),
        }
    }
}

/// A command line's arguments after the program, and environment variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    pub(crate) arguments: Vec<OsString>,
    pub(crate) environment: Vec<(OsString, OsString)>,
}

/// Deno's arguments with `v8_flags` in its `--v8-flags=` after the
/// subcommand, after the user's own `--v8-flags=` values (those before the
/// script: later arguments are the script's), or, for subcommands without
/// `--v8-flags` (`task`), in `DENO_V8_FLAGS` after the user's.
pub(crate) fn deno_invocation(
    arguments: &[OsString],
    v8_flags: &[OsString],
    user_environment: Option<&OsStr>,
) -> Result<Invocation, RecordError> {
    // Deno splits the flags at commas.
    let ours = v8_flags
        .iter()
        .map(|flag| {
            flag.to_str()
                .filter(|flag| !flag.contains(','))
                .map(str::to_string)
                .ok_or_else(|| RecordError::DenoFlag { flag: flag.to_string_lossy().into_owned() })
        })
        .collect::<Result<Vec<String>, RecordError>>()?;
    let subcommand = arguments.iter().position(|argument| !argument.to_string_lossy().starts_with('-'));
    let takes_v8_flags = subcommand
        .and_then(|index| arguments[index].to_str())
        .is_some_and(|subcommand| DENO_V8_FLAG_SUBCOMMANDS.contains(&subcommand));
    let Some(subcommand) = subcommand.filter(|_| takes_v8_flags) else {
        let mut value = OsString::new();
        if let Some(user) = user_environment.filter(|user| !user.is_empty()) {
            value.push(user);
            value.push(",");
        }
        value.push(ours.join(","));
        return Ok(Invocation { arguments: arguments.to_vec(), environment: vec![("DENO_V8_FLAGS".into(), value)] });
    };
    let mut merged = Vec::new();
    let mut rest = Vec::new();
    let mut before_script = true;
    for argument in &arguments[subcommand + 1..] {
        let text = argument.to_str();
        if before_script && (argument == "--" || !text.is_some_and(|text| text.starts_with('-'))) {
            before_script = false;
        }
        match text.and_then(|text| text.strip_prefix("--v8-flags=")) {
            Some(user_flags) if before_script => {
                merged.extend(user_flags.split(',').filter(|flag| !flag.is_empty()).map(str::to_string))
            }
            _ => rest.push(argument.clone()),
        }
    }
    merged.extend(ours);
    let mut result: Vec<OsString> = arguments[..=subcommand].to_vec();
    result.push(format!("--v8-flags={}", merged.join(",")).into());
    result.extend(rest);
    Ok(Invocation { arguments: result, environment: Vec::new() })
}

/// Deno's subcommands that run JavaScript under Deno's permissions, with
/// the `--allow-*` flags.
const DENO_PERMISSION_SUBCOMMANDS: [&str; 4] = ["run", "serve", "test", "bench"];

/// The environment variables the preload reads in Deno
/// (`deno_preload.cjs`).
const DENO_PRELOAD_VARIABLES: [&str; 2] = [super::private::RECORD_VARIABLE, "V8INLINE_BENCHMARKS"];

/// A permission the preload needs in Deno: its long flag, its short one and
/// the values it needs.
struct DenoGrant {
    flag: &'static str,
    short: &'static str,
    values: Vec<String>,
}

/// Deno's arguments with what the preload needs to write the benchmarks'
/// windows granted (`--allow-env` of its variables, `--allow-read` and
/// `--allow-write` of the recording's private `record_directory`), each
/// merged into the user's own list of that permission: the program gains
/// access to nothing of the user's. Unchanged where the user grants it all
/// already (`-A`, `--allow-write` without a list), for subcommands without
/// permissions (`task`: its denos read what `-A` gives them), and for a
/// directory Deno would split (a comma).
pub(crate) fn deno_grants(arguments: &[OsString], record_directory: &Path) -> Vec<OsString> {
    let Some(directory) = record_directory.to_str().filter(|directory| !directory.contains(',')) else {
        return arguments.to_vec();
    };
    let Some(subcommand) = arguments.iter().position(|argument| !argument.to_string_lossy().starts_with('-')) else {
        return arguments.to_vec();
    };
    let Some(name) = arguments[subcommand].to_str().filter(|name| DENO_PERMISSION_SUBCOMMANDS.contains(name)) else {
        return arguments.to_vec();
    };
    // Deno's flags end at the script for `run` and `serve`; `test` and
    // `bench` take files and flags in any order, up to `--`.
    let flags_end = arguments[subcommand + 1..]
        .iter()
        .position(|argument| {
            argument == "--" || (matches!(name, "run" | "serve") && !argument.to_string_lossy().starts_with('-'))
        })
        .map_or(arguments.len(), |offset| subcommand + 1 + offset);
    let flags = &arguments[subcommand + 1..flags_end];
    if flags.iter().any(|flag| flag == "-A" || flag == "--allow-all") {
        return arguments.to_vec();
    }
    let grants = [
        DenoGrant {
            flag: "--allow-env",
            short: "-E",
            values: DENO_PRELOAD_VARIABLES.iter().map(|variable| variable.to_string()).collect(),
        },
        DenoGrant { flag: "--allow-read", short: "-R", values: vec![directory.to_string()] },
        DenoGrant { flag: "--allow-write", short: "-W", values: vec![directory.to_string()] },
    ];
    let mut merged: Vec<OsString> = Vec::new();
    let mut taken = vec![false; flags.len()];
    for grant in &grants {
        let mut values = Vec::new();
        let mut everything = false;
        for (index, flag) in flags.iter().enumerate() {
            let Some(text) = flag.to_str() else { continue };
            if text == grant.flag || text == grant.short {
                everything = true;
            } else if let Some(list) = text
                .strip_prefix(grant.flag)
                .or_else(|| text.strip_prefix(grant.short))
                .and_then(|rest| rest.strip_prefix('='))
            {
                values.extend(list.split(',').filter(|value| !value.is_empty()).map(str::to_string));
                taken[index] = true;
            }
        }
        if everything {
            // The user's scoped lists stay as they were beside it.
            for (index, flag) in flags.iter().enumerate() {
                if flag.to_str().is_some_and(|text| {
                    text.starts_with(&format!("{}=", grant.flag)) || text.starts_with(&format!("{}=", grant.short))
                }) {
                    taken[index] = false;
                }
            }
            continue;
        }
        values.extend(grant.values.iter().cloned());
        merged.push(format!("{}={}", grant.flag, values.join(",")).into());
    }
    let mut result: Vec<OsString> = arguments[..=subcommand].to_vec();
    result.extend(merged);
    result.extend(flags.iter().zip(&taken).filter(|(_, taken)| !**taken).map(|(flag, _)| flag.clone()));
    result.extend_from_slice(&arguments[flags_end..]);
    result
}

/// Flags whose absence is handled: without `--perf-prof-path` (node 18,
/// 20) the jitdump is moved from the working directory afterwards.
const OPTIONAL_FLAGS: [&str; 1] = ["perf-prof-path"];

/// The node flags the perf path wants, as (V8 flag name, argument).
pub(crate) fn perf_flags(output_dir: &Path) -> Vec<(&'static str, OsString)> {
    vec![
        ("perf-prof", "--perf-prof".into()),
        ("log-code", "--log-code".into()),
        ("interpreted-frames-native-stack", "--interpreted-frames-native-stack".into()),
        ("logfile", logfile_flag(output_dir, "codspeed-v8-%p.log")),
        // One log per isolate (`isolate-0x<address>-<pid>-codspeed-v8-<pid>.log`):
        // worker threads sharing one file would overwrite each other's records.
        ("logfile-per-isolate", "--logfile-per-isolate".into()),
        // Node 20+: the jitdump goes to the output directory, not the
        // working directory.
        ("perf-prof-path", flag_with_path("--perf-prof-path=", output_dir)),
    ]
}

/// The node flags the `--prof` fallback wants.
pub(crate) fn prof_flags(output_dir: &Path, frequency: u32) -> Vec<(&'static str, OsString)> {
    let interval_micros = 1_000_000 / frequency.max(1);
    vec![
        ("prof", "--prof".into()),
        ("log-code", "--log-code".into()),
        ("logfile", logfile_flag(output_dir, "prof-%p.log")),
        ("logfile-per-isolate", "--logfile-per-isolate".into()),
        ("prof-sampling-interval", format!("--prof-sampling-interval={interval_micros}").into()),
    ]
}

/// `--logfile=DIR/NAME`: V8 expands `%p` (pid), `%t` (time) and `%%` (`%`)
/// in the log's name, so each `%` of the directory is given as `%%`
/// (`--perf-prof-path` is taken as it is). `DIR` is absolute, so the name is
/// never `-` (standard output) or `+` (a temporary file) for V8.
pub(crate) fn logfile_flag(directory: &Path, name: &str) -> OsString {
    use std::os::unix::ffi::OsStringExt as _;
    let mut flag = b"--logfile=".to_vec();
    for &byte in directory.as_os_str().as_encoded_bytes() {
        flag.push(byte);
        if byte == b'%' {
            flag.push(b'%');
        }
    }
    flag.push(b'/');
    flag.extend_from_slice(name.as_bytes());
    OsString::from_vec(flag)
}

pub(crate) fn flag_with_path(prefix: &str, path: &Path) -> OsString {
    let mut flag = OsString::from(prefix);
    flag.push(path.as_os_str());
    flag
}

/// The V8 flag names the runtime's V8 lists (`  --perf-prof (...)`):
/// `node --v8-options`, `deno run --v8-flags=--help`.
pub fn known_v8_flags(program: &OsStr, runtime: Runtime) -> Result<HashSet<String>, RecordError> {
    let mut command = Command::new(program);
    match runtime {
        // The user's NODE_OPTIONS may hold what another node refuses
        // (`--cpu-prof` before node 22): the list is the same without it.
        Runtime::Node => command.arg("--v8-options").env_remove("NODE_OPTIONS"),
        Runtime::Deno => command.args(["run", "--v8-flags=--help"]).env_remove("DENO_V8_FLAGS"),
    };
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|source| RecordError::Spawn { program: program.to_string_lossy().into_owned(), source })?;
    Ok(parse_v8_options(&String::from_utf8_lossy(&output.stdout)))
}

/// Parses V8's flag list (`--v8-options`, `--help`; names with `-`, as V8
/// prints them).
fn parse_v8_options(text: &str) -> HashSet<String> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("--"))
        .filter_map(|rest| rest.split([' ', '(']).next())
        .filter(|name| !name.is_empty())
        .map(|name| name.replace('_', "-"))
        .collect()
}

/// Keeps the flags this node knows; returns them and the names of the others.
pub(crate) fn supported(flags: Vec<(&'static str, OsString)>, known: &HashSet<String>) -> (Vec<OsString>, Vec<String>) {
    let mut kept = Vec::new();
    let mut unsupported = Vec::new();
    for (name, argument) in flags {
        if known.contains(name) {
            kept.push(argument);
        } else if !OPTIONAL_FLAGS.contains(&name) {
            unsupported.push(name.to_string());
        }
    }
    (kept, unsupported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_flag_names_from_v8_options() {
        let text = "Synopsis:\n  shell [options] [--shell] [<file>...]\n\nOptions:\n  --perf-prof (Enable perf linux profiler (experimental annotate support).)\n        type: bool  default: --no-perf-prof\n  --logfile-per-isolate (Separate log files for each isolate.)\n  --log_code (old style)\n";
        let known = parse_v8_options(text);
        assert!(known.contains("perf-prof"));
        assert!(known.contains("logfile-per-isolate"));
        assert!(known.contains("log-code"));
        assert!(!known.contains("no-perf-prof"));
        let (kept, unsupported) = supported(perf_flags(Path::new("/out")), &known);
        assert_eq!(kept, ["--perf-prof", "--log-code", "--logfile-per-isolate"]);
        assert_eq!(unsupported, vec!["interpreted-frames-native-stack", "logfile"]);
    }

    #[test]
    fn a_percent_in_the_directory_reaches_v8_escaped() {
        assert_eq!(logfile_flag(Path::new("/w/p%p"), "codspeed-v8-%p.log"), "--logfile=/w/p%%p/codspeed-v8-%p.log");
        let flags = perf_flags(Path::new("/w/a%"));
        let flag = |name: &str| flags.iter().find(|(flag, _)| *flag == name).unwrap().1.clone();
        assert_eq!(flag("logfile"), "--logfile=/w/a%%/codspeed-v8-%p.log");
        assert_eq!(flag("perf-prof-path"), "--perf-prof-path=/w/a%");
    }

    fn strings(arguments: &[OsString]) -> Vec<String> {
        arguments.iter().map(|argument| argument.to_string_lossy().into_owned()).collect()
    }

    fn os(arguments: &[&str]) -> Vec<OsString> {
        arguments.iter().map(OsString::from).collect()
    }

    #[test]
    fn runtime_is_told_by_the_binary_name() {
        assert_eq!(Runtime::of("deno".as_ref()), Some(Runtime::Deno));
        assert_eq!(Runtime::of("/opt/deno/node_modules/@deno/linux-x64-glibc/deno".as_ref()), Some(Runtime::Deno));
        assert_eq!(Runtime::of("node".as_ref()), Some(Runtime::Node));
        assert_eq!(Runtime::of("/opt/nodes/node20/bin/node".as_ref()), Some(Runtime::Node));
        assert_eq!(Runtime::of("node26".as_ref()), Some(Runtime::Node));
        // Launchers: their nodes get the flags through PATH.
        assert_eq!(Runtime::of("npm".as_ref()), None);
        assert_eq!(Runtime::of("nodemon".as_ref()), None);
        assert_eq!(Runtime::of("sh".as_ref()), None);
    }

    #[test]
    fn node_takes_v8_flags_before_the_script() {
        let invocation = Runtime::Node
            .invocation(
                &os(&["--max-old-space-size=100", "app.js", "--v8-flags=x"]),
                &os(&["--perf-prof", "--log-code"]),
                None,
            )
            .unwrap();
        assert_eq!(
            strings(&invocation.arguments),
            ["--perf-prof", "--log-code", "--max-old-space-size=100", "app.js", "--v8-flags=x"]
        );
        assert!(invocation.environment.is_empty());
    }

    #[test]
    fn deno_takes_v8_flags_after_the_subcommand_merged_with_the_users() {
        let ours = os(&["--perf-prof", "--logfile=/out/codspeed-v8-%p.log"]);
        // The user's --v8-flags before the script are merged, theirs first;
        // after the script they are the script's arguments.
        let invocation = Runtime::Deno
            .invocation(
                &os(&["run", "-A", "--v8-flags=--max-old-space-size=100,--stack-size=2000", "app.js", "--v8-flags=x"]),
                &ours,
                None,
            )
            .unwrap();
        assert_eq!(
            strings(&invocation.arguments),
            [
                "run",
                "--v8-flags=--max-old-space-size=100,--stack-size=2000,--perf-prof,--logfile=/out/codspeed-v8-%p.log",
                "-A",
                "app.js",
                "--v8-flags=x"
            ]
        );
        assert!(invocation.environment.is_empty());
        for subcommand in ["test", "bench"] {
            let invocation = Runtime::Deno
                .invocation(&os(&[subcommand, "--v8-flags=--a", "bench.js", "--", "--v8-flags=y"]), &ours, None)
                .unwrap();
            assert_eq!(
                strings(&invocation.arguments),
                [
                    subcommand,
                    "--v8-flags=--a,--perf-prof,--logfile=/out/codspeed-v8-%p.log",
                    "bench.js",
                    "--",
                    "--v8-flags=y"
                ]
            );
        }
        // Global flags before the subcommand stay there.
        let invocation = Runtime::Deno.invocation(&os(&["-q", "run", "app.js"]), &ours, None).unwrap();
        assert_eq!(
            strings(&invocation.arguments),
            ["-q", "run", "--v8-flags=--perf-prof,--logfile=/out/codspeed-v8-%p.log", "app.js"]
        );
    }

    #[test]
    fn deno_task_takes_v8_flags_from_the_environment() {
        let ours = os(&["--perf-prof", "--log-code"]);
        let invocation = Runtime::Deno.invocation(&os(&["task", "bench"]), &ours, None).unwrap();
        assert_eq!(strings(&invocation.arguments), ["task", "bench"]);
        assert_eq!(invocation.environment, [("DENO_V8_FLAGS".into(), "--perf-prof,--log-code".into())]);
        // After the user's own, as deno puts --v8-flags after them.
        let invocation =
            Runtime::Deno.invocation(&os(&["task", "bench"]), &ours, Some("--stack-size=2000".as_ref())).unwrap();
        assert_eq!(
            invocation.environment,
            [("DENO_V8_FLAGS".into(), "--stack-size=2000,--perf-prof,--log-code".into())]
        );
        // `deno app.js` runs the script: deno reads the environment there too.
        let invocation = Runtime::Deno.invocation(&os(&["app.js"]), &ours, None).unwrap();
        assert_eq!(strings(&invocation.arguments), ["app.js"]);
        assert_eq!(invocation.environment.len(), 1);
    }

    #[test]
    fn deno_gets_the_preloads_variables_and_directory_merged_into_the_users_grants() {
        let directory = Path::new("/run/user/1/v8inline/record-x");
        let ours = [
            "--allow-env=V8INLINE_RECORD,V8INLINE_BENCHMARKS",
            "--allow-read=/run/user/1/v8inline/record-x",
            "--allow-write=/run/user/1/v8inline/record-x",
        ];
        let granted = |arguments: &[&str]| strings(&deno_grants(&os(arguments), directory));
        assert_eq!(granted(&["run", "app.js", "-W"]), [&["run"][..], &ours, &["app.js", "-W"]].concat());
        // The user's lists gain ours; what the user grants whole stays so.
        assert_eq!(
            granted(&["bench", "--allow-read=./data,/etc", "a_bench.ts", "-W", "-E=HOME", "--", "-A"]),
            [
                "bench",
                "--allow-env=HOME,V8INLINE_RECORD,V8INLINE_BENCHMARKS",
                "--allow-read=./data,/etc,/run/user/1/v8inline/record-x",
                "a_bench.ts",
                "-W",
                "--",
                "-A"
            ]
        );
        // Everything granted already, or a subcommand without permissions.
        for arguments in
            [&["run", "-A", "app.js"][..], &["-q", "bench", "--allow-all"], &["task", "bench"], &["app.js"]]
        {
            assert_eq!(granted(arguments), arguments);
        }
        assert_eq!(granted(&["-q", "test"]), [&["-q", "test"][..], &ours].concat());
        // Deno would split a directory with a comma.
        assert_eq!(strings(&deno_grants(&os(&["run", "app.js"]), Path::new("/a,b"))), ["run", "app.js"]);
    }

    #[test]
    fn deno_flags_with_commas_are_refused() {
        let error =
            Runtime::Deno.invocation(&os(&["run", "app.js"]), &os(&["--logfile=/a,b/x.log"]), None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "deno splits V8 flags at commas: --logfile=/a,b/x.log cannot be passed (use an --output-dir without a comma)"
        );
        // node takes them as they are.
        assert!(Runtime::Node.invocation(&os(&["app.js"]), &os(&["--logfile=/a,b/x.log"]), None).is_ok());
    }
}
