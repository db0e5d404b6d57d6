//! Recording: `git add -A` then `git commit -F -`, with the repository's hooks running as they
//! would for a person, and every way it can fail classified.
//!
//! What a record saves is what observing calls unrecorded: nested repositories are kept out
//! (the caller names them), and in a sparse checkout files present outside its directories are
//! saved too rather than failing the whole record. A record that fails leaves the index as it
//! found it. What the repository's hooks did is reported: the message a `commit-msg` hook
//! rewrote is read back from history, and files a hook changed without saving them are named.

use std::path::PathBuf;
use std::time::Duration;

use super::GitRepo;
use super::command::{GitCommand, GitOutput};
use super::error::{GitError, redact_credentials};
use super::hooks::HookTrace;
use super::lock::TreeLock;
use super::path::RepoPath;
use super::status::split_nul;
use crate::process::tail_of;

/// Hooks may run linters and tests.
const RECORD_TIMEOUT: Duration = Duration::from_secs(600);
/// How much hook output goes back to the caller.
const HOOK_OUTPUT_TAIL: usize = 2 << 10;
/// Bound on the file lists read while staging.
const MAX_LIST: usize = 64 << 20;
/// What git says when `add` meets files outside a sparse checkout's directories.
const SPARSE_REFUSAL: &str = "outside of your sparse-checkout definition";

/// A record that was made, and what happened around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The new commit (full id).
    pub sha: String,
    /// The message as history holds it (a `commit-msg` hook may have rewritten it).
    pub saved_message: String,
    /// The repository's hooks that ran, in order.
    pub hooks: Vec<String>,
    /// Files present outside a sparse checkout's directories, saved too.
    pub outside_sparse: Vec<RepoPath>,
    /// Files that changed while recording (a hook that reformats files without saving them):
    /// the record holds them as they were before; they are unrecorded now.
    pub changed_meanwhile: Vec<RepoPath>,
}

/// What staging everything did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Staged {
    /// Files outside a sparse checkout's directories that were staged too.
    pub outside_sparse: Vec<RepoPath>,
}

impl GitRepo {
    /// Saves every change (tracked and untracked, ignore rules respected, nested repositories
    /// left out) as one commit with `message` (kept verbatim apart from surrounding
    /// whitespace: lines starting with `#` survive). Returns the new commit's full id.
    ///
    /// Errors: `NothingToRecord`; `NoIdentity` (git has no user name/email); `HookRejected`
    /// (a `pre-commit`, `commit-msg`, … hook refused; with its output tail); `IndexLocked`
    /// (something that is not Butler kept the index locked); `ButlerBusy`; `Failed`. Takes
    /// Butler's lock on this working tree for the time it runs.
    pub fn record_all(&self, message: &str) -> Result<String, GitError> {
        let held = self.lock_tree()?;
        self.record_all_held(&held, message)
    }

    /// [`GitRepo::record_all`] for a caller that holds the working tree's lock already (to do
    /// more under it, such as journaling the record).
    pub fn record_all_held(&self, held: &TreeLock, message: &str) -> Result<String, GitError> {
        let nested: Vec<RepoPath> = self
            .status()?
            .unrecordable
            .into_iter()
            .map(|u| u.path)
            .collect();
        Ok(self.record_work(held, message, &nested)?.sha)
    }

    /// Saves every change except the paths in `keep_out` (nested repositories, as
    /// [`GitRepo::status`] lists them) as one commit with `message`; see
    /// [`GitRepo::record_all`] for the errors. When it fails without committing, the index is
    /// put back as it was.
    pub fn record_work(
        &self,
        held: &TreeLock,
        message: &str,
        keep_out: &[RepoPath],
    ) -> Result<Recorded, GitError> {
        self.wait_for_index(held)?;
        let head_before = self.head()?.oid;
        let backup = IndexBackup::take(self)?;
        let result = self.stage_and_commit(message, keep_out);
        if result.is_err() && self.head().ok().and_then(|h| h.oid) == head_before {
            backup.restore();
        }
        result
    }

    /// Stages every change except `keep_out` (the resolution of a conflict, before an
    /// operation is carried on), with the same rules as recording. The index is put back as
    /// it was when staging fails.
    pub fn stage_all(&self, held: &TreeLock, keep_out: &[RepoPath]) -> Result<Staged, GitError> {
        self.wait_for_index(held)?;
        let backup = IndexBackup::take(self)?;
        let staged = self.stage(keep_out);
        if staged.is_err() {
            backup.restore();
        }
        staged
    }

    fn stage_and_commit(&self, message: &str, keep_out: &[RepoPath]) -> Result<Recorded, GitError> {
        let staged = self.stage(keep_out)?;
        let trace = HookTrace::create();
        let commit = GitCommand::new(self, "commit")
            .args(["commit", "--cleanup=whitespace", "-F", "-"])
            .stdin(message.as_bytes().to_vec())
            .timeout(RECORD_TIMEOUT);
        let out = HookTrace::attach(trace.as_ref(), commit).run()?;
        let hooks = HookTrace::hooks(trace.as_ref());
        if !out.status.success() {
            return Err(self.classify("commit", &out, hooks.failed));
        }
        let repo = self.open()?;
        let head = repo
            .head()?
            .target()
            .ok_or_else(|| GitError::failed("commit", "no HEAD"))?;
        let sha = head.to_string();
        let saved_message = self.commit_message(&sha)?;
        // A hook that reformats files without saving them leaves them changed: only then can
        // the tree differ from the record just made.
        let changed_meanwhile = if hooks.ran.is_empty() {
            Vec::new()
        } else {
            self.status()?.entries.into_iter().map(|e| e.path).collect()
        };
        Ok(Recorded {
            sha,
            saved_message,
            hooks: hooks.ran,
            outside_sparse: staged.outside_sparse,
            changed_meanwhile,
        })
    }

    /// `git add -A` except `keep_out`; in a sparse checkout, what git refuses to stage outside
    /// its directories is staged with `--sparse` (and named) rather than left half-staged.
    fn stage(&self, keep_out: &[RepoPath]) -> Result<Staged, GitError> {
        let add = self.add_all(keep_out, false).run()?;
        if add.status.success() {
            return Ok(Staged::default());
        }
        if !add.stderr_tail.contains(SPARSE_REFUSAL) {
            return Err(self.classify("add", &add, None));
        }
        // What the plain add left out lies outside the sparse checkout's directories.
        let mut outside = self.paths("diff", &["diff", "--name-only", "-z", "--no-renames"])?;
        outside.extend(self.paths(
            "ls-files",
            &["ls-files", "-z", "--others", "--exclude-standard"],
        )?);
        outside.retain(|p| !keep_out.iter().any(|k| within(p, k)));
        outside.sort();
        outside.dedup();
        let again = self.add_all(keep_out, true).run()?;
        if !again.status.success() {
            return Err(self.classify("add", &again, None));
        }
        Ok(Staged {
            outside_sparse: outside,
        })
    }

    fn add_all(&self, keep_out: &[RepoPath], sparse: bool) -> GitCommand {
        let mut add = GitCommand::new(self, "add")
            .args(["add", "-A"])
            .timeout(RECORD_TIMEOUT);
        if sparse {
            add = add.arg("--sparse");
        }
        if !keep_out.is_empty() {
            add = add.args(["--", "."]);
            for path in keep_out {
                let bytes = path.as_bytes();
                let bare = bytes.strip_suffix(b"/").unwrap_or(bytes);
                let mut spec = b":(exclude,literal)".to_vec();
                spec.extend_from_slice(bare);
                add = add.arg(RepoPath::from_bytes(spec).as_path());
            }
        }
        add
    }

    fn paths(&self, op: &'static str, args: &[&str]) -> Result<Vec<RepoPath>, GitError> {
        let out = GitCommand::new(self, op)
            .args(args)
            .max_stdout(MAX_LIST)
            .run_ok()?;
        Ok(split_nul(&out.stdout).map(RepoPath::from_bytes).collect())
    }

    fn classify(&self, op: &'static str, out: &GitOutput, failed_hook: Option<String>) -> GitError {
        let stderr = out.stderr_tail.as_str();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if let Some(lock_path) = locked_index(stderr) {
            let age = std::fs::metadata(&lock_path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            return GitError::IndexLocked { lock_path, age };
        }
        if stderr.contains("Please tell me who you are")
            || stderr.contains("unable to auto-detect email address")
            || stderr.contains("empty ident name")
            || stderr.contains("no email was given")
        {
            return GitError::NoIdentity;
        }
        if let Some(hook) = failed_hook {
            return GitError::HookRejected {
                hook: Some(hook),
                output_tail: redact_credentials(tail_of(stderr, HOOK_OUTPUT_TAIL)),
            };
        }
        if op == "commit"
            && [
                "nothing to commit",
                "nothing added to commit",
                "no changes added to commit",
            ]
            .iter()
            .any(|s| stdout.contains(s) || stderr.contains(s))
        {
            return GitError::NothingToRecord;
        }
        tracing::warn!(op, detail = %out.detail(), "recording failed");
        GitError::failed(op, out.detail())
    }
}

/// Whether `path` is `dir` or inside it (`dir` as status lists a nested repository: `a/b/`).
fn within(path: &RepoPath, dir: &RepoPath) -> bool {
    let d = dir.as_bytes();
    let bare = d.strip_suffix(b"/").unwrap_or(d);
    let p = path.as_bytes();
    p == bare || (p.starts_with(bare) && p.get(bare.len()) == Some(&b'/'))
}

/// A copy of the index taken before staging, put back when a record fails without
/// committing, so a failure leaves nothing half-staged.
struct IndexBackup {
    index: PathBuf,
    /// The copy; `None` when there was no index yet.
    copy: Option<PathBuf>,
}

impl IndexBackup {
    fn take(repo: &GitRepo) -> Result<IndexBackup, GitError> {
        let index = repo.git_dir().join("index");
        let copy = repo.git_dir().join("index.butler-backup");
        match std::fs::copy(&index, &copy) {
            Ok(_) => Ok(IndexBackup {
                index,
                copy: Some(copy),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(IndexBackup { index, copy: None })
            }
            Err(e) => Err(GitError::io("index backup", e)),
        }
    }

    /// Puts the index back (atomically: the copy is renamed over it).
    fn restore(mut self) {
        let result = match self.copy.take() {
            Some(copy) => std::fs::rename(&copy, &self.index),
            None => match std::fs::remove_file(&self.index) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "the index could not be put back after a failed record");
        }
    }
}

impl Drop for IndexBackup {
    fn drop(&mut self) {
        if let Some(copy) = &self.copy {
            let _ = std::fs::remove_file(copy);
        }
    }
}

/// `fatal: Unable to create '/x/.git/index.lock': File exists.` → the lock path.
fn locked_index(stderr: &str) -> Option<PathBuf> {
    let line = stderr
        .lines()
        .find(|l| l.contains("index.lock") && l.contains("File exists"))?;
    let start = line.find('\'')? + 1;
    let end = start + line[start..].find('\'')?;
    Some(PathBuf::from(&line[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lock_path_is_read_from_the_message() {
        let err =
            "fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process";
        assert_eq!(locked_index(err), Some(PathBuf::from("/r/.git/index.lock")));
    }

    #[test]
    fn kept_out_directories_cover_their_files_only() {
        let dir = RepoPath::from_bytes("a/b/");
        assert!(within(&RepoPath::from_bytes("a/b"), &dir));
        assert!(within(&RepoPath::from_bytes("a/b/c"), &dir));
        assert!(!within(&RepoPath::from_bytes("a/bc"), &dir));
    }
}
