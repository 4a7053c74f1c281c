//! Where `record` keeps what it makes nodes execute: the `node` script and
//! the preload. Never in the output directory, which another user may own
//! or write (`--output-dir /shared/prof`): whoever can write a directory can
//! swap a script in it between our write and a node's start, and their code
//! then runs as the recording user. Instead:
//!
//! - a directory of the user's own, mode 0700: `$XDG_RUNTIME_DIR/v8inline`,
//!   or `v8inline-UID` in the system temp directory, used only when it and
//!   every directory above it are writable by no other user (a sticky
//!   directory such as `/tmp` is fine: others cannot rename what is ours);
//! - in it, the preload, `preload-HASH.cjs`, whose content never changes for
//!   a build of v8inline. It stays after `record` returns: `NODE_OPTIONS`
//!   names it, and a node that the command left running, or starts later,
//!   would fail to start without it (`--require` of a missing file is
//!   fatal). It reads what to do from the recording's directory, named by
//!   [`RECORD_VARIABLE`]; when that is gone it does nothing.
//! - the recording's own directory, `record-XXXXXX`, created exclusively
//!   (mode 0700) and removed when `record` is done (also on every error
//!   path: it is a [`tempfile::TempDir`]): the `node` script, the
//!   preload's configuration and the lists the script and the preload write.

use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The environment variable that tells the preload where the recording's
/// directory is.
pub(crate) const RECORD_VARIABLE: &str = "V8INLINE_RECORD";

/// The preload's source: the same for every recording of this build.
// Deno runs it too (NODE_OPTIONS' `--require`): its Deno part follows.
const PRELOAD_SOURCE: &str = concat!(include_str!("preload.cjs"), include_str!("deno_preload.cjs"));

/// A directory `record` may not keep code in, and why.
#[derive(Debug, thiserror::Error)]
#[error(
    "{}: {reason}: record keeps the scripts it makes nodes run in a directory only you can write (remove it, or set TMPDIR to another directory)",
    path.display()
)]
pub struct UnsafeDirectory {
    /// The directory.
    pub path: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

/// The user's private directory and, in it, the recording's.
pub(crate) struct PrivateDirectory {
    /// The recording's directory (removed on drop).
    record: tempfile::TempDir,
    /// The preload, in the user's directory.
    preload: PathBuf,
}

impl PrivateDirectory {
    /// Makes the recording's directory (and the user's, and the preload in
    /// it, when missing).
    pub(crate) fn create() -> Result<PrivateDirectory, UnsafeDirectory> {
        let user = user_directory()?;
        let at = |error: std::io::Error| UnsafeDirectory { path: user.clone(), reason: error.to_string() };
        let record = tempfile::Builder::new()
            .prefix("record-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&user)
            .map_err(at)?;
        let preload = user.join(format!("preload-{:016x}.cjs", fnv1a(PRELOAD_SOURCE.as_bytes())));
        // Another recording may be writing it at the same time: each writes
        // it whole and renames it into place, the same bytes.
        if std::fs::read(&preload).ok().as_deref() != Some(PRELOAD_SOURCE.as_bytes()) {
            crate::files::replace_file(&preload, |output| output.write_all(PRELOAD_SOURCE.as_bytes()))
                .map_err(|error| UnsafeDirectory { path: preload.clone(), reason: error.to_string() })?;
        }
        Ok(PrivateDirectory { record, preload })
    }

    /// The recording's directory.
    pub(crate) fn path(&self) -> &Path {
        self.record.path()
    }

    /// The preload.
    pub(crate) fn preload(&self) -> &Path {
        &self.preload
    }
}

/// 64-bit FNV-1a: a name for the preload's content that is the same in
/// every build with the same preload.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// The user's private directory, made when missing: `$XDG_RUNTIME_DIR/v8inline`
/// when that directory is safe, else `v8inline-UID` in the system temp
/// directory.
fn user_directory() -> Result<PathBuf, UnsafeDirectory> {
    let user = effective_user();
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
        && not_writable_by_others(&runtime, user).is_ok()
        && let Ok(directory) = own_directory(&runtime.join("v8inline"), user)
    {
        return Ok(directory);
    }
    let temp = std::env::temp_dir();
    not_writable_by_others(&temp, user)?;
    own_directory(&temp.join(format!("v8inline-{user}")), user)
}

/// The effective user id.
fn effective_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `directory`, made (mode 0700) when missing, after checking that it is a
/// directory of `user`'s (not a symbolic link, not another user's); its
/// mode made 0700.
fn own_directory(directory: &Path, user: u32) -> Result<PathBuf, UnsafeDirectory> {
    let unsafe_directory = |reason: String| UnsafeDirectory { path: directory.to_owned(), reason };
    match std::fs::DirBuilder::new().mode(0o700).create(directory) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(unsafe_directory(error.to_string())),
    }
    let metadata = std::fs::symlink_metadata(directory).map_err(|error| unsafe_directory(error.to_string()))?;
    if !metadata.file_type().is_dir() {
        return Err(unsafe_directory("not a directory (a symbolic link or a file)".to_string()));
    }
    if metadata.uid() != user {
        return Err(unsafe_directory(format!("owned by user {}, not by you (user {user})", metadata.uid())));
    }
    if metadata.mode() & 0o077 != 0 {
        std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o700))
            .map_err(|error| unsafe_directory(error.to_string()))?;
    }
    Ok(directory.to_owned())
}

/// Whether `directory` and every directory above it are writable by no user
/// but `user` and root, or are sticky (others cannot rename or remove what
/// is not theirs there).
pub(crate) fn not_writable_by_others(directory: &Path, user: u32) -> Result<(), UnsafeDirectory> {
    let real = std::fs::canonicalize(directory)
        .map_err(|error| UnsafeDirectory { path: directory.to_owned(), reason: error.to_string() })?;
    for ancestor in real.ancestors() {
        let unsafe_directory = |reason: String| UnsafeDirectory { path: ancestor.to_owned(), reason };
        let metadata = std::fs::metadata(ancestor).map_err(|error| unsafe_directory(error.to_string()))?;
        if metadata.uid() != user && metadata.uid() != 0 {
            return Err(unsafe_directory(format!("owned by user {}", metadata.uid())));
        }
        let sticky = metadata.mode() & 0o1000 != 0;
        if metadata.mode() & 0o022 != 0 && !sticky {
            return Err(unsafe_directory(format!("writable by other users (mode {:o})", metadata.mode() & 0o7777)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recording_directory_is_private_and_removed_on_drop() {
        let private = PrivateDirectory::create().unwrap();
        let record = private.path().to_owned();
        let metadata = std::fs::symlink_metadata(&record).unwrap();
        assert_eq!(metadata.mode() & 0o7777, 0o700);
        assert_eq!(metadata.uid(), effective_user());
        assert_eq!(std::fs::read_to_string(private.preload()).unwrap(), PRELOAD_SOURCE);
        let user = record.parent().unwrap();
        assert_eq!(std::fs::symlink_metadata(user).unwrap().mode() & 0o777, 0o700);
        drop(private);
        assert!(!record.exists());
    }

    #[test]
    fn a_directory_others_may_write_is_not_safe() {
        let base = std::env::temp_dir().join(format!("v8inline-private-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = not_writable_by_others(&base.join("."), effective_user()).unwrap_err();
        assert_eq!(error.reason, "writable by other users (mode 777)");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(not_writable_by_others(&base, effective_user()).is_ok());
        // A symbolic link where the user's directory goes is refused.
        let link = base.join("v8inline-link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        let error = own_directory(&link, effective_user()).unwrap_err();
        assert_eq!(error.reason, "not a directory (a symbolic link or a file)");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
