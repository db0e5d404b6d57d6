//! The tasks running in this process, so `cancel_task` — from another call, another MCP
//! session, or the request's own cancellation — reaches the one that runs it. Tasks are keyed
//! by their ledger and id (two projects both have a `t1`). A task running in another Butler
//! process is reached through the ledger instead (`cancel_requested_at`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::contract::TaskId;

type Key = (PathBuf, TaskId);

fn running() -> &'static Mutex<HashMap<Key, CancellationToken>> {
    static RUNNING: OnceLock<Mutex<HashMap<Key, CancellationToken>>> = OnceLock::new();
    RUNNING.get_or_init(Mutex::default)
}

fn table() -> std::sync::MutexGuard<'static, HashMap<Key, CancellationToken>> {
    running()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A task registered as running; dropping it unregisters the task.
#[derive(Debug)]
pub struct Running {
    key: Key,
}

impl Drop for Running {
    fn drop(&mut self) {
        table().remove(&self.key);
    }
}

/// Registers `task` of the ledger at `ledger` as running here; `token` stops it.
pub fn register(ledger: &Path, task: &TaskId, token: CancellationToken) -> Running {
    let key = (ledger.to_path_buf(), task.clone());
    table().insert(key.clone(), token);
    Running { key }
}

/// Stops `task` if it runs in this process; `false` when it does not.
pub fn cancel(ledger: &Path, task: &TaskId) -> bool {
    match table().get(&(ledger.to_path_buf(), task.clone())) {
        Some(token) => {
            token.cancel();
            true
        }
        None => false,
    }
}

/// Whether `task` runs in this process.
pub(crate) fn is_running(ledger: &Path, task: &TaskId) -> bool {
    table().contains_key(&(ledger.to_path_buf(), task.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_task_is_cancelled_until_it_ends() {
        let ledger = Path::new("/tmp/a/ledger.db");
        let id = TaskId::new("t1").expect("id");
        let token = CancellationToken::new();
        {
            let _running = register(ledger, &id, token.clone());
            assert!(is_running(ledger, &id));
            assert!(!is_running(Path::new("/tmp/b/ledger.db"), &id));
            assert!(cancel(ledger, &id));
            assert!(token.is_cancelled());
        }
        assert!(!is_running(ledger, &id));
        assert!(!cancel(ledger, &id));
    }
}
