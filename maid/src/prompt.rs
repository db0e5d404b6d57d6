//! The agent's prompts: the first one (goal, spec, scope, rules) and the compact retry prompt
//! that says what failed last time. Each attempt is a fresh agent run, so a retry prompt
//! restates the task before the failure.

use std::fmt::Write as _;

use crate::contract::{
    AttemptEvidence, DirectGitFinding, FileExpectation, Tampering, TaskContract, Verification,
};
use butler_worker::process::{Ending, tail_of};

/// Longest spec quoted in a retry prompt, in characters.
const RETRY_SPEC_CHARS: usize = 8_000;
/// Longest test output tail quoted in a retry prompt, in bytes.
const RETRY_TAIL_BYTES: usize = 2_000;
/// At most this many items of one kind are listed in a retry prompt.
const RETRY_LIST_MAX: usize = 20;

/// The worker MCP tools the prompt names (server `butler`).
#[derive(Debug, Clone)]
pub(crate) struct WorkerTools {
    pub leave_note: &'static str,
    pub report_blocked: &'static str,
}

impl Default for WorkerTools {
    fn default() -> Self {
        Self {
            leave_note: "leave_note",
            report_blocked: "report_blocked",
        }
    }
}

/// The prompt of the first attempt.
pub(crate) fn first_prompt(contract: &TaskContract, tools: &WorkerTools) -> String {
    let mut p = String::new();
    task_section(&mut p, contract, usize::MAX);
    rules_section(&mut p, contract, tools);
    p
}

/// The prompt of attempt `attempt` (2 or later), after `last` failed.
pub(crate) fn retry_prompt(
    contract: &TaskContract,
    tools: &WorkerTools,
    attempt: u32,
    last: &AttemptEvidence,
) -> String {
    let mut p = String::new();
    let max = contract.constraints.max_attempts;
    let _ = writeln!(
        p,
        "This is attempt {attempt} of {max}. The previous attempt did not pass verification. \
         Its changes are already in the working tree: fix what is listed below instead of \
         starting over.\n"
    );
    failure_section(&mut p, last);
    task_section(&mut p, contract, RETRY_SPEC_CHARS);
    rules_section(&mut p, contract, tools);
    p
}

fn task_section(p: &mut String, c: &TaskContract, spec_max: usize) {
    let target = c
        .implement()
        .expect("the Maid prompts only implementation tasks (the task sequence checks the intent)");
    let _ = writeln!(p, "# Task {}\n\n## Goal\n{}\n", c.task_id, target.goal);
    if !target.spec.trim().is_empty() {
        let spec = cut(target.spec.trim(), spec_max);
        let _ = writeln!(p, "## Spec\n{spec}\n");
    }
    let _ = writeln!(
        p,
        "## Scope\nChange only these paths (files, directories, or globs):"
    );
    for path in &target.target_paths {
        let _ = writeln!(p, "- `{path}`");
    }
    p.push_str("Changes anywhere else are discarded and count as a failure.\n\n");
    let criteria = &c.success_criteria;
    if !criteria.commands.is_empty() || !criteria.file_checks.is_empty() {
        p.push_str("## Done when\n");
        for check in &criteria.commands {
            let _ = match &check.output_contains {
                None => writeln!(p, "- `{}` exits {}", check.command, check.exit_code),
                Some(text) => writeln!(
                    p,
                    "- `{}` exits {} and prints `{}`",
                    check.command,
                    check.exit_code,
                    cut(text, 200)
                ),
            };
        }
        for check in &criteria.file_checks {
            let _ = match &check.expect {
                FileExpectation::Exists => writeln!(p, "- `{}` exists", check.path),
                FileExpectation::Absent => writeln!(p, "- `{}` does not exist", check.path),
                FileExpectation::Contains(text) => {
                    writeln!(p, "- `{}` contains `{}`", check.path, cut(text, 200))
                }
            };
        }
        p.push('\n');
    }
}

fn rules_section(p: &mut String, c: &TaskContract, tools: &WorkerTools) {
    let _ = writeln!(
        p,
        "## Tool rules\n\
         - Do not run `git commit`, `git push`, `git merge`, `git add`, `git checkout`, \
         `git switch`, `git reset`, `git stash` or `git config`, and do not touch `.git`. \
         The Maid records your work when you finish; commits you make yourself are undone and \
         reported.\n\
         - Edit files with your file-editing tools (the developer tools). Stay inside the \
         working directory.\n\
         - Do not create agent configuration files (`.goosehints`, `AGENTS.md`, \
         `.aider.conf.yml`, `.claude/`).\n\
         - {guards}\n\
         - To leave a note for the reviewer, call the `{note}` tool of the `butler` server. If \
         you cannot finish (missing information, contradictory spec), call `{blocked}` with \
         the reason and stop.\n\
         - Your own summary is not read as proof: the result is judged by the verifiers \
         ({checks}).",
        note = tools.leave_note,
        blocked = tools.report_blocked,
        guards = if c.constraints.allow_test_changes {
            "You may change tests where the task needs it; do not leave `todo!()`, \
             `unimplemented!()`, `TODO` or stub bodies."
        } else {
            "Do not weaken or delete tests or assertions, and do not leave `todo!()`, \
             `unimplemented!()`, `TODO` or stub bodies: either fails the attempt."
        },
        checks = if c.success_criteria.commands.is_empty() {
            "scope and file checks"
        } else {
            "scope, test commands and file checks"
        },
    );
}

fn failure_section(p: &mut String, last: &AttemptEvidence) {
    p.push_str("## What failed last time\n");
    match &last.agent_exit {
        Ending::WallClockLimit { limit_s } => {
            let _ = writeln!(
                p,
                "- You were stopped at the time limit ({limit_s} s). Work in smaller steps."
            );
        }
        Ending::Stagnated { quiet_s } => {
            let _ = writeln!(
                p,
                "- You were stopped after {quiet_s} s without output or file changes."
            );
        }
        Ending::Signalled { signal } => {
            let _ = writeln!(p, "- The agent process ended by {signal}.");
        }
        Ending::Looped { .. } | Ending::NoFileChange { .. } => loop_lines(p, &last.agent_exit),
        Ending::Exited { .. } | Ending::Cancelled | Ending::SpawnFailed { .. } => {}
    }
    if last.changed_files.is_empty() {
        p.push_str("- No file was changed.\n");
    }
    direct_git_lines(p, &last.direct_git.findings);
    sandbox_lines(p, last.sandbox.as_ref());
    verification_lines(p, &last.verify);
    p.push('\n');
}

/// What the sandbox refused the agent, so it stops trying.
fn sandbox_lines(p: &mut String, report: Option<&butler_worker::sandbox::SandboxReport>) {
    let Some(report) = report.filter(|r| r.applied) else {
        return;
    };
    let targets: Vec<String> = report
        .refused
        .iter()
        .filter(|r| r.source == butler_worker::sandbox::RefusalSource::Agent)
        .filter_map(|r| r.target.clone())
        .take(RETRY_LIST_MAX)
        .collect();
    if !targets.is_empty() {
        let _ = writeln!(
            p,
            "- The sandbox refused: {} (you may write only your working tree and `$TMPDIR`).",
            ticks(&targets)
        );
    }
}

/// The loop the agent was stopped for, so the retry does something else.
fn loop_lines(p: &mut String, ending: &Ending) {
    let _ = match ending {
        Ending::Looped { repeated, times } => writeln!(
            p,
            "- You were stopped for going round in circles: you called `{repeated}` {times} \
             times without changing any file. Do not call it again with the same arguments: \
             change the code or try something different (if you cannot go on, report that you \
             are blocked, as the rules below say). Looping again ends the task."
        ),
        Ending::NoFileChange { active_s } => writeln!(
            p,
            "- You were stopped after {active_s} s of work without changing any file. Make \
             the change the task asks for early (if you cannot, report that you are blocked, \
             as the rules below say). Looping again ends the task."
        ),
        _ => Ok(()),
    };
}

fn direct_git_lines(p: &mut String, findings: &[DirectGitFinding]) {
    if findings.is_empty() {
        return;
    }
    p.push_str("- You used git or touched files you must not; the Maid undid it:\n");
    for finding in findings.iter().take(RETRY_LIST_MAX) {
        let line = match finding {
            DirectGitFinding::Git(Tampering::Commits { count, .. }) => {
                format!("{count} commit(s) of your own (their changes were kept in the tree)")
            }
            DirectGitFinding::Git(Tampering::BranchSwitched { from, to }) => {
                format!("switched from `{from}` to `{to}`")
            }
            DirectGitFinding::Git(Tampering::RefCreated { name }) => format!("created `{name}`"),
            DirectGitFinding::Git(Tampering::RefDeleted { name }) => format!("deleted `{name}`"),
            DirectGitFinding::Git(Tampering::RefMoved { name }) => format!("moved `{name}`"),
            DirectGitFinding::Git(Tampering::IndexChanged) => "staged files (`git add`)".to_owned(),
            DirectGitFinding::Git(Tampering::ConfigChanged { keys }) => {
                format!("changed repository configuration: {}", ticks(keys))
            }
            DirectGitFinding::Git(Tampering::HooksChanged { names }) => {
                format!("changed git hooks: {}", ticks(names))
            }
            DirectGitFinding::Git(Tampering::GitLinkChanged) => {
                "changed the worktree's `.git` file".to_owned()
            }
            DirectGitFinding::OutsideWrite { path } => {
                format!("wrote outside the working tree: `{path}`")
            }
            DirectGitFinding::AgentConfigPlanted { path } => {
                format!("created agent configuration `{path}`")
            }
            DirectGitFinding::NestedRepository { path } => {
                format!("created a git repository in `{path}` (it is never recorded)")
            }
            DirectGitFinding::ModesRestored { paths, .. } => {
                format!("changed permissions of {}", ticks(paths))
            }
            DirectGitFinding::BrainMetadataChanged { paths, .. } => {
                format!(
                    "changed modes or times in the Brain's tree: {}",
                    ticks(paths)
                )
            }
        };
        let _ = writeln!(p, "  - {line}");
    }
}

fn verification_lines(p: &mut String, v: &Verification) {
    if !v.scope_violation.is_empty() {
        let shown: Vec<String> = v
            .scope_violation
            .iter()
            .take(RETRY_LIST_MAX)
            .cloned()
            .collect();
        let _ = writeln!(
            p,
            "- Out of scope (discarded; leave these paths alone): {}",
            ticks(&shown)
        );
    }
    for test in v.tests.iter().filter(|t| !t.passed) {
        let how = match (&test.stopped, test.exit_code) {
            (Some(Ending::WallClockLimit { limit_s }), _) => format!("timed out after {limit_s} s"),
            (Some(other), _) => format!("was stopped ({})", ending_word(other)),
            (None, Some(code)) => format!("exited {code}"),
            (None, None) => "failed".to_owned(),
        };
        let tail = cut_tail(test.output_tail.trim_end(), RETRY_TAIL_BYTES);
        let _ = writeln!(
            p,
            "- `{}` {how}. End of its output:\n```\n{tail}\n```",
            test.command
        );
    }
    for check in v.file_checks.iter().filter(|c| !c.passed) {
        let want = match &check.expect {
            FileExpectation::Exists => "must exist".to_owned(),
            FileExpectation::Absent => "must not exist".to_owned(),
            FileExpectation::Contains(text) => format!("must contain `{}`", cut(text, 200)),
        };
        let _ = writeln!(p, "- File check failed: `{}` {want}.", check.path);
    }
    guard_lines(p, v);
}

/// The two guards' findings: failures unless the task allowed changing tests.
fn guard_lines(p: &mut String, v: &Verification) {
    let (weakened, stubs) = if v.test_changes_allowed {
        (
            "Tests changed (allowed by the task)",
            "Stubs found (allowed by the task)",
        )
    } else {
        (
            "Weakened tests (these fail the attempt: put the tests and assertions back and make \
             the code pass them)",
            "Stubs (these fail the attempt: write the real implementation)",
        )
    };
    for (label, findings) in [(weakened, &v.weakened_tests), (stubs, &v.stubs)] {
        if !findings.is_empty() {
            let _ = writeln!(p, "- {label}:");
            for f in findings.iter().take(RETRY_LIST_MAX) {
                let _ = writeln!(p, "  - `{}:{}` {}: `{}`", f.path, f.line, f.what, f.text);
            }
        }
    }
}

fn ending_word(ending: &Ending) -> &'static str {
    match ending {
        Ending::Exited { .. } => "exited",
        Ending::Signalled { .. } => "signal",
        Ending::WallClockLimit { .. } => "time limit",
        Ending::Stagnated { .. } => "no progress",
        Ending::Looped { .. } => "repeating itself",
        Ending::NoFileChange { .. } => "no file change",
        Ending::Cancelled => "cancelled",
        Ending::SpawnFailed { .. } => "could not start",
    }
}

fn ticks(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{} […]", &text[..at]),
        None => text.to_owned(),
    }
}

/// The end of `text` (at most `max` bytes, see [`tail_of`]), marked when something was cut.
fn cut_tail(text: &str, max: usize) -> String {
    let tail = tail_of(text, max);
    if tail.len() == text.len() {
        text.to_owned()
    } else {
        format!("[…] {tail}")
    }
}

#[cfg(test)]
mod tests {
    use butler_worker::time::Timestamp;

    use super::*;
    use crate::contract::*;

    fn contract() -> TaskContract {
        let request = ImplementRequest {
            goal: "Add a `greet` function".into(),
            spec: "greet(name) returns \"Hello, name!\"".into(),
            target_paths: vec!["src/".into(), "README.md".into()],
            test_commands: vec!["cargo test greet".into()],
            file_checks: vec![FileCheckSpec {
                path: "src/greet.rs".into(),
                contains: Some("pub fn greet".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        TaskContract::from_request(
            request,
            TaskId::new("20260415-003").expect("id"),
            "brain",
            Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time"),
        )
        .expect("valid")
    }

    #[test]
    fn first_prompt_states_goal_spec_scope_criteria_and_rules() {
        let p = first_prompt(&contract(), &WorkerTools::default());
        for needle in [
            "Add a `greet` function",
            "greet(name) returns",
            "- `src/`",
            "- `README.md`",
            "`cargo test greet` exits 0",
            "`src/greet.rs` contains `pub fn greet`",
            "Do not run `git commit`, `git push`, `git merge`, `git add`",
            "The Maid records your work",
            "developer tools",
            "`leave_note`",
            "`report_blocked`",
        ] {
            assert!(p.contains(needle), "missing {needle:?} in:\n{p}");
        }
        assert!(!p.contains("What failed"));
    }

    fn failed_attempt() -> AttemptEvidence {
        AttemptEvidence {
            attempt: 1,
            agent_exit: Ending::Exited { code: 0 },
            duration_ms: 10,
            changed_files: vec!["src/greet.rs".into(), "Cargo.toml".into()],
            direct_git: DirectGit::from_findings(vec![
                DirectGitFinding::Git(Tampering::Commits {
                    count: 2,
                    subjects: vec!["wip".into()],
                }),
                DirectGitFinding::Git(Tampering::ConfigChanged {
                    keys: vec!["core.fsmonitor".into()],
                }),
            ]),
            verify: Verification {
                scope_violation: vec!["Cargo.toml".into()],
                tests: vec![
                    TestRun {
                        command: "cargo test greet".into(),
                        exit_code: Some(101),
                        passed: false,
                        stopped: None,
                        output_tail: "assertion failed: left == right\nleft: \"Hi\"".into(),
                    },
                    TestRun {
                        command: "cargo clippy".into(),
                        exit_code: Some(0),
                        passed: true,
                        stopped: None,
                        output_tail: "ok".into(),
                    },
                ],
                file_checks: vec![FileCheckResult {
                    path: "src/greet.rs".into(),
                    expect: FileExpectation::Contains("pub fn greet".into()),
                    passed: false,
                    detail: None,
                }],
                ..Default::default()
            },
            record: None,
            worker_mcp_reached: true,
            agent_notes: vec![],
            warnings: vec![],
            sandbox: None,
            activity: None,
            leftovers: None,
        }
    }

    #[test]
    fn retry_prompt_says_what_failed() {
        let mut last = failed_attempt();
        let mut report: butler_worker::sandbox::SandboxReport = serde_json::from_value(
            serde_json::json!({"mode": "auto", "applied": true, "network": {"kind": "open"},
                               "verify_confined": true}),
        )
        .expect("report");
        report.add_refusals(butler_worker::sandbox::scan_refusals(
            "touch: cannot touch '/home/me/.bashrc': Permission denied",
            butler_worker::sandbox::RefusalSource::Agent,
        ));
        last.sandbox = Some(report);
        let p = retry_prompt(&contract(), &WorkerTools::default(), 2, &last);
        for needle in [
            "The sandbox refused: `/home/me/.bashrc`",
            "attempt 2 of 3",
            "Out of scope (discarded; leave these paths alone): `Cargo.toml`",
            "`cargo test greet` exited 101",
            "left: \"Hi\"",
            "File check failed: `src/greet.rs` must contain `pub fn greet`",
            "2 commit(s) of your own",
            "`core.fsmonitor`",
            "Add a `greet` function",
            "Do not run `git commit`",
        ] {
            assert!(p.contains(needle), "missing {needle:?} in:\n{p}");
        }
        assert!(
            !p.contains("cargo clippy"),
            "passing tests are not repeated"
        );
        let failure_at = p.find("What failed").expect("failure section");
        assert!(
            failure_at < p.find("## Goal").expect("goal"),
            "the failure comes first"
        );
    }

    #[test]
    fn retry_prompt_reports_a_stop_and_no_changes() {
        let mut last = failed_attempt();
        last.agent_exit = Ending::Stagnated { quiet_s: 300 };
        last.changed_files.clear();
        last.verify = Verification::default();
        last.direct_git = DirectGit::default();
        let p = retry_prompt(&contract(), &WorkerTools::default(), 3, &last);
        assert!(p.contains("300 s without output"), "{p}");
        assert!(p.contains("No file was changed"), "{p}");
        assert!(p.contains("attempt 3 of 3"), "{p}");
    }

    #[test]
    fn retry_prompt_names_the_loop_it_was_stopped_for() {
        let mut last = failed_attempt();
        last.agent_exit = Ending::Looped {
            repeated: "shell: cat src/lib.rs".into(),
            times: 5,
        };
        let p = retry_prompt(&contract(), &WorkerTools::default(), 2, &last);
        assert!(
            p.contains("you called `shell: cat src/lib.rs` 5 times without changing any file"),
            "{p}"
        );
        assert!(p.contains("Looping again ends the task"), "{p}");
        last.agent_exit = Ending::NoFileChange { active_s: 600 };
        let p = retry_prompt(&contract(), &WorkerTools::default(), 2, &last);
        assert!(p.contains("600 s of work without changing any file"), "{p}");
    }

    #[test]
    fn retry_prompt_names_weakened_tests_and_stubs_as_failures() {
        let mut last = failed_attempt();
        let finding = |path: &str, what: &str, text: &str| GuardFinding {
            path: path.into(),
            line: 3,
            what: what.into(),
            text: text.into(),
        };
        last.verify = Verification {
            weakened_tests: vec![finding(
                "tests/test_a.py",
                "removed assertion",
                "assert f() == 1",
            )],
            stubs: vec![finding(
                "src/a.py",
                "`raise NotImplementedError`",
                "raise NotImplementedError",
            )],
            ..Default::default()
        };
        let p = retry_prompt(&contract(), &WorkerTools::default(), 2, &last);
        for needle in [
            "Weakened tests (these fail the attempt",
            "`tests/test_a.py:3` removed assertion: `assert f() == 1`",
            "Stubs (these fail the attempt",
            "`src/a.py:3` `raise NotImplementedError`",
        ] {
            assert!(p.contains(needle), "missing {needle:?} in:\n{p}");
        }
        last.verify.test_changes_allowed = true;
        let p = retry_prompt(&contract(), &WorkerTools::default(), 2, &last);
        assert!(p.contains("Tests changed (allowed by the task)"), "{p}");
        assert!(!p.contains("these fail the attempt"), "{p}");
    }

    #[test]
    fn long_output_is_cut_to_its_tail() {
        let mut last = failed_attempt();
        last.verify.tests[0].output_tail = format!("{}THE END", "x".repeat(10_000));
        let p = retry_prompt(&contract(), &WorkerTools::default(), 2, &last);
        assert!(p.contains("THE END"));
        assert!(p.len() < 8_000, "compact: {} bytes", p.len());
    }
}
