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
//!
//! `bench --schedule duet` records two commands at once, from two threads:
//! the guards count themselves, and a signal goes on to every child
//! watched.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

/// The first signal received while a child ran (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The children's pids, to pass the signal on to (0: a free slot).
static CHILDREN: [AtomicI32; 8] = [const { AtomicI32::new(0) }; 8];
/// How many guards live: the first installs the handler, the last
/// restores the default action.
static GUARDS: Mutex<usize> = Mutex::new(0);

const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

extern "C" fn note_signal(signal: libc::c_int) {
    // Only async-signal-safe calls: atomics, signal(2), kill(2).
    if RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
        for signal in SIGNALS {
            // SAFETY: restoring the default action is async-signal-safe.
            unsafe { libc::signal(signal, libc::SIG_DFL) };
        }
        for child in &CHILDREN {
            let child = child.load(Ordering::SeqCst);
            if child > 0 {
                // SAFETY: kill(2) is async-signal-safe. A child that has
                // exited keeps its pid until `wait` reaps it; its slot is
                // freed right after (the pid's reuse in that instant is
                // the one window, as before duets).
                unsafe { libc::kill(child, signal) };
            }
        }
    }
}

/// While alive, SIGINT and SIGTERM are noted rather than fatal; when the
/// last is dropped, their default action is restored.
pub(crate) struct InterruptGuard(());

/// A child a signal is passed on to until this is dropped (after `wait`).
pub(crate) struct WatchedChild {
    slot: Option<usize>,
}

impl InterruptGuard {
    pub(crate) fn install() -> InterruptGuard {
        let mut guards = GUARDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if *guards == 0 {
            RECEIVED.store(0, Ordering::SeqCst);
            for signal in SIGNALS {
                // SAFETY: `note_signal` only does async-signal-safe work.
                unsafe { libc::signal(signal, note_signal as *const () as libc::sighandler_t) };
            }
        }
        *guards += 1;
        InterruptGuard(())
    }

    /// The child to pass a signal on to; if one came before it started,
    /// it is passed on now.
    pub(crate) fn watch(&self, pid: u32) -> WatchedChild {
        let pid = i32::try_from(pid).unwrap_or(0);
        let slot = (pid > 0)
            .then(|| {
                CHILDREN
                    .iter()
                    .position(|slot| slot.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst).is_ok())
            })
            .flatten();
        let received = RECEIVED.load(Ordering::SeqCst);
        if received != 0 && pid > 0 {
            // SAFETY: kill(2) on our own unreaped child.
            unsafe { libc::kill(pid, received) };
        }
        WatchedChild { slot }
    }

    /// The signal received, if any.
    pub(crate) fn received(&self) -> Option<i32> {
        Some(RECEIVED.load(Ordering::SeqCst)).filter(|&signal| signal != 0)
    }
}

impl Drop for WatchedChild {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            CHILDREN[slot].store(0, Ordering::SeqCst);
        }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        let mut guards = GUARDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *guards -= 1;
        if *guards == 0 {
            for signal in SIGNALS {
                // SAFETY: restoring the default action.
                unsafe { libc::signal(signal, libc::SIG_DFL) };
            }
        }
    }
}
