//! Why a ledger operation failed, with SQLite's own errors classified and kept out of messages.

use std::path::PathBuf;

use rusqlite::ErrorCode;

/// A ledger failure. Display texts are written for the Brain's hints and never quote SQLite;
/// the underlying error stays reachable through `source()` for logs.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// Another process held the ledger longer than the wait allows.
    #[error("the ledger is busy with another Butler process; try again")]
    Busy,
    /// The file is not a usable database.
    #[error("the ledger file {} is damaged", path.display())]
    Corrupt { path: PathBuf },
    /// The file was written by a newer Butler.
    #[error("the ledger was written by a newer Butler (schema {found}, this one knows {known})")]
    TooNew { found: i64, known: i64 },
    /// The thing asked for does not exist.
    #[error("{what} was not found")]
    NotFound { what: String },
    /// The request contradicts what the ledger holds (e.g. completing a record twice with
    /// different commits).
    #[error("{what}")]
    Conflict { what: String },
    /// The ledger's directory or file could not be created or opened.
    #[error("the ledger at {} could not be opened", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Any other SQLite failure (details only in the source, for logs).
    #[error("the ledger could not complete the operation")]
    Sqlite(#[source] rusqlite::Error),
}

impl LedgerError {
    pub(crate) fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound { what: what.into() }
    }

    pub(crate) fn conflict(what: impl Into<String>) -> Self {
        Self::Conflict { what: what.into() }
    }

    /// Classifies a SQLite error for the ledger at `path`.
    pub(crate) fn from_sqlite(err: rusqlite::Error, path: &std::path::Path) -> Self {
        match err.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Self::Busy,
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Self::Corrupt {
                path: path.to_path_buf(),
            },
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly) => {
                Self::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::other("the database file cannot be opened for writing"),
                }
            }
            _ => Self::Sqlite(err),
        }
    }
}
