//! The npm packages as a Node developer gets them: `scripts/npm-pack.sh`
//! packs `v8inline` (the launcher) and `@v8inline/linux-x64-gnu` (the
//! binary); both tarballs are installed into fresh directories with npm,
//! pnpm and yarn and run through `npx v8inline`: `--version`, a recording,
//! exit codes and signals through the launcher, the message without the
//! platform package, `V8INLINE_BINARY`, and the newest glibc symbol the
//! binary needs. Needs node and npm on PATH (skipped with a message
//! otherwise); pnpm and yarn as .ci/run installs them into
//! target/package-managers. The pack runs once for all tests of this file.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use std::os::unix::process::{CommandExt, ExitStatusExt};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What `scripts/npm-pack.sh` wrote.
struct Packed {
    launcher_tarball: PathBuf,
    platform_tarball: PathBuf,
    /// target/npm/glibc-floor: "2.28", or "native 2.36" where the script
    /// could not use cargo-zigbuild.
    glibc_floor: String,
}

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn on_path(program: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).any(|dir| dir.join(program).is_file())
}

/// The packages, packed once; `None` (with a message) without node and npm.
fn packed() -> Option<&'static Packed> {
    static PACKED: OnceLock<Option<Packed>> = OnceLock::new();
    PACKED
        .get_or_init(|| {
            if !on_path("node") || !on_path("npm") {
                eprintln!("SKIPPED: node and npm are not both on PATH");
                return None;
            }
            let started = Instant::now();
            let output = Command::new(repository().join("scripts/npm-pack.sh")).output().unwrap();
            let errors = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "scripts/npm-pack.sh failed:\n{errors}");
            eprintln!("scripts/npm-pack.sh took {:.1} s", started.elapsed().as_secs_f64());
            let npm = repository().join("target/npm");
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let tarballs: Vec<&str> = stdout.lines().collect();
            assert_eq!(
                tarballs,
                [
                    format!("target/npm/v8inline-linux-x64-gnu-{VERSION}.tgz"),
                    format!("target/npm/v8inline-{VERSION}.tgz")
                ],
                "{errors}"
            );
            Some(Packed {
                launcher_tarball: npm.join(format!("v8inline-{VERSION}.tgz")),
                platform_tarball: npm.join(format!("v8inline-linux-x64-gnu-{VERSION}.tgz")),
                glibc_floor: std::fs::read_to_string(npm.join("glibc-floor")).unwrap().trim().to_owned(),
            })
        })
        .as_ref()
}

/// The directory of pnpm and yarn, if .ci/run installed them.
fn package_managers_bin() -> Option<PathBuf> {
    let bin = repository().join("target/package-managers/node_modules/.bin");
    (bin.join("pnpm").is_file() && bin.join("yarn").is_file()).then_some(bin)
}

/// PATH with `first` before the machine's.
fn path_with(first: &Path) -> std::ffi::OsString {
    std::env::join_paths(
        std::iter::once(first.to_owned()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap()
}

/// A fresh project directory whose package.json depends on both tarballs
/// (and makes the launcher's optional dependency the local tarball for each
/// package manager, so nothing comes from the registry).
fn project(packed: &Packed, name: &str) -> common::TempDir {
    let directory = common::temp_dir("npm-package", name);
    let launcher = format!("file:{}", packed.launcher_tarball.display());
    let platform = format!("file:{}", packed.platform_tarball.display());
    let manifest = serde_json::json!({
        "name": format!("npm-package-test-{name}"),
        "version": "1.0.0",
        "private": true,
        "dependencies": { "v8inline": launcher, "@v8inline/linux-x64-gnu": platform },
        "overrides": { "@v8inline/linux-x64-gnu": platform },
        "pnpm": { "overrides": { "@v8inline/linux-x64-gnu": platform } },
        "resolutions": { "@v8inline/linux-x64-gnu": platform },
    });
    std::fs::write(directory.join("package.json"), serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    directory
}

fn run_in(directory: &Path, program: &str, args: &[&str], path: Option<&std::ffi::OsStr>) -> Output {
    let mut command = Command::new(program);
    command.current_dir(directory).args(args);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().unwrap_or_else(|error| panic!("{program}: {error}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `npm install` of both tarballs into a fresh directory, shared by the tests
/// that run the installed launcher.
fn npm_project() -> Option<&'static Path> {
    static PROJECT: OnceLock<Option<common::TempDir>> = OnceLock::new();
    PROJECT
        .get_or_init(|| {
            let packed = packed()?;
            let directory = project(packed, "npm");
            let output = run_in(&directory, "npm", &["install", "--no-audit", "--no-fund", "--offline"], None);
            assert!(output.status.success(), "npm install: {}", text(&output.stderr));
            Some(directory)
        })
        .as_ref()
        .map(|directory| &**directory)
}

/// The installed launcher, as package managers link it.
fn launcher(project: &Path) -> PathBuf {
    project.join("node_modules/.bin/v8inline")
}

#[test]
fn npm_pnpm_and_yarn_install_the_tarballs_and_npx_runs_the_binary() {
    let Some(packed) = packed() else { return };
    let expected = format!("v8inline {VERSION}\n");
    let Some(npm_project) = npm_project() else { return };
    let output = run_in(npm_project, "npx", &["v8inline", "--version"], None);
    assert_eq!(text(&output.stdout), expected, "{}", text(&output.stderr));
    assert!(output.status.success());
    // The binary npm installed is the platform package's, executable.
    let installed = npm_project.join("node_modules/@v8inline/linux-x64-gnu/bin/v8inline");
    assert!(installed.is_file(), "{}", installed.display());

    let Some(bin) = package_managers_bin() else {
        eprintln!("SKIPPED pnpm and yarn: not in target/package-managers (.ci/run installs them)");
        return;
    };
    let path = path_with(&bin);
    for (manager, install, exec) in [
        ("pnpm", &["install", "--offline"][..], &["exec", "v8inline", "--version"][..]),
        ("yarn", &["install", "--offline", "--non-interactive"][..], &["run", "--silent", "v8inline", "--version"][..]),
    ] {
        let directory = project(packed, manager);
        let output = run_in(&directory, manager, install, Some(&path));
        assert!(output.status.success(), "{manager} install: {}{}", text(&output.stdout), text(&output.stderr));
        // npx finds node_modules/.bin/v8inline whichever manager linked it.
        let output = run_in(&directory, "npx", &["v8inline", "--version"], Some(&path));
        assert_eq!(text(&output.stdout), expected, "{manager}, npx: {}", text(&output.stderr));
        let output = run_in(&directory, manager, exec, Some(&path));
        assert_eq!(text(&output.stdout), expected, "{manager} {exec:?}: {}", text(&output.stderr));
    }
}

#[test]
fn npx_v8inline_record_writes_the_profile() {
    let Some(project) = npm_project() else { return };
    // A directory of the project (npx finds the project's package upward).
    let directory = project.join("record");
    std::fs::create_dir(&directory).unwrap();
    std::fs::copy(repository().join("testdata/programs/deep.js"), directory.join("app.js")).unwrap();
    std::fs::copy(repository().join("testdata/programs/lib.js"), directory.join("lib.js")).unwrap();
    let output = run_in(&directory, "npx", &["v8inline", "record", "--", "node", "app.js", "200"], None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    for file in ["profile.folded", "flamegraph.svg", "profile.cpuprofile", "profile.firefox.json.gz"] {
        let written = directory.join("v8inline-profile").join(file);
        assert!(written.metadata().is_ok_and(|metadata| metadata.len() > 0), "{} not written", written.display());
    }
    let folded = std::fs::read_to_string(directory.join("v8inline-profile/profile.folded")).unwrap();
    let script = directory.join("app.js").display().to_string();
    assert!(folded.contains(&format!("kernel {script}")), "no frame of app.js's kernel in\n{folded}");
}

#[test]
fn exit_codes_pass_through_npx_and_the_launcher() {
    let Some(project) = npm_project() else { return };
    let directory = project.join("exit-codes");
    std::fs::create_dir(&directory).unwrap();
    let output = run_in(&directory, "npx", &["v8inline", "record", "--", "node", "-e", "process.exit(3)"], None);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    // v8inline's own usage error.
    let output = run_in(&directory, "npx", &["v8inline", "--no-such-flag"], None);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    // A command that is not found (record says 127, as a shell does).
    let output =
        run_in(&directory, launcher(project).to_str().unwrap(), &["record", "--", "no-such-command-v8inline"], None);
    assert_eq!(output.status.code(), Some(127), "{}", text(&output.stderr));
}

/// A shell script to stand in for the binary through `V8INLINE_BINARY`.
fn stand_in(directory: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = directory.join(name);
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn the_launcher_dies_of_the_signal_that_ended_the_binary_and_honours_v8inline_binary() {
    let Some(project) = npm_project() else { return };
    let directory = common::temp_dir("npm-package", "stand-in");
    let echo = stand_in(&directory, "echo", r#"echo "stand-in: $*"; exit 5"#);
    let output = Command::new(launcher(project)).args(["a b", "c"]).env("V8INLINE_BINARY", &echo).output().unwrap();
    assert_eq!(text(&output.stdout), "stand-in: a b c\n");
    assert_eq!(output.status.code(), Some(5));

    for (signal, name) in [(libc::SIGTERM, "TERM"), (libc::SIGINT, "INT"), (libc::SIGKILL, "KILL")] {
        let killed = stand_in(&directory, &format!("killed-{name}"), &format!("kill -{name} $$"));
        let output = Command::new(launcher(project)).env("V8INLINE_BINARY", &killed).output().unwrap();
        assert_eq!(output.status.signal(), Some(signal), "SIG{name}: {:?} {}", output.status, text(&output.stderr));
    }

    let missing = directory.join("no-such-binary");
    let output = Command::new(launcher(project)).env("V8INLINE_BINARY", &missing).output().unwrap();
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(text(&output.stderr), format!("v8inline: V8INLINE_BINARY={}: no such file\n", missing.display()));
}

/// Starts `v8inline record` of a node that runs until stopped, through the
/// launcher, in a process group of its own (as a shell's job), and waits
/// until node runs under perf.
fn start_endless_recording(project: &Path, directory: &Path) -> std::process::Child {
    let started = directory.join("started");
    let script = format!(
        "require('fs').writeFileSync({:?}, ''); let n = 0; setInterval(() => {{ for (let i = 0; i < 1e5; i++) n += i; }}, 1)",
        started.display().to_string()
    );
    let child = Command::new(launcher(project))
        .current_dir(directory)
        .args(["record", "--output-dir", "out", "--", "node", "-e", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() {
        assert!(Instant::now() < deadline, "node did not start under record");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A few samples, then the signal.
    std::thread::sleep(Duration::from_millis(300));
    child
}

#[test]
fn sigterm_to_the_launcher_and_ctrl_c_to_its_group_stop_record_once() {
    let Some(project) = npm_project() else { return };
    // SIGTERM to the launcher alone (kill, timeout, a process manager): passed
    // on to record, which stops node, writes the profile and exits 143.
    let directory = common::temp_dir("npm-package", "sigterm");
    let child = start_endless_recording(project, &directory);
    // SAFETY: kill(2) on our own unreaped child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", text(&output.stderr));
    assert!(directory.join("out/profile.folded").is_file(), "{}", text(&output.stderr));

    // Ctrl-C: the terminal sends SIGINT to the whole process group. record
    // must get it once (a second one stops it at once, without a profile):
    // the launcher does not pass it on again.
    let directory = common::temp_dir("npm-package", "sigint");
    let child = start_endless_recording(project, &directory);
    // SAFETY: kill(2) of the process group our child leads.
    assert_eq!(unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) }, 0);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", text(&output.stderr));
    assert!(directory.join("out/profile.folded").is_file(), "{}", text(&output.stderr));
}

#[test]
fn without_the_platform_package_the_launcher_says_what_to_do() {
    let Some(packed) = packed() else { return };
    // npm install --omit=optional: the launcher only.
    let directory = common::temp_dir("npm-package", "omit-optional");
    let launcher_tarball = format!("file:{}", packed.launcher_tarball.display());
    let platform = format!("file:{}", packed.platform_tarball.display());
    let manifest = serde_json::json!({
        "name": "npm-package-test-omit-optional", "version": "1.0.0", "private": true,
        "dependencies": { "v8inline": launcher_tarball },
        "overrides": { "@v8inline/linux-x64-gnu": platform },
    });
    std::fs::write(directory.join("package.json"), manifest.to_string()).unwrap();
    let output =
        run_in(&directory, "npm", &["install", "--omit=optional", "--no-audit", "--no-fund", "--offline"], None);
    assert!(output.status.success(), "npm install: {}", text(&output.stderr));
    assert!(!directory.join("node_modules/@v8inline/linux-x64-gnu").exists());
    let output = run_in(&directory, "npx", &["v8inline", "--version"], None);
    assert_eq!(output.status.code(), Some(127));
    let message = text(&output.stderr);
    assert!(
        message.starts_with(
            "v8inline: the package @v8inline/linux-x64-gnu, which holds the binary for linux-x64 (glibc), is not installed."
        ),
        "{message}"
    );
    assert!(message.contains("--omit=optional"), "{message}");
    assert!(message.contains("`cargo install v8inline`"), "{message}");
    assert!(message.contains("V8INLINE_BINARY=/path/to/v8inline"), "{message}");

    // A platform without a package (node told it runs on arm64).
    let arm64 = directory.join("arm64.cjs");
    std::fs::write(&arm64, "Object.defineProperty(process, 'arch', { value: 'arm64' });\n").unwrap();
    let installed_launcher = directory.join("node_modules/v8inline/bin/v8inline.js");
    let output = Command::new("node").arg("--require").arg(&arm64).arg(&installed_launcher).output().unwrap();
    assert_eq!(output.status.code(), Some(127));
    let message = text(&output.stderr);
    assert!(
        message.starts_with(
            "v8inline: no prebuilt binary for linux-arm64 (glibc), only for linux-x64 (glibc). \
             v8inline records with Linux perf. To build it from source"
        ),
        "{message}"
    );
}

#[test]
fn the_binary_needs_glibc_2_28_at_most() {
    let Some(packed) = packed() else { return };
    let Some(project) = npm_project() else { return };
    if !on_path("objdump") {
        eprintln!("SKIPPED: no objdump (binutils) to read the binary's symbol versions");
        return;
    }
    let binary = project.join("node_modules/@v8inline/linux-x64-gnu/bin/v8inline");
    let output = Command::new("objdump").arg("-T").arg(&binary).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let symbols = text(&output.stdout);
    let newest = symbols
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter_map(|word| word.strip_prefix("GLIBC_"))
        .filter_map(glibc_version)
        .max()
        .expect("no GLIBC_ symbol version");
    let (floor, what) = match packed.glibc_floor.strip_prefix("native ") {
        None => (glibc_version(&packed.glibc_floor).unwrap(), "the floor of the npm package"),
        Some(native) => {
            eprintln!(
                "NOTE: scripts/npm-pack.sh built natively (no cargo-zigbuild): checked the binary against this \
                 machine's glibc {native}, not 2.28"
            );
            (glibc_version(native).unwrap(), "this machine's glibc (a native build)")
        }
    };
    assert!(
        newest <= floor,
        "the binary needs GLIBC_{}.{}, newer than {what} {}",
        newest.0,
        newest.1,
        packed.glibc_floor
    );
    eprintln!(
        "the binary's newest glibc symbol version: GLIBC_{}.{} (floor {})",
        newest.0, newest.1, packed.glibc_floor
    );
}

/// "2.28" as (2, 28).
fn glibc_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    let minor = minor.split('.').next()?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
