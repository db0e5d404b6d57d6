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
///
/// When Butler has no controlling terminal (CI, a service, a client that gave it none), there is
/// none to keep the child from: it inherits none, and only a session leader can take one. A
/// process group of its own is then enough, which `posix_spawn` makes itself, without
/// `setsid(1)`'s extra `exec`.
pub(super) fn spawn(spec: &ChildSpec, stdin: Stdio) -> std::io::Result<Child> {
    let session = if has_controlling_terminal() {
        Session::New
    } else {
        Session::GroupOnly
    };
    spawn_in(spec, stdin, session)
}

/// How a child is kept from Butler's terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Session {
    /// A session of its own (no controlling terminal).
    New,
    /// A process group of its own, in Butler's session, which has no terminal.
    GroupOnly,
}

/// Whether this process has a controlling terminal: `/dev/tty` opens exactly then (`ENXIO`
/// otherwise). Anything else than `ENXIO` counts as having one.
fn has_controlling_terminal() -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY)
        .open("/dev/tty")
    {
        Ok(_) => true,
        Err(err) => err.raw_os_error() != Some(libc::ENXIO),
    }
}

fn spawn_in(spec: &ChildSpec, stdin: Stdio, session: Session) -> std::io::Result<Child> {
    let mut command = match (session, setsid_program()) {
        (Session::GroupOnly, _) => {
            // Every child is built from a `ChildSpec` whose environment was made on purpose.
            #[allow(clippy::disallowed_methods)]
            let mut command = Command::new(resolve(spec)?);
            command.process_group(0);
            command
        }
        (Session::New, Some(setsid)) => {
            let program = resolve(spec)?;
            // Every child is built from a `ChildSpec` whose environment was made on purpose.
            #[allow(clippy::disallowed_methods)]
            let mut command = Command::new(setsid);
            command.arg(program);
            command
        }
        (Session::New, None) => {
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

/// Whether `path` is a file `exec` would run (a regular file this process may execute): the
/// one check for "is this a program" wherever Butler looks for one.
pub fn is_executable(path: &Path) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `pid`, process group, session and terminal of a child that prints its own `stat`.
    async fn identity(session: Session) -> (String, String, String, String) {
        let mut env = ChildEnv::new();
        env.set("PATH", "/usr/bin:/bin");
        let spec = ChildSpec::shell("cat /proc/$$/stat", "/", env);
        let child = spawn_in(&spec, Stdio::null(), session).expect("spawned");
        let out = child.wait_with_output().await.expect("waited");
        let stat = String::from_utf8_lossy(&out.stdout).into_owned();
        let pid = stat.split_whitespace().next().expect("pid").to_owned();
        let (_, rest) = stat.rsplit_once(')').expect("comm");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After the name: state, ppid, pgrp, session, tty_nr.
        let field = |i: usize| fields[i].to_owned();
        (pid, field(2), field(3), field(4))
    }

    #[tokio::test]
    async fn a_new_session_is_led_by_the_child_with_no_terminal() {
        let (pid, group, session, tty) = identity(Session::New).await;
        assert_eq!((group, session, tty), (pid.clone(), pid, "0".to_owned()));
    }

    #[tokio::test]
    async fn a_group_only_child_leads_its_group_in_butlers_session() {
        let (pid, group, session, _) = identity(Session::GroupOnly).await;
        assert_eq!(group, pid);
        assert_ne!(session, pid);
    }

    #[test]
    fn this_test_process_is_asked_whether_it_has_a_terminal() {
        // Whatever the answer, it is the kernel's: `/dev/tty` opens exactly when there is one.
        let expected = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|stat| {
                let (_, rest) = stat.rsplit_once(')')?;
                rest.split_whitespace().nth(4).map(|tty| tty != "0")
            })
            .expect("stat");
        assert_eq!(has_controlling_terminal(), expected);
    }
}
