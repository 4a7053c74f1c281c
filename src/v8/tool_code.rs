//! Whose code a process ran: the user's, or a package manager's or the
//! runtime's own. `v8inline record -- npm run bench` records npm's own
//! node too; that its short run did not expand, or that a source map inside
//! npm's install is missing, is nothing the user can act on. Those are told
//! under `--stats` only ([`crate::diagnostics::Diagnostics::not_the_users`]).
//!
//! A process is a tool's when its code logs name scripts and every one of
//! them is the runtime's own (`node:` internals, Deno's `ext:`), record's
//! preload, or inside a package manager's install (`node_modules/npm/`, ...):
//! npm's node names 102 `node:` scripts and 60 of npm's, the user's program
//! run by it `node:` ones and its own.
//!
//! A test runner's own process is a tool's too: `vitest bench` runs the
//! user's benchmarks in a worker, while its main process and its idle
//! workers run only what is installed under `node_modules` (vitest, vite,
//! tinypool, ...). Such a process is the runner's when every script is
//! under `node_modules` and one is a known runner's; a CLI the user
//! profiles from its install (`npx prettier`) names no runner and stays
//! the user's.

use std::path::Path;

use crate::v8::inline_map::InlineMap;
use crate::v8::source_map::script_file_name;

/// Package managers, as their installs' directories are named under
/// `node_modules` (npm's own dependencies are under `node_modules/npm/`).
const PACKAGE_MANAGERS: [&str; 6] = ["npm", "npx", "pnpm", "yarn", "@yarnpkg", "corepack"];

/// Test runners and their worker pools, as their installs' directories are
/// named under `node_modules`.
const TEST_RUNNERS: [&str; 9] =
    ["vitest", "@vitest", "jest", "jest-worker", "@jest", "mocha", "tinypool", "ava", "tap"];

/// Whose a process's code is, when it is not the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolProcess {
    /// A package manager's (`npm`, `pnpm`, ...).
    PackageManager(String),
    /// A test runner's (`vitest`, `jest`, ...): only installed packages
    /// ran, a runner among them.
    TestRunner(String),
    /// Only the runtime's own code ran (a node that started and did
    /// nothing of the user's: an idle worker, a launcher).
    Runtime,
}

impl ToolProcess {
    /// `npm's own process`, `the runtime's own process`.
    pub fn describe(&self) -> String {
        match self {
            ToolProcess::PackageManager(name) | ToolProcess::TestRunner(name) => format!("{name}'s own process"),
            ToolProcess::Runtime => "a process that ran only the runtime's own JavaScript".to_string(),
        }
    }
}

/// The package manager whose install `path` (a file path or URL) lies in:
/// a `node_modules/<manager>/` directory, or corepack's cache
/// (`.../corepack/<manager>/...`).
pub fn package_manager_of(path: &str) -> Option<&'static str> {
    let path = script_file_name(path);
    let components: Vec<&str> = Path::new(path.as_ref()).iter().filter_map(|part| part.to_str()).collect();
    let manager_named = |name: &str| PACKAGE_MANAGERS.iter().copied().find(|manager| *manager == name);
    components.iter().enumerate().find_map(|(index, &component)| match component {
        "node_modules" => components.get(index + 1).and_then(|&name| manager_named(name)),
        // corepack's cache: `corepack/<manager>/<version>/`, or
        // `corepack/v1/<manager>/<version>/`.
        "corepack" => components.iter().skip(index + 1).take(2).find_map(|&name| manager_named(name)),
        _ => None,
    })
}

/// Whether a script name is the runtime's own: node's `node:` internals,
/// Deno's `ext:` ones.
pub fn is_runtimes_own(script_name: &str) -> bool {
    script_name.starts_with("node:") || script_name.starts_with("ext:")
}

/// Whether a script is the preload `v8inline record` gives every node
/// (`.../v8inline-UID/preload-*.cjs`).
fn is_records_preload(script_name: &str) -> bool {
    let path = Path::new(script_name);
    let named = |part: Option<&std::ffi::OsStr>, prefix: &str| {
        part.and_then(|part| part.to_str()).is_some_and(|part| part.starts_with(prefix))
    };
    named(path.file_name(), "preload-")
        && path.extension().is_some_and(|extension| extension == "cjs")
        && named(path.parent().and_then(Path::file_name), "v8inline-")
}

/// The test runner whose install `path` lies in: `node_modules/<runner>/`
/// (the innermost `node_modules`, so a runner's own dependencies are not
/// it).
fn test_runner_of(path: &str) -> Option<&'static str> {
    let path = script_file_name(path);
    let components: Vec<&str> = Path::new(path.as_ref()).iter().filter_map(|part| part.to_str()).collect();
    let installed = components.iter().rposition(|&component| component == "node_modules")?;
    let name = components.get(installed + 1)?;
    TEST_RUNNERS.iter().copied().find(|runner| runner == name)
}

/// The package manager or test runner whose install `path` lies in: a
/// missing source map there is that tool's business, not the user's.
pub fn tool_install_of(path: &str) -> Option<&'static str> {
    package_manager_of(path).or_else(|| test_runner_of(path))
}

/// Whether a script is the user's own code: a file's path or URL outside
/// any package's install (`node_modules/`), not the runtime's own, not
/// record's preload (a benchmark's graph starts at the outermost such
/// frame: `crate::collapse::task_root`).
pub fn is_users_script(script_name: &str) -> bool {
    is_a_file(script_name)
        && !is_installed(script_name)
        && !is_in_denos_npm_cache(script_name)
        && !is_runtimes_own(script_name)
        && !is_records_preload(&script_file_name(script_name))
}

/// Whether a script lies in Deno's cache of npm packages
/// (`$DENO_DIR/npm/registry.npmjs.org/PACKAGE/VERSION/`), where `deno run`
/// keeps `npm:` packages without a `node_modules`.
fn is_in_denos_npm_cache(script_name: &str) -> bool {
    script_file_name(script_name).contains("/npm/registry.npmjs.org/")
}

/// Whether a script is a file inside some package's install
/// (`node_modules/`): a harness's or a library's code.
pub fn is_installed_script(script_name: &str) -> bool {
    is_a_file(script_name) && (is_installed(script_name) || is_in_denos_npm_cache(script_name))
}

/// Whether a script name is a file's path or URL (not `<unknown>`).
fn is_a_file(script_name: &str) -> bool {
    script_name.starts_with('/') || script_name.starts_with("file://")
}

/// Whether `path` lies in some package's install (`node_modules/`).
fn is_installed(path: &str) -> bool {
    let path = script_file_name(path);
    Path::new(path.as_ref()).iter().any(|component| component == "node_modules")
}

/// Whose the process of `map` is, when its code logs name scripts and none
/// is the user's; `None` when one is (or none is named: a log without
/// JavaScript code says nothing of whose the process is).
pub fn tool_process(map: &InlineMap) -> Option<ToolProcess> {
    let names = map.logs().iter().flat_map(|log| log.scripts.values()).map(|script| &*script.name);
    tool_of_scripts(names)
}

/// [`tool_process`] of the scripts a process's code logs name.
fn tool_of_scripts<'a>(names: impl Iterator<Item = &'a str>) -> Option<ToolProcess> {
    let mut manager = None;
    let mut runner = None;
    let mut installed_of_no_tool = false;
    let mut unnamed = false;
    let mut any = false;
    for name in names.filter(|name| !name.is_empty()) {
        any = true;
        if is_runtimes_own(name) || is_records_preload(name) {
            continue;
        }
        if let Some(found) = package_manager_of(name) {
            manager = Some(found);
            continue;
        }
        // `<unknown>`, `evalmachine.<anonymous>`: code with no file, which
        // says nothing of whose the process is beside a tool's.
        if !is_a_file(name) {
            unnamed = true;
            continue;
        }
        if !is_installed(name) {
            return None;
        }
        match test_runner_of(name) {
            Some(found) => runner = runner.or(Some(found)),
            None => installed_of_no_tool = true,
        }
    }
    match (any, runner, manager) {
        (false, _, _) => None,
        (true, Some(runner), _) => Some(ToolProcess::TestRunner(runner.to_string())),
        // Installed code of no runner: a CLI the user runs (`npx
        // prettier`), the user's.
        (true, None, _) if installed_of_no_tool => None,
        (true, None, Some(manager)) => Some(ToolProcess::PackageManager(manager.to_string())),
        (true, None, None) if !unnamed => Some(ToolProcess::Runtime),
        (true, None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_managers_by_their_installs() {
        assert_eq!(package_manager_of("/usr/lib/node_modules/npm/lib/cli.js"), Some("npm"));
        assert_eq!(
            package_manager_of("file:///usr/lib/node_modules/npm/node_modules/chalk/source/index.js"),
            Some("npm")
        );
        assert_eq!(package_manager_of("/home/u/.cache/node/corepack/pnpm/9.1.0/dist/pnpm.cjs"), Some("pnpm"));
        assert_eq!(package_manager_of("/home/u/.cache/node/corepack/v1/yarn/4.1.0/yarn.js"), Some("yarn"));
        assert_eq!(package_manager_of("/p/node_modules/@yarnpkg/core/lib/index.js"), Some("@yarnpkg"));
        // The user's dependencies, even in a pnpm store, are the user's.
        assert_eq!(package_manager_of("/p/node_modules/.pnpm/chalk@5/node_modules/chalk/index.js"), None);
        assert_eq!(package_manager_of("/p/src/npm/index.js"), None);
        assert_eq!(package_manager_of("node:internal/main/run_main_module"), None);
    }

    #[test]
    fn a_test_runners_own_process() {
        let tool = |names: &[&str]| tool_of_scripts(names.iter().copied());
        // vitest's main process: vitest, vite, tinypool, node's own.
        assert_eq!(
            tool(&[
                "node:internal/main/run_main_module",
                "file:///p/node_modules/vitest/dist/cli.js",
                "file:///p/node_modules/vite/dist/node/index.js",
                "file:///p/node_modules/tinypool/dist/index.js",
            ]),
            Some(ToolProcess::TestRunner("vitest".to_string()))
        );
        // With code of no file beside it (vitest 3's main process names
        // one `<unknown>` script).
        assert_eq!(
            tool(&["<unknown>", "file:///p/node_modules/@vitest/runner/dist/index.js"]),
            Some(ToolProcess::TestRunner("@vitest".to_string()))
        );
        assert_eq!(tool(&["<unknown>", "node:internal/main/run_main_module"]), None);
        // Its idle worker, in a pnpm store.
        assert_eq!(
            tool(&["file:///p/node_modules/.pnpm/tinypool@1.0.2/node_modules/tinypool/dist/entry/process.js"]),
            Some(ToolProcess::TestRunner("tinypool".to_string()))
        );
        // The worker that ran the user's benchmark file is the user's.
        assert_eq!(tool(&["file:///p/node_modules/vitest/dist/worker.js", "file:///p/bench/parse.bench.ts"]), None);
        // A CLI run from its install, through npx: the user's.
        assert_eq!(tool(&["/usr/lib/node_modules/npm/bin/npx-cli.js", "/p/node_modules/prettier/index.cjs"]), None);
        // A runner's own dependency is not a runner.
        assert_eq!(test_runner_of("/p/node_modules/vitest/node_modules/chai/index.js"), None);
        assert_eq!(tool(&["node:internal/main/run_main_module"]), Some(ToolProcess::Runtime));
        assert_eq!(
            tool(&["node:internal/main/run_main_module", "/usr/lib/node_modules/npm/lib/cli.js"]),
            Some(ToolProcess::PackageManager("npm".to_string()))
        );
    }

    #[test]
    fn the_runtimes_and_records_own_scripts() {
        assert!(is_runtimes_own("node:internal/bootstrap/realm"));
        assert!(is_runtimes_own("ext:core/01_core.js"));
        assert!(!is_runtimes_own("/tmp/app.js"));
        assert!(is_records_preload("/tmp/v8inline-0/preload-3ed30498c8ff16b4.cjs"));
        assert!(!is_records_preload("/tmp/app/preload-x.cjs"));
    }
}
