//! The agent never outlives its supervisor: every task run of a process is known to its
//! [`TaskStop`], so a process that is about to end (a signal, its client gone) stops them all —
//! each agent's whole process group ended (TERM, grace, KILL) by the supervisor, and with it
//! the sandbox helper it runs under, which ends everything the agent started that left the
//! group; each task stored as `cancelled` with the reason in its last attempt's warnings — and
//! waits for them before it exits.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The stop signal and the count of running tasks a process shares.
#[derive(Debug, Clone)]
pub struct TaskStop {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    token: CancellationToken,
    reason: Mutex<Option<String>>,
    running: watch::Sender<usize>,
}

impl Default for TaskStop {
    /// The process's own.
    fn default() -> Self {
        static PROCESS: OnceLock<TaskStop> = OnceLock::new();
        PROCESS.get_or_init(TaskStop::new).clone()
    }
}

impl TaskStop {
    /// One of its own (tests; a server that stops its tasks apart from the process's).
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                token: CancellationToken::new(),
                reason: Mutex::new(None),
                running: watch::channel(0).0,
            }),
        }
    }

    /// Stops every task that runs or will run, saying why (the first reason is kept).
    pub fn stop_all(&self, reason: &str) {
        self.inner
            .reason
            .lock()
            .expect("the reason lock is never poisoned")
            .get_or_insert_with(|| reason.to_owned());
        self.inner.token.cancel();
    }

    /// Why the tasks were stopped, once they were.
    pub(crate) fn reason(&self) -> Option<String> {
        self.inner
            .reason
            .lock()
            .expect("the reason lock is never poisoned")
            .clone()
    }

    /// How many tasks run now.
    pub fn running(&self) -> usize {
        *self.inner.running.borrow()
    }

    /// Waits until no task runs, at most `limit`; whether none does.
    pub async fn wait(&self, limit: Duration) -> bool {
        let mut rx = self.inner.running.subscribe();
        tokio::time::timeout(limit, rx.wait_for(|n| *n == 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Counts a task as running until the guard is dropped, and gives the token that cancels
    /// it: `cancel` or this stop, whichever comes first.
    pub(super) fn enter(&self, cancel: &CancellationToken) -> (Running, CancellationToken) {
        self.inner.running.send_modify(|n| *n += 1);
        let merged = self.inner.token.child_token();
        let (outer, link) = (cancel.clone(), merged.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = outer.cancelled() => link.cancel(),
                () = link.cancelled() => {}
            }
        });
        let guard = Running {
            stop: self.clone(),
            token: merged.clone(),
        };
        (guard, merged)
    }
}

/// A running task; dropping it counts it out.
pub(super) struct Running {
    stop: TaskStop,
    token: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        // The run is over: ends the task that links the caller's token to this one.
        self.token.cancel();
        self.stop.inner.running.send_modify(|n| *n -= 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stopping_cancels_running_and_later_tasks_and_waiting_sees_them_end() {
        let stop = TaskStop::new();
        let outer = CancellationToken::new();
        let (running, token) = stop.enter(&outer);
        assert_eq!(stop.running(), 1);
        assert!(!stop.wait(Duration::from_millis(50)).await);
        stop.stop_all("Butler received SIGTERM");
        stop.stop_all("a later reason");
        assert!(token.is_cancelled());
        assert_eq!(stop.reason().as_deref(), Some("Butler received SIGTERM"));
        drop(running);
        assert!(stop.wait(Duration::from_millis(50)).await);
        let (_late, late) = stop.enter(&CancellationToken::new());
        assert!(
            late.is_cancelled(),
            "a task started after the stop is stopped at once"
        );
    }

    #[tokio::test]
    async fn the_callers_token_still_cancels_its_own_task_alone() {
        let stop = TaskStop::new();
        let (a, b) = (CancellationToken::new(), CancellationToken::new());
        let (_ra, ta) = stop.enter(&a);
        let (_rb, tb) = stop.enter(&b);
        a.cancel();
        tokio::time::timeout(Duration::from_secs(1), ta.cancelled())
            .await
            .expect("linked");
        assert!(!tb.is_cancelled());
        assert!(stop.reason().is_none());
    }
}
