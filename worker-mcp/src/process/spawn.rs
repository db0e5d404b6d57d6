//! The one place in Butler that creates an operating-system process (`clippy.toml` forbids
//! `Command::new` everywhere else), from a [`ChildSpec`]: what to run.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;

use tokio::process::{Child, Command};

use super::env::ChildEnv;

/// What to run. The environment is exactly `env` (nothing of Butler's is inherited).
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: ChildEnv,
    /// Written to the child's stdin, which is then closed; `None` gives it `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// The program is Butler's reaper (the sandbox helper, see [`super::reaper`]): when the
    /// supervision is dropped it is asked to stop (SIGTERM to the group) and given the grace
    /// period to end everything it holds before the group is killed, instead of being killed
    /// at once — killed, it would leave its orphans to init.
    pub reaper: bool,
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
            reaper: false,
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

/// Starts `spec`: its working directory, exactly its environment, stdout and stderr piped, in a
/// session of its own (no controlling terminal, so ssh or a credential helper cannot prompt on
/// the user's terminal, and one process group to signal as a whole).
pub(super) fn spawn(spec: &ChildSpec, stdin: Stdio) -> std::io::Result<Child> {
    // Every child is built from a `ChildSpec` whose environment was made on purpose.
    #[allow(clippy::disallowed_methods)]
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A reaper is not killed outright when dropped: its group guard asks it to stop.
        .kill_on_drop(!spec.reaper);
    new_session(&mut command);
    command.spawn()
}

#[allow(unsafe_code)]
fn new_session(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls setsid(2), which
    // is async-signal-safe, allocates nothing and touches no locks.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
}

/// Runs `spec` for the person at the terminal (`butler task shell`): it shares Butler's
/// terminal and session (stdin, stdout and stderr inherited, so it can be used interactively)
/// and Butler waits for it. Its environment is still exactly `spec.env`.
pub fn run_attended(spec: &ChildSpec) -> std::io::Result<std::process::ExitStatus> {
    // A person's interactive program, with an environment made on purpose.
    #[allow(clippy::disallowed_methods)]
    let mut command = std::process::Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .status()
}
