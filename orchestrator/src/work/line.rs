//! Lines of work — `work_new_line`, `work_switch_line`, `work_merge_line` — and the `line`
//! part of `work_observe`: branches in the Brain's vocabulary.
//!
//! Decisions:
//! - A line change never loses work: switching, or merging into a line, with unrecorded
//!   changes is `need_input` (record first). Starting a new line where the work stands carries
//!   the unrecorded changes along (nothing is overwritten); starting it elsewhere needs a
//!   recorded tree like a switch.
//! - `work_new_line()` without a name: `issue-<N>-<title words>` for the active issue, else
//!   `work-<YYYYMMDD>`; a number is appended when the name is taken. The new line keeps the
//!   active issue of the line it was started from.
//! - `work_merge_line(name)` brings `name` (a line, or a shared one such as `origin/main`) into
//!   the current line. Without a name it brings the current line into the line it was started
//!   from and continues there. A task line's merge is `task_accept`.
//! - A conflicting merge is left exactly as git leaves it (`conflict`, and `work_observe` says
//!   `blocked` with the files) for the Brain to resolve and record.
//! - A line's name says what it is: a new line may not start with a configured remote's name
//!   and `/` (it would read as that remote's shared line), nor be an existing line's name up
//!   to case and lookalike letters; invisible and direction-changing characters are refused.
//!   A name that is both a local line and a shared one is refused by `work_switch_line` and
//!   `work_merge_line` with both named, never resolved by picking one.

use crate::catalogue::{Key, fill, text};
use std::sync::Arc;

use butler_worker::git::{
    Committer, FilesQuery, GitRepo, LineClash, LineInfo, LossQuery, Lost, MergeOutcome, Source,
    Untracked, check_line_name, merge_line as merge_lines, task_of_line,
};
use butler_worker::record::Draft;
use serde::Serialize;

use crate::envelope::Reply;
use crate::error::{BlockReason, WorkError};
use crate::session::{Project, blocking};
use crate::work::diff::resolve_record;
use crate::work::snapshot::{Snapshot, line_of, snapshot, title};

mod view;

pub use view::{LineView, attach, line_view};

/// How many files a line change would overwrite are named (the rest are counted).
const MAX_LOST_NAMED: usize = 50;
/// The longest name accepted for an existing line (git's own limit is the file system's).
const MAX_EXISTING_NAME: usize = 255;

// ---- the tools ----

/// What `work_new_line`, `work_switch_line` and `work_merge_line` answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LineChange {
    /// The line the project is on now.
    pub line: String,
    /// Where it came from (new line) or was before (switch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Unrecorded changes carried onto a new line.
    #[serde(skip_serializing_if = "is_zero")]
    pub carried_changes: usize,
}

/// How a merge of lines ended.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Merged {
    /// The current line already had everything.
    AlreadyIn,
    /// The current line had not moved on: it now points where the merged line does.
    FastForward,
    /// A merge record joins the lines.
    Merged,
}

/// `work_merge_line`'s answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MergeDone {
    /// The line that received the records (the current line now).
    pub line: String,
    /// The line whose records came in.
    pub merged: String,
    pub outcome: Merged,
    /// How many records came in.
    pub records: usize,
    /// The merge record, when one was needed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_id: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `work_new_line(name?, from?)`.
pub async fn new_line(
    project: &Arc<Project>,
    name: Option<String>,
    from: Option<String>,
) -> Result<Reply, WorkError> {
    let name = match name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => {
            check_line_name(n).map_err(|reason| WorkError::InvalidArgument {
                field: "name",
                reason,
            })?;
            n.to_owned()
        }
        None => generated_name(project).await?,
    };
    let from = from.map(|f| f.trim().to_owned()).filter(|f| !f.is_empty());
    let done = blocking(project, move |p| start(p, &name, from.as_deref())).await?;
    let mut summary = match &done.from {
        Some(from) => fill(
            Key::LineStartedFrom,
            &[("line", &done.line), ("from", from)],
        ),
        None => fill(Key::LineStarted, &[("line", &done.line)]),
    };
    if done.carried_changes > 0 {
        summary.push_str(&fill(Key::LineCarried, &[("n", &done.carried_changes)]));
    }
    Ok(Reply::new(summary, done))
}

/// A name for a new line: from the active issue (`issue-50-hide-the-tracker`), else the date.
async fn generated_name(project: &Arc<Project>) -> Result<String, WorkError> {
    let issue = blocking(project, |p| {
        let head = p.repo.head()?;
        Ok(p.active_issue(&line_of(&head)))
    })
    .await?;
    let base = match issue {
        Some(n) => {
            let mut notes = Vec::new();
            let words = title(project, n, &mut notes)
                .await
                .map(|t| slug(&t))
                .unwrap_or_default();
            if words.is_empty() {
                format!("issue-{n}")
            } else {
                format!("issue-{n}-{words}")
            }
        }
        None => format!("work-{}", project.clock.now().day()),
    };
    let taken = blocking(project, |p| Ok(p.repo.lines()?)).await?;
    Ok(free_name(&base, &taken))
}

/// Up to five lowercase ASCII words of `title`, joined by `-` (at most 40 characters).
fn slug(title: &str) -> String {
    let mut out = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
    {
        if out.len() + word.len() + 1 > 40 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

/// `base`, or `base-2`, `base-3`, … whichever no line has.
fn free_name(base: &str, taken: &[LineInfo]) -> String {
    let used = |n: &str| taken.iter().any(|l| l.name == n);
    if !used(base) {
        return base.to_owned();
    }
    (2..)
        .map(|i| format!("{base}-{i}"))
        .find(|n| !used(n))
        .expect("some suffix is free")
}

fn require_recorded(snapshot: &Snapshot) -> Result<(), WorkError> {
    if snapshot.status.entries.is_empty() {
        return Ok(());
    }
    Err(WorkError::LineNeedsRecord {
        paths: snapshot
            .status
            .entries
            .iter()
            .map(|e| e.path.display())
            .collect(),
    })
}

/// Ignored files git would overwrite when the tree of `rev` is written over the working tree
/// (git replaces ignored files without asking): refused with the list, so the user decides.
/// The way on it names removes exactly those files through `work_vcs`, itself approved by
/// what it deletes.
fn refuse_ignored_loss(project: &Project, rev: &str) -> Result<(), WorkError> {
    let query = LossQuery::Files(FilesQuery {
        source: Source::Tree(rev.to_owned()),
        pathspecs: None,
        worktree: true,
        index: true,
        edits: false,
        untracked: Untracked::IgnoredOnly,
        overlay: false,
    });
    let lost = project.repo.would_lose(&[query], &[])?;
    if lost.is_empty() {
        return Ok(());
    }
    let mut via: Vec<String> = ["clean", "-f", "-X", "--"].map(String::from).to_vec();
    via.extend(lost.iter().take(MAX_LOST_NAMED).filter_map(|l| match l {
        Lost::Ignored { path } | Lost::Untracked { path } | Lost::Edits { path } => {
            Some(path.clone())
        }
        _ => None,
    }));
    Err(WorkError::LineWouldLose {
        total: lost.len(),
        lost: lost
            .iter()
            .take(MAX_LOST_NAMED)
            .map(Lost::describe)
            .collect(),
        via,
    })
}

fn start(project: &Project, name: &str, from: Option<&str>) -> Result<LineChange, WorkError> {
    let repo = &project.repo;
    let snap = snapshot(repo)?;
    snap.refuse_blocked_unless_detached()?;
    if repo.line_tip(name)?.is_some() {
        return Err(WorkError::LineExists { name: name.into() });
    }
    match repo.line_name_clash(name)? {
        None => {}
        Some(LineClash::Shared { remote }) => {
            return Err(WorkError::LineShadowsShared {
                name: name.into(),
                remote,
            });
        }
        Some(LineClash::LooksLike { existing }) => {
            return Err(WorkError::LineLooksLike {
                name: name.into(),
                existing,
            });
        }
    }
    let current = snap.head.branch.clone().filter(|_| !snap.head.detached);
    let (start_at, origin) = match from {
        None => (None, current.clone()),
        Some(from) => match repo.line_tip(from)? {
            Some(tip) => (Some(tip), Some(from.to_owned())),
            None => match resolve_record(project, from) {
                Ok(sha) => (Some(sha), current.clone()),
                Err(WorkError::RecordNotFound { .. } | WorkError::InvalidArgument { .. }) => {
                    return Err(not_found(repo, from));
                }
                Err(e) => return Err(e),
            },
        },
    };
    // Starting where the work stands keeps the changes as they are; elsewhere is a switch.
    let moves = start_at.is_some() && start_at != snap.head.oid;
    if moves {
        require_recorded(&snap)?;
    }
    repo.start_line(name, start_at.as_deref(), origin.as_deref())?;
    // The work goes on for the same issue: the new line starts with the current line's.
    if let Some(issue) = project.active_issue(&line_of(&snap.head)) {
        project.with_ledger(|l| Ok(project.set_active_issue(l, name, Some(issue))?))?;
    }
    Ok(LineChange {
        line: name.into(),
        from: origin,
        carried_changes: if moves { 0 } else { snap.status.entries.len() },
    })
}

fn not_found(repo: &GitRepo, name: &str) -> WorkError {
    WorkError::LineNotFound {
        name: name.chars().take(MAX_EXISTING_NAME).collect(),
        lines: repo.lines().unwrap_or_default(),
    }
}

/// A name the Brain gave for an existing line: loosely checked (git refuses what it does not
/// know), never an option.
fn existing_name(field: &'static str, name: &str) -> Result<String, WorkError> {
    let name = name.trim();
    let bad = |reason: Key| WorkError::InvalidArgument {
        field,
        reason: text(reason).into(),
    };
    if name.is_empty() {
        return Err(bad(Key::ArgLineEmpty));
    }
    if name.starts_with('-') {
        return Err(bad(Key::ArgLineDash));
    }
    if name.len() > MAX_EXISTING_NAME || name.chars().any(char::is_control) {
        return Err(bad(Key::ArgNotLineName));
    }
    Ok(name.to_owned())
}

/// `work_switch_line(name)`.
pub async fn switch_line(project: &Arc<Project>, name: &str) -> Result<Reply, WorkError> {
    let name = existing_name("name", name)?;
    let done = blocking(project, move |p| switch(p, &name)).await?;
    let summary = match &done.from {
        Some(from) if *from == done.line => fill(Key::AlreadyOnLine, &[("line", &done.line)]),
        Some(from) => fill(Key::SwitchedFrom, &[("line", &done.line), ("from", from)]),
        None => fill(Key::Switched, &[("line", &done.line)]),
    };
    Ok(Reply::new(summary, done))
}

fn switch(project: &Project, name: &str) -> Result<LineChange, WorkError> {
    let repo = &project.repo;
    let snap = snapshot(repo)?;
    snap.refuse_blocked_unless_detached()?;
    let current = snap.head.branch.clone().filter(|_| !snap.head.detached);
    if current.as_deref() == Some(name) {
        return Ok(LineChange {
            line: name.into(),
            from: current,
            carried_changes: 0,
        });
    }
    if let Some(task) = task_of_line(name) {
        return Err(task_line(task));
    }
    refuse_ambiguous(repo, name)?;
    if repo.line_tip(name)?.is_none() && repo.remotes_with_line(name)?.len() != 1 {
        return Err(not_found(repo, name));
    }
    require_recorded(&snap)?;
    let target = match repo.line_tip(name)? {
        Some(tip) => tip,
        None => {
            let remotes = repo.remotes_with_line(name)?;
            let remote = remotes.first().ok_or_else(|| not_found(repo, name))?;
            format!("refs/remotes/{remote}/{name}")
        }
    };
    refuse_ignored_loss(project, &target)?;
    repo.switch_line(name)?;
    Ok(LineChange {
        line: name.into(),
        from: current,
        carried_changes: 0,
    })
}

/// Refuses a name that is both a local line and a shared one (a local line called
/// `origin/main` beside the remote's `origin/main`): which one is meant is never guessed.
fn refuse_ambiguous(repo: &GitRepo, name: &str) -> Result<(), WorkError> {
    if repo.line_tip(name)?.is_some() && repo.shared_line_tip(name)?.is_some() {
        return Err(WorkError::LineAmbiguous { name: name.into() });
    }
    Ok(())
}

fn task_line(task: &str) -> WorkError {
    WorkError::PolicyBlocked {
        reason: fill(Key::ErrTaskLine, &[("task", &task)]),
        hint: fill(Key::ErrTaskLineHint, &[("task", &task)]),
    }
}

/// `work_merge_line(name?)`.
pub async fn merge_line(project: &Arc<Project>, name: Option<String>) -> Result<Reply, WorkError> {
    let name = name
        .as_deref()
        .map(|n| existing_name("name", n))
        .transpose()?;
    if let Some(task) = name.as_deref().and_then(task_of_line) {
        return crate::implement::task_accept(project, task, &[]).await;
    }
    let done = blocking(project, move |p| merge(p, name.as_deref())).await?;
    let summary = match done.outcome {
        Merged::AlreadyIn => fill(
            Key::LineAlreadyIn,
            &[("line", &done.line), ("merged", &done.merged)],
        ),
        Merged::FastForward => fill(
            Key::LineBroughtIn,
            &[
                ("n", &done.records),
                ("merged", &done.merged),
                ("line", &done.line),
            ],
        ),
        Merged::Merged => fill(
            Key::LineMerged,
            &[
                ("merged", &done.merged),
                ("line", &done.line),
                ("n", &done.records),
                ("id", &done.record_id.as_deref().unwrap_or("?")),
            ],
        ),
    };
    Ok(Reply::new(summary, done))
}

fn merge(project: &Project, name: Option<&str>) -> Result<MergeDone, WorkError> {
    let repo = &project.repo;
    let snap = snapshot(repo)?;
    snap.refuse_blocked()?;
    require_recorded(&snap)?;
    if snap.head.unborn {
        return Err(WorkError::PolicyBlocked {
            reason: text(Key::ErrLineNoRecords).into(),
            hint: text(Key::ErrLineNoRecordsHint).into(),
        });
    }
    let current = line_of(&snap.head);
    let (source, target) = match name {
        Some(name) if name == current => {
            return Err(WorkError::InvalidArgument {
                field: "name",
                reason: fill(Key::ArgMergeCurrentLine, &[("name", &name)]),
            });
        }
        Some(name) => (name.to_owned(), current.clone()),
        None => {
            let origin = repo
                .line_origin(&current)?
                .ok_or_else(|| WorkError::LineNeeded {
                    lines: repo.lines().unwrap_or_default(),
                })?;
            (current.clone(), origin)
        }
    };
    refuse_ambiguous(repo, &source)?;
    let tip = match repo.line_tip(&source)? {
        Some(tip) => tip,
        None => repo
            .shared_line_tip(&source)?
            .ok_or_else(|| not_found(repo, &source))?,
    };
    if target != current {
        let Some(target_tip) = repo.line_tip(&target)? else {
            return Err(not_found(repo, &target));
        };
        refuse_ignored_loss(project, &target_tip)?;
        repo.switch_line(&target)?;
    }
    if let Err(e) = refuse_ignored_loss(project, &tip) {
        if target != current {
            let _ = repo.switch_line(&current);
        }
        return Err(e);
    }
    let result = merge_into(project, &source, &target, &tip);
    if result.is_err() && target != current && repo.operation_in_progress().is_none() {
        // Nothing was merged: go back to where the Brain was.
        let _ = repo.switch_line(&current);
    }
    result
}

fn merge_into(
    project: &Project,
    source: &str,
    target: &str,
    tip: &str,
) -> Result<MergeDone, WorkError> {
    let repo = &project.repo;
    let head = repo
        .head()?
        .oid
        .ok_or(WorkError::Blocked(BlockReason::Detached))?;
    let (records, _) = repo.ahead_behind(tip, &head)?;
    let message = format!("Merge line {source} into {target}");
    let outcome = project.with_ledger(|ledger| {
        let issue = project
            .active_issue(source)
            .or_else(|| project.active_issue(target));
        let issues: Vec<u64> = issue.into_iter().collect();
        let draft = Draft {
            message: &message,
            issue_ids: &issues,
            line: Some(target),
            task: None,
        };
        merge_lines::<WorkError>(repo, ledger, tip, &draft, Committer::Person)
    })?;
    let done = |outcome, record_id| MergeDone {
        line: target.into(),
        merged: source.into(),
        outcome,
        records,
        record_id,
    };
    match outcome {
        MergeOutcome::AlreadyIn { .. } => Ok(done(Merged::AlreadyIn, None)),
        MergeOutcome::FastForward { .. } => Ok(done(Merged::FastForward, None)),
        MergeOutcome::Merged { record, .. } => Ok(done(Merged::Merged, Some(record.to_string()))),
        MergeOutcome::Conflicted { files } => Err(WorkError::MergeConflicted {
            files,
            from: source.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_slugs_and_free() {
        assert_eq!(
            slug("Brain の issue 操作抽象化: hide Gitea"),
            "brain-issue-hide-gitea"
        );
        assert_eq!(slug("完全に日本語"), "");
        let taken = vec![
            LineInfo {
                name: "issue-5".into(),
                task: None,
            },
            LineInfo {
                name: "issue-5-2".into(),
                task: None,
            },
        ];
        assert_eq!(free_name("issue-5", &taken), "issue-5-3");
        assert_eq!(free_name("work-20260415", &taken), "work-20260415");
    }
}
