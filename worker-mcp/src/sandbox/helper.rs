//! `butler sandbox-exec (--policy <file> [--report <file>] | --unconfined) [--leftovers <file>]
//! [--grace-ms <n>] -- <program> [args…]`: runs the program as the child of a reaper (see
//! `crate::process::reaper`) that outlives everything the program starts and ends it when the
//! program ends or the helper is stopped — so nothing of an agent or a verify command survives
//! it — and, with a policy, confined.
//!
//! Confinement happens in a second stage: the reaper stays outside the sandbox (so the confined
//! program cannot signal or trace it: Landlock scopes signals to the sandbox) and starts Butler's
//! program again as `sandbox-exec --exec --policy …`, which restricts itself to the policy,
//! writes what the kernel enforced to the report file (opened before the restriction, so it
//! needs no write right afterwards), then `exec`s the program, which keeps the restriction with
//! everything it starts. With `--unconfined` the second stage only `exec`s the program.
//!
//! Exit codes of its own (otherwise the program's code, or the signal that ended it, is passed
//! on): 125 when the policy is unusable or a `required` sandbox cannot be applied (nothing is
//! run), 127 when the program cannot be executed. Messages go to stderr, prefixed
//! `butler sandbox-exec:`.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::landlock_rules::{Restricted, restrict_self};
use super::policy::{Policy, SandboxMode};
use super::syscalls;
use super::{SandboxError, unmet};
use crate::process::{ChildSpec, reaper};
use nix::sys::signal::{SigSet, SigmaskHow, sigprocmask};

/// The subcommand of Butler's program that runs the helper.
pub const HELPER_SUBCOMMAND: &str = "sandbox-exec";
/// The helper refused to run the program (unusable policy, `required` sandbox unavailable).
pub const EXIT_SANDBOX_FAILED: i32 = 125;
/// The program could not be executed.
pub const EXIT_EXEC_FAILED: i32 = 127;
/// Between SIGTERM to what the program left and SIGKILL, unless `--grace-ms` says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// How a command is to run under the helper: with a policy (confined) or not, where the
/// reaper writes what it had to end, and the supervisor's grace period (the helper takes half,
/// so it has ended everything before the supervisor would kill it).
#[derive(Debug, Clone)]
pub struct HelperRun<'a> {
    /// The policy file and the report file; `None`: unconfined.
    pub policy: Option<(&'a Path, &'a Path)>,
    /// Where the reaper appends what it had to end; `None`: it is not told.
    pub leftovers: Option<&'a Path>,
    /// Where the system-call filter's supervisor appends what it refused; `None`: not told.
    pub syscalls: Option<&'a Path>,
    pub grace: Duration,
}

impl HelperRun<'_> {
    /// `<helper> sandbox-exec (--policy P --report R | --unconfined) [--leftovers L] --grace-ms
    /// G -- <program> <args…>`, same directory, environment and stdin.
    pub fn wrap(&self, helper: &Path, spec: ChildSpec) -> ChildSpec {
        let mut args: Vec<OsString> = vec![HELPER_SUBCOMMAND.into()];
        match self.policy {
            Some((policy, report)) => args.extend([
                "--policy".into(),
                policy.into(),
                "--report".into(),
                report.into(),
            ]),
            None => args.push("--unconfined".into()),
        }
        if let Some(leftovers) = self.leftovers {
            args.extend(["--leftovers".into(), leftovers.into()]);
        }
        if let Some(syscalls) = self.syscalls {
            args.extend(["--syscalls".into(), syscalls.into()]);
        }
        args.extend([
            "--grace-ms".into(),
            (self.grace / 2).as_millis().to_string().into(),
            "--".into(),
            spec.program,
        ]);
        args.extend(spec.args);
        ChildSpec {
            program: helper.into(),
            args,
            reaper: true,
            ..spec
        }
    }
}

/// What the helper writes to `--report` before it `exec`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelperReport {
    /// What the kernel enforced; `None` when the ruleset could not be applied at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted: Option<Restricted>,
    /// Why the program was not run (or ran unconfined, or without the system-call filter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether the system-call filter was installed.
    #[serde(default)]
    pub syscall_filter: bool,
}

#[derive(Debug)]
struct Args {
    /// `None` with `--unconfined`.
    policy: Option<PathBuf>,
    report: Option<PathBuf>,
    leftovers: Option<PathBuf>,
    /// Where the first stage appends what the system-call filter refused.
    syscalls: Option<PathBuf>,
    /// The second stage's end of the socket that hands the filter's listener to the first.
    listener_to: Option<i32>,
    grace: Duration,
    /// The second stage: restrict and `exec`, no reaper.
    exec: bool,
    program: OsString,
    rest: Vec<OsString>,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, String> {
    let mut args = args.into_iter();
    let (mut policy, mut report, mut leftovers, mut syscalls) = (None, None, None, None);
    let mut listener_to = None;
    let (mut unconfined, mut exec, mut grace) = (false, false, DEFAULT_GRACE);
    loop {
        let Some(arg) = args.next() else {
            return Err("missing `-- <program>`".into());
        };
        match arg.to_str() {
            Some("--policy") => policy = args.next().map(PathBuf::from),
            Some("--report") => report = args.next().map(PathBuf::from),
            Some("--leftovers") => leftovers = args.next().map(PathBuf::from),
            Some("--syscalls") => syscalls = args.next().map(PathBuf::from),
            Some("--listener-to") => {
                listener_to = Some(
                    args.next()
                        .and_then(|v| v.to_str().and_then(|v| v.parse::<i32>().ok()))
                        .ok_or("`--listener-to` needs a descriptor number")?,
                );
            }
            Some("--grace-ms") => {
                let ms = args
                    .next()
                    .and_then(|v| v.to_str().and_then(|v| v.parse::<u64>().ok()))
                    .ok_or("`--grace-ms` needs a number of milliseconds")?;
                grace = Duration::from_millis(ms);
            }
            Some("--unconfined") => unconfined = true,
            Some("--exec") => exec = true,
            Some("--") => break,
            Some(HELPER_SUBCOMMAND) => {}
            _ => return Err(format!("unexpected argument `{}`", arg.to_string_lossy())),
        }
    }
    let program = args.next().ok_or("missing the program after `--`")?;
    match (&policy, unconfined) {
        (None, false) => return Err("`--policy <file>` or `--unconfined` is required".into()),
        (Some(_), true) => return Err("`--policy` and `--unconfined` exclude each other".into()),
        _ => {}
    }
    Ok(Args {
        policy,
        report,
        leftovers,
        syscalls,
        listener_to,
        grace,
        exec,
        program,
        rest: args.collect(),
    })
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "butler sandbox-exec: {message}");
}

fn write_report(file: &mut Option<std::fs::File>, report: &HelperReport) {
    if let Some(file) = file.as_mut() {
        let text = serde_json::to_string(report).expect("a report always serialises");
        if let Err(e) = file.write_all(text.as_bytes()) {
            say(&format!("cannot write the report: {e}"));
        }
    }
}

/// Runs the helper with its arguments (the leading `sandbox-exec` may be included). Returns
/// the exit code to use (the program's, once nothing it started is left); when the program
/// was ended by a signal, the helper ends itself with the same signal instead.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args = match parse(args) {
        Ok(args) => args,
        Err(message) => {
            say(&message);
            return EXIT_SANDBOX_FAILED;
        }
    };
    if args.exec {
        return confine_and_exec(&args);
    }
    let policy = match args
        .policy
        .as_ref()
        .map(|p| Policy::read_from(p))
        .transpose()
    {
        Ok(policy) => policy,
        Err(e) => {
            say(&e.to_string());
            let mut report = args
                .report
                .as_ref()
                .and_then(|r| std::fs::File::create(r).ok());
            write_report(
                &mut report,
                &HelperReport {
                    restricted: None,
                    problem: Some(e.to_string()),
                    syscall_filter: false,
                },
            );
            return EXIT_SANDBOX_FAILED;
        }
    };
    let leftovers = match args.leftovers.as_ref().map(|path| {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
    }) {
        Some(Ok(file)) => Some(file),
        Some(Err(e)) => {
            say(&format!("cannot write the leftovers' report: {e}"));
            return EXIT_SANDBOX_FAILED;
        }
        None => None,
    };
    // The reaper's child: the second stage, Butler's own program again, which unblocks the
    // signals the reaper holds for itself, confines itself when there is a policy, and
    // becomes the program. Started outside the supervisor, which supervises this helper.
    #[allow(clippy::disallowed_methods)]
    let mut command = std::process::Command::new("/proc/self/exe");
    command.arg0("butler").args([HELPER_SUBCOMMAND, "--exec"]);
    match &args.policy {
        Some(policy) => command.arg("--policy").arg(policy),
        None => command.arg("--unconfined"),
    };
    if let Some(report) = &args.report {
        command.arg("--report").arg(report);
    }
    // The confined stage hands the filter's listener back over a socket it inherits.
    let mut supervisor = match &policy {
        Some(policy) => match syscalls::Supervisor::handover(policy.network.proxy()) {
            Ok((supervisor, fd)) => {
                command.arg("--listener-to").arg(fd.to_string());
                Some(supervisor)
            }
            Err(e) => {
                say(&format!("cannot prepare the system-call filter: {e}"));
                return EXIT_SANDBOX_FAILED;
            }
        },
        None => None,
    };
    command.arg("--").arg(&args.program).args(&args.rest);
    let watch = supervisor.as_mut().map(|s| s as &mut dyn reaper::Watch);
    let code = match reaper::run(command, args.grace, leftovers, watch) {
        Ok(code) => code,
        Err(message) => {
            say(&message);
            EXIT_EXEC_FAILED
        }
    };
    if let (Some(path), Some(account)) = (
        &args.syscalls,
        supervisor.as_ref().and_then(syscalls::Supervisor::account),
    ) {
        let line = serde_json::to_string(&account).expect("an account always serialises");
        let written = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            say(&format!(
                "cannot write what the system-call filter refused: {e}"
            ));
        }
    }
    code
}

/// The second stage: restricts this process to the policy, reports, and becomes the program.
/// Returns only when the program was not executed.
fn confine_and_exec(args: &Args) -> i32 {
    // The reaper blocks the signals it takes through its signal file; the program gets none
    // blocked (std's spawn keeps the mask).
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
    let Some(policy_file) = &args.policy else {
        return exec(args);
    };
    // Opened before the restriction: afterwards the report's directory may not be writable.
    let mut report_file = match args.report.as_ref().map(std::fs::File::create).transpose() {
        Ok(file) => file,
        Err(e) => {
            say(&format!("cannot write the report: {e}"));
            return EXIT_SANDBOX_FAILED;
        }
    };
    let policy = match Policy::read_from(policy_file) {
        Ok(policy) => policy,
        Err(e) => {
            say(&e.to_string());
            write_report(
                &mut report_file,
                &HelperReport {
                    restricted: None,
                    problem: Some(e.to_string()),
                    syscall_filter: false,
                },
            );
            return EXIT_SANDBOX_FAILED;
        }
    };
    let restricted = match restrict_self(&policy) {
        Ok(r) => r,
        Err(e @ SandboxError::Landlock(_)) | Err(e @ SandboxError::Policy { .. }) => {
            say(&e.to_string());
            write_report(
                &mut report_file,
                &HelperReport {
                    restricted: None,
                    problem: Some(e.to_string()),
                    syscall_filter: false,
                },
            );
            return EXIT_SANDBOX_FAILED;
        }
    };
    let applied_abi = match restricted.enforcement {
        super::Enforcement::None => None,
        _ => restricted.landlock_abi,
    };
    let mut problem = unmet(applied_abi, &policy.network);
    let filtered = match args.listener_to.map(|to| install_filter(&policy, to)) {
        Some(Ok(())) => true,
        Some(Err(e)) => {
            problem.get_or_insert(e);
            false
        }
        None => {
            problem.get_or_insert_with(|| "no supervisor for the system-call filter".to_owned());
            false
        }
    };
    // Last: no capability reaches the program (run as root, CAP_SYS_PTRACE would let it read
    // the environment of processes outside the sandbox, Butler's among them; the others would
    // let it past file permissions). `no_new_privs` keeps set-uid programs from regaining them.
    if let Err(e) = drop_capabilities() {
        problem.get_or_insert(e);
    }
    let refuse = policy.mode == SandboxMode::Required && problem.is_some();
    write_report(
        &mut report_file,
        &HelperReport {
            restricted: Some(restricted),
            problem: problem.clone(),
            syscall_filter: filtered,
        },
    );
    // Closed before `exec` (it is close-on-exec anyway): the program gets no handle on it.
    drop(report_file);
    if refuse {
        say(&format!(
            "the sandbox is required but cannot be applied: {}",
            problem.unwrap_or_default()
        ));
        return EXIT_SANDBOX_FAILED;
    }
    exec(args)
}

/// Empties every capability set of this process (bounding first, which needs
/// `CAP_SETPCAP` while it is still effective).
fn drop_capabilities() -> Result<(), String> {
    use caps::CapSet;
    let failed = |e: caps::errors::CapsError| format!("capabilities could not be dropped: {e}");
    for cap in caps::read(None, CapSet::Bounding).map_err(failed)? {
        caps::drop(None, CapSet::Bounding, cap).map_err(failed)?;
    }
    for set in [
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        caps::clear(None, set).map_err(failed)?;
    }
    Ok(())
}

/// Installs the system-call filter and hands its listener to the first stage over the
/// inherited socket `to`.
fn install_filter(policy: &Policy, to: i32) -> Result<(), String> {
    let listener = syscalls::install(&policy.network)?;
    syscalls::Supervisor::send_listener(to, listener)
}

/// Becomes the program (exec, no child); returns only when it could not be executed.
fn exec(args: &Args) -> i32 {
    #[allow(clippy::disallowed_methods)]
    let err = std::process::Command::new(&args.program)
        .args(&args.rest)
        .exec();
    say(&format!(
        "cannot run `{}`: {err}",
        args.program.to_string_lossy()
    ));
    EXIT_EXEC_FAILED
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_are_read_up_to_the_program() {
        let a = parse(os(&[
            "sandbox-exec",
            "--policy",
            "/p.json",
            "--report",
            "/r.json",
            "--",
            "goose",
            "--policy",
            "x",
        ]))
        .expect("parses");
        assert_eq!(a.policy, Some(PathBuf::from("/p.json")));
        assert_eq!(a.report, Some(PathBuf::from("/r.json")));
        assert_eq!(a.program, "goose");
        assert_eq!(a.rest, os(&["--policy", "x"]));
        assert!(!a.exec);
        let b = parse(os(&["--unconfined", "--grace-ms", "300", "--", "sh"])).expect("parses");
        assert_eq!((b.policy, b.grace), (None, Duration::from_millis(300)));
        assert!(
            parse(os(&["--", "sh"])).is_err(),
            "neither policy nor unconfined"
        );
        assert!(parse(os(&["--unconfined", "--policy", "/p", "--", "sh"])).is_err());
        assert!(parse(os(&["--policy", "/p", "goose"])).is_err());
        assert!(parse(os(&["--", "goose"])).is_err());
        assert!(parse(os(&["--policy", "/p", "--"])).is_err());
    }

    #[test]
    fn an_unusable_policy_runs_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let report = dir.path().join("report.json");
        let marker = dir.path().join("ran");
        let code = helper_main(os(&[
            "--policy",
            &dir.path().join("missing.json").to_string_lossy(),
            "--report",
            &report.to_string_lossy(),
            "--",
            "touch",
            &marker.to_string_lossy(),
        ]));
        assert_eq!(code, EXIT_SANDBOX_FAILED);
        assert!(!marker.exists());
        let written: HelperReport =
            serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("json");
        assert!(written.restricted.is_none());
        assert!(written.problem.expect("problem").contains("missing.json"));
    }
}
