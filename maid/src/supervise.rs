//! Runs one child process under supervision: its own process group, stdin fed then closed,
//! stdout/stderr drained into bounded buffers, a wall-clock limit, stagnation detection,
//! cancellation, and an ending that always takes the whole group down (TERM, grace, KILL).
//!
//! Every way a child can end is one [`Ending`] variant. The Maid spawns agents and verify
//! commands only through [`supervise`].

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use crate::output::CapturedOutput;

mod fingerprint;

/// How a supervised child ended: part of the evidence, so it lives with the contracts.
pub use butler_worker::contract::Ending;

/// What to run. The environment is exactly `env` (the parent's is not inherited).
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// Written to the child's stdin, which is then closed; `None` gives it `/dev/null`.
    pub stdin: Option<Vec<u8>>,
}

impl ChildSpec {
    /// `sh -c <script>` in `cwd` with the given environment.
    pub fn shell(script: &str, cwd: impl Into<PathBuf>, env: Vec<(OsString, OsString)>) -> Self {
        Self {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: cwd.into(),
            env,
            stdin: None,
        }
    }
}

/// Stop a child that has been silent (no output) and idle (no file change under `watch`) for
/// `after`. Without `watch`, only output counts.
#[derive(Debug, Clone)]
pub struct Stagnation {
    pub after: Duration,
    pub watch: Option<PathBuf>,
}

/// The limits one run is held to.
#[derive(Debug, Clone)]
pub struct Limits {
    pub wall_clock: Duration,
    pub stagnation: Option<Stagnation>,
    /// Time between SIGTERM to the group and SIGKILL.
    pub grace: Duration,
    /// Bytes kept from the start and from the end of each of stdout and stderr.
    pub keep_head: usize,
    pub keep_tail: usize,
}

impl Limits {
    pub fn new(wall_clock: Duration) -> Self {
        Self {
            wall_clock,
            stagnation: None,
            grace: Duration::from_secs(5),
            keep_head: 16 * 1024,
            keep_tail: 64 * 1024,
        }
    }
}

/// The result of one supervised run.
#[derive(Debug)]
pub struct Supervised {
    pub ending: Ending,
    pub duration: Duration,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
}

/// How long to wait for the output pipes to close once the group is gone (a process that left
/// the group with `setsid` can keep them open).
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Runs `spec` under `limits` until it ends, is stopped, or `cancel` fires. Never returns while
/// a process of the child's group is still known to be running.
pub async fn supervise(spec: ChildSpec, limits: &Limits, cancel: &CancellationToken) -> Supervised {
    let started = Instant::now();
    let stdout = Arc::new(Mutex::new(CapturedOutput::new(
        limits.keep_head,
        limits.keep_tail,
    )));
    let stderr = Arc::new(Mutex::new(CapturedOutput::new(
        limits.keep_head,
        limits.keep_tail,
    )));
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            let reason = format!("{}: {err}", spec.program.to_string_lossy());
            return finish(Ending::SpawnFailed { reason }, started, &stdout, &stderr);
        }
    };
    let pid = child.id().expect("a child that was just spawned has a pid");
    let group = GroupGuard::new(Pid::from_raw(i32::try_from(pid).expect("pids fit in i32")));
    tracing::debug!(pid, program = ?spec.program, "supervised child started");

    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), spec.stdin) {
        tokio::spawn(async move {
            // A child that does not read its stdin closes the pipe; that is its business.
            let _ = pipe.write_all(&input).await;
        });
    }
    let last_output = Arc::new(AtomicU64::new(0));
    let drains = [
        child
            .stdout
            .take()
            .map(|p| drain(p, stdout.clone(), last_output.clone(), started)),
        child
            .stderr
            .take()
            .map(|p| drain(p, stderr.clone(), last_output.clone(), started)),
    ];

    let ending = watch(&mut child, &group, limits, cancel, &last_output, started).await;
    group.end_leftovers(limits.grace).await;
    for task in drains.into_iter().flatten() {
        if tokio::time::timeout(DRAIN_WAIT, &mut *Box::pin(task))
            .await
            .is_err()
        {
            tracing::warn!(
                pid,
                "output pipe still open after the group ended; stopped reading"
            );
        }
    }
    tracing::debug!(pid, ?ending, "supervised child ended");
    finish(ending, started, &stdout, &stderr)
}

fn finish(
    ending: Ending,
    started: Instant,
    stdout: &Mutex<CapturedOutput>,
    stderr: &Mutex<CapturedOutput>,
) -> Supervised {
    let take = |m: &Mutex<CapturedOutput>| {
        std::mem::take(&mut *m.lock().expect("output buffer lock is never poisoned"))
    };
    Supervised {
        ending,
        duration: started.elapsed(),
        stdout: take(stdout),
        stderr: take(stderr),
    }
}

fn drain(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    sink: Arc<Mutex<CapturedOutput>>,
    last_output: Arc<AtomicU64>,
    started: Instant,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    sink.lock()
                        .expect("output buffer lock is never poisoned")
                        .push(&buf[..n]);
                    last_output.store(millis(started.elapsed()), Ordering::Relaxed);
                }
            }
        }
    })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Waits for the child, enforcing the limits. Returns how it ended; on a stop the leader has
/// been reaped.
async fn watch(
    child: &mut Child,
    group: &GroupGuard,
    limits: &Limits,
    cancel: &CancellationToken,
    last_output: &AtomicU64,
    started: Instant,
) -> Ending {
    let deadline = tokio::time::Instant::from_std(started + limits.wall_clock);
    let poll = limits
        .stagnation
        .as_ref()
        .map_or(Duration::from_secs(3600), |s| {
            (s.after / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
        });
    let mut tick = tokio::time::interval(poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let watched = limits.stagnation.as_ref().and_then(|s| s.watch.clone());
    let mut print = fingerprint::of(watched.clone()).await;
    let mut last_fs_change = started.elapsed();
    loop {
        tokio::select! {
            status = child.wait() => {
                return match status {
                    Ok(status) => Ending::from_status(status),
                    Err(err) => Ending::SpawnFailed { reason: format!("waiting for it failed: {err}") },
                };
            }
            () = tokio::time::sleep_until(deadline) => {
                stop(child, group, limits.grace).await;
                return Ending::WallClockLimit { limit_s: limits.wall_clock.as_secs() };
            }
            () = cancel.cancelled() => {
                stop(child, group, limits.grace).await;
                return Ending::Cancelled;
            }
            _ = tick.tick(), if limits.stagnation.is_some() => {
                let after = limits.stagnation.as_ref().expect("guarded by the branch condition").after;
                let now_print = fingerprint::of(watched.clone()).await;
                let now = started.elapsed();
                if now_print != print {
                    print = now_print;
                    last_fs_change = now;
                }
                let last_out = Duration::from_millis(last_output.load(Ordering::Relaxed));
                let quiet = now.saturating_sub(last_out.max(last_fs_change));
                if quiet >= after {
                    stop(child, group, limits.grace).await;
                    return Ending::Stagnated { quiet_s: quiet.as_secs() };
                }
            }
        }
    }
}

/// SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the group.
async fn stop(child: &mut Child, group: &GroupGuard, grace: Duration) {
    group.signal(Signal::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        group.signal(Signal::SIGKILL);
        if let Err(err) = child.wait().await {
            tracing::warn!(%err, "could not reap a killed child");
        }
    }
}

/// The child's process group. Dropping it (for example when the supervising future is dropped)
/// kills whatever is left of the group.
struct GroupGuard {
    pgid: Pid,
    ended: std::sync::atomic::AtomicBool,
}

impl GroupGuard {
    fn new(pgid: Pid) -> Self {
        Self {
            pgid,
            ended: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Sends `signal` to the group; false when no process of the group is left.
    fn signal(&self, signal: Signal) -> bool {
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

    /// After the leader is gone: TERM whatever the agent left behind (`sleep 100 &`), wait up to
    /// `grace`, then KILL.
    async fn end_leftovers(&self, grace: Duration) {
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
        if !self.ended.load(Ordering::Relaxed) {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}
