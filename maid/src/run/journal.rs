//! The journal entry of a running task: a task whose process died mid-run (the server was
//! killed) is recognised by it and marked `interrupted`. What its agent (or a verify command)
//! was running did not outlive it: the sandbox helper each of them runs under ends its whole
//! tree as soon as its parent, the server, is gone (see `butler_worker::process::reaper`).

use butler_worker::ledger::Ledger;

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
            tracing::warn!(task = %id, "the server running this task died; marked interrupted");
            ids.push(id);
        }
        ledger.end_operation(op.id)?;
    }
    Ok(ids)
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
