//! Running one step: `cmd` and `check` programs under the supervisor (a process group of their
//! own, the step's time limit, bounded output, the environment built on purpose) inside the
//! agents' sandbox (see [`super::confine`]), `git` steps through the git worker, file checks
//! inside the project, and `wait` loops. The gate (what needs approval) was passed before
//! anything here is called.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::confine::{Access, Decision, StepDir, StepSandbox, not_applied, tree_writable};
use crate::contract::procedure::{CmdStep, CommandLine, Declared, Verifier, WaitStep};
use crate::contract::{
    CommandCheck, Ending, FileCheck, FileCheckResult, FileExpectation, OperationTarget,
    StepEvidence, StepKind, StepOutcome, TestRun,
};
use crate::git::GitRepo;
use crate::process::reaper::Leftovers;
use crate::process::{ChildEnv, ChildSpec, Limits, env, supervise};
use crate::sandbox::HelperRun;

/// How much of a step's output its evidence keeps (its end).
pub const OUTPUT_TAIL_BYTES: usize = 4 * 1024;
/// A check's time limit (checks in `wait` loops and the contract's verifiers).
pub(crate) const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
/// Output kept in memory while a step runs (its end), per stream.
const KEEP_TAIL: usize = 64 * 1024;
/// Between SIGTERM to a stopped step's group and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// Where and with what a task's steps run.
#[derive(Debug, Clone)]
pub(crate) struct StepPlace {
    /// The project's working tree (its real path).
    pub root: PathBuf,
    pub repo: GitRepo,
    pub target: OperationTarget,
    /// Every program a step starts gets exactly this environment.
    pub env: ChildEnv,
    /// Butler's program, whose sandbox helper runs each step's program confined, and as a
    /// reaper: what the step leaves running, `setsid` or not, is ended with it. `None`: the
    /// supervisor's process group alone, unconfined.
    pub helper: Option<PathBuf>,
    /// How steps are confined.
    pub sandbox: StepSandbox,
}

impl StepPlace {
    /// The steps' environment: the basics, the user's home, network settings and toolchains,
    /// the configured `env_allow`, and the target's values as `TARGET_<NAME>` — never Butler's
    /// secrets.
    pub(crate) fn new(
        root: PathBuf,
        repo: GitRepo,
        target: OperationTarget,
        env_allow: &[String],
    ) -> Self {
        let mut vars = ChildEnv::new();
        let parent = env::inherited();
        vars.inherit_groups(
            parent,
            &[env::BASE, env::HOME_DIRS, env::NETWORK, env::TOOLCHAINS],
        );
        let extra: Vec<&str> = env_allow.iter().map(String::as_str).collect();
        vars.inherit(parent, &extra);
        vars.set_default("PATH", env::DEFAULT_PATH);
        for (name, value) in &target.0 {
            vars.set(format!("TARGET_{}", name.to_ascii_uppercase()), value);
        }
        Self {
            root,
            repo,
            target,
            env: vars,
            helper: None,
            sandbox: StepSandbox::default(),
        }
    }

    /// A step's declared `writes` as paths: project-relative under the root (resolved through
    /// links, inside the project and out of its git data), absolute, or `~/…` under the steps'
    /// `HOME`. A path that resolves to the project's git data or holds the project is refused:
    /// nothing a step writes may reach what undoes it.
    pub(crate) fn declared(&self, writes: &[String]) -> Result<Vec<PathBuf>, String> {
        let git = self.root.join(".git");
        let mut out = Vec::new();
        for entry in writes {
            let path = match Declared::of(entry) {
                Declared::Project(rel) => self.inside(&rel, false)?,
                Declared::Absolute(path) => path,
                Declared::Home(rest) => match self.env.get("HOME") {
                    Some(home) => PathBuf::from(home).join(rest),
                    None => return Err(format!("`{entry}`: the steps have no HOME")),
                },
            };
            let resolved = path.canonicalize().unwrap_or_else(|_| path.clone());
            if resolved.starts_with(&git) || self.root.starts_with(&resolved) {
                return Err(format!(
                    "`{entry}` reaches the project's git data: a step never writes there"
                ));
            }
            out.push(path);
        }
        Ok(out)
    }

    /// `text` with every `{target.NAME}` replaced by the target's value.
    pub(crate) fn fill(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (name, value) in &self.target.0 {
            out = out.replace(&format!("{{target.{name}}}"), value);
        }
        out
    }

    /// The command line with the target's values filled in (argv words only; shell lines read
    /// them from the environment).
    pub(crate) fn command(&self, line: &CommandLine) -> CommandLine {
        match line {
            CommandLine::Argv(argv) => {
                CommandLine::Argv(argv.iter().map(|w| self.fill(w)).collect())
            }
            CommandLine::Shell(script) => CommandLine::Shell(script.clone()),
        }
    }

    /// A project-relative directory or file, resolved through symbolic links, that must stay
    /// inside the project (and out of git's own directory).
    pub(crate) fn inside(&self, relative: &str, must_exist: bool) -> Result<PathBuf, String> {
        let relative = self.fill(relative);
        let joined = self.root.join(&relative);
        let resolved = match joined.canonicalize() {
            Ok(path) => path,
            Err(_) if !must_exist => {
                let parent = joined.parent().map(Path::to_path_buf).unwrap_or_default();
                let name = joined
                    .file_name()
                    .map(ToOwned::to_owned)
                    .unwrap_or_default();
                match parent.canonicalize() {
                    Ok(p) => p.join(name),
                    Err(_) => return Ok(joined),
                }
            }
            Err(_) => return Err(format!("`{relative}` does not exist in the project")),
        };
        let in_git = resolved
            .strip_prefix(&self.root)
            .ok()
            .and_then(|rest| rest.components().next())
            .is_some_and(|first| first.as_os_str() == ".git");
        if !resolved.starts_with(&self.root) || in_git {
            return Err(format!("`{relative}` leaves the project"));
        }
        Ok(resolved)
    }
}

/// A step's evidence, as it starts.
fn evidence(step: u32, kind: StepKind, what: String) -> StepEvidence {
    StepEvidence {
        step,
        kind,
        what,
        outcome: StepOutcome::Failed,
        ending: None,
        output_tail: String::new(),
        duration_ms: 0,
        detail: None,
        leftovers: None,
        unconfined: None,
        changed: Vec::new(),
        undo: None,
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What one program run gave.
struct Ran {
    ending: Ending,
    output: String,
    duration: Duration,
    /// What it left running, ended by the helper.
    leftovers: Option<Leftovers>,
    /// Why it ran outside the sandbox, when it did.
    unconfined: Option<String>,
}

impl Ran {
    /// A run that never started.
    fn not_started(reason: String) -> Self {
        Ran {
            ending: Ending::SpawnFailed { reason },
            output: String::new(),
            duration: Duration::ZERO,
            leftovers: None,
            unconfined: None,
        }
    }
}

/// A distinct name for each run's account of what it left.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// Runs `line` in `cwd` under the supervisor, confined to `access` (and the `declared` paths
/// a `cmd` step may write), with a temp dir of its own.
async fn run_program(
    place: &StepPlace,
    line: &CommandLine,
    cwd: &Path,
    limit: Duration,
    cancel: &CancellationToken,
    access: Access,
    declared: &[PathBuf],
) -> Ran {
    let dir = match StepDir::new() {
        Ok(dir) => dir,
        Err(e) => return Ran::not_started(format!("the step's temp dir cannot be made: {e}")),
    };
    let mut env = place.env.clone();
    env.set("TMPDIR", dir.tmp());
    let spec = match line {
        CommandLine::Argv(argv) => ChildSpec::new(&argv[0], cwd, env).args(&argv[1..]),
        CommandLine::Shell(script) => ChildSpec::shell(script, cwd, env),
    };
    let mut limits = Limits::new(limit).keep(0, KEEP_TAIL);
    limits.grace = GRACE;
    // Beside the ledger, in the repository's own git directory.
    let account = place.repo.common_dir().join("butler").join(format!(
        "step-leftovers-{}-{}.jsonl",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let writable = match access {
        Access::Tree => match tree_writable(&place.root, declared, &place.sandbox.extra_writable) {
            Ok(mut trees) => {
                trees.push(dir.tmp());
                trees
            }
            Err(e) => {
                return Ran::not_started(format!("what the step may write cannot be listed: {e}"));
            }
        },
        Access::Look => vec![dir.tmp()],
    };
    let decision = place
        .sandbox
        .decide(place.helper.as_deref(), &dir, writable);
    let (policy, mut unconfined) = match &decision {
        Decision::Refused(why) => return Ran::not_started(why.clone()),
        Decision::Unconfined(why) => (None, Some(why.clone())),
        Decision::Confined { policy, report } => (Some((policy.as_path(), report.as_path())), None),
    };
    let spec = match &place.helper {
        Some(helper) if account.parent().is_some_and(Path::is_dir) => HelperRun {
            policy,
            leftovers: Some(&account),
            syscalls: None,
            grace: GRACE,
        }
        .wrap(helper, spec),
        _ => spec,
    };
    let done = supervise(spec, &limits, cancel).await;
    let leftovers = std::fs::read_to_string(&account)
        .ok()
        .and_then(|text| text.lines().find_map(|l| serde_json::from_str(l).ok()));
    let _ = std::fs::remove_file(&account);
    let mut output = done.stdout.tail_text(KEEP_TAIL);
    let errors = done.stderr.tail_text(KEEP_TAIL);
    if !errors.is_empty() {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&errors);
    }
    if let Decision::Confined { report, .. } = &decision {
        unconfined = not_applied(report);
    }
    drop(dir);
    Ran {
        ending: done.ending,
        output,
        duration: done.duration,
        leftovers,
        unconfined,
    }
}

/// Runs a `git` step's vetted arguments through the git worker (the one owner of git).
async fn run_git(place: &StepPlace, args: Vec<String>) -> Ran {
    let repo = place.repo.clone();
    let started = Instant::now();
    let out = crate::offload::blocking(move || repo.run_vcs(&args, KEEP_TAIL)).await;
    let duration = started.elapsed();
    match out {
        Ok(Ok(out)) => {
            let mut output = out.output;
            if !out.errors.is_empty() {
                output.push_str(&out.errors);
            }
            Ran {
                ending: match out.code {
                    Some(code) => Ending::Exited { code },
                    None => Ending::Signalled {
                        signal: "unknown".into(),
                    },
                },
                output,
                duration,
                leftovers: None,
                unconfined: None,
            }
        }
        Ok(Err(e)) => Ran {
            ending: Ending::SpawnFailed {
                reason: e.to_string(),
            },
            output: String::new(),
            duration,
            leftovers: None,
            unconfined: None,
        },
        Err(e) => Ran {
            ending: Ending::SpawnFailed {
                reason: format!("the git worker stopped: {e}"),
            },
            output: String::new(),
            duration,
            leftovers: None,
            unconfined: None,
        },
    }
}

/// How a program step runs once the gate let it through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HowToRun {
    /// Under the supervisor, as written.
    Program,
    /// Through the git worker, with these canonical arguments.
    Git(Vec<String>),
}

/// Runs a `cmd` step (numbered `step`).
pub(crate) async fn cmd(
    place: &StepPlace,
    step: u32,
    cmd: &CmdStep,
    how: &HowToRun,
    cancel: &CancellationToken,
) -> StepEvidence {
    let line = place.command(&cmd.run);
    let mut e = evidence(step, StepKind::Cmd, line.shown());
    let cwd = match place.inside(&cmd.cwd, true) {
        Ok(dir) if dir.is_dir() => dir,
        Ok(_) => {
            e.detail = Some(format!("`{}` is not a directory", cmd.cwd));
            return e;
        }
        Err(why) => {
            e.detail = Some(format!("working directory: {why}"));
            return e;
        }
    };
    let ran = match how {
        HowToRun::Program => {
            let declared = match place.declared(&cmd.writes) {
                Ok(paths) => paths,
                Err(why) => {
                    e.detail = Some(format!("writes: {why}"));
                    return e;
                }
            };
            run_program(
                place,
                &line,
                &cwd,
                Duration::from_secs(cmd.timeout_s),
                cancel,
                Access::Tree,
                &declared,
            )
            .await
        }
        HowToRun::Git(args) => run_git(place, args.clone()).await,
    };
    e.duration_ms = millis(ran.duration);
    e.output_tail = crate::process::tail_of(&ran.output, OUTPUT_TAIL_BYTES).to_owned();
    e.outcome = match &ran.ending {
        Ending::Exited { code } if *code == cmd.exit_code => StepOutcome::Passed,
        Ending::Exited { code } => {
            e.detail = Some(format!("exit code {code}, expected {}", cmd.exit_code));
            StepOutcome::Failed
        }
        Ending::WallClockLimit { .. } | Ending::Stagnated { .. } | Ending::Cancelled => {
            StepOutcome::Stopped
        }
        other => {
            e.detail = Some(other.to_string());
            StepOutcome::Failed
        }
    };
    e.ending = Some(ran.ending);
    e.leftovers = ran.leftovers;
    e.unconfined = ran.unconfined;
    e
}

/// What a check found.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    pub passed: bool,
    pub ending: Option<Ending>,
    pub output_tail: String,
    pub detail: Option<String>,
    pub duration: Duration,
    /// Why its program ran outside the sandbox, when it did.
    pub unconfined: Option<String>,
}

/// Runs one verifier (a command check in the project root, or a file check).
pub(crate) async fn check(
    place: &StepPlace,
    verifier: &Verifier,
    how: &HowToRun,
    cancel: &CancellationToken,
) -> Checked {
    match verifier {
        Verifier::Command(c) => command_check(place, c, how, cancel).await,
        Verifier::File(f) => {
            let started = Instant::now();
            let (passed, detail) = file_check(place, f);
            Checked {
                passed,
                ending: None,
                output_tail: String::new(),
                detail,
                duration: started.elapsed(),
                unconfined: None,
            }
        }
    }
}

async fn command_check(
    place: &StepPlace,
    c: &CommandCheck,
    how: &HowToRun,
    cancel: &CancellationToken,
) -> Checked {
    let line = CommandLine::Shell(c.command.clone());
    let ran = match how {
        HowToRun::Program => {
            run_program(
                place,
                &line,
                &place.root,
                CHECK_TIMEOUT,
                cancel,
                Access::Look,
                &[],
            )
            .await
        }
        HowToRun::Git(args) => run_git(place, args.clone()).await,
    };
    let searched = crate::process::tail_of(&ran.output, CommandCheck::OUTPUT_SEARCHED_BYTES);
    let passed = c.passes(ran.ending.exit_code(), searched);
    let detail = (!passed).then(|| match &ran.ending {
        Ending::Exited { code } if *code != c.exit_code => {
            format!("exit code {code}, expected {}", c.exit_code)
        }
        Ending::Exited { .. } => "its output does not show what the check expects".to_owned(),
        other => other.to_string(),
    });
    Checked {
        passed,
        output_tail: crate::process::tail_of(&ran.output, OUTPUT_TAIL_BYTES).to_owned(),
        ending: Some(ran.ending),
        detail,
        duration: ran.duration,
        unconfined: ran.unconfined,
    }
}

fn file_check(place: &StepPlace, f: &FileCheck) -> (bool, Option<String>) {
    let path = match place.inside(&f.path, false) {
        Ok(path) => path,
        Err(why) => return (false, Some(why)),
    };
    match &f.expect {
        FileExpectation::Exists => {
            let ok = path.exists();
            (ok, (!ok).then(|| "it does not exist".to_owned()))
        }
        FileExpectation::Absent => {
            let ok = !path.exists();
            (ok, (!ok).then(|| "it exists".to_owned()))
        }
        FileExpectation::Contains(text) => match std::fs::read(&path) {
            Ok(bytes) => {
                let text = place.fill(text);
                let ok = String::from_utf8_lossy(&bytes).contains(text.as_str());
                (ok, (!ok).then(|| format!("it does not contain {text:?}")))
            }
            Err(_) => (false, Some("it cannot be read".to_owned())),
        },
    }
}

/// A `check` step's evidence.
pub(crate) async fn check_step(
    place: &StepPlace,
    step: u32,
    verifier: &Verifier,
    how: &HowToRun,
    cancel: &CancellationToken,
) -> StepEvidence {
    let found = check(place, verifier, how, cancel).await;
    let mut e = evidence(step, StepKind::Check, place.fill(&verifier.shown()));
    fill(&mut e, found);
    e
}

fn fill(e: &mut StepEvidence, found: Checked) {
    e.outcome = if found.passed {
        StepOutcome::Passed
    } else if matches!(found.ending, Some(Ending::Cancelled)) {
        StepOutcome::Stopped
    } else {
        StepOutcome::Failed
    };
    e.duration_ms = millis(found.duration);
    e.ending = found.ending;
    e.output_tail = found.output_tail;
    e.detail = found.detail;
    e.unconfined = found.unconfined;
}

/// A `wait` step: the check again every `interval_s` until it passes or `timeout_s` is up.
pub(crate) async fn wait_step(
    place: &StepPlace,
    step: u32,
    wait: &WaitStep,
    how: &HowToRun,
    cancel: &CancellationToken,
) -> StepEvidence {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(wait.timeout_s);
    let mut e = evidence(
        step,
        StepKind::Wait,
        format!("until {}", place.fill(&wait.until.shown())),
    );
    let mut tries = 0u32;
    loop {
        tries += 1;
        let found = check(place, &wait.until, how, cancel).await;
        let passed = found.passed;
        fill(&mut e, found);
        if passed || e.outcome == StepOutcome::Stopped {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            e.detail = Some(format!(
                "not true after {} s ({tries} tries): {}",
                wait.timeout_s,
                e.detail.take().unwrap_or_default()
            ));
            break;
        }
        let pause = Duration::from_secs(wait.interval_s).min(deadline - now);
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = cancel.cancelled() => {
                e.outcome = StepOutcome::Stopped;
                e.ending = Some(Ending::Cancelled);
                break;
            }
        }
    }
    e.duration_ms = millis(started.elapsed());
    e
}

/// The contract's file check, judged in the project.
pub(crate) fn criteria_file_check(place: &StepPlace, f: &FileCheck) -> FileCheckResult {
    let (passed, detail) = file_check(place, f);
    FileCheckResult {
        path: f.path.clone(),
        expect: f.expect.clone(),
        passed,
        detail,
    }
}

/// The contract's command check, judged in the project.
pub(crate) async fn criteria_command(
    place: &StepPlace,
    c: &CommandCheck,
    how: &HowToRun,
    cancel: &CancellationToken,
) -> TestRun {
    let found = command_check(place, c, how, cancel).await;
    let stopped = found
        .ending
        .clone()
        .filter(|e| !matches!(e, Ending::Exited { .. }));
    TestRun {
        command: c.command.clone(),
        exit_code: found.ending.as_ref().and_then(Ending::exit_code),
        passed: found.passed,
        stopped,
        output_tail: found.output_tail,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use butler_testkit::World;

    use super::*;

    fn place(w: &World) -> StepPlace {
        let root = w.project.canonicalize().expect("real path");
        let repo = GitRepo::discover(&root).expect("repository");
        let target = OperationTarget(BTreeMap::from([("service".into(), "api".into())]));
        StepPlace::new(root, repo, target, &[])
    }

    fn argv(words: &[&str]) -> CmdStep {
        CmdStep {
            run: CommandLine::Argv(words.iter().map(|w| (*w).to_owned()).collect()),
            cwd: ".".into(),
            timeout_s: 10,
            exit_code: 0,
            writes: Vec::new(),
        }
    }

    #[test]
    fn placeholders_and_the_environment_carry_the_target() {
        let w = World::committed(&[("a.txt", "a")]);
        let p = place(&w);
        assert_eq!(p.fill("logs/{target.service}.log"), "logs/api.log");
        assert_eq!(
            p.env.get("TARGET_SERVICE"),
            Some(std::ffi::OsStr::new("api"))
        );
        assert!(
            p.env
                .iter()
                .all(|(k, _)| !k.to_string_lossy().starts_with("BUTLER_"))
        );
    }

    #[test]
    fn paths_stay_inside_the_project() {
        let w = World::committed(&[("a.txt", "a")]);
        let p = place(&w);
        assert!(p.inside("a.txt", true).is_ok());
        assert!(p.inside("new/file", false).is_ok());
        assert!(p.inside(".git/config", true).is_err());
        std::os::unix::fs::symlink("/etc", w.project.join("etc")).expect("symlink");
        assert!(
            p.inside("etc/passwd", true).is_err(),
            "a link out of the project"
        );
        assert!(p.inside("etc", true).is_err());
    }

    #[tokio::test]
    async fn a_cmd_step_keeps_its_exit_code_output_and_time() {
        let w = World::committed(&[("a.txt", "a")]);
        let p = place(&w);
        let cancel = CancellationToken::new();
        let ok = cmd(
            &p,
            1,
            &argv(&["echo", "{target.service}"]),
            &HowToRun::Program,
            &cancel,
        )
        .await;
        assert_eq!(ok.outcome, StepOutcome::Passed);
        assert_eq!(ok.output_tail, "api\n");
        assert_eq!(ok.what, "echo api");
        let mut failing = argv(&["sh", "-c", "echo oops >&2; exit 3"]);
        failing.exit_code = 0;
        let bad = cmd(&p, 2, &failing, &HowToRun::Program, &cancel).await;
        assert_eq!(bad.outcome, StepOutcome::Failed);
        assert_eq!(bad.ending, Some(Ending::Exited { code: 3 }));
        assert!(bad.output_tail.contains("oops"), "{bad:?}");
        let missing = cmd(
            &p,
            3,
            &argv(&["no-such-program-xyz"]),
            &HowToRun::Program,
            &cancel,
        )
        .await;
        assert_eq!(missing.outcome, StepOutcome::Failed);
        assert!(matches!(missing.ending, Some(Ending::SpawnFailed { .. })));
    }

    #[tokio::test]
    async fn a_hanging_step_is_ended_at_its_limit() {
        let w = World::committed(&[("a.txt", "a")]);
        let p = place(&w);
        let mut hang = argv(&["sleep", "30"]);
        hang.timeout_s = 1;
        let e = cmd(&p, 1, &hang, &HowToRun::Program, &CancellationToken::new()).await;
        assert_eq!(e.outcome, StepOutcome::Stopped);
        assert_eq!(e.ending, Some(Ending::WallClockLimit { limit_s: 1 }));
    }

    #[tokio::test]
    async fn checks_and_waits_judge_files_and_commands() {
        let w = World::committed(&[("a.txt", "hello")]);
        let p = place(&w);
        let cancel = CancellationToken::new();
        let contains = Verifier::File(FileCheck {
            path: "a.txt".into(),
            expect: FileExpectation::Contains("hell".into()),
        });
        let e = check_step(&p, 1, &contains, &HowToRun::Program, &cancel).await;
        assert_eq!(e.outcome, StepOutcome::Passed);
        let shell = Verifier::Command(CommandCheck {
            output_matches: Some("^api$".into()),
            ..CommandCheck::exit_zero("echo \"$TARGET_SERVICE\"")
        });
        let e = check_step(&p, 2, &shell, &HowToRun::Program, &cancel).await;
        assert_eq!(e.outcome, StepOutcome::Passed, "{e:?}");
        let later = Verifier::File(FileCheck {
            path: "ready".into(),
            expect: FileExpectation::Exists,
        });
        let never = WaitStep {
            until: later.clone(),
            timeout_s: 1,
            interval_s: 1,
        };
        let e = wait_step(&p, 3, &never, &HowToRun::Program, &cancel).await;
        assert_eq!(e.outcome, StepOutcome::Failed);
        assert!(
            e.detail
                .as_deref()
                .is_some_and(|d| d.contains("not true after 1 s")),
            "{e:?}"
        );
        std::fs::write(w.project.join("ready"), "").expect("write");
        let e = wait_step(&p, 4, &never, &HowToRun::Program, &cancel).await;
        assert_eq!(e.outcome, StepOutcome::Passed);
    }
}
