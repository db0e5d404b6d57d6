//! Commit history: recent commits (libgit2; the git CLI when limited to a path, where it can
//! use commit-graph Bloom filters) and the walk that finds commits not yet known to Butler.

use std::collections::{BinaryHeap, HashMap};

use chrono::{DateTime, FixedOffset, SecondsFormat};
use git2::{Commit, ErrorCode, Oid, Repository};

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::path::RepoPath;

/// One commit as Butler shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitInfo {
    /// Full hex id.
    pub sha: String,
    /// The full message (trailing whitespace removed).
    pub message: String,
    /// When it was committed, RFC 3339 with the commit's own UTC offset.
    pub time: String,
    /// The author's name.
    pub author_name: String,
}

impl GitRepo {
    /// The newest `n` commits from HEAD (all parents, git's default order); with `path`
    /// (not the root), only commits that touch it. Unborn HEAD → empty.
    pub fn recent_commits(
        &self,
        n: usize,
        path: Option<&RepoPath>,
    ) -> Result<Vec<CommitInfo>, GitError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let repo = self.open()?;
        let Some(head) = head_oid(&repo)? else {
            return Ok(Vec::new());
        };
        match path.filter(|p| !p.is_root()) {
            Some(path) => self.log_path(n, path),
            None => {
                let mut walk = repo.revwalk()?;
                walk.push(head)?;
                let mut out = Vec::with_capacity(n);
                for oid in walk.take(n) {
                    out.push(commit_info(&repo.find_commit(oid?)?));
                }
                Ok(out)
            }
        }
    }

    /// Commits from HEAD (newest first, at most `limit`) down to the ones `is_known` accepts:
    /// a known commit and everything reachable from it are left out, like `git log HEAD
    /// --not <known…>`. Unborn HEAD → empty.
    pub fn commits_since(
        &self,
        is_known: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<CommitInfo>, GitError> {
        let repo = self.open()?;
        let Some(head) = head_oid(&repo)? else {
            return Ok(Vec::new());
        };
        let mut walk = Walk::new(&repo);
        walk.push(head, false)?;
        let mut out = Vec::new();
        while out.len() < limit {
            let Some((commit, hidden)) = walk.next_commit()? else {
                break;
            };
            let hidden = hidden || is_known(&commit.id().to_string());
            for parent in commit.parent_ids() {
                walk.push(parent, hidden)?;
            }
            if !hidden {
                out.push(commit_info(&commit));
            }
        }
        Ok(out)
    }

    /// The commit `sha` (a full id); `None` when the repository does not have it.
    pub fn commit(&self, sha: &str) -> Result<Option<CommitInfo>, GitError> {
        let repo = self.open()?;
        let Ok(oid) = Oid::from_str(sha) else {
            return Ok(None);
        };
        match repo.find_commit(oid) {
            Ok(commit) => Ok(Some(commit_info(&commit))),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the commit `sha` is in the history of HEAD or of any branch, shared line or
    /// tag (a commit a rebase or an amend left behind is not).
    pub fn is_reachable(&self, sha: &str) -> Result<bool, GitError> {
        let repo = self.open()?;
        let Ok(target) = Oid::from_str(sha) else {
            return Ok(false);
        };
        let mut tips: Vec<Oid> = head_oid(&repo)?.into_iter().collect();
        // Branches, shared lines and tags only: Butler's own keeping refs (the operation log,
        // commits kept after a `work_vcs` run) hold what was left behind on purpose.
        for reference in repo.references()? {
            let reference = reference?;
            let counted = reference.name().is_ok_and(|name| {
                ["refs/heads/", "refs/remotes/", "refs/tags/"]
                    .iter()
                    .any(|prefix| name.starts_with(prefix))
            });
            if counted && let Ok(commit) = reference.peel_to_commit() {
                tips.push(commit.id());
            }
        }
        tips.sort();
        tips.dedup();
        for tip in tips {
            if tip == target || repo.graph_descendant_of(tip, target).unwrap_or(false) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn log_path(&self, n: usize, path: &RepoPath) -> Result<Vec<CommitInfo>, GitError> {
        let out = GitCommand::new(self, "log")
            .args([
                "--literal-pathspecs",
                "-c",
                "log.showSignature=false",
                "log",
                "-z",
            ])
            .arg(format!("--max-count={n}"))
            .args([
                "--no-color",
                "--date=raw",
                "--format=%H%x00%an%x00%cd%x00%B",
                "--",
            ])
            .arg(path.as_path())
            .run_ok()?;
        let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        let mut commits = Vec::new();
        for chunk in fields.chunks_exact(4) {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let (secs, offset) = parse_raw_date(&text(chunk[2]))
                .ok_or_else(|| GitError::failed("log", "unreadable date"))?;
            commits.push(CommitInfo {
                sha: text(chunk[0]).trim_start_matches('\n').to_string(),
                author_name: text(chunk[1]),
                time: rfc3339(secs, offset),
                message: text(chunk[3]).trim_end().to_string(),
            });
        }
        Ok(commits)
    }
}

fn head_oid(repo: &Repository) -> Result<Option<Oid>, GitError> {
    match repo.head() {
        Ok(head) => Ok(head.target()),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub(crate) fn commit_info(commit: &Commit<'_>) -> CommitInfo {
    let time = commit.time();
    CommitInfo {
        sha: commit.id().to_string(),
        message: String::from_utf8_lossy(commit.message_raw_bytes())
            .trim_end()
            .to_string(),
        time: rfc3339(time.seconds(), time.offset_minutes() * 60),
        author_name: String::from_utf8_lossy(commit.author().name_bytes()).into_owned(),
    }
}

/// `1700000000 +0900` → (seconds, offset seconds).
fn parse_raw_date(text: &str) -> Option<(i64, i32)> {
    let (secs, tz) = text.trim().split_once(' ')?;
    let secs: i64 = secs.parse().ok()?;
    let sign = if tz.starts_with('-') { -1 } else { 1 };
    let digits = tz.trim_start_matches(['+', '-']);
    if digits.len() != 4 {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..].parse().ok()?;
    Some((secs, sign * (hours * 3600 + minutes * 60)))
}

/// RFC 3339 in the given offset (`+00:00`, never `Z`).
fn rfc3339(secs: i64, offset_secs: i32) -> String {
    let offset = FixedOffset::east_opt(offset_secs)
        .unwrap_or_else(|| FixedOffset::east_opt(0).expect("zero offset is valid"));
    DateTime::from_timestamp(secs, 0)
        .unwrap_or_default()
        .with_timezone(&offset)
        .to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// A history walk newest-commit-first (by committer time, like git's default), where hidden
/// commits pass their hiddenness to their parents. It ends when only hidden commits remain.
struct Walk<'r> {
    repo: &'r Repository,
    queue: BinaryHeap<(i64, Oid)>,
    /// Every commit seen so far.
    seen: HashMap<Oid, Seen>,
    /// Queued commits that are not hidden.
    visible_queued: usize,
}

#[derive(Clone, Copy)]
struct Seen {
    hidden: bool,
    popped: bool,
}

impl<'r> Walk<'r> {
    fn new(repo: &'r Repository) -> Self {
        Walk {
            repo,
            queue: BinaryHeap::new(),
            seen: HashMap::new(),
            visible_queued: 0,
        }
    }

    fn push(&mut self, oid: Oid, hidden: bool) -> Result<(), GitError> {
        if let Some(seen) = self.seen.get_mut(&oid) {
            // Learned late (clock skew, or a known commit below a merge): hide it while it is
            // still waiting.
            if hidden && !seen.hidden && !seen.popped {
                seen.hidden = true;
                self.visible_queued -= 1;
            }
            return Ok(());
        }
        let time = self.repo.find_commit(oid)?.time().seconds();
        self.queue.push((time, oid));
        self.seen.insert(
            oid,
            Seen {
                hidden,
                popped: false,
            },
        );
        if !hidden {
            self.visible_queued += 1;
        }
        Ok(())
    }

    /// The next commit and whether it is hidden; `None` once only hidden ones are left.
    fn next_commit(&mut self) -> Result<Option<(Commit<'r>, bool)>, GitError> {
        if self.visible_queued == 0 {
            return Ok(None);
        }
        let Some((_, oid)) = self.queue.pop() else {
            return Ok(None);
        };
        let seen = self.seen.get_mut(&oid).expect("queued commits are seen");
        seen.popped = true;
        if !seen.hidden {
            self.visible_queued -= 1;
        }
        let hidden = seen.hidden;
        Ok(Some((self.repo.find_commit(oid)?, hidden)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_dates_keep_their_offset() {
        let (secs, off) = parse_raw_date("1781234567 +0900").expect("parses");
        assert_eq!(rfc3339(secs, off), "2026-06-12T12:22:47+09:00");
        let (secs, off) = parse_raw_date("0 -0130").expect("parses");
        assert_eq!(rfc3339(secs, off), "1969-12-31T22:30:00-01:30");
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00+00:00");
    }
}
