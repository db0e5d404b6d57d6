//! A child's process group: signalled as a whole, and killed when Butler stops caring.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// The group a supervised child leads (its pid is the group id). Dropping the guard (for
/// example when the supervising future is dropped) kills whatever is left of the group.
pub(super) struct GroupGuard {
    pgid: Pid,
    ended: AtomicBool,
    /// When the leader is Butler's reaper: the grace it gets, when dropped, between SIGTERM and
    /// SIGKILL to end what it holds.
    reaper_grace: Option<Duration>,
}

impl GroupGuard {
    pub(super) fn new(pid: u32, reaper_grace: Option<Duration>) -> Self {
        Self {
            pgid: Pid::from_raw(i32::try_from(pid).expect("pids fit in i32")),
            ended: AtomicBool::new(false),
            reaper_grace,
        }
    }

    /// Sends `signal` to the group; false when no process of the group is left.
    pub(super) fn signal(&self, signal: Signal) -> bool {
        match killpg(self.pgid, signal) {
            Ok(()) => true,
            Err(Errno::ESRCH) => false,
            Err(err) => {
                tracing::warn!(%err, pgid = self.pgid.as_raw(), ?signal, "signalling the group failed");
                false
            }
        }
    }

    fn alive(&self) -> bool {
        killpg(self.pgid, None).is_ok()
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
        match self.reaper_grace {
            // The reaper ends what it holds on SIGTERM (also if Butler exits meanwhile: it
            // watches its parent); the group is killed after the grace if still there.
            Some(grace) if killpg(pgid, Signal::SIGTERM).is_ok() => {
                std::thread::spawn(move || {
                    let until = Instant::now() + grace;
                    while killpg(pgid, None).is_ok() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(25));
                    }
                    let _ = killpg(pgid, Signal::SIGKILL);
                });
            }
            _ => {
                let _ = killpg(pgid, Signal::SIGKILL);
            }
        }
    }
}
