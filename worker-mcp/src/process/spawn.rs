//! The one place in Butler that creates an operating-system process (`clippy.toml` forbids
//! `Command::new` everywhere else).

use std::process::Stdio;

use tokio::process::{Child, Command};

use super::supervise::ChildSpec;

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
