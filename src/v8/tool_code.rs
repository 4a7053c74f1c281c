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

use std::path::Path;

use crate::v8::inline_map::InlineMap;
use crate::v8::source_map::script_file_name;

/// Package managers, as their installs' directories are named under
/// `node_modules` (npm's own dependencies are under `node_modules/npm/`).
const PACKAGE_MANAGERS: [&str; 6] = ["npm", "npx", "pnpm", "yarn", "@yarnpkg", "corepack"];

/// Whose a process's code is, when it is not the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolProcess {
    /// A package manager's (`npm`, `pnpm`, ...).
    PackageManager(String),
    /// Only the runtime's own code ran (a node that started and did
    /// nothing of the user's: an idle worker, a launcher).
    Runtime,
}

impl ToolProcess {
    /// `npm's own process`, `the runtime's own process`.
    pub fn describe(&self) -> String {
        match self {
            ToolProcess::PackageManager(name) => format!("{name}'s own process"),
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

/// Whose the process of `map` is, when its code logs name scripts and none
/// is the user's; `None` when one is (or none is named: a log without
/// JavaScript code says nothing of whose the process is).
pub fn tool_process(map: &InlineMap) -> Option<ToolProcess> {
    let names = map.logs().iter().flat_map(|log| log.scripts.values()).map(|script| &*script.name);
    let mut manager = None;
    let mut any = false;
    for name in names.filter(|name| !name.is_empty()) {
        any = true;
        if is_runtimes_own(name) || is_records_preload(name) {
            continue;
        }
        manager = Some(package_manager_of(name)?);
    }
    any.then(|| match manager {
        Some(name) => ToolProcess::PackageManager(name.to_string()),
        None => ToolProcess::Runtime,
    })
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
    fn the_runtimes_and_records_own_scripts() {
        assert!(is_runtimes_own("node:internal/bootstrap/realm"));
        assert!(is_runtimes_own("ext:core/01_core.js"));
        assert!(!is_runtimes_own("/tmp/app.js"));
        assert!(is_records_preload("/tmp/v8inline-0/preload-3ed30498c8ff16b4.cjs"));
        assert!(!is_records_preload("/tmp/app/preload-x.cjs"));
    }
}
