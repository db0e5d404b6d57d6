//! Git operations of the task sequence (worktree, baseline, detection, restoration, the Maid's
//! own commit, accept/discard).
//!
//! TO BE MOVED under the git worker (`worker-mcp/src/git/`), the single owner of git processes;
//! it lives here until the worker offers these operations. Every call is hardened: program-
//! running settings are off (`core.fsmonitor`, hooks), system and global config are ignored,
//! and no `GIT_*` variable of Butler's own environment reaches git.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::contract::DirectGitFinding;

#[derive(Debug, thiserror::Error)]
#[error("git {args}: {message}")]
pub struct GitError {
    pub args: String,
    pub message: String,
}

/// Runs hardened git in one directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

/// The identity of the Maid's own records.
const MAID_NAME: &str = "Butler Maid";
const MAID_EMAIL: &str = "maid@butler.invalid";

impl Git {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs git; stdout on success.
    pub async fn run<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<std::ffi::OsString> =
            args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let mut cmd = tokio::process::Command::new("git");
        cmd.current_dir(&self.dir)
            .args([
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
            ])
            .args([
                "-c",
                "core.untrackedCache=false",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(&args)
            .env_clear()
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        for (k, v) in std::env::vars_os() {
            let keep = k.to_str().is_some_and(|k| {
                matches!(k, "PATH" | "HOME" | "LANG" | "TMPDIR") || k.starts_with("LC_")
            });
            if keep {
                cmd.env(k, v);
            }
        }
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", MAID_NAME)
            .env("GIT_AUTHOR_EMAIL", MAID_EMAIL)
            .env("GIT_COMMITTER_NAME", MAID_NAME)
            .env("GIT_COMMITTER_EMAIL", MAID_EMAIL);
        let shown = || {
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let out = cmd.output().await.map_err(|e| GitError {
            args: shown(),
            message: e.to_string(),
        })?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(GitError {
                args: shown(),
                message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    pub async fn rev(&self, what: &str) -> Result<String, GitError> {
        Ok(self
            .run(["rev-parse", "--verify", "-q", what])
            .await?
            .trim()
            .to_owned())
    }

    pub async fn common_dir(&self) -> Result<PathBuf, GitError> {
        let out = self
            .run(["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .await?;
        Ok(PathBuf::from(out.trim()))
    }

    pub async fn git_dir(&self) -> Result<PathBuf, GitError> {
        let out = self
            .run(["rev-parse", "--path-format=absolute", "--git-dir"])
            .await?;
        Ok(PathBuf::from(out.trim()))
    }

    /// `refs/heads/x`, or `None` when HEAD is detached.
    pub async fn head_ref(&self) -> Result<Option<String>, GitError> {
        Ok(self
            .run(["symbolic-ref", "-q", "HEAD"])
            .await
            .ok()
            .map(|s| s.trim().to_owned()))
    }

    /// Changed paths against HEAD (staged, unstaged, untracked), relative to the top.
    pub async fn changed_paths(&self) -> Result<Vec<String>, GitError> {
        let out = self
            .run([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .await?;
        let mut paths = BTreeSet::new();
        for entry in out.split('\0').filter(|e| e.len() > 3) {
            paths.insert(entry[3..].to_owned());
        }
        Ok(paths.into_iter().collect())
    }

    pub async fn refs(&self) -> Result<BTreeMap<String, String>, GitError> {
        let out = self
            .run(["for-each-ref", "--format=%(refname) %(objectname)"])
            .await?;
        Ok(out
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(name, sha)| (name.to_owned(), sha.to_owned()))
            .collect())
    }

    /// Subjects of the commits in `from..to`, newest first.
    pub async fn subjects(&self, from: &str, to: &str) -> Result<Vec<String>, GitError> {
        let out = self
            .run(["log", "--format=%s", &format!("{from}..{to}")])
            .await?;
        Ok(out.lines().map(str::to_owned).collect())
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
    #[serde(skip)]
    hooks_dir: PathBuf,
}

impl Baseline {
    pub async fn record(worktree: &Git, branch_ref: &str) -> Result<Self, GitError> {
        let common = worktree.common_dir().await?;
        let git_dir = worktree.git_dir().await?;
        let mut config = BTreeMap::new();
        for path in [common.join("config"), git_dir.join("config.worktree")] {
            let bytes = std::fs::read(&path).ok();
            config.insert(path, bytes);
        }
        let hooks_dir = common.join("hooks");
        Ok(Self {
            branch_ref: branch_ref.to_owned(),
            head: worktree.rev("HEAD").await?,
            refs: worktree.refs().await?,
            index: worktree.run(["ls-files", "-s"]).await?,
            config,
            hooks: read_hooks(&hooks_dir),
            hooks_dir,
        })
    }

    /// Compares the repository with the baseline, restores it, and reports what was found.
    /// Commits the agent made on the task branch are unwound into the working tree (their
    /// changes stay); other refs are put back, the agent's values kept under
    /// `refs/butler/agent/<task>/…` so nothing is lost.
    pub async fn detect_and_restore(
        &self,
        worktree: &Git,
        task: &str,
    ) -> Result<Vec<DirectGitFinding>, GitError> {
        let mut findings = Vec::new();
        // Config and hooks first: until they are restored, git could run the agent's programs.
        let mut changed_keys = BTreeSet::new();
        for (path, before) in &self.config {
            let now = std::fs::read(path).ok();
            if &now != before {
                changed_keys.extend(changed_config_keys(before.as_deref(), now.as_deref()));
                let result = match before {
                    Some(bytes) => std::fs::write(path, bytes),
                    None => std::fs::remove_file(path),
                };
                if let Err(e) = result {
                    tracing::warn!(path = %path.display(), %e, "could not restore git config");
                }
            }
        }
        if !changed_keys.is_empty() {
            findings.push(DirectGitFinding::ConfigChanged {
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
                let _ = match self.hooks.get(name) {
                    Some(bytes) => std::fs::write(&path, bytes),
                    None => std::fs::remove_file(&path),
                };
            }
            findings.push(DirectGitFinding::HooksChanged {
                names: names.into_iter().collect(),
            });
        }

        // HEAD switched or detached: note where it points, then put it back on the task branch.
        let head_ref = worktree.head_ref().await?;
        let head_now = worktree.rev("HEAD").await.unwrap_or_default();
        if head_ref.as_deref() != Some(self.branch_ref.as_str()) {
            let to = head_ref
                .clone()
                .unwrap_or_else(|| "a detached HEAD".to_owned());
            findings.push(DirectGitFinding::BranchSwitched {
                from: short(&self.branch_ref),
                to: short(&to),
            });
            worktree
                .run(["symbolic-ref", "HEAD", &self.branch_ref])
                .await?;
        }
        // Refs other than the task branch are put back; the agent's values are kept.
        let refs_now = worktree.refs().await?;
        let keep_ns = format!("refs/butler/agent/{task}");
        for (name, sha) in &refs_now {
            if name.starts_with("refs/butler/") || *name == self.branch_ref {
                continue;
            }
            match self.refs.get(name) {
                None => {
                    findings.push(DirectGitFinding::RefCreated { name: name.clone() });
                    keep(worktree, &keep_ns, name, sha).await?;
                    worktree.run(["update-ref", "-d", name]).await?;
                }
                Some(old) if old != sha => {
                    findings.push(DirectGitFinding::RefMoved { name: name.clone() });
                    keep(worktree, &keep_ns, name, sha).await?;
                    worktree.run(["update-ref", name, old]).await?;
                }
                Some(_) => {}
            }
        }
        for (name, sha) in &self.refs {
            if !refs_now.contains_key(name) && !name.starts_with("refs/butler/") {
                findings.push(DirectGitFinding::RefDeleted { name: name.clone() });
                worktree.run(["update-ref", name, sha]).await?;
            }
        }
        // Commits: on the task branch or wherever HEAD went. Their changes stay in the working
        // tree (the branch is moved back, the tree is not touched); the commits are kept.
        let branch_now = refs_now.get(&self.branch_ref).cloned().unwrap_or_default();
        let mut subjects = Vec::new();
        for tip in [&branch_now, &head_now] {
            if !tip.is_empty() && *tip != self.head {
                for subject in worktree.subjects(&self.head, tip).await.unwrap_or_default() {
                    if !subjects.contains(&subject) {
                        subjects.push(subject);
                    }
                }
                let kept = format!("{keep_ns}/commits-{}", &tip[..tip.len().min(12)]);
                worktree.run(["update-ref", &kept, tip]).await?;
            }
        }
        if !subjects.is_empty() {
            let count = u32::try_from(subjects.len()).unwrap_or(u32::MAX);
            findings.push(DirectGitFinding::Commits { count, subjects });
        }
        if branch_now != self.head {
            worktree
                .run(["update-ref", &self.branch_ref, &self.head])
                .await?;
        }
        // Index: staged files (or the unwound commits) become plain working-tree changes.
        let index_now = worktree.run(["ls-files", "-s"]).await?;
        if index_now != self.index {
            if !findings.iter().any(|f| {
                matches!(
                    f,
                    DirectGitFinding::Commits { .. } | DirectGitFinding::BranchSwitched { .. }
                )
            }) {
                findings.push(DirectGitFinding::IndexChanged);
            }
            worktree.run(["reset", "-q", "--mixed", &self.head]).await?;
        }
        Ok(findings)
    }
}

async fn keep(git: &Git, keep_ns: &str, name: &str, sha: &str) -> Result<(), GitError> {
    let kept = format!("{keep_ns}/{}", name.trim_start_matches("refs/"));
    git.run(["update-ref", &kept, sha]).await.map(drop)
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
}
