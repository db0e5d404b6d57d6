//! The ledger: one SQLite file per repository (`<git common dir>/butler/ledger.db`) that every
//! layer reads — work records, the active issue per place, the operation journal, the
//! ImplementMaid's tasks and evidence, delegated operations' procedures, the approval gate, and
//! the embedded issue store.
//!
//! The file is opened (one opener at a time, under a lock file beside it) in WAL mode with a
//! busy timeout and foreign keys on; every write that touches more than one row runs in a
//! `BEGIN IMMEDIATE` transaction, so processes sharing the file wait for each other instead of
//! failing or allocating the same id.

mod approvals;
mod context;
mod error;
mod handle;
mod journal;
mod procedures;
mod records;
mod schema;
mod tasks;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::file_lock::{self, FileLock};
use crate::time::{SharedClock, SystemClock, Timestamp};

#[cfg(test)]
pub(crate) use self::approvals::APPROVAL_VALID_SECS;
pub use self::error::LedgerError;
pub use self::handle::LedgerHandle;
pub use self::journal::{Operation, process_alive};
pub(crate) use self::procedures::ProcedureRow;
pub use self::records::{Claim, ClaimingCommit, PendingRecord, Record};
// Record ids are the contract's (`crate::contract::RecordId`); the ledger hands them out.
pub use self::tasks::{AttemptRow, TaskEnd, TaskNote, TaskRow};
pub use crate::contract::{RecordId, RecordIdError};

/// How long a call waits for another process's write before giving up with `Busy`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The directory inside the git common dir that holds Butler's files.
pub const LEDGER_DIR: &str = "butler";
/// The ledger's file name inside [`LEDGER_DIR`].
pub const LEDGER_FILE: &str = "ledger.db";
/// Appended to the ledger's file name for the lock file that serialises opening it.
pub(crate) const OPEN_LOCK_SUFFIX: &str = ".open-lock";

/// An open ledger: one SQLite connection. `Send` but not `Sync`: share it behind a `Mutex`, or
/// open one per thread (the file itself is safe to share between connections and processes).
/// Every time it writes comes from its clock (the system's unless [`Ledger::with_clock`]).
pub struct Ledger {
    conn: Connection,
    path: PathBuf,
    clock: SharedClock,
    /// The mark of this clone's record ids (`kqrt` in `20260612-001-kqrt`).
    mark: String,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// Opens (creating if needed) the ledger of the repository whose git common dir is given.
    pub fn open(git_common_dir: &Path) -> Result<Ledger, LedgerError> {
        let dir = git_common_dir.join(LEDGER_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| LedgerError::Io {
            path: dir.clone(),
            source,
        })?;
        Self::open_file(&dir.join(LEDGER_FILE))
    }

    /// Opens (creating if needed) a ledger file at an explicit path.
    ///
    /// Opening is serialised with every other Butler process and thread through a lock file
    /// beside the ledger ([`OPEN_LOCK_SUFFIX`]): switching a new file to WAL and creating its
    /// tables while another connection does the same can fail with `SQLITE_BUSY` at once, as
    /// SQLite refuses rather than waits when two readers both want to write.
    pub fn open_file(path: &Path) -> Result<Ledger, LedgerError> {
        let _opening = Self::lock_opening(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| LedgerError::from_sqlite(e, path))?;
        let mut ledger = Ledger {
            conn,
            path: path.to_path_buf(),
            clock: SystemClock::shared(),
            mark: String::new(),
        };
        ledger.configure().map_err(|e| ledger.locate(e))?;
        schema::migrate(&ledger.conn).map_err(|e| ledger.locate(e))?;
        ledger.mark = schema::clone_mark(&ledger.conn).map_err(|e| ledger.locate(e))?;
        Ok(ledger)
    }

    /// Takes the lock that serialises opening `path`, waiting up to the busy timeout.
    fn lock_opening(path: &Path) -> Result<FileLock, LedgerError> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(OPEN_LOCK_SUFFIX);
        let lock_path = path.with_file_name(name);
        let io = |source| LedgerError::Io {
            path: lock_path.clone(),
            source,
        };
        file_lock::lock_until(&lock_path, Instant::now() + BUSY_TIMEOUT)
            .map_err(io)?
            .ok_or(LedgerError::Busy)
    }

    /// The ledger file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same ledger, stamping times from `clock`.
    pub fn with_clock(mut self, clock: SharedClock) -> Ledger {
        self.clock = clock;
        self
    }

    /// The mark this ledger's record ids carry, chosen at random when the file was created.
    pub fn clone_mark(&self) -> &str {
        &self.mark
    }

    /// Now, by the ledger's clock.
    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn configure(&self) -> Result<(), LedgerError> {
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        // Reading the header first turns a non-database file into `Corrupt` right away.
        let _: i64 = self
            .conn
            .pragma_query_value(None, "schema_version", |r| r.get(0))?;
        let mode: String = self
            .conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(%mode, path = %self.path.display(), "ledger not in WAL mode");
        }
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", true)?;
        Ok(())
    }

    /// Changes how long calls wait for other writers (tests use a short wait).
    #[cfg(test)]
    pub(crate) fn set_busy_timeout(&self, wait: Duration) -> Result<(), LedgerError> {
        Ok(self.conn.busy_timeout(wait)?)
    }

    /// The connection, for the other stores kept in the same file (the embedded issue store).
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction: committed when `f` returns `Ok`, rolled back
    /// otherwise. Other writers wait (up to the busy timeout) until it ends.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let run = || {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        };
        run().map_err(|e| self.locate(e))
    }

    /// Runs `f` in a read transaction, so everything it reads comes from one snapshot.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let run = || {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)?;
            f(&tx)
        };
        run().map_err(|e| self.locate(e))
    }

    /// Fills in this ledger's path on errors classified without one.
    fn locate(&self, err: LedgerError) -> LedgerError {
        match err {
            LedgerError::Corrupt { path } if path.as_os_str().is_empty() => LedgerError::Corrupt {
                path: self.path.clone(),
            },
            LedgerError::Io { path, source } if path.as_os_str().is_empty() => LedgerError::Io {
                path: self.path.clone(),
                source,
            },
            other => other,
        }
    }
}

impl From<rusqlite::Error> for LedgerError {
    fn from(err: rusqlite::Error) -> Self {
        LedgerError::from_sqlite(err, Path::new(""))
    }
}

#[cfg(test)]
mod tests;
