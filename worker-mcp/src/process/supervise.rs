//! Runs one child process under supervision: a session and process group of its own, exactly
//! the environment it was given, stdin fed then closed, stdout/stderr drained into bounded
//! buffers, a wall-clock limit, optional stagnation detection, cancellation, and an ending that
//! always takes the whole group down (TERM, grace, KILL).
//!
//! Every way a child can end is one [`Ending`] variant.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::capture::CapturedOutput;
use super::env::ChildEnv;
use super::fingerprint;
use super::group::GroupGuard;
use super::spawn;

/// How a supervised child ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    /// It exited by itself with this code.
    Exited { code: i32 },
    /// A signal it did not handle ended it (a crash such as `SIGSEGV`/`SIGABRT`, or a kill from
    /// outside Butler).
    Signalled { signal: String },
    /// Butler stopped it at the wall-clock limit.
    WallClockLimit { limit_s: u64 },
    /// Butler stopped it after this long with no output and no file change.
    Stagnated { quiet_s: u64 },
    /// Butler stopped it because its work was cancelled.
    Cancelled,
    /// It never ran (program missing, not executable, bad working directory, …).
    SpawnFailed { reason: String },
}

impl Ending {
    /// The exit code, if it exited by itself.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            Self::Exited { code } => Some(*code),
            _ => None,
        }
    }

    /// It exited by itself with code 0.
    pub fn success(&self) -> bool {
        self.exit_code() == Some(0)
    }

    fn from_status(status: ExitStatus) -> Self {
        if let Some(code) = status.code() {
            return Self::Exited { code };
        }
        let signal = status.signal().map_or_else(
            || "unknown".to_owned(),
            |n| {
                Signal::try_from(n)
                    .map_or_else(|_| format!("signal {n}"), |s| s.as_str().to_owned())
            },
        );
        Self::Signalled { signal }
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exited { code } => write!(f, "exit code {code}"),
            Self::Signalled { signal } => write!(f, "ended by {signal}"),
            Self::WallClockLimit { limit_s } => write!(f, "stopped after {limit_s} s"),
            Self::Stagnated { quiet_s } => write!(f, "stopped after {quiet_s} s without progress"),
            Self::Cancelled => f.write_str("cancelled"),
            Self::SpawnFailed { reason } => write!(f, "could not start: {reason}"),
        }
    }
}

/// What to run. The environment is exactly `env` (nothing of Butler's is inherited).
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: ChildEnv,
    /// Written to the child's stdin, which is then closed; `None` gives it `/dev/null`.
    pub stdin: Option<Vec<u8>>,
}

impl ChildSpec {
    /// `program` with no arguments in `cwd`.
    pub fn new(program: impl Into<OsString>, cwd: impl Into<PathBuf>, env: ChildEnv) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env,
            stdin: None,
        }
    }

    /// `sh -c <script>` in `cwd` with the given environment.
    pub fn shell(script: &str, cwd: impl Into<PathBuf>, env: ChildEnv) -> Self {
        let mut spec = Self::new("sh", cwd, env);
        spec.args = vec!["-c".into(), script.into()];
        spec
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
}

/// Stop a child that has been silent (no output) and idle (no file change under `watch`) for
/// `after`. Without `watch`, only output counts.
#[derive(Debug, Clone)]
pub struct Stagnation {
    pub after: Duration,
    pub watch: Option<PathBuf>,
}

/// How much of one output stream is kept: the first `head` and the last `tail` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    pub head: usize,
    pub tail: usize,
}

/// The limits one run is held to.
#[derive(Debug, Clone)]
pub struct Limits {
    pub wall_clock: Duration,
    pub stagnation: Option<Stagnation>,
    /// Time between SIGTERM to the group and SIGKILL.
    pub grace: Duration,
    pub stdout: Keep,
    pub stderr: Keep,
}

impl Limits {
    /// `wall_clock`, 5 s of grace, and 16 KiB head + 64 KiB tail of each stream.
    pub fn new(wall_clock: Duration) -> Self {
        let keep = Keep {
            head: 16 * 1024,
            tail: 64 * 1024,
        };
        Self {
            wall_clock,
            stagnation: None,
            grace: Duration::from_secs(5),
            stdout: keep,
            stderr: keep,
        }
    }

    /// Keeps the same head and tail of both streams.
    pub fn keep(mut self, head: usize, tail: usize) -> Self {
        self.stdout = Keep { head, tail };
        self.stderr = self.stdout;
        self
    }
}

/// The result of one supervised run.
#[derive(Debug)]
pub struct Supervised {
    pub ending: Ending,
    pub duration: Duration,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    /// Why the spawn failed, when [`Ending::SpawnFailed`] came from the spawn itself
    /// (`NotFound`: no such program).
    pub spawn_error: Option<std::io::ErrorKind>,
}

/// A child Butler talks to over its stdin and stdout (an MCP server), supervised meanwhile:
/// its stderr is captured, and `ended` resolves once it and its group are gone.
#[derive(Debug)]
pub struct Conversation {
    pub pid: u32,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    /// Cancelling it stops the child (TERM to the group, grace, KILL).
    pub cancel: CancellationToken,
    /// The run's result; `stdout` in it is empty (the caller read it).
    pub ended: JoinHandle<Supervised>,
}

/// How long to wait for the output pipes to close once the group is gone (a process that left
/// the group with `setsid`, such as an ssh ControlMaster, can keep them open).
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Runs `spec` under `limits` until it ends, is stopped, or `cancel` fires. Never returns while
/// a process of the child's group is still known to be running.
pub async fn supervise(
    mut spec: ChildSpec,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Supervised {
    let started = Instant::now();
    let stdin = spec.stdin.take();
    let mut run = match Run::start(&spec, limits, started, stdin.is_some(), false) {
        Ok(run) => run,
        Err(err) => return spawn_failed(&spec, err, started, limits),
    };
    if let (Some(mut pipe), Some(input)) = (run.child.stdin.take(), stdin) {
        tokio::spawn(async move {
            // A child that does not read its stdin closes the pipe; that is its business.
            let _ = pipe.write_all(&input).await;
        });
    }
    run.finish(limits, cancel).await
}

/// Starts `spec` with its stdin and stdout handed to the caller and supervises it in a task of
/// the current runtime (`spec.stdin` is ignored). Fails only when the child cannot be started.
pub fn converse(spec: ChildSpec, limits: Limits) -> std::io::Result<Conversation> {
    let started = Instant::now();
    let mut run = Run::start(&spec, &limits, started, true, true).map_err(|err| {
        std::io::Error::new(
            err.kind(),
            format!("{}: {err}", spec.program.to_string_lossy()),
        )
    })?;
    let stdin = run.child.stdin.take().expect("stdin is piped");
    let stdout = run.child.stdout.take().expect("stdout is piped");
    let pid = run.pid;
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let ended = tokio::spawn(async move { run.finish(&limits, &token).await });
    Ok(Conversation {
        pid,
        stdin,
        stdout,
        cancel,
        ended,
    })
}

fn spawn_failed(
    spec: &ChildSpec,
    err: std::io::Error,
    started: Instant,
    limits: &Limits,
) -> Supervised {
    let reason = format!("{}: {err}", spec.program.to_string_lossy());
    tracing::debug!(%reason, "child could not be started");
    Supervised {
        ending: Ending::SpawnFailed { reason },
        duration: started.elapsed(),
        stdout: CapturedOutput::new(limits.stdout.head, limits.stdout.tail),
        stderr: CapturedOutput::new(limits.stderr.head, limits.stderr.tail),
        spawn_error: Some(err.kind()),
    }
}

/// A started child with its group and the tasks draining its output.
struct Run {
    child: Child,
    pid: u32,
    group: GroupGuard,
    started: Instant,
    stdout: Arc<Mutex<CapturedOutput>>,
    stderr: Arc<Mutex<CapturedOutput>>,
    drains: Vec<JoinHandle<()>>,
    last_output: Arc<AtomicU64>,
}

impl Run {
    fn start(
        spec: &ChildSpec,
        limits: &Limits,
        started: Instant,
        pipe_stdin: bool,
        talk: bool,
    ) -> std::io::Result<Self> {
        let stdin = if pipe_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let mut child = spawn::spawn(spec, stdin)?;
        let pid = child.id().expect("a child that was just spawned has a pid");
        let group = GroupGuard::new(pid);
        tracing::debug!(pid, program = ?spec.program, "supervised child started");
        let stdout = Arc::new(Mutex::new(CapturedOutput::new(
            limits.stdout.head,
            limits.stdout.tail,
        )));
        let stderr = Arc::new(Mutex::new(CapturedOutput::new(
            limits.stderr.head,
            limits.stderr.tail,
        )));
        let last_output = Arc::new(AtomicU64::new(0));
        let mut drains = Vec::with_capacity(2);
        if !talk && let Some(pipe) = child.stdout.take() {
            drains.push(drain(pipe, stdout.clone(), last_output.clone(), started));
        }
        if let Some(pipe) = child.stderr.take() {
            drains.push(drain(pipe, stderr.clone(), last_output.clone(), started));
        }
        Ok(Self {
            child,
            pid,
            group,
            started,
            stdout,
            stderr,
            drains,
            last_output,
        })
    }

    /// Waits for the end under `limits`, takes the group down, drains what is left.
    async fn finish(mut self, limits: &Limits, cancel: &CancellationToken) -> Supervised {
        let ending = watch(
            &mut self.child,
            &self.group,
            limits,
            cancel,
            &self.last_output,
            self.started,
        )
        .await;
        self.group.end_leftovers(limits.grace).await;
        for mut task in self.drains {
            if tokio::time::timeout(DRAIN_WAIT, &mut task).await.is_err() {
                task.abort();
                tracing::warn!(
                    pid = self.pid,
                    "output pipe still open after the group ended; stopped reading"
                );
            }
        }
        tracing::debug!(pid = self.pid, ?ending, "supervised child ended");
        let take = |m: &Mutex<CapturedOutput>| {
            std::mem::take(&mut *m.lock().expect("output buffer lock is never poisoned"))
        };
        Supervised {
            ending,
            duration: self.started.elapsed(),
            stdout: take(&self.stdout),
            stderr: take(&self.stderr),
            spawn_error: None,
        }
    }
}

fn drain(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    sink: Arc<Mutex<CapturedOutput>>,
    last_output: Arc<AtomicU64>,
    started: Instant,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
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
    // A limit too far away to represent is no limit.
    let deadline = started
        .checked_add(limits.wall_clock)
        .map(tokio::time::Instant::from_std);
    let poll = limits
        .stagnation
        .as_ref()
        .map_or(Duration::from_secs(3600), |s| {
            (s.after / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
        });
    let mut tick = tokio::time::interval(poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let watched = limits.stagnation.as_ref().and_then(|s| s.watch.clone());
    let mut print = match &limits.stagnation {
        Some(_) => fingerprint::of(watched.clone()).await,
        None => 0,
    };
    let mut last_fs_change = started.elapsed();
    loop {
        tokio::select! {
            status = child.wait() => {
                return match status {
                    Ok(status) => Ending::from_status(status),
                    Err(err) => Ending::SpawnFailed { reason: format!("waiting for it failed: {err}") },
                };
            }
            () = sleep_until(deadline) => {
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

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
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
