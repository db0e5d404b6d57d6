//! Lines of work: the branches of the working tree as the Brain knows them — listing them,
//! starting one, switching between them, and merging one into another.
//!
//! [`merge_line`] is the one merge of Butler: the Brain's `work_merge_line` and the Maid's
//! task acceptance both go through it. It fast-forwards when the line has not moved on;
//! otherwise it merges without committing, and only a clean merge is recorded (through the
//! record protocol, so the merge commit carries a record id). A conflicting merge is left
//! exactly as a conflicting `git merge` leaves it (the merge in progress, conflict markers in
//! the files), for the Brain to resolve and record.
//!
//! Where a line came from is kept in the repository's configuration
//! (`branch.<line>.butlerFrom`), which git renames and removes together with the branch.

use std::collections::BTreeSet;

use git2::{BranchType, ErrorCode, Oid};

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::hardened;
use crate::ledger::{Ledger, LedgerError, RecordId};
use crate::plain::skeleton;
use crate::record::{self, Draft};

/// The lines the ImplementMaid creates for its tasks: `butler/task-<id>`.
pub const TASK_LINE_PREFIX: &str = "butler/task-";
/// Lines under this prefix belong to Butler; the Brain does not name new ones there.
const BUTLER_PREFIX: &str = "butler/";
/// The longest line name Butler accepts.
pub const MAX_LINE_NAME: usize = 100;
/// Where the line a line came from is remembered (`branch.<line>.butlerFrom`).
const FROM_KEY: &str = "butlerFrom";

/// One line of work.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LineInfo {
    pub name: String,
    /// The ImplementMaid's task working on this line (`t3` for `butler/task-t3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}

/// How a new line's name could be taken for another ([`GitRepo::line_name_clash`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineClash {
    /// It starts with `<remote>/`: it would read as that remote's shared line.
    Shared { remote: String },
    /// It is `existing` up to case and lookalike letters (or exactly).
    LooksLike { existing: String },
}

/// Whose merge commit [`merge_line`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committer {
    /// The person (or the Brain): their identity, configuration and hooks, as `git merge`.
    Person,
    /// The ImplementMaid accepting a task: its own identity, with hooks and
    /// program-running settings off (the task's line was written by an agent).
    Maid,
}

/// How [`merge_line`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// The current line already has everything of the merged one: nothing changed.
    AlreadyIn { head: String },
    /// The current line had not moved on: it now points where the merged line does.
    FastForward { head: String },
    /// A merge commit joins the two lines; it is the record `record`.
    Merged { head: String, record: RecordId },
    /// The merge stopped on conflicts in `files` and is left in progress, as `git merge`
    /// leaves it; nothing was recorded.
    Conflicted { files: Vec<String> },
}

/// Why `name` cannot name a new line, if it cannot: git's rules for branch names
/// (`git check-ref-format --branch`), and no options, no `butler/` prefix, no `refs/`, no
/// invisible or direction-changing characters. (Whether it can be taken for another line is
/// [`GitRepo::line_name_clash`]'s question.)
pub fn check_line_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".into());
    }
    if name.chars().count() > MAX_LINE_NAME {
        return Err(format!("it is longer than {MAX_LINE_NAME} characters"));
    }
    if name.starts_with('-') {
        return Err("it starts with `-`".into());
    }
    if name == "HEAD" || name == "@" || name.starts_with("refs/") {
        return Err(format!("`{name}` is reserved by git"));
    }
    if name.starts_with(BUTLER_PREFIX) {
        return Err("lines under `butler/` belong to Butler".into());
    }
    if let Some(c) = name.chars().find(|c| {
        c.is_control()
            || c.is_whitespace()
            || crate::plain::is_invisible_format(*c)
            || "~^:?*[\\".contains(*c)
    }) {
        return Err(format!("it contains {}", c.escape_unicode()));
    }
    if name.contains("..") || name.contains("@{") {
        return Err("it contains `..` or `@{`".into());
    }
    if name.ends_with('.') {
        return Err("it ends with `.`".into());
    }
    for part in name.split('/') {
        if part.is_empty() {
            return Err("it has an empty `/` component".into());
        }
        if part.starts_with('.') || part.ends_with(".lock") {
            return Err("a component starts with `.` or ends with `.lock`".into());
        }
    }
    Ok(())
}

/// The task of a task line (`butler/task-t3` → `t3`).
pub fn task_of_line(name: &str) -> Option<&str> {
    name.strip_prefix(TASK_LINE_PREFIX)
        .filter(|t| !t.is_empty())
}

impl GitRepo {
    /// Every local line, sorted by name; task lines carry their task.
    pub fn lines(&self) -> Result<Vec<LineInfo>, GitError> {
        let repo = self.open()?;
        let mut names = BTreeSet::new();
        for branch in repo.branches(Some(BranchType::Local))? {
            let (branch, _) = branch?;
            if let Some(name) = branch.name()? {
                names.insert(name.to_owned());
            }
        }
        Ok(names
            .into_iter()
            .map(|name| LineInfo {
                task: task_of_line(&name).map(str::to_owned),
                name,
            })
            .collect())
    }

    /// The commit a local line points at; `None` when there is no such line.
    pub fn line_tip(&self, name: &str) -> Result<Option<String>, GitError> {
        let repo = self.open()?;
        match repo.find_branch(name, BranchType::Local) {
            Ok(branch) => Ok(branch.get().target().map(|o| o.to_string())),
            Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::InvalidSpec) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The commit a shared line (`origin/main`: `refs/remotes/origin/main`) points at.
    pub fn shared_line_tip(&self, name: &str) -> Result<Option<String>, GitError> {
        let repo = self.open()?;
        match repo.find_reference(&format!("refs/remotes/{name}")) {
            Ok(r) => Ok(r.peel_to_commit().ok().map(|c| c.id().to_string())),
            Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::InvalidSpec) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Why a new line `name` could be taken for another, if it could: it would read as a shared
    /// line (`<remote>/…` for a configured remote), or it is an existing line's name up to case
    /// and lookalike letters ([`crate::plain::skeleton`]).
    pub fn line_name_clash(&self, name: &str) -> Result<Option<LineClash>, GitError> {
        let folded = skeleton(name);
        let repo = self.open()?;
        let remotes = repo.remotes()?;
        for remote in remotes.iter().flatten().flatten() {
            if folded.starts_with(&format!("{}/", skeleton(remote))) {
                return Ok(Some(LineClash::Shared {
                    remote: remote.to_owned(),
                }));
            }
        }
        Ok(self
            .lines()?
            .into_iter()
            .find(|line| skeleton(&line.name) == folded)
            .map(|line| LineClash::LooksLike {
                existing: line.name,
            }))
    }

    /// Remotes that have a line called `name` (`refs/remotes/<remote>/<name>`).
    pub fn remotes_with_line(&self, name: &str) -> Result<Vec<String>, GitError> {
        let repo = self.open()?;
        let remotes = repo.remotes()?;
        Ok(remotes
            .iter()
            .filter_map(|r| r.ok().flatten())
            .filter(|remote| {
                repo.find_reference(&format!("refs/remotes/{remote}/{name}"))
                    .is_ok()
            })
            .map(str::to_owned)
            .collect())
    }

    /// The line `name` was started from by [`GitRepo::start_line`], when known.
    pub fn line_origin(&self, name: &str) -> Result<Option<String>, GitError> {
        let config = self.open()?.config()?.snapshot()?;
        match config.get_string(&format!("branch.{name}.{FROM_KEY}")) {
            Ok(from) if !from.is_empty() => Ok(Some(from)),
            _ => Ok(None),
        }
    }

    /// Commits `a` has that `b` lacks, and the reverse (both full commit ids).
    pub fn ahead_behind(&self, a: &str, b: &str) -> Result<(usize, usize), GitError> {
        let repo = self.open()?;
        Ok(repo.graph_ahead_behind(Oid::from_str(a)?, Oid::from_str(b)?)?)
    }

    /// Starts the line `name` at `start` (a commit; `None`: where HEAD is, unrecorded changes
    /// carried along) and switches to it; remembers `from` as the line it came from.
    pub fn start_line(
        &self,
        name: &str,
        start: Option<&str>,
        from: Option<&str>,
    ) -> Result<(), GitError> {
        // Switching writes the index: under Butler's lock on this tree.
        let _held = self.lock_tree()?;
        let mut cmd = GitCommand::new(self, "switch").args(["switch", "-q", "--no-guess", "-c"]);
        cmd = cmd.arg(name);
        if let Some(start) = start {
            cmd = cmd.arg(start);
        }
        cmd.arg("--").run_ok()?;
        if let Some(from) = from {
            let mut config = self.open()?.config()?;
            config.set_str(&format!("branch.{name}.{FROM_KEY}"), from)?;
        }
        Ok(())
    }

    /// Switches the working tree to the line `name` (never discarding changes: git refuses
    /// when a change would be overwritten). A line only a remote has is started from it.
    pub fn switch_line(&self, name: &str) -> Result<(), GitError> {
        let _held = self.lock_tree()?;
        GitCommand::new(self, "switch")
            .args(["switch", "-q", "--guess", name, "--"])
            .run_ok()
            .map(drop)
    }

    /// Paths with unresolved conflicts, sorted.
    pub(crate) fn conflicted_paths(&self) -> Result<Vec<String>, GitError> {
        let out = GitCommand::new(self, "diff")
            .args([
                "-c",
                "core.quotePath=false",
                "diff",
                "--name-only",
                "--diff-filter=U",
                "-z",
            ])
            .run_ok()?;
        let paths: BTreeSet<String> = out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        Ok(paths.into_iter().collect())
    }

    fn merge_command(&self, committer: Committer, op: &'static str) -> GitCommand {
        match committer {
            Committer::Person => GitCommand::new(self, op),
            Committer::Maid => hardened::command(self, op),
        }
    }

    /// Whether `ancestor` is reachable from (or equal to) `of`.
    fn reaches(&self, of: &str, ancestor: &str) -> Result<bool, GitError> {
        let repo = self.open()?;
        let (of, ancestor) = (Oid::from_str(of)?, Oid::from_str(ancestor)?);
        Ok(of == ancestor || repo.graph_descendant_of(of, ancestor)?)
    }
}

/// Brings the commit `source` (the tip of the line being merged) into the current line, as
/// `committer`: see the module documentation. The working tree must hold no unrecorded
/// changes (the caller checks; a merge is never started over them). A clean merge commit
/// carries `draft`'s record text; when that commit fails (a hook refused it) the merge is
/// undone, so nothing is left half-done.
pub fn merge_line<E>(
    repo: &GitRepo,
    ledger: &Ledger,
    source: &str,
    draft: &Draft<'_>,
    committer: Committer,
) -> Result<MergeOutcome, E>
where
    E: From<GitError> + From<LedgerError>,
{
    // A merge writes the index and the tree: all of it under Butler's lock on this tree.
    let held = repo.lock_tree()?;
    repo.wait_for_index(&held)?;
    let head = repo.head()?.oid.ok_or(GitError::UnknownCommit)?;
    if repo.reaches(&head, source)? {
        return Ok(MergeOutcome::AlreadyIn { head });
    }
    if repo.reaches(source, &head)? {
        repo.merge_command(committer, "merge")
            .args(["merge", "-q", "--ff-only", "--no-stat", source])
            .run_ok()?;
        let head = repo.head()?.oid.ok_or(GitError::UnknownCommit)?;
        return Ok(MergeOutcome::FastForward { head });
    }
    // Merge without committing: the message left for a conflicted merge carries no record
    // id (none is reserved until the merge is known to be clean).
    let merged = repo
        .merge_command(committer, "merge")
        .args([
            "merge",
            "-q",
            "--no-commit",
            "--ff",
            "--no-squash",
            "--no-log",
            "--no-stat",
            "--no-autostash",
            "-m",
            draft.message,
            source,
        ])
        .run()?;
    if !merged.status.success() {
        let files = repo.conflicted_paths()?;
        if !files.is_empty() {
            return Ok(MergeOutcome::Conflicted { files });
        }
        if repo.operation_in_progress().is_some() {
            let _ = repo
                .merge_command(committer, "merge")
                .args(["merge", "--abort"])
                .run();
        }
        return Err(GitError::failed("merge", merged.detail()).into());
    }
    let reservation = record::reserve(ledger, draft)?;
    let committed = match committer {
        Committer::Person => repo.record_all_held(&held, reservation.text()),
        Committer::Maid => repo
            .merge_command(committer, "commit")
            .args([
                "commit",
                "-q",
                "--no-verify",
                "--cleanup=whitespace",
                "-F",
                "-",
            ])
            .stdin(reservation.text().as_bytes().to_vec())
            .run_ok()
            .and_then(|_| repo.head()?.oid.ok_or(GitError::UnknownCommit)),
    };
    match committed {
        Ok(sha) => {
            let record = reservation.complete(ledger, &sha)?;
            Ok(MergeOutcome::Merged { head: sha, record })
        }
        Err(e) => {
            let now = repo.head().ok().and_then(|h| h.oid);
            if now.as_deref() == Some(head.as_str()) {
                reservation.release(ledger)?;
                let _ = repo
                    .merge_command(committer, "merge")
                    .args(["merge", "--abort"])
                    .run();
            } else {
                reservation.abandon(ledger)?;
            }
            Err(e.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_names_follow_gits_rules_and_butlers() {
        for good in [
            "topic",
            "issue-50",
            "feature/lines",
            "fix_1.2",
            "作業-1",
            "a@b",
        ] {
            assert_eq!(check_line_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "-b",
            "--force",
            "a..b",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            "a\tb",
            "a\u{7f}",
            "/a",
            "a/",
            "a//b",
            ".hidden",
            "a/.b",
            "a.lock",
            "a/b.lock/c",
            "a.",
            "a@{1}",
            "@",
            "HEAD",
            "refs/heads/x",
            "butler/task-t1",
            "butler/mine",
        ] {
            assert!(check_line_name(bad).is_err(), "`{bad}` must be refused");
        }
        assert!(check_line_name(&"x".repeat(MAX_LINE_NAME + 1)).is_err());
    }

    #[test]
    fn task_lines_name_their_task() {
        assert_eq!(task_of_line("butler/task-t3"), Some("t3"));
        assert_eq!(task_of_line("butler/task-"), None);
        assert_eq!(task_of_line("main"), None);
    }
}
