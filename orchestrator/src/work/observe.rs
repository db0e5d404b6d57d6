//! `work_observe`: where the Brain is — state, changed files, recent records, active issue,
//! and the one thing it must do next. The replacement for `git status`.

use std::collections::HashSet;
use std::sync::Arc;

use butler_worker::git::{GitRepo, InProgress, Markers, NotRecordable, WorkTreeStatus};
use serde::Serialize;

use crate::catalogue::{Key, fill, text};
use crate::envelope::Reply;
use crate::error::{BlockReason, WorkError};
use crate::session::{Project, blocking};
use crate::tool::Tool;
use crate::work::line::{self, LineView};
use crate::work::records::{RecordView, records_for};
use crate::work::snapshot::{Snapshot, line_of, snapshot, title};
use crate::work::state::{self, Decision, Facts, RequiredAction, WorkState};

/// How many changed paths are listed before the rest is only counted.
pub const CHANGED_FILES_CAP: usize = 100;
/// How many recent records are shown while something is pending (work_history has the rest);
/// when nothing is, the newest one.
pub const RECENT_RECORDS: usize = 3;
/// How far back outside-Butler records are looked for on each observation.
const OUTSIDE_SCAN_LIMIT: usize = 50;
/// A changed file this large gets a note before it is recorded: once in history it stays.
pub const LARGE_FILE_BYTES: u64 = 20 << 20;
/// How many paths a note names before it only counts.
const NOTE_PATHS: usize = 3;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ActiveIssue {
    pub number: u64,
    pub title: Option<String>,
}

/// `work_observe`'s data (the seed's shape). Every byte is read by the Brain on every
/// observation, so what absence says as well is left out: no changed files when there are
/// none (`null` when they could not be read), no `unpublished_records` when none is (`null`
/// when there is no shared destination). The seed's `default_issue` is not shown: it is
/// `active_issue.number`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Observation {
    pub work_state: WorkState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_issue: Option<ActiveIssue>,
    #[serde(skip_serializing_if = "none_changed")]
    pub changed_files: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_files_more: Option<usize>,
    /// The operation git started and has not finished, or the conflicts it left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_progress: Option<InProgressView>,
    pub recent_records: Vec<RecordView>,
    #[serde(skip_serializing_if = "none_unpublished")]
    pub unpublished_records: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_action: Option<RequiredAction>,
    pub available_next: Vec<Tool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn none_changed(changed: &Option<Vec<String>>) -> bool {
    changed.as_ref().is_some_and(Vec::is_empty)
}

fn none_unpublished(unpublished: &Option<usize>) -> bool {
    *unpublished == Some(0)
}

/// `in_progress` in `work_observe`: what is unfinished and where conflict markers remain.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InProgressView {
    /// git's name of the operation (`rebase`, `merge`, `cherry-pick`, `revert`, `am`,
    /// `bisect`); null for conflicts left without one.
    pub operation: Option<&'static str>,
    /// Files git marks as conflicted.
    pub conflicted_files: Vec<String>,
    /// Those still holding conflict markers, with the lines where conflicts start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<Markers>,
}

impl InProgressView {
    fn of(reason: Option<&BlockReason>) -> Option<InProgressView> {
        let Some(BlockReason::Unfinished(u)) = reason else {
            return None;
        };
        Some(InProgressView {
            operation: u.op.map(InProgress::command),
            conflicted_files: u
                .conflicted
                .iter()
                .take(CHANGED_FILES_CAP)
                .cloned()
                .collect(),
            unresolved: u
                .unresolved
                .iter()
                .take(CHANGED_FILES_CAP)
                .cloned()
                .collect(),
        })
    }
}

/// The answer when no session has been started.
pub fn uninitialized() -> Reply {
    reply(state::uninitialized(), Observation::empty(None))
}

/// What was read from git and the ledger, before the tracker is asked for a title.
struct Gathered {
    facts: Facts,
    in_progress: Option<InProgressView>,
    /// What the working tree calls for besides the state (work a record cannot save, very
    /// large files).
    tree_notes: Vec<String>,
    changed: Vec<String>,
    recent: Vec<RecordView>,
    outside_new: usize,
    line: Option<LineView>,
}

pub async fn observe(project: &Arc<Project>) -> Reply {
    let gathered = blocking(project, gather).await;
    let gathered = match gathered {
        Ok(g) => g,
        Err(err) => {
            tracing::warn!(error = %err, "work_observe could not read the project");
            let d = state::unknown(text(Key::UnknownUnreadable));
            return reply(d, Observation::empty(Some(Vec::new())));
        }
    };
    let mut notes = gathered.tree_notes;
    let active = match gathered.facts.active_issue {
        Some(number) => Some(ActiveIssue {
            number,
            title: title(project, number, &mut notes).await,
        }),
        None => None,
    };
    let mut d = state::decide(&gathered.facts);
    if gathered.outside_new > 0 {
        d.summary
            .push_str(&fill(Key::OutsideRecords, &[("n", &gathered.outside_new)]));
    }
    let (changed, more) = cap(gathered.changed);
    let mut recent = gathered.recent;
    if matches!(
        d.state,
        WorkState::CleanIdle | WorkState::CleanWithActiveIssue
    ) {
        // Nothing is pending: the newest record (and those made outside Butler since the last
        // look) says where the work stands; work_history has the rest.
        recent.truncate(gathered.outside_new.max(1));
    }
    let obs = Observation {
        active_issue: active,
        changed_files: Some(changed),
        changed_files_more: more,
        in_progress: gathered.in_progress,
        recent_records: recent,
        unpublished_records: gathered.facts.unpublished,
        notes,
        ..Observation::empty(None)
    };
    let mut answer = reply(d, obs);
    line::attach(&mut answer, gathered.line);
    answer
}

impl Observation {
    /// An observation with nothing in it yet (the decision fills in the state).
    fn empty(changed_files: Option<Vec<String>>) -> Observation {
        Observation {
            work_state: WorkState::Unknown,
            active_issue: None,
            changed_files,
            changed_files_more: None,
            in_progress: None,
            recent_records: Vec::new(),
            unpublished_records: None,
            required_action: None,
            available_next: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// The answer: `obs` with the decision's state, summary and next actions.
fn reply(d: Decision, obs: Observation) -> Reply {
    let obs = Observation {
        work_state: d.state,
        required_action: d.required_action,
        available_next: d.available_next,
        ..obs
    };
    Reply::new(d.summary, obs)
}

fn cap(mut changed: Vec<String>) -> (Vec<String>, Option<usize>) {
    if changed.len() > CHANGED_FILES_CAP {
        let more = changed.len() - CHANGED_FILES_CAP;
        changed.truncate(CHANGED_FILES_CAP);
        (changed, Some(more))
    } else {
        (changed, None)
    }
}

fn gather(project: &Project) -> Result<Gathered, WorkError> {
    let repo = &project.repo;
    let Snapshot {
        head,
        status,
        blocked,
    } = snapshot(repo)?;
    let changed: Vec<String> = status.entries.iter().map(|e| e.path.display()).collect();
    let tree_notes = tree_notes(repo, &status);
    let destination = repo.destination()?;
    let unpublished = match &destination {
        Some(dest) if head.oid.is_some() => Some(repo.unpublished(dest, 1000)?),
        _ => None,
    };
    let unpublished_set: Option<HashSet<String>> = unpublished
        .as_ref()
        .map(|u| u.shas.iter().cloned().collect());
    let line = line_of(&head);
    let key = project.key();
    let (active_issue, outside_new, recent) = project.with_ledger(|ledger| {
        let active = project.active_issue(&line);
        let previous = ledger.mark_observed(&key, &line, head.oid.as_deref())?;
        let mut outside_new = 0;
        if let (Some(prev), Some(now)) = (previous.as_deref(), head.oid.as_deref())
            && prev != now
        {
            let is_known = |sha: &str| sha == prev || ledger.is_known_sha(sha).unwrap_or(false);
            let new_commits = repo.commits_since(&is_known, OUTSIDE_SCAN_LIMIT)?;
            outside_new = records_for(repo, ledger, &new_commits, unpublished_set.as_ref())?.1;
        }
        let recent = if head.oid.is_some() {
            let commits = repo.recent_commits(RECENT_RECORDS, None)?;
            records_for(repo, ledger, &commits, unpublished_set.as_ref())?.0
        } else {
            Vec::new()
        };
        Ok((active, outside_new, recent))
    })?;
    let line_view = line::line_view(repo, &head, unpublished.as_ref());
    let in_progress = InProgressView::of(blocked.as_ref());
    let facts = Facts {
        blocked,
        changed: changed.len(),
        unpublished: destination
            .as_ref()
            .map(|_| unpublished.as_ref().map_or(0, |u| u.count)),
        active_issue,
    };
    Ok(Gathered {
        facts,
        in_progress,
        tree_notes,
        changed,
        recent,
        outside_new,
        line: line_view,
    })
}

/// Notes on the working tree that observing and recording share: work a record of this
/// project cannot save (so it is not counted as unrecorded), and very large files.
fn tree_notes(repo: &GitRepo, status: &WorkTreeStatus) -> Vec<String> {
    let mut notes = unrecordable_notes(status);
    let large = status.large_files(repo, LARGE_FILE_BYTES);
    if !large.is_empty() {
        let shown: Vec<String> = large
            .iter()
            .take(NOTE_PATHS)
            .map(|(p, size)| format!("{} ({} MiB)", p.display(), size >> 20))
            .collect();
        let more = large.len().saturating_sub(NOTE_PATHS);
        let more = if more > 0 {
            fill(Key::NoteAndMore, &[("n", &more)])
        } else {
            String::new()
        };
        notes.push(fill(
            Key::NoteLargeFiles,
            &[("list", &shown.join(", ")), ("more", &more)],
        ));
    }
    notes
}

/// Why the work `status` lists apart is not recorded, and what to do about it.
pub fn unrecordable_notes(status: &WorkTreeStatus) -> Vec<String> {
    let mut notes = Vec::new();
    let of = |why: NotRecordable| -> Vec<String> {
        status
            .unrecordable
            .iter()
            .filter(|u| u.why == why)
            .map(|u| u.path.display())
            .collect()
    };
    let nested = of(NotRecordable::NestedRepository);
    if !nested.is_empty() {
        notes.push(fill(
            Key::NoteNestedRepository,
            &[("names", &names(&nested))],
        ));
    }
    let submodules = of(NotRecordable::SubmoduleWork);
    if !submodules.is_empty() {
        notes.push(fill(
            Key::NoteSubmoduleWork,
            &[("names", &names(&submodules))],
        ));
    }
    notes
}

/// `a/, b/ and 2 more`.
fn names(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(NOTE_PATHS).map(String::as_str).collect();
    let more = paths.len().saturating_sub(NOTE_PATHS);
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&fill(Key::AndMore, &[("more", &more)]));
    }
    text
}
