//! Runs one child process under supervision: a session and process group of its own, exactly
//! the environment it was given, stdin fed then closed, stdout/stderr drained into bounded
//! buffers, a wall-clock limit, optional stagnation detection, cancellation, an optional observer
//! of its stdout lines that may stop it ([`LineObserver`]), and an ending that always takes the
//! whole group down (TERM, grace, KILL).
//!
//! Every way a child can end is one [`Ending`] variant.

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
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::capture::CapturedOutput;
use super::fingerprint;
use super::group::GroupGuard;
use super::spawn::{self, ChildSpec};

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
    /// Butler stopped it for repeating itself: the same tool call (`repeated`, said for a
    /// person) `times` times with no file changed meanwhile. Set by a [`LineObserver`].
    Looped { repeated: String, times: u32 },
    /// Butler stopped it after `active_s` seconds of activity (it kept writing output) in which
    /// no file changed. Set by a [`LineObserver`].
    NoFileChange { active_s: u64 },
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
            Self::Looped { repeated, times } => write!(
                f,
                "stopped after repeating `{repeated}` {times} times without changing a file"
            ),
            Self::NoFileChange { active_s } => write!(
                f,
                "stopped after {active_s} s of activity without changing a file"
            ),
            Self::Cancelled => f.write_str("cancelled"),
            Self::SpawnFailed { reason } => write!(f, "could not start: {reason}"),
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

/// What a [`LineObserver`] is told with each line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSeen {
    /// Time since the child started.
    pub at: Duration,
    /// When a file under the watched tree ([`Stagnation::watch`]) last changed, as a time since
    /// the start; `None` while none has (or no tree is watched). With an observer the tree is
    /// looked at about every half second (less often when that is costly), so a change shows
    /// here that much later at most.
    pub files_changed_at: Option<Duration>,
}

/// What a [`LineObserver`] decides after a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Continue,
    /// Stop the child (TERM to the group, grace, KILL); the run ends with this ending.
    Stop(Ending),
}

/// Sees each complete line of a supervised child's stdout as it arrives, in order (without the
/// line end; a last line without one at the end of the stream; a line longer than 1 MiB cut
/// there), and may stop the child. It runs on the task draining the pipe: it should be quick.
/// The output is captured as without an observer. After a stop it is not called again.
pub trait LineObserver: Send + 'static {
    fn line(&mut self, line: &[u8], seen: LineSeen) -> Verdict;

    /// The stream ended (after its last line, also after a stop).
    fn end(&mut self) {}
}

impl<F> LineObserver for F
where
    F: FnMut(&[u8], LineSeen) -> Verdict + Send + 'static,
{
    fn line(&mut self, line: &[u8], seen: LineSeen) -> Verdict {
        self(line, seen)
    }
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
pub async fn supervise(spec: ChildSpec, limits: &Limits, cancel: &CancellationToken) -> Supervised {
    supervise_child(spec, limits, cancel, None).await
}

/// [`supervise`], with `observer` seeing each line of the child's stdout as it arrives; it may
/// stop the child with an ending of its choice ([`Verdict::Stop`]).
pub async fn supervise_observed(
    spec: ChildSpec,
    limits: &Limits,
    cancel: &CancellationToken,
    observer: impl LineObserver,
) -> Supervised {
    supervise_child(spec, limits, cancel, Some(Box::new(observer))).await
}

async fn supervise_child(
    mut spec: ChildSpec,
    limits: &Limits,
    cancel: &CancellationToken,
    observer: Option<Box<dyn LineObserver>>,
) -> Supervised {
    let started = Instant::now();
    let stdin = spec.stdin.take();
    let mut run = match Run::start(&spec, limits, started, stdin.is_some(), false, observer) {
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
    let mut run = Run::start(&spec, &limits, started, true, true, None).map_err(|err| {
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
    marks: Marks,
    /// An observer's request to stop the child.
    stop: Option<oneshot::Receiver<Ending>>,
}

/// Times shared between the drains and the watch, in milliseconds since the start.
#[derive(Clone)]
struct Marks {
    last_output: Arc<AtomicU64>,
    /// The last file change under the watched tree; [`NEVER`] while none.
    fs_changed: Arc<AtomicU64>,
}

const NEVER: u64 = u64::MAX;

impl Marks {
    fn new() -> Self {
        Self {
            last_output: Arc::new(AtomicU64::new(0)),
            fs_changed: Arc::new(AtomicU64::new(NEVER)),
        }
    }

    fn files_changed_at(&self) -> Option<Duration> {
        match self.fs_changed.load(Ordering::Relaxed) {
            NEVER => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }
}

impl Run {
    fn start(
        spec: &ChildSpec,
        limits: &Limits,
        started: Instant,
        pipe_stdin: bool,
        talk: bool,
        observer: Option<Box<dyn LineObserver>>,
    ) -> std::io::Result<Self> {
        let stdin = if pipe_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let mut child = spawn::spawn(spec, stdin)?;
        let pid = child.id().expect("a child that was just spawned has a pid");
        let group = GroupGuard::new(pid, spec.reaper.then_some(limits.grace));
        tracing::debug!(pid, program = ?spec.program, "supervised child started");
        let stdout = Arc::new(Mutex::new(CapturedOutput::new(
            limits.stdout.head,
            limits.stdout.tail,
        )));
        let stderr = Arc::new(Mutex::new(CapturedOutput::new(
            limits.stderr.head,
            limits.stderr.tail,
        )));
        let marks = Marks::new();
        let mut drains = Vec::with_capacity(2);
        let mut stop = None;
        if !talk && let Some(pipe) = child.stdout.take() {
            let lines = observer.map(|observer| {
                let (tx, rx) = oneshot::channel();
                stop = Some(rx);
                Lines::new(observer, tx, marks.clone(), started)
            });
            drains.push(drain(pipe, stdout.clone(), marks.clone(), started, lines));
        }
        if let Some(pipe) = child.stderr.take() {
            drains.push(drain(pipe, stderr.clone(), marks.clone(), started, None));
        }
        Ok(Self {
            child,
            pid,
            group,
            started,
            stdout,
            stderr,
            drains,
            marks,
            stop,
        })
    }

    /// Waits for the end under `limits`, takes the group down, drains what is left.
    async fn finish(mut self, limits: &Limits, cancel: &CancellationToken) -> Supervised {
        let ending = watch(
            &mut self.child,
            &self.group,
            limits,
            cancel,
            &self.marks,
            &mut self.stop,
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
    marks: Marks,
    started: Instant,
    mut lines: Option<Lines>,
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
                    marks
                        .last_output
                        .store(millis(started.elapsed()), Ordering::Relaxed);
                    if let Some(lines) = lines.as_mut() {
                        lines.feed(&buf[..n]);
                    }
                }
            }
        }
        if let Some(lines) = lines.as_mut() {
            lines.finish();
        }
    })
}

/// Longest line given to an observer; the rest of a longer line is dropped.
const MAX_LINE: usize = 1024 * 1024;

/// Cuts a stream into lines for an observer and passes its stop request on.
struct Lines {
    observer: Box<dyn LineObserver>,
    partial: Vec<u8>,
    /// Taken by the first stop; the observer is not called after it.
    stop: Option<oneshot::Sender<Ending>>,
    marks: Marks,
    started: Instant,
}

impl Lines {
    fn new(
        observer: Box<dyn LineObserver>,
        stop: oneshot::Sender<Ending>,
        marks: Marks,
        started: Instant,
    ) -> Self {
        Self {
            observer,
            partial: Vec::new(),
            stop: Some(stop),
            marks,
            started,
        }
    }

    fn feed(&mut self, mut data: &[u8]) {
        while let Some(end) = data.iter().position(|&b| b == b'\n') {
            self.keep(&data[..end]);
            self.emit();
            data = &data[end + 1..];
        }
        self.keep(data);
    }

    /// The end of the stream: a last line without a line end is a line too.
    fn finish(&mut self) {
        if !self.partial.is_empty() {
            self.emit();
        }
        self.observer.end();
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.partial.len());
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn emit(&mut self) {
        let mut line = std::mem::take(&mut self.partial);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if self.stop.is_none() {
            return;
        }
        let seen = LineSeen {
            at: self.started.elapsed(),
            files_changed_at: self.marks.files_changed_at(),
        };
        if let Verdict::Stop(ending) = self.observer.line(&line, seen)
            && let Some(stop) = self.stop.take()
        {
            // The watch is gone when the child already ended by itself: nothing to stop.
            let _ = stop.send(ending);
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// How often the watched tree is looked at while an observer wants to know of file changes.
const OBSERVED_POLL: Duration = Duration::from_millis(500);

/// Waits for the child, enforcing the limits. Returns how it ended; on a stop the leader has
/// been reaped.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one `Run`, borrowed apart so the child can be waited on mutably"
)]
async fn watch(
    child: &mut Child,
    group: &GroupGuard,
    limits: &Limits,
    cancel: &CancellationToken,
    marks: &Marks,
    stop_request: &mut Option<oneshot::Receiver<Ending>>,
    started: Instant,
) -> Ending {
    // A limit too far away to represent is no limit.
    let deadline = started
        .checked_add(limits.wall_clock)
        .map(tokio::time::Instant::from_std);
    let mut poll = limits
        .stagnation
        .as_ref()
        .map_or(Duration::from_secs(3600), |s| {
            (s.after / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
        });
    if stop_request.is_some() {
        poll = poll.min(OBSERVED_POLL);
    }
    let base_poll = poll;
    let mut next_tick = tokio::time::Instant::now() + poll;
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
            ending = requested(stop_request) => {
                stop(child, group, limits.grace).await;
                return ending;
            }
            () = tokio::time::sleep_until(next_tick), if limits.stagnation.is_some() => {
                let after = limits.stagnation.as_ref().expect("guarded by the branch condition").after;
                let looked = Instant::now();
                let now_print = fingerprint::of(watched.clone()).await;
                // A costly tree is looked at less often: at most a tenth of the time.
                poll = base_poll.max(looked.elapsed() * 10);
                next_tick = tokio::time::Instant::now() + poll;
                let now = started.elapsed();
                if now_print != print {
                    print = now_print;
                    last_fs_change = now;
                    marks.fs_changed.store(millis(now), Ordering::Relaxed);
                }
                let last_out = Duration::from_millis(marks.last_output.load(Ordering::Relaxed));
                let quiet = now.saturating_sub(last_out.max(last_fs_change));
                if quiet >= after {
                    stop(child, group, limits.grace).await;
                    return Ending::Stagnated { quiet_s: quiet.as_secs() };
                }
            }
        }
    }
}

/// The ending an observer asked for; pending while none did (or it can no longer ask).
async fn requested(request: &mut Option<oneshot::Receiver<Ending>>) -> Ending {
    if let Some(receiver) = request.as_mut() {
        match receiver.await {
            Ok(ending) => return ending,
            // The observer's drain ended without asking: never poll the spent receiver again.
            Err(_) => *request = None,
        }
    }
    std::future::pending().await
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines cut from `chunks` as an observer sees them; stops at a line equal to `stop_at`.
    fn lines_of(chunks: &[&[u8]], stop_at: Option<&str>) -> (Vec<String>, Option<Ending>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let stop_at = stop_at.map(str::to_owned);
        let observer = move |line: &[u8], _: LineSeen| {
            let text = String::from_utf8_lossy(line).into_owned();
            let stop = stop_at.as_deref() == Some(text.as_str());
            sink.lock().expect("lock").push(text);
            if stop {
                Verdict::Stop(Ending::Looped {
                    repeated: "x".into(),
                    times: 3,
                })
            } else {
                Verdict::Continue
            }
        };
        let (tx, mut rx) = oneshot::channel();
        let mut lines = Lines::new(Box::new(observer), tx, Marks::new(), Instant::now());
        for chunk in chunks {
            lines.feed(chunk);
        }
        lines.finish();
        let seen = seen.lock().expect("lock").clone();
        (seen, rx.try_recv().ok())
    }

    #[test]
    fn lines_are_cut_across_chunks_with_a_last_line_without_its_end() {
        let (lines, stop) = lines_of(&[b"one\ntw", b"o\r\n\nthr", b"ee"], None);
        assert_eq!(lines, ["one", "two", "", "three"]);
        assert_eq!(stop, None);
    }

    #[test]
    fn a_stop_is_passed_on_once_and_the_observer_is_not_called_after_it() {
        let (lines, stop) = lines_of(&[b"a\nb\nc\n"], Some("b"));
        assert_eq!(lines, ["a", "b"]);
        assert!(matches!(stop, Some(Ending::Looped { times: 3, .. })));
    }

    #[test]
    fn an_endless_line_is_cut_at_the_bound() {
        let big = vec![b'x'; MAX_LINE + 10];
        let (lines, _) = lines_of(&[&big, b"\nnext\n"], None);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), MAX_LINE);
        assert_eq!(lines[1], "next");
    }

    #[test]
    fn the_new_endings_say_why_for_a_person() {
        let looped = Ending::Looped {
            repeated: "shell: ls".into(),
            times: 4,
        };
        assert_eq!(
            looped.to_string(),
            "stopped after repeating `shell: ls` 4 times without changing a file"
        );
        assert_eq!(
            serde_json::to_value(&looped).expect("json"),
            serde_json::json!({"kind": "looped", "repeated": "shell: ls", "times": 4})
        );
        assert_eq!(
            serde_json::to_value(Ending::NoFileChange { active_s: 9 }).expect("json"),
            serde_json::json!({"kind": "no_file_change", "active_s": 9})
        );
    }
}
