//! The one place in Butler that creates an operating-system process (`clippy.toml` forbids
//! `Command::new` everywhere else), from a [`ChildSpec`]: what to run.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

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
///
/// The session comes from `setsid(1)`, which calls `setsid(2)` and `exec`s the program (same
/// pid): that lets the standard library start the child with `posix_spawn` (a `vfork`), where a
/// `pre_exec` hook would make it `fork()` the whole multi-threaded Butler, copying its page
/// tables for every git call, at a cost that grows with Butler's memory. `setsid(1)`'s own
/// start costs less here (the end-to-end suite, about 28,000 children: system time down a
/// quarter, user time up a tenth). The program is looked up on the child's own `PATH` first,
/// as `execvp` would, so a missing program is still a spawn error and not `setsid`'s exit
/// status. Where `setsid(1)` is missing, the hook is the fallback. Until `setsid(2)` has run,
/// the child is not yet the leader of a group: the group guard signals it through its pid
/// descriptor then.
pub(super) fn spawn(spec: &ChildSpec, stdin: Stdio) -> std::io::Result<Child> {
    let mut command = match setsid_program() {
        Some(setsid) => {
            let program = resolve(spec)?;
            // Every child is built from a `ChildSpec` whose environment was made on purpose.
            #[allow(clippy::disallowed_methods)]
            let mut command = Command::new(setsid);
            command.arg(program);
            command
        }
        None => {
            #[allow(clippy::disallowed_methods)]
            let mut command = Command::new(&spec.program);
            new_session(&mut command);
            command
        }
    };
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
    command.spawn()
}

/// `setsid(1)` (util-linux, or busybox's), at the places a system keeps it; `None` when there
/// is none.
fn setsid_program() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            ["/usr/bin/setsid", "/bin/setsid"]
                .into_iter()
                .map(PathBuf::from)
                .find(|path| is_executable(path))
        })
        .as_deref()
}

/// The path `execvp` would run for `spec.program` in the child: a name without a slash is looked
/// up on the child's `PATH` (the system's default path when it has none; an empty entry is
/// the working directory), relative to the child's working directory. The result never starts
/// with `-` (it is `setsid`'s first argument): a relative path gets a leading `./`. A program
/// that is missing or not executable is the error `exec` would give; what only `exec` can tell
/// (a script whose interpreter is missing) is `setsid`'s exit status 126 or 127.
fn resolve(spec: &ChildSpec) -> std::io::Result<PathBuf> {
    let program = Path::new(&spec.program);
    let named = |path: PathBuf| {
        if path.is_absolute() {
            path
        } else {
            Path::new(".").join(path)
        }
    };
    if spec.program.as_bytes().contains(&b'/') {
        let target = spec.cwd.join(program);
        std::fs::metadata(&target)?;
        return if is_executable(&target) {
            Ok(named(program.to_path_buf()))
        } else {
            Err(std::io::Error::from_raw_os_error(libc::EACCES))
        };
    }
    let search = spec
        .env
        .get("PATH")
        .map_or_else(|| OsString::from(DEFAULT_PATH), OsStr::to_os_string);
    std::env::split_paths(&search)
        .map(|dir| dir.join(program))
        .find(|candidate| !spec.program.is_empty() && is_executable(&spec.cwd.join(candidate)))
        .map(named)
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOENT))
}

/// glibc's search path for `execvp` when `PATH` is unset (`confstr(_CS_PATH)`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

fn is_executable(path: &Path) -> bool {
    path.is_file() && nix::unistd::access(path, nix::unistd::AccessFlags::X_OK).is_ok()
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
