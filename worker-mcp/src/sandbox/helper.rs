//! `butler sandbox-exec --policy <file> [--report <file>] -- <program> [args…]`: restricts
//! itself to the policy, writes what the kernel enforced to the report file (opened before the
//! restriction, so it needs no write right afterwards), then `exec`s the program, which keeps
//! the restriction with everything it starts.
//!
//! Exit codes of its own (the program's are passed through by `exec`): 125 when the policy is
//! unusable or a `required` sandbox cannot be applied (nothing is run), 127 when the program
//! cannot be executed. Messages go to stderr, prefixed `butler sandbox-exec:`.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::landlock_rules::{Restricted, restrict_self};
use super::policy::{Policy, SandboxMode};
use super::{SandboxError, unmet};

/// The subcommand of Butler's program that runs the helper.
pub const HELPER_SUBCOMMAND: &str = "sandbox-exec";
/// The helper refused to run the program (unusable policy, `required` sandbox unavailable).
pub const EXIT_SANDBOX_FAILED: i32 = 125;
/// The program could not be executed.
pub const EXIT_EXEC_FAILED: i32 = 127;

/// What the helper writes to `--report` before it `exec`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelperReport {
    /// What the kernel enforced; `None` when the ruleset could not be applied at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted: Option<Restricted>,
    /// Why the program was not run (or ran unconfined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

struct Args {
    policy: PathBuf,
    report: Option<PathBuf>,
    program: OsString,
    rest: Vec<OsString>,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, String> {
    let mut args = args.into_iter();
    let (mut policy, mut report) = (None, None);
    loop {
        let Some(arg) = args.next() else {
            return Err("missing `-- <program>`".into());
        };
        match arg.to_str() {
            Some("--policy") => policy = args.next().map(PathBuf::from),
            Some("--report") => report = args.next().map(PathBuf::from),
            Some("--") => break,
            Some(HELPER_SUBCOMMAND) => {}
            _ => return Err(format!("unexpected argument `{}`", arg.to_string_lossy())),
        }
    }
    let program = args.next().ok_or("missing the program after `--`")?;
    Ok(Args {
        policy: policy.ok_or("`--policy <file>` is required")?,
        report,
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
/// only when the program was not executed; the value is the exit code to use.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args = match parse(args) {
        Ok(args) => args,
        Err(message) => {
            say(&message);
            return EXIT_SANDBOX_FAILED;
        }
    };
    // Opened before the restriction: afterwards the report's directory may not be writable.
    let mut report_file = match args.report.as_ref().map(std::fs::File::create).transpose() {
        Ok(file) => file,
        Err(e) => {
            say(&format!("cannot write the report: {e}"));
            return EXIT_SANDBOX_FAILED;
        }
    };
    let policy = match Policy::read_from(&args.policy) {
        Ok(policy) => policy,
        Err(e) => {
            say(&e.to_string());
            write_report(
                &mut report_file,
                &HelperReport {
                    restricted: None,
                    problem: Some(e.to_string()),
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
                },
            );
            return EXIT_SANDBOX_FAILED;
        }
    };
    let applied_abi = match restricted.enforcement {
        super::Enforcement::None => None,
        _ => restricted.landlock_abi,
    };
    let problem = unmet(applied_abi, &policy.network);
    let refuse = policy.mode == SandboxMode::Required && problem.is_some();
    write_report(
        &mut report_file,
        &HelperReport {
            restricted: Some(restricted),
            problem: problem.clone(),
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
    // The helper becomes the confined program (exec, no child): the one place a program is
    // started outside the supervisor, which supervises this helper itself.
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
        assert_eq!(a.policy, PathBuf::from("/p.json"));
        assert_eq!(a.report, Some(PathBuf::from("/r.json")));
        assert_eq!(a.program, "goose");
        assert_eq!(a.rest, os(&["--policy", "x"]));
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
