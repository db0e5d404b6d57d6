//! A child's process group: signalled as a whole, and killed when Butler stops caring.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::pidfd;

/// The group a supervised child leads (its pid is the group id). Dropping the guard (for
/// example when the supervising future is dropped) kills whatever is left of the group.
///
/// For its first instants the child is not yet a group leader (`setsid(1)` has not called
/// `setsid(2)`, see `spawn`): while the group does not exist, a signal goes to the child itself,
/// through a pid descriptor opened before it could be reaped, so it never reaches a process
/// that reused the pid.
pub(super) struct GroupGuard {
    pgid: Pid,
    leader: Option<OwnedFd>,
    ended: AtomicBool,
    /// When the leader is Butler's reaper: the grace it gets, when dropped, between SIGTERM and
    /// SIGKILL to end what it holds.
    reaper_grace: Option<Duration>,
}

impl GroupGuard {
    pub(super) fn new(pid: u32, reaper_grace: Option<Duration>) -> Self {
        Self {
            pgid: Pid::from_raw(i32::try_from(pid).expect("pids fit in i32")),
            leader: pidfd::open(pid).ok(),
            ended: AtomicBool::new(false),
            reaper_grace,
        }
    }

    /// Sends `signal` to the group; false when no process of the group is left.
    pub(super) fn signal(&self, signal: Signal) -> bool {
        match send(self.pgid, self.leader.as_ref(), Some(signal)) {
            Ok(()) => true,
            Err(Errno::ESRCH) => false,
            Err(err) => {
                tracing::warn!(%err, pgid = self.pgid.as_raw(), ?signal, "signalling the group failed");
                false
            }
        }
    }

    fn alive(&self) -> bool {
        send(self.pgid, self.leader.as_ref(), None).is_ok()
    }

    /// After the leader is gone: TERM whatever it left behind (`sleep 100 &`), wait up to
    /// `grace`, then KILL.
    pub(super) async fn end_leftovers(&self, grace: Duration) {
        if self.signal(Signal::SIGTERM) {
            let until = Instant::now() + grace;
            while self.alive() && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            if self.alive() {
                self.signal(Signal::SIGKILL);
            }
        }
        self.ended.store(true, Ordering::Relaxed);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.ended.load(Ordering::Relaxed) {
            return;
        }
        let pgid = self.pgid;
        let leader = self.leader.take();
        match self.reaper_grace {
            // The reaper ends what it holds on SIGTERM (also if Butler exits meanwhile: it
            // watches its parent); the group is killed after the grace if still there.
            Some(grace) if send(pgid, leader.as_ref(), Some(Signal::SIGTERM)).is_ok() => {
                std::thread::spawn(move || {
                    let until = Instant::now() + grace;
                    while send(pgid, leader.as_ref(), None).is_ok() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(25));
                    }
                    let _ = send(pgid, leader.as_ref(), Some(Signal::SIGKILL));
                });
            }
            _ => {
                let _ = send(pgid, leader.as_ref(), Some(Signal::SIGKILL));
            }
        }
    }
}

/// `signal` to the group `pgid`; while there is no such group yet, to its leader-to-be.
fn send(pgid: Pid, leader: Option<&OwnedFd>, signal: Option<Signal>) -> Result<(), Errno> {
    match (killpg(pgid, signal), leader) {
        (Err(Errno::ESRCH), Some(leader)) => pidfd::send_signal(leader, signal),
        (sent, _) => sent,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;

    use super::*;
    use crate::process::{ChildEnv, ChildSpec, spawn};

    /// `sleep 100` as `spawn` starts it: it becomes a session leader within instants.
    fn spawned() -> tokio::process::Child {
        let mut env = ChildEnv::new();
        env.set("PATH", "/usr/bin:/bin");
        let spec = ChildSpec::new("sleep", "/", env).args(["100"]);
        spawn::spawn(&spec, Stdio::null()).expect("spawned")
    }

    /// `sleep 100` in this process's group: a child that does not lead a group yet, as one
    /// started by `spawn` is until `setsid(1)` has run, but for good.
    fn in_our_group() -> tokio::process::Child {
        // A test's own child, to hold the moment before `setsid(2)` still.
        #[allow(clippy::disallowed_methods)]
        let mut command = tokio::process::Command::new("sleep");
        command
            .arg("100")
            .kill_on_drop(true)
            .spawn()
            .expect("spawned")
    }

    async fn killed(child: &mut tokio::process::Child) -> bool {
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .expect("ended")
            .expect("waited");
        status.signal() == Some(Signal::SIGKILL as i32)
    }

    #[tokio::test]
    async fn a_child_that_leads_no_group_yet_is_signalled_itself() {
        let mut child = in_our_group();
        let guard = GroupGuard::new(child.id().expect("pid"), None);
        assert!(guard.alive());
        assert!(guard.signal(Signal::SIGKILL));
        assert!(killed(&mut child).await);
    }

    #[tokio::test]
    async fn a_dropped_guard_kills_a_child_that_leads_no_group_yet() {
        let mut child = in_our_group();
        drop(GroupGuard::new(child.id().expect("pid"), None));
        assert!(killed(&mut child).await);
    }

    #[tokio::test]
    async fn once_reaped_the_leader_is_not_signalled_through_its_pid() {
        let mut child = in_our_group();
        let guard = GroupGuard::new(child.id().expect("pid"), None);
        let _ = child.start_kill();
        assert!(killed(&mut child).await);
        assert!(!guard.alive());
        assert!(!guard.signal(Signal::SIGKILL));
    }

    /// Whether it is still starting or already leads its session, a child just spawned is
    /// reached.
    #[tokio::test]
    async fn a_spawned_child_signalled_at_once_is_reached() {
        let mut child = spawned();
        let guard = GroupGuard::new(child.id().expect("pid"), None);
        assert!(guard.signal(Signal::SIGKILL));
        assert!(killed(&mut child).await);
    }
}
