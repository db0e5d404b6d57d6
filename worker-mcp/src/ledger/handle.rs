//! A ledger that holds its connection only while it is used: opened on the first call, closed
//! by [`LedgerHandle::release_if_idle`] once nothing used it for a while.
//!
//! A Brain's session keeps its project for hours and calls it a few times a minute; an open
//! SQLite connection in WAL mode is three file descriptors (the database, its log and its
//! shared memory). A server with many sessions would run out of descriptors holding them all;
//! reopening costs a lock file and a few pragmas (about a millisecond), paid only after a pause.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use super::{Ledger, LedgerError};
use crate::time::SharedClock;

/// One ledger file, its connection open only while in use (see the module's text).
pub struct LedgerHandle {
    path: PathBuf,
    clock: SharedClock,
    slot: Mutex<Slot>,
}

struct Slot {
    open: Option<Ledger>,
    last_use: Instant,
}

impl std::fmt::Debug for LedgerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LedgerHandle")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl LedgerHandle {
    /// Takes an open ledger (its file and clock are kept to reopen it).
    pub fn new(ledger: Ledger) -> LedgerHandle {
        LedgerHandle {
            path: ledger.path().to_path_buf(),
            clock: ledger.clock.clone(),
            slot: Mutex::new(Slot {
                open: Some(ledger),
                last_use: Instant::now(),
            }),
        }
    }

    /// The ledger file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the ledger, reopening it first when it was released. Calls are serialised
    /// (one connection); a panic inside `f` leaves no transaction open (it rolls back on drop).
    pub fn with<T, E: From<LedgerError>>(
        &self,
        f: impl FnOnce(&Ledger) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut slot = self.slot();
        let ledger = match &mut slot.open {
            Some(ledger) => ledger,
            empty => empty.insert(Ledger::open_file(&self.path)?.with_clock(self.clock.clone())),
        };
        let result = f(ledger);
        slot.last_use = Instant::now();
        result
    }

    /// Closes the connection if it is open, not in use, and was last used `quiet` or longer
    /// before `now`; whether it was closed now.
    pub fn release_if_idle(&self, quiet: Duration, now: Instant) -> bool {
        let mut slot = match self.slot.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            // In use right now: not idle.
            Err(TryLockError::WouldBlock) => return false,
        };
        if slot.open.is_none() || now.saturating_duration_since(slot.last_use) < quiet {
            return false;
        }
        slot.open = None;
        true
    }

    /// Whether the connection is open.
    pub fn is_open(&self) -> bool {
        self.slot().open.is_some()
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        // A connection and a time stamp: a panic elsewhere cannot leave them half-written.
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn an_idle_connection_is_closed_and_reopened_on_the_next_call() {
        let dir = tempfile::tempdir().expect("tempdir");
        let handle = LedgerHandle::new(Ledger::open(dir.path()).expect("open"));
        handle
            .with(|l| l.set_active_issue("/p", "main", Some(7)))
            .expect("write");
        let used = Instant::now();
        assert!(!handle.release_if_idle(10 * SECOND, used + 9 * SECOND));
        assert!(handle.is_open(), "used recently");
        assert!(handle.release_if_idle(10 * SECOND, used + 10 * SECOND));
        assert!(!handle.is_open());
        assert!(
            !handle.release_if_idle(10 * SECOND, used + 60 * SECOND),
            "already closed"
        );
        let issue = handle
            .with(|l| l.active_issue("/p", "main"))
            .expect("reopened");
        assert_eq!(issue, Some(7), "the same file");
        assert!(handle.is_open());
    }

    #[test]
    fn a_connection_in_use_is_never_closed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let handle = LedgerHandle::new(Ledger::open(dir.path()).expect("open"));
        let later = Instant::now() + 3600 * SECOND;
        let released = handle
            .with(|_| Ok::<_, LedgerError>(handle.release_if_idle(SECOND, later)))
            .expect("call");
        assert!(!released, "the call holds it");
        assert!(handle.is_open());
    }
}
