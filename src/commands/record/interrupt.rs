//! Ctrl-C while the command runs. A terminal sends SIGINT to the whole
//! foreground process group: the program and perf stop (perf writes its
//! perf.data), and `record` must outlive them to fold what perf wrote,
//! remove its own files and move the jitdumps. So while the command runs,
//! the first SIGINT or SIGTERM is only noted (and passed to the child, for
//! a signal sent to `record` alone); from then on both have their default
//! action again, so a second Ctrl-C ends `record` at once.
//!
//! A handler, not SIG_IGN: an ignored signal stays ignored across `exec`,
//! and the child must die of Ctrl-C as usual; a handler is reset there.

use std::sync::atomic::{AtomicI32, Ordering};

/// The first signal received while the child ran (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The child's pid, to pass the signal on to (0: none yet).
static CHILD: AtomicI32 = AtomicI32::new(0);

const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

extern "C" fn note_signal(signal: libc::c_int) {
    // Only async-signal-safe calls: atomics, signal(2), kill(2).
    if RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
        for signal in SIGNALS {
            // SAFETY: restoring the default action is async-signal-safe.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        let child = CHILD.load(Ordering::SeqCst);
        if child > 0 {
            // SAFETY: kill(2) is async-signal-safe; a pid that has exited
            // is not reaped (and reused) before `wait` returns.
            unsafe { libc::kill(child, signal) };
        }
    }
}

/// While alive, SIGINT and SIGTERM are noted rather than fatal; dropped, it
/// restores their default action.
pub(crate) struct InterruptGuard(());

impl InterruptGuard {
    pub(crate) fn install() -> InterruptGuard {
        RECEIVED.store(0, Ordering::SeqCst);
        CHILD.store(0, Ordering::SeqCst);
        for signal in SIGNALS {
            // SAFETY: `note_signal` only does async-signal-safe work.
            unsafe { libc::signal(signal, note_signal as *const () as libc::sighandler_t) };
        }
        InterruptGuard(())
    }

    /// The child to pass a signal on to; if one came before it started,
    /// it is passed on now.
    pub(crate) fn watch(&self, pid: u32) {
        let pid = i32::try_from(pid).unwrap_or(0);
        CHILD.store(pid, Ordering::SeqCst);
        let received = RECEIVED.load(Ordering::SeqCst);
        if received != 0 && pid > 0 {
            // SAFETY: kill(2) on our own unreaped child.
            unsafe { libc::kill(pid, received) };
        }
    }

    /// The signal received, if any.
    pub(crate) fn received(&self) -> Option<i32> {
        Some(RECEIVED.load(Ordering::SeqCst)).filter(|&signal| signal != 0)
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        CHILD.store(0, Ordering::SeqCst);
        for signal in SIGNALS {
            // SAFETY: restoring the default action.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
    }
}
