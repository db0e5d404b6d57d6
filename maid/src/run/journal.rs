//! The journal entry of a running task: a task whose process died mid-run (the server was
//! killed) is recognised by it and marked `interrupted`; what its agent (or a verify command)
//! left running is found and its process groups ended.

use std::path::Path;
use std::time::{Duration, Instant};

use butler_worker::ledger::Ledger;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, getpgid, getpgrp};

use super::paths::beside;

use crate::contract::{TaskId, TaskStatus};
use crate::error::MaidError;

/// The journal kind of a running task.
pub(super) const TASK_OPERATION: &str = "task";

/// Marks `interrupted` every task whose process died while it ran; their line and worktree
/// stay for `task_discard`. Returns their ids.
pub fn mark_interrupted(ledger: &Ledger) -> Result<Vec<TaskId>, MaidError> {
    let mut ids = Vec::new();
    for op in ledger.open_operations()? {
        if op.kind != TASK_OPERATION || op.owner_alive() {
            continue;
        }
        if let Ok(id) = TaskId::new(op.detail.as_str())
            && ledger
                .task(&id)?
                .is_some_and(|t| t.status == TaskStatus::Running)
        {
            ledger.set_task_status(&id, TaskStatus::Interrupted)?;
            let worktree = ledger.task(&id)?.and_then(|t| t.worktree);
            let orphans = worktree.map_or_else(Vec::new, |w| end_orphans(Path::new(&w)));
            if orphans.is_empty() {
                tracing::warn!(task = %id, "the server running this task died; marked interrupted");
            } else {
                tracing::warn!(
                    task = %id,
                    groups = ?orphans,
                    "the server running this task died while its agent still ran; the agent's \
                     process groups were ended and the task marked interrupted"
                );
            }
            ids.push(id);
        }
        ledger.end_operation(op.id)?;
    }
    Ok(ids)
}

/// How long orphaned groups get between TERM and KILL.
const ORPHAN_GRACE: Duration = Duration::from_secs(2);

/// Ends the process groups of whatever a task's agent or verify commands left running after
/// their server died: processes whose environment names the task's own temp dirs (the agent's
/// `TMPDIR` or the verify commands'), found in `/proc`. Returns the groups ended.
fn end_orphans(worktree: &Path) -> Vec<i32> {
    let markers: Vec<Vec<u8>> = [
        beside(worktree, ".agent").join("tmp"),
        beside(worktree, ".verify"),
    ]
    .iter()
    .map(|dir| format!("TMPDIR={}", dir.display()).into_bytes())
    .collect();
    let own = getpgrp();
    let mut groups: Vec<Pid> = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ
            .split(|b| *b == 0)
            .any(|var| markers.iter().any(|m| var == m.as_slice()))
        {
            continue;
        }
        if let Ok(group) = getpgid(Some(Pid::from_raw(pid)))
            && group != own
            && !groups.contains(&group)
        {
            groups.push(group);
        }
    }
    for group in &groups {
        let _ = killpg(*group, Signal::SIGTERM);
    }
    let until = Instant::now() + ORPHAN_GRACE;
    while groups.iter().any(|g| killpg(*g, None).is_ok()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(25));
    }
    for group in &groups {
        let _ = killpg(*group, Signal::SIGKILL);
    }
    groups.iter().map(|g| g.as_raw()).collect()
}

#[cfg(test)]
mod tests {
    use butler_worker::time::{Clock, SystemClock};

    use super::*;
    use crate::contract::{ImplementRequest, TaskContract};

    fn contract(id: TaskId) -> TaskContract {
        let request = ImplementRequest {
            goal: "g".into(),
            target_paths: vec!["src/".into()],
            ..Default::default()
        };
        TaskContract::from_request(request, id, "test", SystemClock.now()).expect("valid")
    }

    #[test]
    // A pid that surely belongs to no live process: a plain, already reaped child.
    #[allow(clippy::disallowed_methods)]
    fn a_task_whose_process_died_is_marked_interrupted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = Ledger::open(dir.path()).expect("ledger");
        let id = ledger.create_task(contract).expect("task").task_id;
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        ledger
            .begin_operation(TASK_OPERATION, dead, id.as_str())
            .expect("journal");
        let live = ledger.create_task(contract).expect("task").task_id;
        ledger
            .begin_operation(TASK_OPERATION, std::process::id(), live.as_str())
            .expect("journal");
        assert_eq!(
            mark_interrupted(&ledger).expect("recovers"),
            vec![id.clone()]
        );
        assert_eq!(
            ledger.task(&id).expect("read").expect("row").status,
            TaskStatus::Interrupted
        );
        assert_eq!(
            ledger.task(&live).expect("read").expect("row").status,
            TaskStatus::Running
        );
        assert!(mark_interrupted(&ledger).expect("again").is_empty());
    }
}
