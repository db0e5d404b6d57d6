//! [5] After the agent: what it did that it must not, found against the attempt's baselines and
//! undone before the Maid's own git runs — direct git use and tampering (restored by the git
//! worker's [`Baseline`](butler_worker::git::Baseline), the worktree's `.git` link included),
//! writes to the Brain's tree and beside the worktrees, and agent configuration planted in the
//! tree.

use std::collections::BTreeSet;
use std::path::Path;

use butler_worker::git::TaskGit;
use butler_worker::tool_config::ToolConfigKind;

use super::attempt::AttemptStart;
use super::workspace::Workspace;
use super::{Progress, TaskRun};
use crate::contract::DirectGitFinding;
use crate::error::MaidError;

impl<P: Fn(Progress) + Send + Sync> TaskRun<'_, P> {
    /// Finds and undoes direct git use, outside writes and planted configuration.
    pub(super) async fn inspect_and_restore(
        &self,
        workspace: &Workspace,
        start: &AttemptStart,
    ) -> Result<Vec<DirectGitFinding>, MaidError> {
        let wt = workspace.wt.clone();
        let (baseline, brain, attempt) =
            (start.baseline.clone(), start.brain.clone(), start.attempt);
        self.blocking(move |s| {
            let mut findings: Vec<DirectGitFinding> = baseline
                .detect_and_restore(&wt, s.id().as_str())?
                .into_iter()
                .map(DirectGitFinding::from)
                .collect();
            findings.extend(outside_writes(
                &s.main,
                &brain,
                &s.worktrees,
                &s.paths.task_dir,
                attempt,
            )?);
            findings.extend(remove_planted_config(&wt, &baseline.head)?);
            Ok(findings)
        })
        .await
    }
}

/// The state of the Brain's tree before an attempt, to find what the agent wrote there.
#[derive(Debug, Clone)]
pub(super) struct BrainState {
    head_ref: Option<String>,
    head: Option<String>,
    changed: BTreeSet<String>,
    /// Entries beside the task worktrees (`../x` from a worktree lands there) that are not
    /// worktrees themselves.
    beside: BTreeSet<String>,
}

impl BrainState {
    pub fn take(main: &TaskGit, worktrees: &Path) -> Result<Self, MaidError> {
        Ok(Self {
            head_ref: main.head_ref()?,
            head: main.rev("HEAD")?,
            changed: main.changed_paths()?.into_iter().collect(),
            beside: beside_worktrees(worktrees),
        })
    }
}

fn beside_worktrees(worktrees: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(worktrees) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("task-"))
        .collect()
}

/// Changes the agent made to the Brain's tree during the attempt (compared with the state
/// before it). Files it created are moved into the task's directory as evidence; files it
/// changed or deleted are copied there (when they exist) and put back as the Brain's HEAD has
/// them; a moved or switched HEAD is reported (left as it is: it may be the Brain's own doing).
fn outside_writes(
    main: &TaskGit,
    before: &BrainState,
    worktrees: &Path,
    task_dir: &Path,
    attempt: u32,
) -> Result<Vec<DirectGitFinding>, MaidError> {
    let mut found = Vec::new();
    let now = BrainState::take(main, worktrees)?;
    if now.head_ref != before.head_ref || now.head != before.head {
        found.push(DirectGitFinding::OutsideWrite {
            path: "HEAD".to_owned(),
        });
    }
    let evidence = task_dir.join(format!("attempt-{attempt}-outside"));
    for name in now.beside.difference(&before.beside) {
        let source = worktrees.join(name);
        let kept = evidence.join("beside-worktree").join(name);
        std::fs::create_dir_all(evidence.join("beside-worktree"))
            .map_err(|e| MaidError::io("creating", &evidence, e))?;
        std::fs::rename(&source, &kept).map_err(|e| MaidError::io("keeping", &source, e))?;
        found.push(DirectGitFinding::OutsideWrite {
            path: format!("../{name}"),
        });
    }
    let new: Vec<String> = now.changed.difference(&before.changed).cloned().collect();
    if new.is_empty() {
        return Ok(found);
    }
    let head = now.head.clone().unwrap_or_default();
    main.unstage(&new)?;
    for path in &new {
        let source = main.workdir().join(path);
        let kept = evidence.join(path);
        let tracked = !head.is_empty() && main.is_tracked(&head, path)?;
        if source.is_file() {
            if let Some(dir) = kept.parent() {
                std::fs::create_dir_all(dir).map_err(|e| MaidError::io("creating", dir, e))?;
            }
            let moved = if tracked {
                std::fs::copy(&source, &kept).map(drop)
            } else {
                std::fs::rename(&source, &kept).or_else(|_| std::fs::copy(&source, &kept).map(drop))
            };
            moved.map_err(|e| MaidError::io("keeping", &source, e))?;
        }
        if tracked {
            main.restore_paths(&head, std::slice::from_ref(path))?;
        }
        found.push(DirectGitFinding::OutsideWrite { path: path.clone() });
    }
    Ok(found)
}

/// Agent instructions and settings (the one list's kind that is put back after every attempt:
/// one planted in the tree would steer the next run).
fn is_agent_config(path: &str) -> bool {
    butler_worker::tool_config::classify(path).is_some_and(ToolConfigKind::restored_after_attempt)
}

/// Agent configuration planted in the tree is put back as it was at `head` and reported.
fn remove_planted_config(wt: &TaskGit, head: &str) -> Result<Vec<DirectGitFinding>, MaidError> {
    let planted: Vec<String> = wt
        .changed_paths()?
        .into_iter()
        .filter(|p| is_agent_config(p))
        .collect();
    wt.restore_paths(head, &planted)?;
    Ok(planted
        .into_iter()
        .map(|path| DirectGitFinding::AgentConfigPlanted { path })
        .collect())
}
