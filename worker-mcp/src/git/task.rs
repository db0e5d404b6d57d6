//! Git for the ImplementMaid's tasks: the task's worktree and branch, the baseline taken before
//! an attempt, detection and restoration of what the agent did to git, the Maid's own commit,
//! and retiring a finished task (bringing it into the Brain's line is a line merge:
//! [`super::line::merge_line`]).
//!
//! Every process is hardened (see `hardened.rs`): the git directories are named, never
//! discovered through the worktree's `.git` file; only the repository's own configuration is
//! read; no hook, fsmonitor, external diff or `textconv` runs; nested repositories are never
//! entered nor added. Files are removed and written back relative to directory handles, never
//! through a link (see [`crate::nofollow`]).
//!
//! git that writes an index runs through [`TaskGit::run_held`] with the working tree's
//! [`TreeLock`] (see `lock.rs`); [`TaskGit::run`] is for git that never takes `index.lock`
//! (reads of refs, logs and objects, ref updates).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::hardened;
use super::lock::TreeLock;
use crate::contract::Tampering;

/// Where the tasks' lines are (`refs/heads/butler/task-<id>`).
const TASK_LINES: &str = "refs/heads/butler/task-";

/// What git sees in a working tree ([`TaskGit::tree_status`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeStatus {
    /// Changed paths against HEAD (staged, unstaged, untracked; ignore rules respected),
    /// relative to the top, sorted.
    pub changed: Vec<String>,
    /// Untracked directories that hold a repository of their own (a `.git` inside, as a
    /// directory or a pointer file), relative, sorted. Git would add each as a gitlink (mode
    /// 160000) and run git inside it; they are never added, set aside nor entered.
    pub nested: Vec<String>,
}

/// A repository (the Brain's tree or a task's worktree) driven with hardened git.
#[derive(Debug, Clone)]
pub struct TaskGit {
    repo: GitRepo,
}

/// The directory of a repository's task worktrees under `root` (the user's data directory's
/// `butler/worktrees`, outside every git directory): `<name>-<hash>`, where `name` is the
/// project directory's name (letters, digits, `.`, `_`, `-`; at most 32) and `hash` a 64-bit
/// FNV-1a of the canonical path of the repository's common git directory — stable for a
/// repository, distinct between repositories.
pub fn task_worktrees_dir(root: &Path, common_dir: &Path) -> PathBuf {
    let common = common_dir
        .canonicalize()
        .unwrap_or_else(|_| common_dir.to_path_buf());
    let project = if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().and_then(Path::file_name)
    } else {
        common.file_name()
    };
    let name: String = project
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(32)
        .collect();
    let name = name.trim_start_matches('.');
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in common.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name = if name.is_empty() { "repo" } else { name };
    root.join(format!("{name}-{hash:016x}"))
}

impl TaskGit {
    /// Opens the repository whose working tree contains `path`.
    pub fn open(path: &Path) -> Result<TaskGit, GitError> {
        Ok(TaskGit {
            repo: GitRepo::discover(path)?,
        })
    }

    /// Wraps an already opened handle (its extra command environment is kept).
    pub fn from_repo(repo: GitRepo) -> TaskGit {
        TaskGit { repo }
    }

    /// The top level of the working tree.
    pub fn workdir(&self) -> &Path {
        self.repo.workdir()
    }

    /// This working tree's own git directory.
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The git directory shared by all worktrees.
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }

    /// The repository handle (for the git worker's other operations, e.g. merging lines).
    pub fn repo(&self) -> &GitRepo {
        &self.repo
    }

    fn command(&self, op: &'static str) -> GitCommand {
        hardened::command(&self.repo, op)
    }

    /// Runs hardened git that never takes `index.lock`; stdout (lossy UTF-8) on success.
    fn run<I, S>(&self, op: &'static str, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.command(op).args(args).run_ok()?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Like [`TaskGit::run`], but a non-zero exit is `Ok(None)`.
    fn try_run<I, S>(&self, op: &'static str, args: I) -> Result<Option<String>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.command(op).args(args).run()?;
        Ok(out
            .status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned()))
    }

    /// Hardened git that writes this working tree's index: `held` must be its lock, and an
    /// `index.lock` of something that is not Butler is waited for (`IndexLocked` if it stays).
    fn held_command(&self, held: &TreeLock, op: &'static str) -> Result<GitCommand, GitError> {
        self.repo.wait_for_index(held)?;
        Ok(self.command(op))
    }

    /// Runs hardened git that writes this working tree's index, holding its lock.
    fn run_held<I, S>(&self, held: &TreeLock, op: &'static str, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.held_command(held, op)?.args(args).run_ok()?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Butler's lock on this working tree (waits for another Butler that holds it).
    fn lock(&self) -> Result<TreeLock, GitError> {
        self.repo.lock_tree()
    }

    /// The commit `what` names, if any.
    pub fn rev(&self, what: &str) -> Result<Option<String>, GitError> {
        Ok(self
            .try_run("rev-parse", ["rev-parse", "--verify", "-q", what])?
            .map(|s| s.trim().to_owned()))
    }

    /// The commit HEAD points at (an error when there is none).
    pub fn head_sha(&self) -> Result<String, GitError> {
        self.rev("HEAD^{commit}")?.ok_or(GitError::UnknownCommit)
    }

    /// `refs/heads/x`, or `None` when HEAD is detached.
    pub fn head_ref(&self) -> Result<Option<String>, GitError> {
        Ok(self
            .try_run("symbolic-ref", ["symbolic-ref", "-q", "HEAD"])?
            .map(|s| s.trim().to_owned()))
    }

    /// Changed paths against HEAD (staged, unstaged, untracked; ignore rules respected),
    /// relative to the top, sorted; nested repositories left out (see [`TaskGit::tree_status`]).
    pub fn changed_paths(&self) -> Result<Vec<String>, GitError> {
        Ok(self.tree_status()?.changed)
    }

    /// What git sees changed in the working tree, and the nested repositories in it.
    pub fn tree_status(&self) -> Result<TreeStatus, GitError> {
        self.tree_status_with(self.repo.refresh())
    }

    /// [`Self::tree_status`] of a tree others work in (the Brain's, read by a task): git does
    /// not write its index, and Butler's lock on it is not taken, so tasks do not queue on it.
    pub fn tree_status_unlocked(&self) -> Result<TreeStatus, GitError> {
        self.tree_status_with(crate::git::lock::Refresh::without_lock())
    }

    fn tree_status_with(&self, refresh: crate::git::lock::Refresh) -> Result<TreeStatus, GitError> {
        let out = refresh
            .apply(self.command("status"))
            .args([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .run_ok()?;
        let out = String::from_utf8_lossy(&out.stdout);
        let mut status = TreeStatus::default();
        let mut changed = BTreeSet::new();
        let mut nested = BTreeSet::new();
        for entry in out.split('\0').filter(|e| e.len() > 3) {
            let path = &entry[3..];
            // With every untracked file listed, git shows a directory only when it holds a
            // repository of its own (it stops there and would add it as a gitlink).
            match path.strip_suffix('/') {
                Some(dir) => nested.insert(dir.to_owned()),
                None => changed.insert(path.to_owned()),
            };
        }
        status.changed = changed.into_iter().collect();
        status.nested = nested.into_iter().collect();
        Ok(status)
    }

    /// Every path the index tracks, relative to the top, in the index's order.
    pub fn tracked_paths(&self) -> Result<Vec<String>, GitError> {
        let out = self
            .command("ls-files")
            .args(["ls-files", "-z"])
            .max_stdout(256 << 20)
            .run_ok()?;
        Ok(out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }

    /// Every ref and the object it points at.
    pub(crate) fn refs(&self) -> Result<BTreeMap<String, String>, GitError> {
        let out = self.run(
            "for-each-ref",
            ["for-each-ref", "--format=%(refname) %(objectname)"],
        )?;
        Ok(out
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(name, sha)| (name.to_owned(), sha.to_owned()))
            .collect())
    }

    /// Subjects of the commits in `from..to`, newest first.
    pub(crate) fn subjects(&self, from: &str, to: &str) -> Result<Vec<String>, GitError> {
        let out = self.run("log", ["log", "--format=%s", &format!("{from}..{to}")])?;
        Ok(out.lines().map(str::to_owned).collect())
    }

    /// Full messages of the commits in `from..to`, oldest first, with their ids.
    pub fn commits_between(&self, from: &str, to: &str) -> Result<Vec<(String, String)>, GitError> {
        let out = self.run(
            "log",
            [
                "log",
                "--reverse",
                "--format=%H%x00%B%x00",
                &format!("{from}..{to}"),
            ],
        )?;
        let parts: Vec<&str> = out.split('\0').collect();
        Ok(parts
            .chunks(2)
            .filter(|c| c.len() == 2)
            .map(|c| (c[0].trim().to_owned(), c[1].to_owned()))
            .filter(|(sha, _)| !sha.is_empty())
            .collect())
    }

    /// Whether `ancestor` is an ancestor of (or equal to) `of`.
    pub fn is_ancestor(&self, ancestor: &str, of: &str) -> Result<bool, GitError> {
        Ok(self
            .try_run("merge-base", ["merge-base", "--is-ancestor", ancestor, of])?
            .is_some())
    }

    /// Whether `head` has `path`.
    pub fn is_tracked(&self, head: &str, path: &str) -> Result<bool, GitError> {
        Ok(self
            .try_run("cat-file", ["cat-file", "-e", &format!("{head}:{path}")])?
            .is_some())
    }

    /// Takes `paths` out of the index (their files are not touched).
    pub fn unstage(&self, paths: &[String]) -> Result<(), GitError> {
        if paths.is_empty() || self.rev("HEAD")?.is_none() {
            return Ok(());
        }
        let held = self.lock()?;
        let mut reset = vec!["reset", "-q", "--"];
        reset.extend(paths.iter().map(String::as_str));
        self.run_held(&held, "reset", &reset).map(drop)
    }

    /// Creates branch `branch` at `base` checked out in a new worktree at `path` (which must
    /// not exist), and opens it. The worktree is registered under this tree's lock (git reads
    /// every other worktree's metadata while it adds one, and fails on one another `worktree
    /// add` is still writing: tasks started side by side), without its checkout; the files are
    /// then checked out under the new worktree's own lock, while other tasks go on.
    pub fn add_worktree(&self, path: &Path, branch: &str, base: &str) -> Result<TaskGit, GitError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| GitError::io("worktree", e))?;
        }
        {
            let _held = self.lock()?;
            self.run(
                "worktree",
                [
                    OsStr::new("worktree"),
                    OsStr::new("add"),
                    OsStr::new("-q"),
                    OsStr::new("--no-checkout"),
                    OsStr::new("-b"),
                    OsStr::new(branch),
                    path.as_os_str(),
                    OsStr::new(base),
                ],
            )?;
        }
        let wt = self
            .worktree_at(path)?
            .ok_or_else(|| GitError::failed("worktree", "the new worktree is not registered"))?;
        let held = wt.lock()?;
        wt.run_held(&held, "read-tree", ["read-tree", "--reset", "-u", "HEAD"])?;
        drop(held);
        Ok(wt)
    }

    /// The worktree of this repository at `path`, with the git directory git registered for it
    /// (`<common dir>/worktrees/*/gitdir` names `<path>/.git`): nothing in the worktree, its
    /// `.git` file included, is read to find it. `None` when no registered worktree is there.
    pub(crate) fn worktree_at(&self, path: &Path) -> Result<Option<TaskGit>, GitError> {
        let Ok(want) = path.canonicalize() else {
            return Ok(None);
        };
        let Ok(entries) = std::fs::read_dir(self.common_dir().join("worktrees")) else {
            return Ok(None);
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            let Ok(text) = std::fs::read_to_string(dir.join("gitdir")) else {
                continue;
            };
            let pointer = dir.join(text.trim_end_matches(['\n', '\r']));
            let Some(top) = pointer.parent() else {
                continue;
            };
            if top.canonicalize().is_ok_and(|t| t == want) {
                let git_dir = dir
                    .canonicalize()
                    .map_err(|e| GitError::io("worktree", e))?;
                return Ok(Some(TaskGit {
                    repo: GitRepo::from_dirs(
                        want,
                        git_dir,
                        self.common_dir().to_path_buf(),
                        self.repo.command_env().to_vec(),
                    ),
                }));
            }
        }
        Ok(None)
    }

    /// Where the worktree that has `branch` checked out is, if one does.
    pub fn worktree_of_branch(&self, branch: &str) -> Result<Option<PathBuf>, GitError> {
        let out = self.run("worktree", ["worktree", "list", "--porcelain", "-z"])?;
        let wanted = format!("branch refs/heads/{branch}");
        let mut current: Option<PathBuf> = None;
        for field in out.split('\0') {
            if let Some(path) = field.strip_prefix("worktree ") {
                current = Some(PathBuf::from(path));
            } else if field == wanted {
                return Ok(current);
            }
        }
        Ok(None)
    }

    /// Writes the worktree's `.git` pointer file back when it no longer points at this
    /// worktree's git directory (changed, removed, or replaced by a link or a directory).
    /// Returns whether it had to. Run before any other git in the worktree.
    pub(crate) fn restore_worktree_link(&self) -> Result<bool, GitError> {
        let link = self.workdir().join(".git");
        let gitdir = self.git_dir();
        let intact = std::fs::symlink_metadata(&link).is_ok_and(|m| m.is_file())
            && std::fs::read_to_string(&link).is_ok_and(|text| {
                text.trim_end()
                    .strip_prefix("gitdir: ")
                    .is_some_and(|p| same_path(Path::new(p), gitdir))
            });
        if intact {
            return Ok(false);
        }
        // Replaced, never written through: a link there is not followed.
        crate::nofollow::replace_file(
            &link,
            format!("gitdir: {}\n", gitdir.display()).as_bytes(),
            0o644,
        )
        .map_err(|e| GitError::io("worktree link", e))?;
        Ok(true)
    }

    /// The paths `to` changed since it forked from `from` (`git diff from...to`: what bringing
    /// `to` in would change), sorted. No diff driver or textconv runs.
    pub fn changed_since_fork(&self, from: &str, to: &str) -> Result<Vec<String>, GitError> {
        let range = format!("{from}...{to}");
        let out = self.run(
            "diff",
            [
                "diff",
                "--name-only",
                "-z",
                "--no-renames",
                "--no-ext-diff",
                "--no-textconv",
                &range,
            ],
        )?;
        let paths: BTreeSet<String> = out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(paths.into_iter().collect())
    }

    /// The patch between two commits (text, binary shown as such).
    pub fn diff(&self, from: &str, to: &str) -> Result<String, GitError> {
        self.run("diff", ["diff", "--no-ext-diff", "--no-textconv", from, to])
    }

    /// Puts paths back as they are in `head`; paths `head` does not have are removed.
    pub fn restore_paths(&self, head: &str, paths: &[String]) -> Result<(), GitError> {
        let held = self.lock()?;
        self.restore_paths_held(&held, head, paths)
    }

    fn restore_paths_held(
        &self,
        held: &TreeLock,
        head: &str,
        paths: &[String],
    ) -> Result<(), GitError> {
        for path in paths {
            if self.is_tracked(head, path)? {
                self.run_held(held, "checkout", ["checkout", "-q", head, "--", path])?;
            } else {
                // Never through a link: a parent swapped for one names nothing to remove.
                crate::nofollow::remove(self.workdir(), Path::new(path))
                    .map_err(|e| GitError::io("removing", e))?;
            }
        }
        Ok(())
    }

    /// Takes changes to `paths` out of the tree: returns them as a binary patch against HEAD
    /// (untracked files included), then restores the paths as HEAD has them.
    pub fn set_aside(&self, paths: &[String]) -> Result<String, GitError> {
        if paths.is_empty() {
            return Ok(String::new());
        }
        let held = self.lock()?;
        let mut add = vec!["add", "-N", "--"];
        add.extend(paths.iter().map(String::as_str));
        self.run_held(&held, "add", &add)?;
        let mut diff = vec![
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "HEAD",
            "--binary",
            "--",
        ];
        diff.extend(paths.iter().map(String::as_str));
        let patch = self.run_held(&held, "diff", &diff)?;
        let mut reset = vec!["reset", "-q", "--"];
        reset.extend(paths.iter().map(String::as_str));
        self.run_held(&held, "reset", &reset)?;
        let head = self.head_sha()?;
        self.restore_paths_held(&held, &head, paths)?;
        Ok(patch)
    }

    /// The Maid's own commit of `paths` (added with deletions), with `message` verbatim.
    /// Returns the new commit's id.
    pub fn commit_paths(&self, paths: &[String], message: &str) -> Result<String, GitError> {
        let held = self.lock()?;
        let mut add = vec!["add", "-A", "--"];
        add.extend(paths.iter().map(String::as_str));
        self.run_held(&held, "add", &add)?;
        self.held_command(&held, "commit")?
            .args([
                "commit",
                "-q",
                "--no-verify",
                "--cleanup=verbatim",
                "-F",
                "-",
            ])
            .stdin(message.as_bytes().to_vec())
            .run_ok()?;
        self.head_sha()
    }

    /// Removes the worktree at `worktree` (forcefully: its changes were recorded or set aside),
    /// keeps `branch`'s tip as `keep_ref`, then deletes the branch.
    pub fn retire_task(
        &self,
        worktree: &Path,
        branch: &str,
        keep_ref: &str,
    ) -> Result<(), GitError> {
        let branch_ref = format!("refs/heads/{branch}");
        let tip = self.rev(&branch_ref)?.ok_or(GitError::UnknownCommit)?;
        if worktree.exists() {
            // Its own lock, so no other Butler is inside it; none when it is no working tree.
            let task_tree = self.worktree_at(worktree)?;
            let held = task_tree.as_ref().map(TaskGit::lock).transpose()?;
            let removed = self.try_run(
                "worktree",
                [
                    OsStr::new("worktree"),
                    OsStr::new("remove"),
                    OsStr::new("--force"),
                    worktree.as_os_str(),
                ],
            )?;
            // A worktree git no longer recognises (its `.git` file gone) is removed as a
            // directory; `prune` then drops its registration.
            if removed.is_none() {
                std::fs::remove_dir_all(worktree).map_err(|e| GitError::io("worktree", e))?;
            }
            if let Some(held) = held {
                held.retire();
            }
        }
        let _ = self.try_run("worktree", ["worktree", "prune"]);
        self.run("update-ref", ["update-ref", keep_ref, &tip])?;
        self.run("branch", ["branch", "-q", "-D", branch])?;
        Ok(())
    }

    /// Records the state an attempt starts from.
    pub fn baseline(&self, branch_ref: &str) -> Result<Baseline, GitError> {
        let mut config = BTreeMap::new();
        for path in [
            self.common_dir().join("config"),
            self.git_dir().join("config.worktree"),
        ] {
            let bytes = std::fs::read(&path).ok();
            config.insert(path, bytes);
        }
        let hooks_dir = self.common_dir().join("hooks");
        Ok(Baseline {
            branch_ref: branch_ref.to_owned(),
            head: self.head_sha()?,
            refs: self.refs()?,
            index: self.run("ls-files", ["ls-files", "-s"])?,
            config,
            hooks: read_hooks(&hooks_dir),
            hooks_dir,
        })
    }
}

/// Git state recorded before an attempt, to find and undo what the agent did to git.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub branch_ref: String,
    pub head: String,
    pub refs: BTreeMap<String, String>,
    /// `git ls-files -s` of the worktree's index.
    pub index: String,
    /// Raw bytes of the config files (shared `config`, the worktree's `config.worktree`).
    pub config: BTreeMap<PathBuf, Option<Vec<u8>>>,
    /// Hook files of the shared hooks directory and their bytes.
    pub hooks: BTreeMap<String, Vec<u8>>,
    pub hooks_dir: PathBuf,
}

impl Baseline {
    /// Compares the repository with the baseline, restores it, and reports what was found.
    /// Config and hooks are restored first (until then git could run the agent's programs).
    /// Commits the agent made on the task branch are unwound into the working tree (their
    /// changes stay); other refs are put back, the agent's values kept under
    /// `refs/butler/agent/<task>/…` so nothing is lost.
    pub fn detect_and_restore(&self, wt: &TaskGit, task: &str) -> Result<Vec<Tampering>, GitError> {
        let held = wt.lock()?;
        let mut findings = Vec::new();
        if wt.restore_worktree_link()? {
            findings.push(Tampering::GitLinkChanged);
        }
        let mut changed_keys = BTreeSet::new();
        for (path, before) in &self.config {
            let now = std::fs::read(path).ok();
            if &now != before {
                changed_keys.extend(changed_config_keys(before.as_deref(), now.as_deref()));
                let result = match before {
                    Some(bytes) => crate::nofollow::replace_file(path, bytes, 0o644),
                    None => std::fs::remove_file(path),
                };
                if let Err(e) = result {
                    tracing::warn!(path = %path.display(), %e, "could not restore git config");
                }
            }
        }
        if !changed_keys.is_empty() {
            findings.push(Tampering::ConfigChanged {
                keys: changed_keys.into_iter().collect(),
            });
        }
        let hooks_now = read_hooks(&self.hooks_dir);
        if hooks_now != self.hooks {
            let names: BTreeSet<String> = hooks_now
                .keys()
                .chain(self.hooks.keys())
                .filter(|n| hooks_now.get(*n) != self.hooks.get(*n))
                .cloned()
                .collect();
            for name in &names {
                let path = self.hooks_dir.join(name);
                let result = match self.hooks.get(name) {
                    Some(bytes) => crate::nofollow::replace_file(&path, bytes, 0o755),
                    None => std::fs::remove_file(&path),
                };
                if let Err(e) = result {
                    tracing::warn!(path = %path.display(), %e, "could not restore a hook");
                }
            }
            findings.push(Tampering::HooksChanged {
                names: names.into_iter().collect(),
            });
        }

        // HEAD switched or detached: note where it points, then put it back on the task branch.
        let head_ref = wt.head_ref()?;
        let head_now = wt.rev("HEAD")?.unwrap_or_default();
        if head_ref.as_deref() != Some(self.branch_ref.as_str()) {
            let to = head_ref
                .clone()
                .unwrap_or_else(|| "a detached HEAD".to_owned());
            findings.push(Tampering::BranchSwitched {
                from: short(&self.branch_ref),
                to: short(&to),
            });
            wt.run("symbolic-ref", ["symbolic-ref", "HEAD", &self.branch_ref])?;
        }
        // Refs other than the task branch are put back; the agent's values are kept. Butler's
        // own refs and the other tasks' lines (their Maid records them side by side) are not
        // the agent's doing.
        let refs_now = wt.refs()?;
        let keep_ns = format!("refs/butler/agent/{task}");
        let butlers = |name: &str| {
            name.starts_with("refs/butler/")
                || (name.starts_with(TASK_LINES) && name != self.branch_ref)
        };
        for (name, sha) in &refs_now {
            if butlers(name) || *name == self.branch_ref {
                continue;
            }
            match self.refs.get(name) {
                None => {
                    findings.push(Tampering::RefCreated { name: name.clone() });
                    keep(wt, &keep_ns, name, sha)?;
                    wt.run("update-ref", ["update-ref", "-d", name])?;
                }
                Some(old) if old != sha => {
                    findings.push(Tampering::RefMoved { name: name.clone() });
                    keep(wt, &keep_ns, name, sha)?;
                    wt.run("update-ref", ["update-ref", name, old])?;
                }
                Some(_) => {}
            }
        }
        for (name, sha) in &self.refs {
            if !refs_now.contains_key(name) && !butlers(name) {
                findings.push(Tampering::RefDeleted { name: name.clone() });
                wt.run("update-ref", ["update-ref", name, sha])?;
            }
        }
        // Commits: on the task branch or wherever HEAD went. Their changes stay in the working
        // tree (the branch is moved back, the tree is not touched); the commits are kept.
        let branch_now = refs_now.get(&self.branch_ref).cloned().unwrap_or_default();
        let mut subjects = Vec::new();
        for tip in [&branch_now, &head_now] {
            if !tip.is_empty() && *tip != self.head {
                for subject in wt.subjects(&self.head, tip).unwrap_or_default() {
                    if !subjects.contains(&subject) {
                        subjects.push(subject);
                    }
                }
                let kept = format!("{keep_ns}/commits-{}", &tip[..tip.len().min(12)]);
                wt.run("update-ref", ["update-ref", &kept, tip])?;
            }
        }
        if !subjects.is_empty() {
            let count = u32::try_from(subjects.len()).unwrap_or(u32::MAX);
            findings.push(Tampering::Commits { count, subjects });
        }
        if branch_now != self.head {
            wt.run("update-ref", ["update-ref", &self.branch_ref, &self.head])?;
        }
        // Index: staged files (or the unwound commits) become plain working-tree changes.
        let index_now = wt.run("ls-files", ["ls-files", "-s"])?;
        if index_now != self.index {
            if !findings.iter().any(|f| {
                matches!(
                    f,
                    Tampering::Commits { .. } | Tampering::BranchSwitched { .. }
                )
            }) {
                findings.push(Tampering::IndexChanged);
            }
            wt.run_held(&held, "reset", ["reset", "-q", "--mixed", &self.head])?;
        }
        Ok(findings)
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

fn keep(git: &TaskGit, keep_ns: &str, name: &str, sha: &str) -> Result<(), GitError> {
    let kept = format!("{keep_ns}/{}", name.trim_start_matches("refs/"));
    git.run("update-ref", ["update-ref", &kept, sha]).map(drop)
}

fn short(r: &str) -> String {
    r.strip_prefix("refs/heads/").unwrap_or(r).to_owned()
}

fn read_hooks(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let bytes = std::fs::read(e.path()).ok()?;
            Some((name, bytes))
        })
        .collect()
}

/// Keys whose lines differ between two config texts (`[core] fsmonitor = x` → `core.fsmonitor`).
fn changed_config_keys(before: Option<&[u8]>, after: Option<&[u8]>) -> BTreeSet<String> {
    let parse = |bytes: Option<&[u8]>| -> BTreeSet<(String, String)> {
        let text = String::from_utf8_lossy(bytes.unwrap_or_default()).into_owned();
        let mut section = String::new();
        let mut out = BTreeSet::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                let inner = line.trim_start_matches('[').split(']').next().unwrap_or("");
                section = match inner.split_once(' ') {
                    Some((s, sub)) => {
                        format!("{}.{}", s.to_ascii_lowercase(), sub.trim_matches('"'))
                    }
                    None => inner.to_ascii_lowercase(),
                };
            } else if !line.is_empty() && !line.starts_with(['#', ';']) {
                let (key, value) = line.split_once('=').unwrap_or((line, ""));
                out.insert((
                    format!("{section}.{}", key.trim().to_ascii_lowercase()),
                    value.trim().to_owned(),
                ));
            }
        }
        out
    };
    let (a, b) = (parse(before), parse(after));
    a.symmetric_difference(&b).map(|(k, _)| k.clone()).collect()
}

#[cfg(test)]
mod tests {
    use crate::git::test_repo::markers_in;
    use butler_testkit::World;

    use super::*;

    #[test]
    fn config_key_changes_are_named() {
        let before = b"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n";
        let after =
            b"[core]\n\tbare = false\n\tfsmonitor = /tmp/evil\n[remote \"origin\"]\n\turl = y\n";
        let keys: Vec<String> = changed_config_keys(Some(before), Some(after))
            .into_iter()
            .collect();
        assert_eq!(keys, vec!["core.fsmonitor", "remote.origin.url"]);
    }

    fn scratch() -> (World, TaskGit) {
        let w = World::committed(&[("a.txt", "a\n")]);
        let tg = TaskGit::open(&w.project).expect("open");
        (w, tg)
    }

    #[test]
    fn an_agents_commit_and_fsmonitor_are_undone_and_its_changes_kept() {
        let (w, main) = scratch();
        let wt_path = w.path("wt");
        let base = main.head_sha().expect("head");
        let wt = main
            .add_worktree(&wt_path, "butler/task-t1", &base)
            .expect("worktree");
        let baseline = wt.baseline("refs/heads/butler/task-t1").expect("baseline");
        // The agent commits and plants a program-running setting.
        std::fs::write(wt_path.join("b.txt"), "b\n").expect("write");
        w.git(&wt_path, &["add", "b.txt"]);
        w.git(&wt_path, &["commit", "-q", "-m", "agent commit"]);
        let marker = w.path("fsmonitor-ran");
        w.git(
            &wt_path,
            &[
                "config",
                "core.fsmonitor",
                &format!("touch {}; false", marker.display()),
            ],
        );
        let found = baseline.detect_and_restore(&wt, "t1").expect("detect");
        assert!(found.contains(&Tampering::ConfigChanged {
            keys: vec!["core.fsmonitor".into()]
        }));
        assert!(found.contains(&Tampering::Commits {
            count: 1,
            subjects: vec!["agent commit".into()]
        }));
        assert_eq!(wt.head_sha().expect("head"), base);
        assert_eq!(wt.changed_paths().expect("status"), vec!["b.txt"]);
        assert!(!marker.exists(), "no program of the agent ran");
        let sha = wt
            .commit_paths(&["b.txt".into()], "Maid\n\nButler-Task: t1\n")
            .expect("commit");
        assert_ne!(sha, base);
        // The Brain's tree never moved; accepting fast-forwards it.
        assert_eq!(main.head_sha().expect("head"), base);
        let ledger = crate::ledger::Ledger::open(main.common_dir()).expect("ledger");
        let draft = crate::record::Draft {
            message: "merge",
            issue_ids: &[],
            line: Some("main"),
            task: None,
        };
        let brought = crate::git::merge_line::<Box<dyn std::error::Error>>(
            main.repo(),
            &ledger,
            &sha,
            &draft,
            crate::git::Committer::Maid,
        )
        .expect("bring in");
        assert_eq!(
            brought,
            crate::git::MergeOutcome::FastForward { head: sha.clone() }
        );
        main.retire_task(&wt_path, "butler/task-t1", "refs/butler/accepted/task-t1")
            .expect("retire");
        assert!(!wt_path.exists());
        assert_eq!(
            main.rev("refs/butler/accepted/task-t1").expect("rev"),
            Some(sha)
        );
        assert_eq!(main.rev("refs/heads/butler/task-t1").expect("rev"), None);
    }

    /// A repository of the agent's making at `dir`, whose configuration and hooks would leave
    /// a marker in `markers` for every program git ran from it.
    fn hostile_repo(w: &World, dir: &Path, markers: &Path, tag: &str) {
        std::fs::create_dir_all(dir).expect("mkdir");
        w.git(dir, &["init", "-q"]);
        let touch = |what: &str| format!("touch {}/{tag}-{what}", markers.display());
        for (key, value) in [
            ("core.fsmonitor", format!("{}; false", touch("fsmonitor"))),
            ("filter.evil.clean", format!("{}; cat", touch("clean"))),
            ("filter.evil.smudge", format!("{}; cat", touch("smudge"))),
            ("filter.evil.process", touch("process")),
            ("diff.evil.textconv", format!("{}; cat", touch("textconv"))),
            ("diff.evil.command", touch("diff-command")),
            ("merge.evil.driver", touch("merge")),
            ("diff.external", touch("external-diff")),
            ("core.pager", touch("pager")),
        ] {
            w.git(dir, &["config", key, &value]);
        }
        let hooks = dir.join(".git/hooks");
        std::fs::create_dir_all(&hooks).expect("mkdir");
        for hook in [
            "pre-commit",
            "post-commit",
            "post-index-change",
            "post-checkout",
            "reference-transaction",
        ] {
            let path = hooks.join(hook);
            butler_testkit::write_executable(&path, format!("#!/bin/sh\n{}\n", touch(hook)));
        }
        std::fs::write(
            dir.join(".gitattributes"),
            "* filter=evil diff=evil merge=evil\n",
        )
        .expect("attributes");
        std::fs::write(dir.join("inner.txt"), "inner\n").expect("write");
    }

    #[test]
    fn nothing_the_agent_left_in_the_worktree_runs_and_no_nested_repository_is_recorded() {
        let (w, main) = scratch();
        let markers = w.path("markers");
        std::fs::create_dir_all(&markers).expect("mkdir");
        // The project has a submodule (a gitlink; not checked out in a new worktree).
        let head = main.head_sha().expect("head");
        w.git(
            &w.project,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{head},vendor"),
            ],
        );
        w.write(
            ".gitmodules",
            "[submodule \"vendor\"]\n\tpath = vendor\n\turl = ./x\n",
        );
        w.git(&w.project, &["add", ".gitmodules"]);
        w.git(&w.project, &["commit", "-q", "-m", "submodule"]);
        let base = main.head_sha().expect("head");
        let wt_path = w.path("wt");
        let wt = main
            .add_worktree(&wt_path, "butler/task-t1", &base)
            .expect("worktree");
        let baseline = wt.baseline("refs/heads/butler/task-t1").expect("baseline");

        // The agent: its work, attributes naming drivers, a repository in the submodule's
        // directory, a nested one, one behind a `.git` pointer file, and the worktree's own
        // `.git` pointed at a repository of its making.
        std::fs::write(wt_path.join("a.txt"), "changed\n").expect("write");
        std::fs::write(wt_path.join("new.txt"), "new\n").expect("write");
        std::fs::write(
            wt_path.join(".gitattributes"),
            "* filter=evil diff=evil merge=evil\n",
        )
        .expect("write");
        hostile_repo(&w, &wt_path.join("vendor"), &markers, "submodule");
        hostile_repo(&w, &wt_path.join("tools"), &markers, "nested");
        let decoy = w.path("decoy");
        hostile_repo(&w, &decoy, &markers, "decoy");
        std::fs::create_dir_all(wt_path.join("linked")).expect("mkdir");
        std::fs::write(wt_path.join("linked/f.txt"), "f\n").expect("write");
        std::fs::write(
            wt_path.join("linked/.git"),
            format!("gitdir: {}/.git\n", decoy.display()),
        )
        .expect("write");
        std::fs::write(
            wt_path.join(".git"),
            format!("gitdir: {}/.git\n", decoy.display()),
        )
        .expect("rewrite");

        // The Maid's git, before anything is restored, sees the task's own repository.
        let status = wt.tree_status().expect("status");
        assert_eq!(status.changed, [".gitattributes", "a.txt", "new.txt"]);
        assert_eq!(status.nested, ["linked", "tools"]);
        assert_eq!(
            wt.head_ref().expect("head").as_deref(),
            Some("refs/heads/butler/task-t1")
        );
        let found = baseline.detect_and_restore(&wt, "t1").expect("restore");
        assert_eq!(found, [Tampering::GitLinkChanged]);
        let sha = wt
            .commit_paths(&status.changed, "Maid\n\nButler-Task: t1\n")
            .expect("commit");
        let patch = wt.diff(&base, &sha).expect("diff");
        assert!(patch.contains("+changed"), "{patch}");
        let patch = wt.set_aside(&["new.txt".to_owned()]);
        assert!(patch.is_ok(), "{patch:?}");
        let tree = w.git(&wt_path, &["ls-tree", "-r", &sha]);
        let gitlinks: Vec<&str> = tree.lines().filter(|l| l.starts_with("160000")).collect();
        assert_eq!(
            gitlinks.len(),
            1,
            "only the project's own submodule: {tree}"
        );
        assert!(gitlinks[0].ends_with("\tvendor"), "{tree}");
        assert!(
            !tree.contains("tools") && !tree.contains("linked"),
            "{tree}"
        );
        assert_eq!(markers_in(&markers), Vec::<String>::new());

        // Retiring it reads nothing of the worktree either.
        main.retire_task(&wt_path, "butler/task-t1", "refs/butler/discarded/task-t1")
            .expect("retired");
        assert!(!wt_path.exists());
        assert!(
            decoy.join("inner.txt").is_file(),
            "the decoy is not the worktree"
        );
        assert_eq!(markers_in(&markers), Vec::<String>::new());
    }

    #[test]
    fn per_worktree_configuration_adds_no_driver_before_the_maids_git_runs() {
        let (w, main) = scratch();
        let markers = w.path("markers");
        std::fs::create_dir_all(&markers).expect("mkdir");
        // The user's repository reads per-worktree configuration.
        w.git(&w.project, &["config", "extensions.worktreeConfig", "true"]);
        let base = main.head_sha().expect("head");
        let wt_path = w.path("wt");
        let wt = main
            .add_worktree(&wt_path, "butler/task-t1", &base)
            .expect("worktree");
        let baseline = wt.baseline("refs/heads/butler/task-t1").expect("baseline");
        // Without the sandbox an agent could write the worktree's own configuration.
        std::fs::write(
            wt.git_dir().join("config.worktree"),
            format!(
                "[filter \"evil\"]\n\tclean = touch {m}/clean; cat\n[core]\n\tfsmonitor = touch {m}/fsmonitor; false\n",
                m = markers.display()
            ),
        )
        .expect("write");
        std::fs::write(wt_path.join(".gitattributes"), "* filter=evil\n").expect("write");
        std::fs::write(wt_path.join("a.txt"), "changed\n").expect("write");
        let found = baseline.detect_and_restore(&wt, "t1").expect("restore");
        assert_eq!(
            found,
            [Tampering::ConfigChanged {
                keys: vec!["core.fsmonitor".into(), "filter.evil.clean".into()]
            }]
        );
        assert!(!wt.git_dir().join("config.worktree").exists());
        let changed = wt.changed_paths().expect("status");
        wt.commit_paths(&changed, "Maid\n").expect("commit");
        assert_eq!(markers_in(&markers), Vec::<String>::new());
    }

    #[test]
    fn the_maids_patches_are_plain_whatever_the_configuration_names() {
        let (w, main) = scratch();
        let markers = w.path("markers");
        std::fs::create_dir_all(&markers).expect("mkdir");
        let m = markers.display();
        w.git(
            &w.project,
            &["config", "diff.external", &format!("touch {m}/external")],
        );
        w.git(
            &w.project,
            &[
                "config",
                "diff.x.textconv",
                &format!("touch {m}/textconv; cat"),
            ],
        );
        std::fs::write(w.project.join(".gitattributes"), "* diff=x\n").expect("write");
        std::fs::write(w.project.join("a.txt"), "b\n").expect("write");
        let patch = main.set_aside(&["a.txt".into()]).expect("set aside");
        assert!(patch.contains("-a\n+b"), "{patch}");
        assert_eq!(markers_in(&markers), Vec::<String>::new());
    }

    #[test]
    fn restoring_a_path_never_follows_a_link_the_agent_put_in_its_way() {
        let (w, main) = scratch();
        let base = main.head_sha().expect("head");
        let wt_path = w.path("wt");
        let wt = main
            .add_worktree(&wt_path, "butler/task-t1", &base)
            .expect("worktree");
        let users = w.path("users");
        std::fs::create_dir_all(&users).expect("mkdir");
        std::fs::write(users.join("notes.txt"), "mine\n").expect("write");
        std::fs::create_dir_all(wt_path.join("src")).expect("mkdir");
        std::fs::write(wt_path.join("src/notes.txt"), "agent\n").expect("write");
        let found = wt.changed_paths().expect("status");
        assert_eq!(found, ["src/notes.txt"]);
        // Between the Maid's look and its removal, `src` becomes a link to the user's files.
        std::fs::rename(wt_path.join("src"), wt_path.join("gone")).expect("mv");
        std::os::unix::fs::symlink(&users, wt_path.join("src")).expect("symlink");
        wt.restore_paths(&base, &found).expect("restored");
        assert_eq!(
            std::fs::read_to_string(users.join("notes.txt")).expect("read"),
            "mine\n"
        );
    }

    #[test]
    fn set_aside_returns_a_patch_and_restores_the_paths() {
        let (_w, main) = scratch();
        std::fs::write(main.workdir().join("a.txt"), "changed\n").expect("write");
        std::fs::write(main.workdir().join("new.txt"), "new\n").expect("write");
        let patch = main
            .set_aside(&["a.txt".into(), "new.txt".into()])
            .expect("set aside");
        assert!(
            patch.contains("+changed") && patch.contains("+new"),
            "{patch}"
        );
        assert!(main.changed_paths().expect("status").is_empty());
        assert!(!main.workdir().join("new.txt").exists());
    }

    #[test]
    fn the_maids_index_writes_wait_for_another_butler_on_the_tree() {
        let (_dir, main) = scratch();
        let file = main.workdir().join("a.txt");
        std::fs::write(&file, "changed\n").expect("write");
        let held = main.repo.lock_tree().expect("free");
        let restorer = {
            let main = main.clone();
            std::thread::spawn(move || {
                let head = main.head_sha()?;
                main.restore_paths(&head, &["a.txt".into()])
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(!restorer.is_finished(), "it waits for the lock");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "changed\n");
        drop(held);
        restorer.join().expect("thread").expect("restored");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "a\n");
    }

    #[test]
    fn task_worktrees_live_in_one_directory_per_repository() {
        let (dir, main) = scratch();
        let root = dir.dir().join("data");
        let here = task_worktrees_dir(&root, main.common_dir());
        assert_eq!(here, task_worktrees_dir(&root, main.common_dir()), "stable");
        let name = here
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with("project-") && name.len() == "project-".len() + 16,
            "{name}"
        );
        let other = dir.dir().join("q/project");
        std::fs::create_dir_all(&other).expect("mkdir");
        dir.git(&other, &["init", "-q", "-b", "main"]);
        let other_repo = TaskGit::open(&other).expect("open");
        assert_ne!(task_worktrees_dir(&root, other_repo.common_dir()), here);
    }

    #[test]
    fn a_rewritten_worktree_link_is_restored_before_git_follows_it() {
        let (dir, main) = scratch();
        let base = main.head_sha().expect("head");
        let wt_path = dir.dir().join("data/task-t1");
        let wt = main
            .add_worktree(&wt_path, "butler/task-t1", &base)
            .expect("worktree");
        assert_eq!(
            main.worktree_of_branch("butler/task-t1")
                .expect("list")
                .map(|p| p.canonicalize().expect("c")),
            Some(wt_path.canonicalize().expect("c"))
        );
        assert_eq!(main.worktree_of_branch("nope").expect("list"), None);
        assert!(!wt.restore_worktree_link().expect("intact"));
        let baseline = wt.baseline("refs/heads/butler/task-t1").expect("baseline");
        let decoy = dir.dir().join("decoy");
        dir.git(dir.dir(), &["init", "-q", "decoy"]);
        std::fs::write(
            wt_path.join(".git"),
            format!("gitdir: {}/.git\n", decoy.display()),
        )
        .expect("rewrite");
        let found = baseline.detect_and_restore(&wt, "t1").expect("restored");
        assert!(found.contains(&Tampering::GitLinkChanged), "{found:?}");
        assert_eq!(
            wt.head_ref().expect("head").as_deref(),
            Some("refs/heads/butler/task-t1")
        );
        std::fs::remove_file(wt_path.join(".git")).expect("rm");
        std::fs::create_dir(wt_path.join(".git")).expect("dir");
        assert!(wt.restore_worktree_link().expect("restored"));
        assert!(wt_path.join(".git").is_file());
        // A worktree whose link is gone is still retired.
        std::fs::remove_file(wt_path.join(".git")).expect("rm");
        main.retire_task(&wt_path, "butler/task-t1", "refs/butler/discarded/task-t1")
            .expect("retired");
        assert!(!wt_path.exists());
    }
}
