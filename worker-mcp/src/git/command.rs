//! Every git process the worker starts, as a thin layer over the one supervisor
//! ([`crate::process`]).
//!
//! Each child: working directory = the working tree; an environment built from
//! [`env::GIT_CHILD`] (a person's git setup, never Butler's secrets nor variables that point git
//! at another repository) plus `LC_ALL=C` so messages can be classified, no terminal prompts,
//! and the handle's explicit variables; stdin null (or a given buffer); its own session and
//! process group, taken down on timeout; stdout kept up to a bound but counted; the end of
//! stderr kept for classification and logs (credentials removed before it is shown anywhere).

use std::ffi::OsStr;
use std::time::Duration;

use super::GitRepo;
use super::error::{GitError, redact_credentials};
use crate::process::{self, ChildEnv, ChildSpec, Ending, Keep, Limits, env};

/// Default bound on captured stdout.
pub(crate) const DEFAULT_MAX_STDOUT: usize = 16 << 20;
/// Bytes of stderr kept (the tail).
const STDERR_TAIL: usize = 8 << 10;
/// Default time limit for local operations.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Time between SIGTERM and SIGKILL when a child overruns.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// One git invocation being built.
pub(crate) struct GitCommand {
    spec: ChildSpec,
    op: &'static str,
    max_stdout: usize,
    timeout: Duration,
}

/// What a finished git process left.
#[derive(Debug)]
pub(crate) struct GitOutput {
    /// How git ended: its exit code, or the signal that ended it.
    pub status: Ending,
    /// stdout, at most `max_stdout` bytes.
    pub stdout: Vec<u8>,
    /// How many bytes stdout had in all.
    pub stdout_total: u64,
    /// The last bytes of stderr (lossy UTF-8, credentials not yet removed).
    pub stderr_tail: String,
}

impl GitOutput {
    /// Whether stdout was cut at the bound.
    pub(crate) fn truncated(&self) -> bool {
        self.stdout_total > self.stdout.len() as u64
    }

    /// A bounded, credential-free description for logs.
    pub(crate) fn detail(&self) -> String {
        redact_credentials(&format!("{}: {}", self.status, self.stderr_tail.trim_end()))
    }
}

/// The environment every git child starts from: what [`env::GIT_CHILD`] lets through from
/// Butler's environment, then the settings Butler relies on.
fn git_env() -> ChildEnv {
    let mut vars = ChildEnv::new();
    vars.inherit_groups(env::inherited(), env::GIT_CHILD)
        .set_default("PATH", env::DEFAULT_PATH)
        .set("LC_ALL", "C")
        .set("LANGUAGE", "C")
        .set("GIT_TERMINAL_PROMPT", "0")
        .set("GCM_INTERACTIVE", "never");
    vars
}

impl GitCommand {
    /// A git command run in `repo`'s working tree; `op` names it in errors.
    pub(crate) fn new(repo: &GitRepo, op: &'static str) -> Self {
        let mut vars = git_env();
        for (key, value) in repo.command_env() {
            vars.set(key, value);
        }
        GitCommand {
            spec: ChildSpec::new("git", repo.workdir(), vars),
            op,
            max_stdout: DEFAULT_MAX_STDOUT,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.spec.args.push(arg.as_ref().to_owned());
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.spec
            .args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub(crate) fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.spec.env.set(key.as_ref(), value.as_ref());
        self
    }

    /// Feeds `bytes` on stdin (otherwise stdin is null).
    pub(crate) fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.spec.stdin = Some(bytes);
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
    pub(crate) fn run(self) -> Result<GitOutput, GitError> {
        let op = self.op;
        let mut limits = Limits::new(self.timeout);
        limits.grace = KILL_GRACE;
        limits.stdout = Keep {
            head: self.max_stdout,
            tail: 0,
        };
        limits.stderr = Keep {
            head: 0,
            tail: STDERR_TAIL,
        };
        let done = process::run_blocking(self.spec, limits);
        match done.ending {
            Ending::Exited { .. } | Ending::Signalled { .. } => {}
            Ending::WallClockLimit { .. } => {
                tracing::warn!(op, "git overran its time limit of {:?}", self.timeout);
                return Err(GitError::Timeout { op });
            }
            Ending::SpawnFailed { reason } => {
                return Err(match done.spawn_error {
                    Some(std::io::ErrorKind::NotFound) => GitError::GitMissing,
                    _ => GitError::failed(op, reason),
                });
            }
            // Git runs have no cancellation, no stagnation watch and no line observer.
            ending @ (Ending::Cancelled
            | Ending::Stagnated { .. }
            | Ending::Looped { .. }
            | Ending::NoFileChange { .. }) => {
                return Err(GitError::failed(op, ending.to_string()));
            }
        }
        Ok(GitOutput {
            status: done.ending,
            stdout_total: done.stdout.total_bytes(),
            stderr_tail: done.stderr.tail_text(STDERR_TAIL),
            stdout: done.stdout.into_bytes(),
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

#[cfg(test)]
mod tests {
    use std::path::Path;
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
        std::thread::sleep(Duration::from_millis(3500).saturating_sub(started.elapsed()));
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
    fn git_runs_with_c_messages_and_no_prompts_in_the_working_tree() {
        let (_dir, repo) = scratch_repo();
        let out = GitCommand::new(&repo, "env")
            .args(["-c", "alias.env=!env; pwd", "env"])
            .run_ok()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in ["LC_ALL=C", "LANGUAGE=C", "GIT_TERMINAL_PROMPT=0"] {
            assert!(text.lines().any(|l| l == line), "{line}: {text}");
        }
        let top = Path::new(text.lines().last().expect("pwd"));
        assert_eq!(top, repo.workdir());
    }
}
