//! The verifiers: test commands run in the task's worktree, file checks, and the two diff
//! guards (weakened tests, stubs). Scope is in [`crate::scope`].

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::contract::{CommandCheck, FileCheck, FileCheckResult, FileExpectation, TestRun};
use butler_worker::process::{ChildEnv, ChildSpec, Ending, Limits, supervise};

mod guards;

pub(crate) use guards::{stubs, weakened_tests};

/// How test commands are run.
#[derive(Debug, Clone)]
pub(crate) struct TestSettings {
    /// Limit of each command.
    pub timeout: Duration,
    /// Bytes of combined output kept as `output_tail`.
    pub tail_bytes: usize,
    /// The commands' environment (see [`crate::env::verify_env`]).
    pub env: ChildEnv,
    pub grace: Duration,
    /// The helper each command runs under (the reaper, and the sandbox when applied); `None`:
    /// directly under the supervisor.
    pub confine: Option<crate::sandbox::Confinement>,
}

impl TestSettings {
    pub(crate) fn new(timeout: Duration, env: ChildEnv) -> Self {
        Self {
            timeout,
            tail_bytes: 4 * 1024,
            env,
            grace: Duration::from_secs(5),
            confine: None,
        }
    }
}

/// Runs each command with `sh -c` in `worktree`, one after another, stdout and stderr merged;
/// a command passes with its expected exit code and output. After a cancellation the remaining
/// commands are not run.
pub(crate) async fn run_tests(
    worktree: &Path,
    commands: &[CommandCheck],
    settings: &TestSettings,
    cancel: &CancellationToken,
) -> Vec<TestRun> {
    let mut limits = Limits::new(settings.timeout).keep(
        0,
        settings.tail_bytes.max(CommandCheck::OUTPUT_SEARCHED_BYTES),
    );
    limits.grace = settings.grace;
    let mut runs = Vec::with_capacity(commands.len());
    for check in commands {
        if cancel.is_cancelled() {
            break;
        }
        // `exec 2>&1` first: one stream, in the order the command wrote it.
        let script = format!("exec 2>&1\n{}", check.command);
        let spec = ChildSpec::shell(&script, worktree, settings.env.clone());
        let spec = match &settings.confine {
            Some(c) => c.wrap(spec, settings.grace),
            None => spec,
        };
        let done = supervise(spec, &limits, cancel).await;
        let exit_code = done.ending.exit_code();
        let mut output_tail = done.stdout.tail_text(settings.tail_bytes);
        if !done.stderr.tail_text(512).is_empty() {
            output_tail.push_str(&done.stderr.tail_text(512));
        }
        let stopped = match done.ending {
            Ending::Exited { .. } => None,
            other => Some(other),
        };
        runs.push(TestRun {
            command: check.command.clone(),
            exit_code,
            passed: check.passes(exit_code, &done.stdout.text()),
            stopped,
            output_tail,
        });
    }
    runs
}

/// Largest file a `contains` check reads.
const MAX_CHECKED_FILE: u64 = 16 * 1024 * 1024;

/// Evaluates the file checks against `worktree`.
pub(crate) fn check_files(worktree: &Path, checks: &[FileCheck]) -> Vec<FileCheckResult> {
    checks
        .iter()
        .map(|check| check_file(worktree, check))
        .collect()
}

fn check_file(worktree: &Path, check: &FileCheck) -> FileCheckResult {
    let path = worktree.join(&check.path);
    let exists = path.symlink_metadata().is_ok();
    let (passed, detail) = match &check.expect {
        FileExpectation::Exists => (exists, (!exists).then(|| "missing".to_owned())),
        FileExpectation::Absent => (!exists, exists.then(|| "present".to_owned())),
        FileExpectation::Contains(text) => match read_inside(worktree, &path) {
            Ok(content) if content.contains(text.as_str()) => (true, None),
            Ok(_) => (false, Some("text not found".to_owned())),
            Err(why) => (false, Some(why)),
        },
    };
    FileCheckResult {
        path: check.path.clone(),
        expect: check.expect.clone(),
        passed,
        detail,
    }
}

/// Reads a file that must resolve inside `root` (a symlink out of the tree does not count).
fn read_inside(root: &Path, path: &Path) -> Result<String, String> {
    let real = path.canonicalize().map_err(|_| "missing".to_owned())?;
    let real_root = root
        .canonicalize()
        .map_err(|e| format!("worktree unreadable: {e}"))?;
    if !real.starts_with(&real_root) {
        return Err("resolves outside the worktree".to_owned());
    }
    let meta = real.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a file".to_owned());
    }
    if meta.len() > MAX_CHECKED_FILE {
        return Err(format!("larger than {MAX_CHECKED_FILE} bytes"));
    }
    let bytes = std::fs::read(&real).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(timeout_ms: u64) -> TestSettings {
        let mut env = ChildEnv::new();
        env.set("PATH", "/usr/bin:/bin");
        let mut s = TestSettings::new(Duration::from_millis(timeout_ms), env);
        s.grace = Duration::from_millis(200);
        s.tail_bytes = 64;
        s
    }

    fn commands(c: &[&str]) -> Vec<CommandCheck> {
        c.iter().map(|s| CommandCheck::exit_zero(*s)).collect()
    }

    #[tokio::test]
    async fn a_command_passes_with_its_expected_exit_code_and_output() {
        let dir = tempfile::tempdir().expect("tempdir");
        let check = |command: &str, exit_code: i32, output: Option<&str>| CommandCheck {
            command: command.into(),
            exit_code,
            output_contains: output.map(str::to_owned),
            output_matches: None,
        };
        let long = "yes filler | head -c 20000; echo; echo READY";
        let runs = run_tests(
            dir.path(),
            &[
                check("exit 3", 3, None),
                check("exit 0", 3, None),
                check(long, 0, Some("READY")),
                check("echo almost", 0, Some("READY")),
            ],
            &settings(10_000),
            &CancellationToken::new(),
        )
        .await;
        let passed: Vec<bool> = runs.iter().map(|r| r.passed).collect();
        assert_eq!(passed, [true, false, true, false]);
        assert!(runs[2].output_tail.len() <= 64, "the tail stays bounded");
    }

    #[tokio::test]
    async fn tests_run_in_the_worktree_with_exit_codes_and_tails() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("marker"), "here").expect("write");
        let cmds = commands(&["cat marker", "echo out; echo err >&2; exit 3"]);
        let runs = run_tests(
            dir.path(),
            &cmds,
            &settings(10_000),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(runs.len(), 2);
        assert!(runs[0].passed);
        assert_eq!(runs[0].exit_code, Some(0));
        assert_eq!(runs[0].output_tail, "here");
        assert!(!runs[1].passed);
        assert_eq!(runs[1].exit_code, Some(3));
        assert_eq!(runs[1].output_tail, "out\nerr\n", "merged in order");
        assert_eq!(runs[1].command, "echo out; echo err >&2; exit 3");
    }

    #[tokio::test]
    async fn a_slow_test_is_stopped_at_its_timeout() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = run_tests(
            dir.path(),
            &commands(&["sleep 30"]),
            &settings(300),
            &CancellationToken::new(),
        )
        .await;
        assert!(!runs[0].passed);
        assert_eq!(runs[0].exit_code, None);
        assert!(
            matches!(runs[0].stopped, Some(Ending::WallClockLimit { .. })),
            "{:?}",
            runs[0]
        );
    }

    #[tokio::test]
    async fn output_tail_is_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cmd = "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done";
        let runs = run_tests(
            dir.path(),
            &commands(&[cmd]),
            &settings(10_000),
            &CancellationToken::new(),
        )
        .await;
        assert!(runs[0].output_tail.len() <= 64);
        assert!(
            runs[0].output_tail.ends_with("line1999\n"),
            "{}",
            runs[0].output_tail
        );
    }

    #[tokio::test]
    async fn cancellation_skips_the_remaining_commands() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c2.cancel();
        });
        let runs = run_tests(
            dir.path(),
            &commands(&["sleep 30", "true"]),
            &settings(60_000),
            &cancel,
        )
        .await;
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].stopped, Some(Ending::Cancelled));
    }

    #[test]
    fn file_checks() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        std::fs::write(dir.path().join("src/a.rs"), "pub fn greet() {}").expect("write");
        let outside = tempfile::NamedTempFile::new().expect("tmp");
        std::fs::write(outside.path(), "pub fn greet").expect("write");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link.rs")).expect("symlink");
        let check = |path: &str, expect| FileCheck {
            path: path.into(),
            expect,
        };
        let results = check_files(
            dir.path(),
            &[
                check("src/a.rs", FileExpectation::Exists),
                check("src/b.rs", FileExpectation::Exists),
                check("src/b.rs", FileExpectation::Absent),
                check("src/a.rs", FileExpectation::Absent),
                check("src/a.rs", FileExpectation::Contains("fn greet".into())),
                check("src/a.rs", FileExpectation::Contains("fn other".into())),
                check("link.rs", FileExpectation::Contains("pub fn greet".into())),
                check("src", FileExpectation::Contains("x".into())),
            ],
        );
        let passed: Vec<bool> = results.iter().map(|r| r.passed).collect();
        assert_eq!(
            passed,
            vec![true, false, true, false, true, false, false, false]
        );
        assert_eq!(
            results[6].detail.as_deref(),
            Some("resolves outside the worktree")
        );
        assert_eq!(results[5].detail.as_deref(), Some("text not found"));
        assert_eq!(results[7].detail.as_deref(), Some("not a file"));
    }
}
