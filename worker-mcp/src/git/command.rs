//! Builds and runs every git process the worker starts.
//!
//! Each child: working directory = the working tree, stdin null (or a given buffer), `LC_ALL=C`
//! so messages can be classified, no terminal prompts, variables that would point git at
//! another repository removed, its own session (so ssh cannot open the terminal and a timeout
//! can kill hooks and helpers with it), stdout captured up to a bound, and a bounded stderr tail
//! kept for classification and logs.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::GitRepo;
use super::error::{GitError, redact_credentials};

/// Default bound on captured stdout.
pub(crate) const DEFAULT_MAX_STDOUT: usize = 16 << 20;
/// Bytes of stderr kept (the tail).
const STDERR_TAIL: usize = 8 << 10;
/// Default time limit for local operations.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Time between SIGTERM and SIGKILL when a child overruns.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for the output pipes after the child exited (a daemon such as an ssh
/// ControlMaster may inherit them and never close them).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Variables that would make git use another repository, index or pathspec mode than the one
/// this handle stands for.
const REMOVED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
];

/// One git invocation being built.
pub(crate) struct GitCommand {
    cmd: Command,
    op: &'static str,
    stdin: Option<Vec<u8>>,
    max_stdout: usize,
    timeout: Duration,
}

/// What a finished git process left.
#[derive(Debug)]
pub(crate) struct GitOutput {
    pub status: ExitStatus,
    /// stdout, at most `max_stdout` bytes.
    pub stdout: Vec<u8>,
    /// How many bytes stdout had in all.
    pub stdout_total: u64,
    /// The last bytes of stderr (lossy UTF-8, credentials not yet removed).
    pub stderr_tail: String,
}

impl GitOutput {
    /// Whether stdout was cut at the bound.
    pub fn truncated(&self) -> bool {
        self.stdout_total > self.stdout.len() as u64
    }

    /// A bounded, credential-free description for logs.
    pub fn detail(&self) -> String {
        redact_credentials(&format!("{}: {}", self.status, self.stderr_tail.trim_end()))
    }
}

impl GitCommand {
    /// A git command run in `repo`'s working tree; `op` names it in errors.
    pub(crate) fn new(repo: &GitRepo, op: &'static str) -> Self {
        let mut cmd = Command::new("git");
        cmd.current_dir(repo.workdir());
        for name in REMOVED_ENV {
            cmd.env_remove(name);
        }
        cmd.env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GCM_INTERACTIVE", "never");
        for (key, value) in repo.command_env() {
            cmd.env(key, value);
        }
        GitCommand {
            cmd,
            op,
            stdin: None,
            max_stdout: DEFAULT_MAX_STDOUT,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.cmd.arg(arg);
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub(crate) fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    /// Feeds `bytes` on stdin (otherwise stdin is null).
    pub(crate) fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    pub(crate) fn max_stdout(mut self, bytes: usize) -> Self {
        self.max_stdout = bytes;
        self
    }

    pub(crate) fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs git and returns its output whatever its exit status.
    pub(crate) fn run(mut self) -> Result<GitOutput, GitError> {
        let op = self.op;
        self.cmd
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        new_session(&mut self.cmd);
        let mut child = self.cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => GitError::GitMissing,
            _ => GitError::io(op, e),
        })?;
        let pgid = Pid::from_raw(i32::try_from(child.id()).expect("pids fit in i32"));
        if let (Some(bytes), Some(mut pipe)) = (self.stdin.take(), child.stdin.take()) {
            // A hook may exit without reading; a broken pipe is then not our failure.
            thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let stdout = read_bounded(
            child.stdout.take().expect("stdout is piped"),
            self.max_stdout,
        );
        let stderr = read_tail(child.stderr.take().expect("stderr is piped"));
        let status = match wait_with_timeout(child, pgid, self.timeout) {
            Ended::Exited(status) => status,
            Ended::Killed => return Err(GitError::Timeout { op }),
            Ended::Lost(err) => return Err(GitError::io(op, err)),
        };
        let (stdout, stdout_total) = stdout.recv_timeout(DRAIN_GRACE).unwrap_or_default();
        let stderr_tail = stderr.recv_timeout(DRAIN_GRACE).unwrap_or_default();
        Ok(GitOutput {
            status,
            stdout,
            stdout_total,
            stderr_tail,
        })
    }

    /// Runs git and turns a non-zero exit into `GitError::Failed`.
    pub(crate) fn run_ok(self) -> Result<GitOutput, GitError> {
        let op = self.op;
        let out = self.run()?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(GitError::failed(op, out.detail()))
        }
    }
}

/// Starts the child in a session of its own: no controlling terminal (ssh and credential
/// helpers cannot prompt), and one process group to kill on timeout.
#[allow(unsafe_code)]
fn new_session(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls setsid(2),
    // which is async-signal-safe, allocates nothing and touches no locks.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
}

/// How a child ended.
enum Ended {
    Exited(ExitStatus),
    /// It overran its time limit and its process group was killed.
    Killed,
    /// Waiting for it failed.
    Lost(std::io::Error),
}

/// Waits for `child`; after `timeout` terminates its process group (TERM, then KILL).
fn wait_with_timeout(mut child: Child, pgid: Pid, timeout: Duration) -> Ended {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(status)) => Ended::Exited(status),
        Ok(Err(err)) => Ended::Lost(err),
        Err(_) => {
            tracing::warn!("git overran its time limit of {timeout:?}; terminating");
            let _ = killpg(pgid, Signal::SIGTERM);
            if rx.recv_timeout(KILL_GRACE).is_err() {
                let _ = killpg(pgid, Signal::SIGKILL);
                let _ = rx.recv();
            }
            Ended::Killed
        }
    }
}

/// Reads all of `pipe`, keeping the first `max` bytes and counting the rest.
fn read_bounded(
    mut pipe: impl Read + Send + 'static,
    max: usize,
) -> mpsc::Receiver<(Vec<u8>, u64)> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut total = 0u64;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    total += n as u64;
                    let room = max.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send((kept, total));
    });
    rx
}

/// Reads all of `pipe`, keeping its last `STDERR_TAIL` bytes.
fn read_tail(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut tail = VecDeque::with_capacity(STDERR_TAIL);
        let mut buf = [0u8; 8 << 10];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    tail.extend(&buf[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL);
                    tail.drain(..excess);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let bytes: Vec<u8> = tail.into();
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// The last `max` bytes of `text`, starting at a line start when one is near (and always at
/// a char boundary).
pub(crate) fn tail_of(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    if let Some(nl) = text[start..].find('\n')
        && nl < max / 4
    {
        start += nl + 1;
    }
    text[start..].to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use butler_testkit::World;

    use super::*;

    fn scratch_repo() -> (World, GitRepo) {
        let w = World::new();
        let path = w.init("repo");
        let repo = GitRepo::discover(&path)
            .expect("discover")
            .with_command_env(w.env.clone());
        (w, repo)
    }

    #[test]
    fn overrunning_git_is_killed_with_its_children() {
        let (w, repo) = scratch_repo();
        let marker = w.path("survived");
        let script = format!("!sleep 3; touch '{}'", marker.display());
        let started = Instant::now();
        let result = GitCommand::new(&repo, "nap")
            .arg("-c")
            .arg(format!("alias.nap={script}"))
            .arg("nap")
            .timeout(Duration::from_millis(300))
            .run();
        assert!(
            matches!(result, Err(GitError::Timeout { op: "nap" })),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        thread::sleep(Duration::from_millis(3500).saturating_sub(started.elapsed()));
        assert!(!marker.exists(), "the shell child of git was killed too");
    }

    #[test]
    fn stdout_is_bounded_but_counted_and_stdin_is_fed() {
        let (_dir, repo) = scratch_repo();
        let out = GitCommand::new(&repo, "hash-object")
            .args(["hash-object", "--stdin"])
            .stdin(b"hello\n".to_vec())
            .max_stdout(10)
            .run_ok()
            .expect("runs");
        assert_eq!(out.stdout, b"ce01362503");
        assert_eq!(out.stdout_total, 41);
        assert!(out.truncated());
    }

    #[test]
    fn failures_carry_a_redacted_stderr_tail() {
        let (_dir, repo) = scratch_repo();
        let err = GitCommand::new(&repo, "ls-remote")
            .args(["ls-remote", "https://user:hunter2@127.0.0.1:1/x.git"])
            .timeout(Duration::from_secs(20))
            .run_ok()
            .expect_err("nothing listens there");
        let GitError::Failed { op, detail } = err else {
            panic!("{err:?}")
        };
        assert_eq!(op, "ls-remote");
        assert!(!detail.contains("hunter2"), "{detail}");
        assert!(detail.contains("127.0.0.1"), "{detail}");
    }

    #[test]
    fn tails_start_at_a_line_when_one_is_near() {
        assert_eq!(tail_of("short", 10), "short");
        assert_eq!(
            tail_of("aaaa\nbbbbbbbbbbbbbb\ncc", 20),
            "bbbbbbbbbbbbbb\ncc"
        );
    }
}
