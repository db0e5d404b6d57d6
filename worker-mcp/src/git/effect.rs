//! What a `work_vcs` run really did, compared with the repository before it: the second line
//! behind the prediction of [`super::loss`].
//!
//! Before a run Butler notes the repository's own configuration files, every reference and
//! stash entry, and the content of every uncommitted file (written as git objects through a
//! private index, so nothing in the project changes). After it:
//! - configuration keys the run changed are listed; the caller names the ones the run was not
//!   allowed to change and they are put back, value for value;
//! - commits no reference reaches any more, tags deleted or moved, stash entries dropped and
//!   uncommitted content that is nowhere in the working tree, the index or a new stash entry
//!   are listed as [`Lost`], and [`GitRepo::restore_lost`] puts them back (references to where
//!   they were, stash entries stored again, files written again).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::command::GitCommand;
use super::objects::ObjectStore;
use super::{GitError, GitRepo, Lost};

/// A private index file, removed when dropped.
pub(super) struct PrivateIndex(pub(super) PathBuf);

impl Drop for PrivateIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What a run may touch (from its command path); only those are noted and compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watch {
    /// The repository's configuration files.
    pub config: bool,
    /// References, tags and stash entries.
    pub refs: bool,
    /// Stash entries dropped count as lost (not for `stash pop`/`stash branch`, which drop an
    /// entry once its content is back in the tree).
    pub stashes: bool,
    /// Uncommitted files.
    pub files: bool,
}

/// Values of one configuration key, in file order (`None`: the key without `=`).
pub type Values = Vec<Option<String>>;

/// One configuration key whose values a run changed, in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigChange {
    /// As git lists it: section and name lower-case, a subsection as written.
    pub key: String,
    pub before: Values,
    pub after: Values,
}

/// The repository as it was before a run.
#[derive(Debug)]
pub struct Before {
    watch: Watch,
    config: Vec<(PathBuf, BTreeMap<String, Values>)>,
    refs: BTreeMap<String, String>,
    head: Option<String>,
    stashes: Vec<(String, String)>,
    /// Uncommitted files: path → (blob, mode).
    work: BTreeMap<String, (String, String)>,
}

/// What a run did beyond what it was allowed.
#[derive(Debug, Default)]
pub struct Effect {
    /// Configuration keys put back.
    pub config_put_back: Vec<String>,
    /// Work the run lost (not yet restored: see [`GitRepo::restore_lost`]).
    pub lost: Vec<Lost>,
    refs_back: Vec<(String, String)>,
    head_kept: Option<String>,
    stashes_back: Vec<(String, String)>,
    files_back: Vec<(String, String, String)>,
}

impl Effect {
    pub fn is_clean(&self) -> bool {
        self.config_put_back.is_empty() && self.lost.is_empty()
    }
}

fn parse_config_list(bytes: &[u8]) -> BTreeMap<String, Values> {
    let mut out: BTreeMap<String, Values> = BTreeMap::new();
    for entry in bytes.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let text = String::from_utf8_lossy(entry);
        let (key, value) = match text.split_once('\n') {
            Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
            None => (text.into_owned(), None),
        };
        out.entry(key).or_default().push(value);
    }
    out
}

impl GitRepo {
    fn config_files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.common_dir().join("config")];
        for dir in [self.common_dir(), self.git_dir()] {
            let worktree = dir.join("config.worktree");
            if !files.contains(&worktree) {
                files.push(worktree);
            }
        }
        files
    }

    fn config_of(&self, file: &Path) -> Result<BTreeMap<String, Values>, GitError> {
        if !file.exists() {
            return Ok(BTreeMap::new());
        }
        let out = GitCommand::new(self, "config list")
            .arg("config")
            .arg("--file")
            .arg(file)
            .args(["--list", "--null"])
            .run_ok()?;
        Ok(parse_config_list(&out.stdout))
    }

    /// Every reference and the object it names (`git for-each-ref`).
    pub(super) fn all_refs(&self) -> Result<BTreeMap<String, String>, GitError> {
        Ok(ObjectStore::open(self)?
            .targets("refs/")?
            .into_iter()
            // The operation log's entries are rewritten by other sessions meanwhile; they are
            // Butler's, never the run's effect.
            .filter(|(name, _)| !name.starts_with(super::OPLOG_REFS))
            .map(|(name, oid)| (name, oid.to_string()))
            .collect())
    }

    /// The commit `HEAD` names (`git rev-parse -q --verify HEAD^{commit}`).
    fn head_oid(&self) -> Result<Option<String>, GitError> {
        ObjectStore::open(self)?.head_commit()
    }

    fn stash_list(&self) -> Result<Vec<(String, String)>, GitError> {
        if !self.common_dir().join("logs/refs/stash").exists() {
            return Ok(Vec::new());
        }
        let out = GitCommand::new(self, "stash list")
            .args([
                "log",
                "--walk-reflogs",
                "--format=%H %gs",
                "refs/stash",
                "--",
            ])
            .run()?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(oid, msg)| (oid.to_owned(), msg.to_owned()))
            .collect())
    }

    /// The working tree as a tree object (tracked and untracked, not ignored), written through
    /// a private copy of the index; `None` when the project has no index-able content.
    pub(super) fn work_tree_object(&self) -> Result<Option<String>, GitError> {
        let index = self.private_index();
        self.work_tree_through(&index.0)
    }

    /// A fresh path for a private index in git's directory, removed when dropped.
    pub(super) fn private_index(&self) -> PrivateIndex {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PrivateIndex(
            self.git_dir()
                .join(format!("butler-effect-index-{}-{n}", std::process::id())),
        )
    }

    /// [`Self::work_tree_object`] through the private index `index`, which is left holding
    /// the working tree (with fresh stat data, so git can later move the files from there).
    pub(super) fn work_tree_through(&self, index: &Path) -> Result<Option<String>, GitError> {
        self.copy_index_to(index)?;
        self.work_tree_in(index)
    }

    /// Copies the project's index (when it has one) to the private index `index`.
    pub(super) fn copy_index_to(&self, index: &Path) -> Result<(), GitError> {
        let real = self.git_dir().join("index");
        if real.exists() {
            std::fs::copy(&real, index).map_err(|e| GitError::io("snapshot", e))?;
        }
        Ok(())
    }

    /// [`Self::work_tree_through`] on a private index already holding a copy of the project's.
    /// The private index is written in git's compact form (version 4) without its trailing
    /// checksum: nobody but Butler reads it, and its tree is then read from a third of the bytes,
    /// unhashed.
    pub(super) fn work_tree_in(&self, index: &Path) -> Result<Option<String>, GitError> {
        const PRIVATE: [&str; 4] = ["-c", "index.skipHash=true", "-c", "index.version=4"];
        let add = GitCommand::new(self, "snapshot add")
            .env("GIT_INDEX_FILE", index)
            .args(PRIVATE)
            .args(["add", "-A", "--ignore-errors", "--", "."])
            .run()?;
        if !add.status.success() && !index.exists() {
            return Ok(None);
        }
        self.index_tree(index, &PRIVATE)
    }

    /// The tree of the index file `index` (`git write-tree --missing-ok`, with the settings
    /// `config` it is written with), `None` when it has conflict stages: written in-process
    /// when libgit2 writes the same tree, else by git (see [`ObjectStore::index_tree`]).
    pub(super) fn index_tree(
        &self,
        index: &Path,
        config: &[&str],
    ) -> Result<Option<String>, GitError> {
        if let Some(tree) = ObjectStore::open(self)
            .ok()
            .and_then(|store| store.index_tree(index))
        {
            return Ok(Some(tree));
        }
        let out = GitCommand::new(self, "snapshot write-tree")
            .env("GIT_INDEX_FILE", index)
            .args(config)
            .args(["write-tree", "--missing-ok"])
            .run()?;
        let tree = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !tree.is_empty()).then_some(tree))
    }

    /// Blob ids and modes of `treeish`, by path (`-z` listing).
    fn blobs_of(&self, treeish: &str) -> Result<BTreeMap<String, (String, String)>, GitError> {
        let out = GitCommand::new(self, "ls-tree")
            .args(["ls-tree", "-r", "-z", "--full-tree", treeish])
            .run()?;
        if !out.status.success() {
            return Ok(BTreeMap::new());
        }
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let text = String::from_utf8_lossy(entry);
                let (meta, path) = text.split_once('\t')?;
                let mut parts = meta.split(' ');
                let mode = parts.next()?.to_owned();
                let kind = parts.next()?;
                let oid = parts.next()?.to_owned();
                (kind == "blob").then(|| (path.to_owned(), (oid, mode)))
            })
            .collect())
    }

    fn unmerged_paths(&self) -> Result<BTreeSet<String>, GitError> {
        let out = GitCommand::new(self, "ls-files")
            .args(["ls-files", "-u", "-z"])
            .run()?;
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|e| {
                let text = String::from_utf8_lossy(e);
                text.split_once('\t').map(|(_, p)| p.to_owned())
            })
            .collect())
    }

    fn holds_markers(&self, path: &str) -> bool {
        let Ok(bytes) = std::fs::read(self.workdir().join(path)) else {
            return false;
        };
        let text = String::from_utf8_lossy(&bytes);
        !super::marker_starts(text.lines().enumerate()).is_empty()
    }

    /// Every uncommitted file — tracked edits, untracked files (not ignored), deletions — with
    /// what it holds now (a blob id, or `deleted`): what recording all current work would
    /// record, so that an approval can be bound to exactly that.
    pub fn uncommitted_contents(&self) -> Result<Vec<(String, String)>, GitError> {
        let Some(tree) = self.work_tree_object()? else {
            return Ok(Vec::new());
        };
        let now = self.blobs_of(&tree)?;
        let committed = match self.head_oid()? {
            Some(head) => self.blobs_of(&head)?,
            None => BTreeMap::new(),
        };
        let mut out: Vec<(String, String)> = now
            .iter()
            .filter(|(path, blob)| committed.get(*path) != Some(*blob))
            .map(|(path, (oid, _))| (path.clone(), oid.clone()))
            .collect();
        out.extend(
            committed
                .keys()
                .filter(|path| !now.contains_key(*path))
                .map(|path| (path.clone(), "deleted".to_owned())),
        );
        out.sort();
        Ok(out)
    }

    /// Notes what `watch` covers, before a run.
    pub fn effect_before(&self, watch: Watch) -> Result<Before, GitError> {
        let mut before = Before {
            watch,
            config: Vec::new(),
            refs: BTreeMap::new(),
            head: None,
            stashes: Vec::new(),
            work: BTreeMap::new(),
        };
        if watch.config {
            for file in self.config_files() {
                let values = self.config_of(&file)?;
                before.config.push((file, values));
            }
        }
        if watch.refs || watch.files {
            before.refs = self.all_refs()?;
            before.head = self.head_oid()?;
            before.stashes = self.stash_list()?;
        }
        if watch.files
            && let Some(tree) = self.work_tree_object()?
        {
            let now = self.blobs_of(&tree)?;
            let committed = match &before.head {
                Some(head) => self.blobs_of(head)?,
                None => BTreeMap::new(),
            };
            let unmerged = self.unmerged_paths()?;
            before.work = now
                .into_iter()
                .filter(|(path, blob)| committed.get(path) != Some(blob))
                // A conflicted file still holding git's markers is git's, not work.
                .filter(|(path, _)| !(unmerged.contains(path) && self.holds_markers(path)))
                .collect();
        }
        Ok(before)
    }

    /// Compares the repository with `before`. Configuration keys `disallowed` names (from all
    /// the changes) are put back at once; lost work is listed, to be put back with
    /// [`GitRepo::restore_lost`] when the caller decides so.
    pub fn effect_after(
        &self,
        before: &Before,
        disallowed: &dyn Fn(&[ConfigChange]) -> Vec<String>,
    ) -> Result<Effect, GitError> {
        let mut effect = Effect::default();
        for (file, old) in &before.config {
            let new = self.config_of(file)?;
            let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
            let changes: Vec<ConfigChange> = keys
                .into_iter()
                .filter(|k| old.get(*k) != new.get(*k))
                .map(|k| ConfigChange {
                    key: k.clone(),
                    before: old.get(k).cloned().unwrap_or_default(),
                    after: new.get(k).cloned().unwrap_or_default(),
                })
                .collect();
            if changes.is_empty() {
                continue;
            }
            for key in disallowed(&changes) {
                let Some(change) = changes.iter().find(|c| c.key == key) else {
                    continue;
                };
                self.put_config_back(file, change)?;
                effect.config_put_back.push(key);
            }
        }
        if before.watch.refs || before.watch.files {
            self.lost_history(before, &mut effect)?;
        }
        if before.watch.files && !before.work.is_empty() {
            self.lost_files(before, &mut effect)?;
        }
        Ok(effect)
    }

    fn put_config_back(&self, file: &Path, change: &ConfigChange) -> Result<(), GitError> {
        // Exit 5: the key was not there.
        GitCommand::new(self, "config unset")
            .arg("config")
            .arg("--file")
            .arg(file)
            .args(["--unset-all", &change.key])
            .run()?;
        for value in &change.before {
            GitCommand::new(self, "config add")
                .arg("config")
                .arg("--file")
                .arg(file)
                .args(["--add", &change.key, value.as_deref().unwrap_or("true")])
                .run_ok()?;
        }
        Ok(())
    }

    fn lost_history(&self, before: &Before, effect: &mut Effect) -> Result<(), GitError> {
        let refs = self.all_refs()?;
        let head = self.head_oid()?;
        let stashes = self.stash_list()?;
        let mut moved: Vec<(&String, &String)> = before
            .refs
            .iter()
            .filter(|(name, oid)| refs.get(*name) != Some(*oid))
            .collect();
        let head_moved = before.head.is_some() && before.head != head;
        if moved.is_empty() && !head_moved && stashes == before.stashes {
            return Ok(());
        }
        // Tags are work of their own: a tag deleted or moved is lost even if its commit is
        // still reached.
        for (name, oid) in &moved {
            if let Some(tag) = name.strip_prefix("refs/tags/") {
                effect.lost.push(Lost::Tag {
                    name: tag.to_owned(),
                    target: oid.chars().take(12).collect(),
                });
                effect.refs_back.push(((*name).clone(), (*oid).clone()));
            }
        }
        moved.retain(|(name, _)| !name.starts_with("refs/tags/") && *name != "refs/stash");
        let kept_stashes: Vec<String> = stashes.iter().map(|(oid, _)| oid.clone()).collect();
        let unreached = |tips: &[&String]| -> Result<Vec<String>, GitError> {
            if tips.is_empty() {
                return Ok(Vec::new());
            }
            let mut args: Vec<&str> = vec!["rev-list"];
            args.extend(tips.iter().map(|t| t.as_str()));
            // What only the operation log reaches counts as lost (see `loss.rs`).
            let exclude = format!("--exclude={}*", super::OPLOG_REFS);
            args.extend(["--not", exclude.as_str(), "--all"]);
            args.extend(kept_stashes.iter().map(String::as_str));
            let out = GitCommand::new(self, "rev-list").args(&args).run()?;
            Ok(String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_owned)
                .collect())
        };
        // Commits whose change now lives on as another commit where the ref went (a rebase,
        // `pull --rebase`, an amend of what was replayed) were carried, not lost.
        let replayed = |from: &str, to: Option<&String>| -> Result<BTreeSet<String>, GitError> {
            let Some(to) = to else {
                return Ok(BTreeSet::new());
            };
            let out = GitCommand::new(self, "cherry")
                .args(["cherry", to.as_str(), from])
                .run()?;
            Ok(String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| l.strip_prefix("- "))
                .map(str::to_owned)
                .collect())
        };
        let mut lost_commits: BTreeSet<String> = BTreeSet::new();
        for (name, oid) in &moved {
            let carried = replayed(oid, refs.get(*name))?;
            let gone: Vec<String> = unreached(&[oid])?
                .into_iter()
                .filter(|c| !carried.contains(c))
                .collect();
            if !gone.is_empty() {
                lost_commits.extend(gone);
                effect.refs_back.push(((*name).clone(), (*oid).clone()));
            }
        }
        if head_moved && let Some(old) = &before.head {
            let carried = replayed(old, head.as_ref())?;
            let gone: Vec<String> = unreached(&[old])?
                .into_iter()
                .filter(|c| !carried.contains(c))
                .collect();
            if !gone.is_empty() {
                lost_commits.extend(gone);
                effect.head_kept = Some(old.clone());
            }
        }
        if !lost_commits.is_empty() {
            let mut args = vec![
                "log",
                "--no-walk=unsorted",
                "--no-decorate",
                "--format=%h %s",
            ];
            args.extend(lost_commits.iter().take(10).map(String::as_str));
            let out = GitCommand::new(self, "log").args(&args).run()?;
            effect.lost.push(Lost::Commits {
                count: lost_commits.len(),
                commits: String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_owned)
                    .collect(),
            });
        }
        if before.watch.stashes {
            for (oid, message) in &before.stashes {
                if !stashes.iter().any(|(o, _)| o == oid) && unreached(&[oid])?.contains(oid) {
                    effect.lost.push(Lost::Stash {
                        name: oid.chars().take(12).collect(),
                        message: message.clone(),
                        files: Vec::new(),
                    });
                    effect.stashes_back.push((oid.clone(), message.clone()));
                }
            }
        }
        Ok(())
    }

    fn lost_files(&self, before: &Before, effect: &mut Effect) -> Result<(), GitError> {
        let mut present: BTreeSet<String> = BTreeSet::new();
        if let Some(tree) = self.work_tree_object()? {
            present.extend(self.blobs_of(&tree)?.into_values().map(|(oid, _)| oid));
        }
        let index = GitCommand::new(self, "ls-files")
            .args(["ls-files", "-s", "-z"])
            .run()?;
        for entry in index.stdout.split(|b| *b == 0) {
            let text = String::from_utf8_lossy(entry);
            if let Some(oid) = text.split(' ').nth(1) {
                present.insert(oid.to_owned());
            }
        }
        // A new stash entry holds the work it took (its tree, index and untracked parents).
        if let Some((top, _)) = self.stash_list()?.first()
            && !before.stashes.iter().any(|(o, _)| o == top)
        {
            for part in ["", "^2", "^3"] {
                let rev = format!("{top}{part}");
                present.extend(self.blobs_of(&rev)?.into_values().map(|(oid, _)| oid));
            }
        }
        if let Some(head) = self.head_oid()? {
            present.extend(self.blobs_of(&head)?.into_values().map(|(oid, _)| oid));
        }
        for (path, (oid, mode)) in &before.work {
            if !present.contains(oid) {
                effect.lost.push(Lost::Edits { path: path.clone() });
                effect
                    .files_back
                    .push((path.clone(), oid.clone(), mode.clone()));
            }
        }
        Ok(())
    }

    /// Puts back what `effect` found lost: references where they were, a detached HEAD's
    /// commits kept under `refs/butler/kept/`, stash entries stored again, files written again.
    pub fn restore_lost(&self, effect: &Effect) -> Result<(), GitError> {
        for (name, oid) in &effect.refs_back {
            GitCommand::new(self, "update-ref")
                .args([
                    "update-ref",
                    "-m",
                    "butler: put back after work_vcs",
                    name,
                    oid,
                ])
                .run_ok()?;
        }
        if let Some(old) = &effect.head_kept {
            let name = format!("refs/butler/kept/{}", &old[..old.len().min(12)]);
            GitCommand::new(self, "update-ref")
                .args(["update-ref", &name, old])
                .run_ok()?;
        }
        for (oid, message) in effect.stashes_back.iter().rev() {
            GitCommand::new(self, "stash store")
                .args(["stash", "store", "-m", message, oid])
                .run_ok()?;
        }
        for (path, oid, mode) in &effect.files_back {
            let blob = GitCommand::new(self, "cat-file")
                .args(["cat-file", "blob", oid])
                .run_ok()?;
            // The run may have checked out a link where a directory was: a path whose parents
            // now lead out of the project is written back at the top instead, never through.
            let target = match self.path_in_repo(path) {
                Ok(inside) => self.workdir().join(inside.as_path()),
                Err(_) => self
                    .workdir()
                    .join(format!("{}.butler-restored", path.replace('/', "_"))),
            };
            if let Ok(meta) = std::fs::symlink_metadata(&target)
                && !meta.is_dir()
            {
                std::fs::remove_file(&target).map_err(|e| GitError::io("restore", e))?;
            }
            let target = if target.is_dir() {
                self.workdir().join(format!("{path}.butler-restored"))
            } else {
                target
            };
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| GitError::io("restore", e))?;
            }
            if mode == "120000" {
                let link = String::from_utf8_lossy(&blob.stdout).into_owned();
                std::os::unix::fs::symlink(link, &target)
                    .map_err(|e| GitError::io("restore", e))?;
            } else {
                std::fs::write(&target, &blob.stdout).map_err(|e| GitError::io("restore", e))?;
                if mode == "100755" {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                        .map_err(|e| GitError::io("restore", e))?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use butler_testkit::World;

    use super::*;

    fn repo() -> (World, GitRepo) {
        crate::git::test_repo::committed()
    }

    fn everything() -> Watch {
        Watch {
            config: true,
            refs: true,
            stashes: true,
            files: true,
        }
    }

    #[test]
    fn config_lists_read_keys_and_bare_values() {
        let listed = b"core.bare\nfalse\0remote.Origin.url\nx\0remote.Origin.url\ny\0flag\0";
        let map = parse_config_list(listed);
        assert_eq!(map["core.bare"], vec![Some("false".to_owned())]);
        assert_eq!(
            map["remote.Origin.url"],
            vec![Some("x".to_owned()), Some("y".to_owned())]
        );
        assert_eq!(map["flag"], vec![None]);
    }

    #[test]
    fn disallowed_keys_are_put_back_value_for_value_and_the_rest_stays() {
        let (w, repo) = repo();
        let top = repo.workdir().to_path_buf();
        w.git(&top, &["config", "--add", "x.multi", "1"]);
        w.git(&top, &["config", "--add", "x.multi", "2"]);
        let before = repo.effect_before(everything()).expect("before");
        w.git(&top, &["config", "core.fsmonitor", "touch marker"]);
        w.git(&top, &["config", "--unset-all", "x.multi"]);
        w.git(&top, &["config", "user.name", "Someone"]);
        let effect = repo
            .effect_after(&before, &|changes| {
                changes
                    .iter()
                    .filter(|c| c.key != "user.name")
                    .map(|c| c.key.clone())
                    .collect()
            })
            .expect("after");
        assert_eq!(effect.config_put_back, ["core.fsmonitor", "x.multi"]);
        assert!(effect.lost.is_empty(), "{:?}", effect.lost);
        let config = w.git(&top, &["config", "--list", "--local"]);
        assert!(!config.contains("fsmonitor"), "{config}");
        assert!(config.contains("x.multi=1\nx.multi=2"), "{config}");
        assert!(config.contains("user.name=Someone"), "{config}");
    }

    #[test]
    fn commits_tags_stashes_and_edits_lost_are_found_and_put_back() {
        let (w, repo) = repo();
        let top = repo.workdir().to_path_buf();
        w.git(&top, &["switch", "-q", "-c", "side"]);
        std::fs::write(top.join("b.txt"), "side\n").expect("write");
        let side = w.commit(&top, "only on side");
        w.git(&top, &["switch", "-q", "main"]);
        w.git(&top, &["tag", "v1"]);
        std::fs::write(top.join("a.txt"), "stashed\n").expect("write");
        w.git(&top, &["stash", "-q"]);
        std::fs::write(top.join("a.txt"), "my edit\n").expect("write");
        std::fs::write(top.join("new.txt"), "untracked work\n").expect("write");
        let before = repo.effect_before(everything()).expect("before");
        w.git(&top, &["branch", "-D", "side"]);
        w.git(&top, &["tag", "-d", "v1"]);
        w.git(&top, &["stash", "drop", "-q"]);
        w.git(&top, &["checkout", "-q", "--", "a.txt"]);
        std::fs::remove_file(top.join("new.txt")).expect("remove");
        let effect = repo.effect_after(&before, &|_| Vec::new()).expect("after");
        let shown: Vec<String> = effect.lost.iter().map(Lost::describe).collect();
        assert_eq!(effect.lost.len(), 5, "{shown:?}");
        repo.restore_lost(&effect).expect("restore");
        assert_eq!(w.git(&top, &["rev-parse", "side"]).trim(), side);
        assert!(!w.git(&top, &["tag", "-l", "v1"]).trim().is_empty());
        assert!(w.git(&top, &["stash", "list"]).contains("WIP on main"));
        assert_eq!(
            std::fs::read_to_string(top.join("a.txt")).expect("a"),
            "my edit\n"
        );
        assert_eq!(
            std::fs::read_to_string(top.join("new.txt")).expect("new"),
            "untracked work\n"
        );
        // Nothing of it was lost now.
        let again = repo.effect_after(&before, &|_| Vec::new()).expect("after");
        assert!(again.lost.is_empty(), "{:?}", again.lost);
    }

    #[test]
    fn a_lost_file_is_never_written_back_through_a_link_out_of_the_project() {
        let (w, repo) = repo();
        let top = repo.workdir().to_path_buf();
        std::fs::create_dir(top.join("dir")).expect("mkdir");
        std::fs::write(top.join("dir/x.txt"), "committed\n").expect("write");
        w.commit(&top, "dir");
        std::fs::write(top.join("dir/x.txt"), "my edit\n").expect("write");
        let before = repo.effect_before(everything()).expect("before");
        let outside = w.path("outside");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::remove_dir_all(top.join("dir")).expect("rm");
        std::os::unix::fs::symlink(&outside, top.join("dir")).expect("link");
        let effect = repo.effect_after(&before, &|_| Vec::new()).expect("after");
        assert_eq!(effect.lost.len(), 1, "{:?}", effect.lost);
        repo.restore_lost(&effect).expect("restore");
        assert!(!outside.join("x.txt").exists(), "written through the link");
        assert_eq!(
            std::fs::read_to_string(top.join("dir_x.txt.butler-restored")).expect("kept"),
            "my edit\n"
        );
    }

    #[test]
    fn commits_replayed_by_a_rebase_are_carried_not_lost() {
        let (w, repo) = repo();
        let top = repo.workdir().to_path_buf();
        w.git(&top, &["switch", "-q", "-c", "side"]);
        std::fs::write(top.join("b.txt"), "side\n").expect("write");
        w.commit(&top, "on side");
        w.git(&top, &["switch", "-q", "main"]);
        std::fs::write(top.join("c.txt"), "main\n").expect("write");
        w.commit(&top, "on main");
        w.git(&top, &["switch", "-q", "side"]);
        let before = repo.effect_before(everything()).expect("before");
        w.git(&top, &["rebase", "-q", "main"]);
        let effect = repo.effect_after(&before, &|_| Vec::new()).expect("after");
        assert!(effect.lost.is_empty(), "{:?}", effect.lost);
    }

    #[test]
    fn work_carried_into_a_stash_or_another_path_is_not_lost() {
        let (w, repo) = repo();
        let top = repo.workdir().to_path_buf();
        std::fs::write(top.join("a.txt"), "my edit\n").expect("write");
        let before = repo.effect_before(everything()).expect("before");
        w.git(&top, &["stash", "-q"]);
        let effect = repo.effect_after(&before, &|_| Vec::new()).expect("after");
        assert!(effect.lost.is_empty(), "{:?}", effect.lost);
        w.git(&top, &["stash", "pop", "-q"]);
        let before = repo.effect_before(everything()).expect("before");
        w.git(&top, &["mv", "a.txt", "moved.txt"]);
        let effect = repo.effect_after(&before, &|_| Vec::new()).expect("after");
        assert!(effect.lost.is_empty(), "{:?}", effect.lost);
    }
}
