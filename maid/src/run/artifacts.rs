//! [7c] What verification produces is not the agent's work: the worktree's state is taken after
//! the Maid's record and before the test commands run, and afterwards the worktree is brought
//! back to it — tracked files the commands changed or deleted are put back as the task line has
//! them, and every file or directory they created (ignored or not: `__pycache__/`, `target/`,
//! coverage files) is removed, without ever following a link (see
//! [`butler_worker::nofollow`]). Nothing that existed before the verification is removed, so the
//! artifacts are neither recorded by the next attempt nor seen by its agent.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use butler_worker::git::TaskGit;

use crate::error::MaidError;

/// The worktree before verification: every path in it (the top `.git` link aside, symlinks not
/// followed) and the paths git saw changed.
#[derive(Debug)]
pub(super) struct TreeState {
    entries: BTreeSet<PathBuf>,
    changed: BTreeSet<String>,
}

impl TreeState {
    pub(crate) fn take(wt: &TaskGit) -> Result<Self, MaidError> {
        Ok(Self {
            entries: entries(wt.workdir())?,
            changed: wt.changed_paths()?.into_iter().collect(),
        })
    }

    /// Brings the worktree back to this state; returns the paths put back or removed (relative,
    /// sorted).
    pub(crate) fn restore(&self, wt: &TaskGit) -> Result<Vec<String>, MaidError> {
        let root = wt.workdir();
        let head = wt.head_sha()?;
        let mut touched = BTreeSet::new();
        let mut tracked = Vec::new();
        for path in wt.changed_paths()? {
            if !self.changed.contains(&path) && wt.is_tracked(&head, &path)? {
                tracked.push(path);
            }
        }
        wt.restore_paths(&head, &tracked)?;
        touched.extend(tracked);
        let now = entries(root)?;
        let created: BTreeSet<&PathBuf> = now.difference(&self.entries).collect();
        for path in &created {
            // Only the topmost of what was created: removing it removes what is inside.
            if path
                .ancestors()
                .skip(1)
                .any(|a| created.contains(&a.to_path_buf()))
            {
                continue;
            }
            // Relative to directory handles, never through a link: a directory swapped for a
            // link to the user's files names nothing to remove.
            let full = root.join(path);
            butler_worker::nofollow::remove(root, path)
                .map_err(|e| MaidError::io("removing", &full, e))?;
            touched.insert(path.to_string_lossy().into_owned());
        }
        Ok(touched.into_iter().collect())
    }
}

/// Every path under `root` relative to it, directories included, without descending into
/// symlinks; the top-level `.git` (the worktree's link to its git directory) is left out.
fn entries(root: &Path) -> Result<BTreeSet<PathBuf>, MaidError> {
    let mut found = BTreeSet::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let full = root.join(&dir);
        let listing = std::fs::read_dir(&full).map_err(|e| MaidError::io("reading", &full, e))?;
        for entry in listing {
            let entry = entry.map_err(|e| MaidError::io("reading", &full, e))?;
            let path = dir.join(entry.file_name());
            if path == Path::new(".git") {
                continue;
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                pending.push(path.clone());
            }
            found.insert(path);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_list_files_and_directories_but_not_the_git_link_or_symlinked_dirs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::fs::write(root.join("a/b/c.txt"), "c").expect("write");
        std::fs::write(root.join(".git"), "gitdir: x").expect("write");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("far"), "far").expect("write");
        std::os::unix::fs::symlink(outside.path(), root.join("link")).expect("symlink");
        let found: Vec<String> = entries(root)
            .expect("listed")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(found, ["a", "a/b", "a/b/c.txt", "link"]);
    }
}
