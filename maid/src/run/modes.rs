//! Permission bits the sandbox cannot guard. Landlock confines writes, not `chmod`: an agent (or
//! a verify command) may take the permissions off the repository's git data, the ledger or the
//! evidence (`chmod 000 .git/objects`), or off its own worktree, and every later git call or
//! ledger write would fail. The modes of Butler's state are recorded before an attempt and put
//! back after the agent and after the verify commands, before anything else reads them; the
//! worktree is made readable to its owner again. Both are named in the evidence. Every change
//! goes through [`butler_worker::nofollow`]: a link is never followed, never changed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use butler_worker::nofollow::{self, Dir, Kind};

use crate::contract::DirectGitFinding;

/// Paths named in the evidence at most (the count says how many in all).
pub(super) const NAMED: usize = 20;

/// The modes of Butler's state before an attempt.
#[derive(Debug, Clone, Default)]
pub(super) struct StateModes {
    /// Every entry of the trees (links left out) and its permission bits, parents before
    /// children.
    modes: BTreeMap<PathBuf, u32>,
}

impl StateModes {
    /// Records the modes of `trees` (each with everything in it, `skip` and what is below it
    /// left out) and of the single directories `singles`.
    pub(crate) fn take(trees: &[&Path], skip: &[&Path], singles: &[&Path]) -> Self {
        let mut modes = BTreeMap::new();
        for single in singles {
            if let Some(mode) = mode_of(single) {
                modes.insert(single.to_path_buf(), mode);
            }
        }
        for tree in trees {
            walk(tree, skip, &mut modes);
        }
        Self { modes }
    }

    /// Puts back every mode that changed (parents first, so that what is below them can be
    /// reached); returns the paths put back.
    pub(crate) fn restore(&self) -> Vec<PathBuf> {
        let mut restored = Vec::new();
        let mut parent: Option<(PathBuf, Dir)> = None;
        for (path, mode) in &self.modes {
            let (Some(dir_path), Some(name)) = (path.parent(), path.file_name()) else {
                continue;
            };
            if parent.as_ref().is_none_or(|(p, _)| p != dir_path) {
                parent = Dir::open(dir_path)
                    .ok()
                    .map(|d| (dir_path.to_path_buf(), d));
            }
            let Some((_, dir)) = &parent else {
                continue;
            };
            match dir.set_mode(name, *mode) {
                Ok(true) => restored.push(path.clone()),
                Ok(false) => {}
                Err(e) => tracing::warn!(path = %path.display(), %e, "could not put a mode back"),
            }
        }
        restored
    }
}

fn mode_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    (!meta.file_type().is_symlink()).then(|| meta.permissions().mode() & 0o7777)
}

fn walk(root: &Path, skip: &[&Path], modes: &mut BTreeMap<PathBuf, u32>) {
    use std::os::unix::fs::PermissionsExt;
    let mut pending = vec![root.to_path_buf()];
    if let Some(mode) = mode_of(root) {
        modes.insert(root.to_path_buf(), mode);
    }
    while let Some(dir) = pending.pop() {
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listing.flatten() {
            let path = entry.path();
            if skip.iter().any(|s| path.starts_with(s)) {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.is_dir() {
                pending.push(path.clone());
            }
            modes.insert(path, meta.permissions().mode() & 0o7777);
        }
    }
}

/// Makes everything in the worktree readable to its owner again (directories `u+rwx`, files
/// `u+r`; the bits git records, the executable ones, are left as they are) so that the Maid's
/// git can read the agent's work and remove what must go. Returns the paths changed, relative.
pub(super) fn repair_worktree(root: &Path) -> Vec<String> {
    let mut repaired = Vec::new();
    let Ok(top) = Dir::open(root) else {
        return repaired;
    };
    let mut pending: Vec<(Dir, PathBuf)> = vec![(top, PathBuf::new())];
    while let Some((dir, rel)) = pending.pop() {
        let Ok(names) = dir.list() else {
            continue;
        };
        for name in names {
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let Ok(Some(stat)) = dir.stat(&name) else {
                continue;
            };
            let mode = stat.st_mode & 0o7777;
            let kind = nofollow::kind_of(&stat);
            let wanted = match kind {
                Kind::Dir => mode | 0o700,
                Kind::File => mode | 0o400,
                Kind::Link | Kind::Other => continue,
            };
            let path = rel.join(&name);
            if wanted != mode && dir.set_mode(&name, wanted).unwrap_or(false) {
                repaired.push(path.to_string_lossy().into_owned());
            }
            if kind == Kind::Dir
                && let Ok(child) = dir.child(OsStr::new(&name))
            {
                pending.push((child, path));
            }
        }
    }
    repaired.sort();
    repaired
}

/// Puts back the modes of Butler's state and makes the worktree readable; the finding for the
/// evidence when anything had to change. `project` is the Brain's tree: paths inside it are
/// named relative to it.
pub(super) fn put_back(
    state: &StateModes,
    worktree: &Path,
    project: &Path,
) -> Option<DirectGitFinding> {
    let mut paths: Vec<String> = state.restore().iter().map(|p| shown(p, project)).collect();
    paths.extend(
        repair_worktree(worktree)
            .iter()
            .map(|rel| shown(&worktree.join(rel), project)),
    );
    if paths.is_empty() {
        return None;
    }
    for path in &paths {
        tracing::warn!(%path, "permissions taken away during the attempt were put back");
    }
    let (count, paths) = named(paths);
    Some(DirectGitFinding::ModesRestored { count, paths })
}

/// How many `paths` there were, and the first [`NAMED`].
pub(super) fn named(paths: Vec<String>) -> (u32, Vec<String>) {
    let count = u32::try_from(paths.len()).unwrap_or(u32::MAX);
    (count, paths.into_iter().take(NAMED).collect())
}

/// `path` as the evidence names it: relative to `base` when it is inside (`.` for `base`).
fn shown(path: &Path, base: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn set(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .expect("meta")
            .permissions()
            .mode()
            & 0o7777
    }

    #[test]
    fn changed_modes_of_the_state_are_put_back_parents_first_and_links_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("objects/ab")).expect("mkdir");
        std::fs::write(git.join("objects/ab/cdef"), "o").expect("write");
        set(&git.join("objects/ab/cdef"), 0o444);
        std::fs::create_dir_all(git.join("butler/worktrees/x")).expect("mkdir");
        std::fs::write(git.join("butler/ledger.db"), "l").expect("write");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "o").expect("write");
        set(&outside, 0o640);
        symlink(&outside, git.join("butler/link")).expect("symlink");
        let skip = git.join("butler/worktrees");
        let before = StateModes::take(&[&git], &[&skip], &[dir.path()]);
        set(&git.join("objects/ab/cdef"), 0o000);
        set(&git.join("butler/ledger.db"), 0o000);
        set(&git.join("objects"), 0o000);
        set(&skip.join("x"), 0o000);
        set(&outside, 0o600);
        let restored = before.restore();
        assert_eq!(
            restored,
            [
                git.join("butler/ledger.db"),
                git.join("objects"),
                git.join("objects/ab/cdef"),
            ]
        );
        assert_eq!(mode(&git.join("objects")), 0o755);
        assert_eq!(mode(&git.join("objects/ab/cdef")), 0o444);
        assert_eq!(mode(&skip.join("x")), 0o000, "skipped");
        assert_eq!(mode(&outside), 0o600, "a link's target is not the state's");
        assert!(before.restore().is_empty());
    }

    #[test]
    fn the_worktree_is_made_readable_without_touching_what_git_records() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).expect("mkdir");
        std::fs::write(root.join("src/deep/a.rs"), "a").expect("write");
        std::fs::write(root.join("run.sh"), "x").expect("write");
        set(&root.join("run.sh"), 0o311);
        set(&root.join("src/deep/a.rs"), 0o000);
        set(&root.join("src/deep"), 0o000);
        let repaired = repair_worktree(root);
        assert_eq!(repaired, ["run.sh", "src/deep", "src/deep/a.rs"]);
        assert_eq!(mode(&root.join("run.sh")), 0o711);
        assert_eq!(mode(&root.join("src/deep")), 0o700);
        assert_eq!(mode(&root.join("src/deep/a.rs")), 0o400);
        assert!(repair_worktree(root).is_empty());
    }
}
