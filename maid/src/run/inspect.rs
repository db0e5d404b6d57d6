//! [5] After the agent: what it did that it must not, found against the attempt's baselines and
//! undone before the Maid's own git runs — direct git use and tampering (restored by the git
//! worker's [`Baseline`](butler_worker::git::Baseline), the worktree's `.git` link included),
//! writes to the Brain's tree and beside the worktrees (its files' modes and times included),
//! agent configuration planted in the tree, and repositories the agent created inside it (never
//! recorded, never entered).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::Path;

use butler_worker::nofollow::{Dir, Kind};

use butler_worker::git::TaskGit;
use butler_worker::tool_config::ToolConfigKind;

use super::TaskRun;
use super::workspace::Workspace;
use crate::contract::DirectGitFinding;
use crate::error::MaidError;
use butler_worker::git::{Baseline, OpInfo};

impl TaskRun<'_> {
    /// Finds and undoes direct git use, outside writes and planted configuration: what the
    /// agent of `attempt` did since the worktree's git was `baseline` and the Brain's tree was
    /// `brain`.
    pub(super) async fn inspect_and_restore(
        &self,
        workspace: &Workspace,
        attempt: u32,
        baseline: &Baseline,
        brain: &BrainState,
    ) -> Result<Vec<DirectGitFinding>, MaidError> {
        let wt = workspace.wt.clone();
        let (baseline, brain) = (baseline.clone(), brain.clone());
        self.blocking(move |s| {
            let mut findings: Vec<DirectGitFinding> = baseline
                .detect_and_restore(&wt, s.id().as_str())?
                .into_iter()
                .map(DirectGitFinding::from)
                .collect();
            findings.extend(
                wt.tree_status()?
                    .nested
                    .into_iter()
                    .map(|path| DirectGitFinding::NestedRepository { path }),
            );
            let logged_as = OpInfo {
                tool: "implement".into(),
                what: format!(
                    "put back what task {}'s agent wrote in the Brain's tree (attempt {attempt})",
                    s.id().as_str()
                ),
                by: format!("task {}", s.id().as_str()),
                at: s.ctx.clock.now().unix(),
                undoes: None,
            };
            findings.extend(outside_writes(
                &s.main,
                &brain,
                &s.worktrees,
                &s.paths.task_dir,
                attempt,
                logged_as,
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
    /// The mode and modification time of every tracked file and of the directories holding
    /// them (the sandbox does not stop `chmod` nor `touch`).
    meta: BTreeMap<String, Meta>,
}

/// A path's permission bits and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Meta {
    mode: u32,
    mtime: (i64, i64),
}

impl BrainState {
    pub(crate) fn take(main: &TaskGit, worktrees: &Path) -> Result<Self, MaidError> {
        Ok(Self {
            head_ref: main.head_ref()?,
            head: main.rev("HEAD")?,
            changed: {
                // A repository created in the Brain's tree is a write there too.
                let status = main.tree_status_unlocked()?;
                status.changed.into_iter().chain(status.nested).collect()
            },
            beside: beside_worktrees(worktrees),
            meta: brain_meta(main)?,
        })
    }
}

/// The [`Meta`] of every tracked path of the Brain's tree and of their directories (read
/// without following links).
fn brain_meta(main: &TaskGit) -> Result<BTreeMap<String, Meta>, MaidError> {
    let mut paths = BTreeSet::new();
    for path in main.tracked_paths()? {
        let mut dir = Path::new(&path).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if !paths.insert(d.to_string_lossy().into_owned()) {
                break;
            }
            dir = d.parent();
        }
        paths.insert(path);
    }
    let Ok(top) = Dir::open(main.workdir()) else {
        return Ok(BTreeMap::new());
    };
    let mut meta = BTreeMap::new();
    for path in paths {
        let Ok(Some((dir, name))) = top.parent_of(Path::new(&path)) else {
            continue;
        };
        if let Ok(Some(stat)) = dir.stat(&name) {
            let mode = stat.st_mode & 0o7777;
            meta.insert(
                path,
                Meta {
                    mode,
                    mtime: (stat.st_mtime, stat.st_mtime_nsec),
                },
            );
        }
    }
    Ok(meta)
}

/// Paths of the Brain's tree whose mode or time differs from `before`; modes are put back
/// (parents first). Returns each changed path.
fn restore_brain_meta(root: &Path, before: &BTreeMap<String, Meta>) -> Vec<String> {
    let Ok(top) = Dir::open(root) else {
        return Vec::new();
    };
    let mut changed = Vec::new();
    for (path, was) in before {
        let Ok(Some((dir, name))) = top.parent_of(Path::new(path)) else {
            continue;
        };
        let Ok(Some(stat)) = dir.stat(OsStr::new(&name)) else {
            continue;
        };
        let mode = stat.st_mode & 0o7777;
        if mode != was.mode {
            if let Err(e) = dir.set_mode(&name, was.mode) {
                tracing::warn!(%path, %e, "could not put a mode back in the Brain's tree");
            }
            changed.push(path.clone());
        } else if (stat.st_mtime, stat.st_mtime_nsec) != was.mtime {
            changed.push(path.clone());
        }
    }
    changed
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
    logged_as: OpInfo,
) -> Result<Vec<DirectGitFinding>, MaidError> {
    let mut found = Vec::new();
    // Modes first: a file or directory made unreadable would stop the Maid's own git.
    let meta_changed = restore_brain_meta(main.workdir(), &before.meta);
    let now = BrainState::take(main, worktrees)?;
    // Content changes are reported below as writes; what is left changed only modes or times.
    let meta_only: Vec<String> = meta_changed
        .into_iter()
        .filter(|p| !now.changed.contains(p))
        .collect();
    if !meta_only.is_empty() {
        let (count, paths) = super::modes::named(meta_only);
        found.push(DirectGitFinding::BrainMetadataChanged { count, paths });
    }
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
    // The restore is an operation of the log like any other: what the Brain's tree held (the
    // agent's writes, or a person's edit made meanwhile) can be had back with `work_undo`.
    let begun = {
        let held = main.repo().lock_tree()?;
        main.repo().oplog_begin(&held, logged_as)?
    };
    let restored = restore_outside_writes(main, &now, &new, &evidence, &mut found);
    let held = main.repo().lock_tree()?;
    if let Err(e) = main.repo().oplog_finish(&held, begun) {
        tracing::warn!(error = %e, "the restore's log entry was not completed");
    }
    drop(held);
    restored?;
    Ok(found)
}

/// Puts back the Brain's paths `new` the agent changed (kept in `evidence` first).
fn restore_outside_writes(
    main: &TaskGit,
    now: &BrainState,
    new: &[String],
    evidence: &Path,
    found: &mut Vec<DirectGitFinding>,
) -> Result<(), MaidError> {
    let head = now.head.clone().unwrap_or_default();
    main.unstage(new)?;
    let root = main.workdir();
    let top = Dir::open(root).map_err(|e| MaidError::io("opening", root, e))?;
    for path in new {
        let kept = evidence.join(path);
        let tracked = !head.is_empty() && main.is_tracked(&head, path)?;
        // Never through a link: a parent that is one names nothing here.
        let here = top.parent_of(Path::new(path)).ok().flatten();
        if let Some((dir, name)) = &here
            && let Ok(Some(kind @ (Kind::File | Kind::Link | Kind::Dir))) = dir.kind(name)
            && let (Some(kept_dir), Some(kept_name)) = (kept.parent(), kept.file_name())
        {
            std::fs::create_dir_all(kept_dir)
                .map_err(|e| MaidError::io("creating", kept_dir, e))?;
            let to = Dir::open(kept_dir).map_err(|e| MaidError::io("opening", kept_dir, e))?;
            let source = root.join(path);
            // An untracked file, link or repository is moved out whole; a tracked file is
            // copied, then put back below.
            let moved = if tracked && kind == Kind::File {
                dir.read(name)
                    .and_then(|bytes| to.replace_file(kept_name, &bytes, 0o644))
            } else if tracked {
                Ok(())
            } else {
                dir.move_to(name, &to, kept_name)
            };
            moved.map_err(|e| MaidError::io("keeping", &source, e))?;
        }
        if tracked {
            main.restore_paths(&head, std::slice::from_ref(path))?;
        }
        found.push(DirectGitFinding::OutsideWrite { path: path.clone() });
    }
    Ok(())
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
