//! Who may change a working tree's index, in one place.
//!
//! git guards each index with `index.lock` and fails at once when another git holds it. Two
//! Butler processes on one repository (the Brain's server and an agent's worker MCP, or two
//! Brains) must therefore never run such git at the same time, and must wait for each other
//! rather than fail. The discipline:
//!
//! - Every git operation Butler runs that writes an index (recording, `work_vcs`, the Maid's
//!   unstage, restore, set-aside, commit, merge, worktree removal) runs while holding that
//!   working tree's [`TreeLock`]: an `flock` on `<common dir>/butler/locks/<tree>.lock`, one
//!   per working tree because each has its own index. The kernel drops it when its holder dies.
//!   Operations that need it take a `&TreeLock`, so it cannot be forgotten.
//! - A Butler that finds the lock held waits, up to [`BUTLER_WAIT`]; past that it is
//!   [`GitError::ButlerBusy`].
//! - Reads that git would use to refresh and save the index (status, working-tree diffs) take
//!   the lock only if it is free at once and then let git save the refreshed index (the next
//!   read is cheaper); otherwise they run without writing the index (see [`Refresh`]).
//! - While the lock is held, an `index.lock` belongs to something that is not Butler (a
//!   person's git, an editor) or to a Butler that died mid-operation. [`GitRepo::wait_for_index`]
//!   waits up to [`FOREIGN_WAIT`] for it and then reports [`GitError::IndexLocked`];
//!   [`GitRepo::remove_index_lock`] removes one that the caller knows to be stale.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use crate::file_lock::{self, FileLock};

/// How long a Butler waits for another Butler's work on the same working tree.
pub const BUTLER_WAIT: Duration = Duration::from_secs(30);
/// How long a Butler holding the lock waits for an `index.lock` that is not Butler's.
pub const FOREIGN_WAIT: Duration = Duration::from_secs(3);
/// Between looks at a foreign `index.lock`.
const FOREIGN_POLL: Duration = Duration::from_millis(50);

/// Butler's lock on one working tree's index, held across processes; released on drop.
#[derive(Debug)]
pub struct TreeLock {
    lock: FileLock,
    git_dir: PathBuf,
    path: PathBuf,
}

impl TreeLock {
    /// Releases the lock of a working tree that was just removed, and deletes its lock file.
    pub(crate) fn retire(self) {
        let _ = std::fs::remove_file(&self.path);
        drop(self.lock);
    }
}

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

/// How a read that git may use to refresh the index runs: holding the tree's lock when it was
/// free (git saves the refreshed index), else with index writes turned off.
pub(crate) struct Refresh(Option<TreeLock>);

impl Refresh {
    /// For git that never writes the index anyway.
    pub(crate) fn without_lock() -> Refresh {
        Refresh(None)
    }

    /// Adds the global options for this mode; call before the subcommand is added.
    pub(crate) fn apply(&self, cmd: GitCommand) -> GitCommand {
        match self.0 {
            Some(_) => cmd,
            None => cmd.args(["--no-optional-locks", "-c", "diff.autoRefreshIndex=false"]),
        }
    }
}

impl GitRepo {
    /// Takes Butler's lock on this working tree, waiting up to [`BUTLER_WAIT`] for another
    /// Butler that holds it (`ButlerBusy` after that).
    pub fn lock_tree(&self) -> Result<TreeLock, GitError> {
        let path = self.tree_lock_path()?;
        let lock = file_lock::lock_until(&path, Instant::now() + BUTLER_WAIT)
            .map_err(|e| GitError::io("lock", e))?
            .ok_or(GitError::ButlerBusy {
                waited: BUTLER_WAIT,
            })?;
        Ok(TreeLock {
            lock,
            git_dir: self.git_dir().to_path_buf(),
            path,
        })
    }

    /// For reads git may refresh the index in: the lock if it is free right now.
    pub(crate) fn refresh(&self) -> Refresh {
        let Ok(path) = self.tree_lock_path() else {
            return Refresh(None);
        };
        let lock = file_lock::try_lock(&path).ok().flatten();
        Refresh(lock.map(|lock| TreeLock {
            lock,
            git_dir: self.git_dir().to_path_buf(),
            path,
        }))
    }

    /// Checks that `held` is this working tree's lock.
    pub(crate) fn holds(&self, held: &TreeLock) -> Result<(), GitError> {
        if held.git_dir == self.git_dir() {
            Ok(())
        } else {
            Err(GitError::failed(
                "lock",
                "the lock held is another working tree's",
            ))
        }
    }

    /// With Butler's lock held: waits up to [`FOREIGN_WAIT`] until no `index.lock` exists,
    /// then `IndexLocked` if one still does.
    pub fn wait_for_index(&self, held: &TreeLock) -> Result<(), GitError> {
        self.holds(held)?;
        let deadline = Instant::now() + FOREIGN_WAIT;
        loop {
            let Some(lock) = self.index_lock() else {
                return Ok(());
            };
            if Instant::now() >= deadline {
                return Err(GitError::IndexLocked {
                    age: lock.modified.elapsed().ok(),
                    lock_path: lock.path,
                });
            }
            std::thread::sleep(FOREIGN_POLL);
        }
    }

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

    /// With Butler's lock held, removes `lock` (known to be stale) if it is still the same
    /// file, unchanged since it was seen; a lock that is gone already is fine. A lock that
    /// changed (someone took it anew) is `IndexLocked` and stays.
    pub fn remove_index_lock(&self, held: &TreeLock, lock: &IndexLock) -> Result<(), GitError> {
        self.holds(held)?;
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

    /// `<common dir>/butler/locks/main.lock` for the main working tree,
    /// `…/locks/worktree-<name>.lock` for a linked one (its directory under
    /// `<common dir>/worktrees/`). The directory is created when missing.
    fn tree_lock_path(&self) -> Result<PathBuf, GitError> {
        let dir = self.common_dir().join("butler").join("locks");
        std::fs::create_dir_all(&dir).map_err(|e| GitError::io("lock", e))?;
        let name = match self
            .git_dir()
            .strip_prefix(self.common_dir().join("worktrees"))
        {
            Ok(rest) => format!("worktree-{}.lock", rest.to_string_lossy()),
            Err(_) => "main.lock".to_owned(),
        };
        Ok(dir.join(name))
    }
}

#[cfg(test)]
mod tests {
    use butler_testkit::World;

    use super::*;

    fn scratch_repo() -> (World, GitRepo) {
        let w = World::new();
        let path = w.init("repo");
        let repo = GitRepo::discover(&path)
            .expect("discover")
            .with_command_env(w.env.clone());
        (w, repo)
    }

    #[test]
    fn a_second_butler_waits_for_the_first_and_reads_meanwhile_skip_the_index() {
        let (_dir, repo) = scratch_repo();
        let held = repo.lock_tree().expect("free");
        assert!(repo.refresh().0.is_none(), "a read does not wait");
        let waiter = {
            let repo = repo.clone();
            std::thread::spawn(move || repo.lock_tree().map(drop))
        };
        std::thread::sleep(Duration::from_millis(200));
        assert!(!waiter.is_finished(), "the second one waits");
        drop(held);
        waiter.join().expect("thread").expect("taken once released");
        assert!(repo.refresh().0.is_some(), "free again");
    }

    #[test]
    fn a_foreign_index_lock_is_waited_for_then_reported() {
        let (_dir, repo) = scratch_repo();
        let held = repo.lock_tree().expect("free");
        let path = repo.git_dir().join("index.lock");
        std::fs::write(&path, "").expect("lock");
        let remover = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                std::fs::remove_file(path).expect("rm");
            })
        };
        repo.wait_for_index(&held).expect("released in time");
        remover.join().expect("thread");
        std::fs::write(&path, "").expect("lock");
        let err = repo.wait_for_index(&held).expect_err("still held");
        assert!(matches!(err, GitError::IndexLocked { .. }), "{err:?}");
        assert!(path.exists(), "never removed");
    }
}
