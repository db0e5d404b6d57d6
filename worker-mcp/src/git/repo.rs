//! Cheap reads through libgit2: HEAD, in-progress operations, the shared destination, what is
//! not yet published, commit ids, remote URLs.

use git2::{BranchType, ErrorCode, Oid, Repository, RepositoryState};

use super::GitRepo;
use super::command::GitCommand;
use super::error::{GitError, redact_credentials};

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HeadInfo {
    /// The current branch (short name), also when it has no commit yet; `None` when detached.
    pub branch: Option<String>,
    /// The commit HEAD points at (full hex); `None` when unborn.
    pub oid: Option<String>,
    /// HEAD points directly at a commit, not at a branch.
    pub detached: bool,
    /// The current branch has no commit yet (a fresh repository).
    pub unborn: bool,
}

/// An operation git has started and not finished; recording is unsafe until it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum InProgress {
    Merge,
    Rebase,
    CherryPick,
    Revert,
    Bisect,
    /// `git am` (applying mailbox patches).
    ApplyMailbox,
}

/// Where publishing shares the current branch.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Destination {
    /// The remote's name (`origin`).
    pub remote: String,
    /// The branch name on the remote.
    pub branch: String,
    /// The local ref that mirrors it (`refs/remotes/origin/main`).
    pub tracking_ref: String,
    /// Whether this is the branch's configured upstream (otherwise inferred; publishing then
    /// sets it).
    pub configured: bool,
}

/// What HEAD has that the destination lacks, and the reverse.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unpublished {
    /// Commits reachable from HEAD but not from the destination.
    pub count: usize,
    /// The first (newest) of those commits, at most the requested limit.
    pub shas: Vec<String>,
    /// Commits on the destination's tracking ref that HEAD lacks.
    pub behind: usize,
}

impl GitRepo {
    /// The current branch and commit. An unborn branch (no commit yet) is not an error.
    pub fn head(&self) -> Result<HeadInfo, GitError> {
        let repo = self.open()?;
        match repo.head() {
            Ok(head) => {
                let detached = !head.is_branch();
                Ok(HeadInfo {
                    branch: (!detached).then(|| lossy(head.shorthand_bytes())),
                    oid: head.target().map(|o| o.to_string()),
                    detached,
                    unborn: false,
                })
            }
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => {
                let head = repo.find_reference("HEAD")?;
                let branch = head
                    .symbolic_target_bytes()
                    .map(|t| lossy(t.strip_prefix(b"refs/heads/".as_slice()).unwrap_or(t)));
                Ok(HeadInfo {
                    branch,
                    oid: None,
                    detached: false,
                    unborn: true,
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The merge, rebase, cherry-pick, revert, bisect or `am` that is under way, if any.
    /// `None` also when the repository cannot be read (the next call will say why).
    pub fn operation_in_progress(&self) -> Option<InProgress> {
        let repo = self.open().ok()?;
        match repo.state() {
            RepositoryState::Clean => None,
            RepositoryState::Merge => Some(InProgress::Merge),
            RepositoryState::Revert | RepositoryState::RevertSequence => Some(InProgress::Revert),
            RepositoryState::CherryPick | RepositoryState::CherryPickSequence => {
                Some(InProgress::CherryPick)
            }
            RepositoryState::Bisect => Some(InProgress::Bisect),
            RepositoryState::Rebase
            | RepositoryState::RebaseInteractive
            | RepositoryState::RebaseMerge => Some(InProgress::Rebase),
            RepositoryState::ApplyMailbox => Some(InProgress::ApplyMailbox),
            RepositoryState::ApplyMailboxOrRebase => Some(InProgress::Rebase),
        }
    }

    /// Where publishing would share the current branch: its configured upstream
    /// (`branch.<b>.remote` / `.merge`, a remote other than `.`); otherwise the remote `origin`
    /// (or the only remote) with a branch of the same name; otherwise `None`. Detached or
    /// unborn HEAD → `None`.
    pub fn destination(&self) -> Result<Option<Destination>, GitError> {
        let repo = self.open()?;
        let head = self.head()?;
        let Some(branch) = head.branch.filter(|_| !head.unborn) else {
            return Ok(None);
        };
        if let Some(dest) = configured_upstream(&repo, &branch)? {
            return Ok(Some(dest));
        }
        let remotes = repo.remotes()?;
        let names: Vec<&str> = remotes.iter().filter_map(|r| r.ok().flatten()).collect();
        let remote = if names.contains(&"origin") {
            "origin"
        } else if let [only] = names.as_slice() {
            only
        } else {
            return Ok(None);
        };
        Ok(Some(Destination {
            remote: remote.to_string(),
            tracking_ref: format!("refs/remotes/{remote}/{branch}"),
            branch,
            configured: false,
        }))
    }

    /// Commits reachable from HEAD but not from `dest.tracking_ref` (when that ref does not
    /// exist: not from any `refs/remotes/<remote>/*`), newest first, the first `limit` listed;
    /// and how many commits the tracking ref has that HEAD lacks. Unborn HEAD: nothing
    /// unpublished.
    pub fn unpublished(&self, dest: &Destination, limit: usize) -> Result<Unpublished, GitError> {
        let repo = self.open()?;
        let tracking = repo.refname_to_id(&dest.tracking_ref).ok();
        let head = match repo.head() {
            Ok(h) => h.target(),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
            Err(e) => return Err(e.into()),
        };
        let Some(head) = head else {
            let behind = match tracking {
                Some(t) => count_from(&repo, t)?,
                None => 0,
            };
            return Ok(Unpublished {
                count: 0,
                shas: Vec::new(),
                behind,
            });
        };
        let mut walk = repo.revwalk()?;
        walk.push(head)?;
        match tracking {
            Some(t) => walk.hide(t)?,
            None => walk.hide_glob(&format!("refs/remotes/{}/*", dest.remote))?,
        }
        let mut shas = Vec::new();
        let mut count = 0;
        for oid in walk {
            let oid = oid?;
            if shas.len() < limit {
                shas.push(oid.to_string());
            }
            count += 1;
        }
        let behind = match tracking {
            Some(t) => repo.graph_ahead_behind(head, t)?.1,
            None => 0,
        };
        Ok(Unpublished {
            count,
            shas,
            behind,
        })
    }

    /// The full id of the commit whose hex id starts with `rev` (4 to 64 hex digits).
    /// `None` when no single commit matches (unknown, ambiguous, not a commit, not hex).
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<String>, GitError> {
        let rev = rev.trim();
        if !(4..=64).contains(&rev.len()) || !rev.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let repo = self.open()?;
        let found = match Oid::from_str(rev) {
            Ok(oid) if rev.len() == 40 || rev.len() == 64 => repo.find_commit(oid),
            _ => repo.find_commit_by_prefix(rev),
        };
        match found {
            Ok(commit) => Ok(Some(commit.id().to_string())),
            Err(e)
                if matches!(
                    e.code(),
                    ErrorCode::NotFound | ErrorCode::Ambiguous | ErrorCode::InvalidSpec
                ) || e.class() == git2::ErrorClass::Object =>
            {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The URL git would fetch `remote` from (`git remote get-url` semantics: `insteadOf`
    /// rewrites applied); `None` when there is no such remote. Credentials in the URL are
    /// removed (all user-info of http(s) URLs, the password of others).
    pub fn remote_url(&self, remote: &str) -> Result<Option<String>, GitError> {
        if remote.is_empty() || remote.starts_with('-') {
            return Ok(None);
        }
        let out = GitCommand::new(self, "remote get-url")
            .args(["remote", "get-url", "--", remote])
            .run()?;
        if out.status.exit_code() == Some(2) || out.stderr_tail.contains("No such remote") {
            return Ok(None);
        }
        if !out.status.success() {
            return Err(GitError::failed("remote get-url", out.detail()));
        }
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(Some(redact_credentials(&url)))
    }
}

/// The branch's configured upstream, when it names a remote (not `.`).
fn configured_upstream(repo: &Repository, branch: &str) -> Result<Option<Destination>, GitError> {
    let config = repo.config()?.snapshot()?;
    let remote = match config.get_string(&format!("branch.{branch}.remote")) {
        Ok(r) if !r.is_empty() && r != "." => r,
        _ => return Ok(None),
    };
    let Ok(merge) = config.get_string(&format!("branch.{branch}.merge")) else {
        return Ok(None);
    };
    let remote_branch = merge
        .strip_prefix("refs/heads/")
        .unwrap_or(&merge)
        .to_string();
    let tracking_ref = repo
        .find_branch(branch, BranchType::Local)
        .ok()
        .and_then(|b| b.get().name().ok().map(String::from))
        .and_then(|refname| repo.branch_upstream_name(&refname).ok())
        .and_then(|buf| buf.as_str().ok().map(String::from))
        .unwrap_or_else(|| format!("refs/remotes/{remote}/{remote_branch}"));
    Ok(Some(Destination {
        remote,
        branch: remote_branch,
        tracking_ref,
        configured: true,
    }))
}

fn count_from(repo: &Repository, start: Oid) -> Result<usize, GitError> {
    let mut walk = repo.revwalk()?;
    walk.push(start)?;
    let mut n = 0;
    for oid in walk {
        oid?;
        n += 1;
    }
    Ok(n)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
