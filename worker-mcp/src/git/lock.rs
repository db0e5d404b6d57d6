//! git's index lock (`index.lock`): seeing it, and removing one that is known to be stale.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::SystemTime;

use super::GitRepo;
use super::error::GitError;

/// An `index.lock` file as it was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexLock {
    /// The lock file.
    pub path: PathBuf,
    /// Its modification time (when the holder took it, as git never rewrites it).
    pub modified: SystemTime,
    /// Device and inode, so a lock taken again later is not mistaken for this one.
    identity: (u64, u64),
}

impl GitRepo {
    /// The working tree's index lock, if some process holds it (or died holding it).
    pub fn index_lock(&self) -> Option<IndexLock> {
        let path = self.git_dir().join("index.lock");
        let meta = std::fs::symlink_metadata(&path).ok()?;
        Some(IndexLock {
            modified: meta.modified().ok()?,
            identity: (meta.dev(), meta.ino()),
            path,
        })
    }

    /// Removes `lock` if it is still the same file, unchanged since it was seen; a lock that
    /// is gone already is fine. A lock that changed (someone took it anew) is
    /// `IndexLocked` and stays.
    pub fn remove_index_lock(&self, lock: &IndexLock) -> Result<(), GitError> {
        let Some(now) = self.index_lock().filter(|l| l.path == lock.path) else {
            return Ok(());
        };
        if now != *lock {
            return Err(GitError::IndexLocked {
                age: now.modified.elapsed().ok(),
                lock_path: now.path,
            });
        }
        match std::fs::remove_file(&lock.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(GitError::io("remove index lock", e)),
        }
    }
}
