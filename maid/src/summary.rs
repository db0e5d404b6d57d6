//! The short account of a task for a person at a terminal (`butler implement`, `butler task
//! show`): how it went, what changed, the tests, what was refused or undone, the agent's
//! activity, each attempt's ending, the line, and what to do next. The JSON evidence
//! (`--json`) is the full account; this is what to read first. Every text an agent could have
//! written is shown with its control characters neutralised.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use butler_worker::contract::activity::printable;
use butler_worker::contract::{
    ActivityCounts, AttemptEvidence, DirectGitFinding, Tampering, TaskId, TaskStatus, Usage,
};

/// Changed files listed, at most; the rest are counted.
const FILES_SHOWN: usize = 10;

/// What the summary is made from (a task's ledger row and attempts, or a run's result).
#[derive(Debug, Clone, Copy)]
pub struct TaskView<'a> {
    pub task_id: &'a TaskId,
    /// What the task is about, in a few words.
    pub subject: &'a str,
    pub status: TaskStatus,
    /// The task's line.
    pub branch: &'a str,
    /// Its worktree, while it has one.
    pub worktree: Option<&'a str>,
    pub attempts: &'a [AttemptEvidence],
    /// Files its line changes that configure tools or run code (the result's `tool_config`).
    pub tool_config: &'a [butler_worker::tool_config::ToolConfigChange],
    /// The error that stopped it, when it could not end.
    pub error: Option<&'a str>,
}

/// The summary: a headline and a few labelled lines, each ending with a newline.
pub fn summary(view: &TaskView<'_>) -> String {
    let mut out = headline(view);
    let mut line = |label: &str, text: String| {
        if !text.is_empty() {
            let _ = writeln!(out, "  {label:<9} {}", printable(&text));
        }
    };
    let last = view.attempts.last();
    line("changed", changed(view.attempts));
    line("tools", tool_config(view.tool_config));
    if let Some(last) = last {
        line("tests", tests(last));
        line("guards", guards(last));
    }
    line("refused", refused(view.attempts));
    line("agent", agent(view.attempts));
    line("attempts", endings(view.attempts));
    line("warnings", warnings(view.attempts));
    line(
        "line",
        match view.worktree {
            Some(dir) => format!("{} (worktree {dir})", view.branch),
            None => view.branch.to_owned(),
        },
    );
    line("next", next(view));
    let id = view.task_id;
    line(
        "more",
        format!("butler task log {id} · butler task show {id} --json · butler task shell {id}"),
    );
    out
}

/// Files that configure tools or run code, which accepting asks to confirm.
fn tool_config(changes: &[butler_worker::tool_config::ToolConfigChange]) -> String {
    if changes.is_empty() {
        return String::new();
    }
    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    format!(
        "{} (configure tools or run code: confirm them when accepting)",
        paths.join(", ")
    )
}

fn headline(view: &TaskView<'_>) -> String {
    let id = view.task_id;
    let subject = printable(view.subject);
    let n = view.attempts.len();
    let tries = format!("{n} attempt{}", if n == 1 { "" } else { "s" });
    match (view.status, view.error) {
        (TaskStatus::Error, Some(error)) => {
            format!(
                "Task {id} stopped on an error: {subject}\n  error     {}\n",
                printable(error)
            )
        }
        (TaskStatus::Running, _) => format!("Task {id} is running: {subject} ({tries} so far)\n"),
        (status, _) => format!("Task {id} {}: {subject} ({tries})\n", status_word(status)),
    }
}

fn status_word(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Running => "is running",
        TaskStatus::Succeeded => "succeeded",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "was cancelled",
        TaskStatus::Error => "stopped on an error",
        TaskStatus::Interrupted => "was interrupted (its Butler died while it ran)",
        TaskStatus::NeedInput => "needs input",
        TaskStatus::NeedApproval => "waits for approval",
        TaskStatus::Accepted => "was accepted",
        TaskStatus::Discarded => "was discarded",
    }
}

/// The files recorded on the line (changed and in scope), over all attempts.
fn changed(attempts: &[AttemptEvidence]) -> String {
    let files: BTreeSet<&str> = attempts
        .iter()
        .flat_map(|a| {
            a.changed_files
                .iter()
                .filter(|f| !a.verify.scope_violation.contains(f))
                .map(String::as_str)
        })
        .collect();
    if files.is_empty() {
        return if attempts.is_empty() {
            String::new()
        } else {
            "nothing".to_owned()
        };
    }
    let shown: Vec<&str> = files.iter().take(FILES_SHOWN).copied().collect();
    let more = files.len().saturating_sub(FILES_SHOWN);
    let mut text = shown.join(", ");
    if more > 0 {
        let _ = write!(text, " and {more} more");
    }
    text
}

fn tests(last: &AttemptEvidence) -> String {
    let tests = &last.verify.tests;
    let checks = &last.verify.file_checks;
    if tests.is_empty() && checks.is_empty() {
        return "none given".to_owned();
    }
    let mut parts = Vec::new();
    if !tests.is_empty() {
        let passed = tests.iter().filter(|t| t.passed).count();
        let mut part = format!("{passed} of {} passed", tests.len());
        let failing: Vec<String> = tests
            .iter()
            .filter(|t| !t.passed)
            .map(|t| match (&t.stopped, t.exit_code) {
                (Some(ending), _) => format!("`{}` {ending}", t.command),
                (None, Some(code)) => format!("`{}` exit {code}", t.command),
                (None, None) => format!("`{}` failed", t.command),
            })
            .collect();
        if !failing.is_empty() {
            let _ = write!(part, " (failing: {})", failing.join(", "));
        }
        parts.push(part);
    }
    if !checks.is_empty() {
        let passed = checks.iter().filter(|c| c.passed).count();
        parts.push(format!("{passed} of {} file checks passed", checks.len()));
    }
    parts.join("; ")
}

fn guards(last: &AttemptEvidence) -> String {
    let (weakened, stubs) = (last.verify.weakened_tests.len(), last.verify.stubs.len());
    let mut parts = Vec::new();
    if weakened > 0 {
        parts.push(format!("{weakened} weakened test line(s)"));
    }
    if stubs > 0 {
        parts.push(format!("{stubs} stub(s)"));
    }
    parts.join(", ")
}

/// What was refused or undone over all attempts: scope, the agent's own git use and writes
/// outside its tree, the sandbox's refusals.
fn refused(attempts: &[AttemptEvidence]) -> String {
    let out_of_scope: BTreeSet<&str> = attempts
        .iter()
        .flat_map(|a| a.verify.scope_violation.iter().map(String::as_str))
        .collect();
    let mut parts = Vec::new();
    if !out_of_scope.is_empty() {
        let files: Vec<&str> = out_of_scope.iter().take(FILES_SHOWN).copied().collect();
        parts.push(format!("out of scope, set aside: {}", files.join(", ")));
    }
    let mut commits = 0;
    let mut outside = Vec::new();
    let mut other = 0;
    for finding in attempts.iter().flat_map(|a| &a.direct_git.findings) {
        match finding {
            DirectGitFinding::Git(Tampering::Commits { count, .. }) => commits += count,
            DirectGitFinding::OutsideWrite { path }
            | DirectGitFinding::AgentConfigPlanted { path } => {
                outside.push(path.as_str());
            }
            DirectGitFinding::Git(_)
            | DirectGitFinding::NestedRepository { .. }
            | DirectGitFinding::ModesRestored { .. }
            | DirectGitFinding::BrainMetadataChanged { .. } => other += 1,
        }
    }
    if commits > 0 {
        parts.push(format!(
            "{commits} commit(s) of its own undone (changes kept)"
        ));
    }
    if !outside.is_empty() {
        parts.push(format!("writes undone: {}", outside.join(", ")));
    }
    if other > 0 {
        parts.push(format!("{other} change(s) to git state undone"));
    }
    let sandbox: usize = attempts
        .iter()
        .filter_map(|a| a.sandbox.as_ref())
        .map(|s| s.refused_total)
        .sum();
    if sandbox > 0 {
        parts.push(format!("the sandbox refused {sandbox} access(es)"));
    }
    if parts.is_empty() && !attempts.is_empty() {
        return "nothing".to_owned();
    }
    parts.join("; ")
}

/// The agent's activity and usage over all attempts, as its output showed them.
fn agent(attempts: &[AttemptEvidence]) -> String {
    let mut counts = ActivityCounts::default();
    let mut usage = Usage::default();
    let mut seen = false;
    for activity in attempts.iter().filter_map(|a| a.activity.as_ref()) {
        seen = true;
        let c = &activity.counts;
        counts.tool_calls += c.tool_calls;
        counts.commands += c.commands;
        counts.failed_commands += c.failed_commands;
        counts.files_edited += c.files_edited;
        counts.errors += c.errors;
        if let Some(u) = activity.usage {
            usage = usage.plus(u);
        }
    }
    if !seen {
        return String::new();
    }
    let mut text = format!(
        "{} tool call(s), {} command(s) ({} failed), {} file edit(s), {} error(s)",
        counts.tool_calls,
        counts.commands,
        counts.failed_commands,
        counts.files_edited,
        counts.errors
    );
    if !usage.is_empty() {
        let _ = write!(text, "; {usage}");
    }
    text
}

fn endings(attempts: &[AttemptEvidence]) -> String {
    attempts
        .iter()
        .map(|a| format!("{}: agent {}", a.attempt, a.agent_exit))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn warnings(attempts: &[AttemptEvidence]) -> String {
    attempts
        .iter()
        .flat_map(|a| {
            a.warnings
                .iter()
                .map(move |w| format!("attempt {}: {w}", a.attempt))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

fn next(view: &TaskView<'_>) -> String {
    let (id, line) = (view.task_id, view.branch);
    match view.status {
        TaskStatus::Running => format!("follow it: butler task log {id} --follow"),
        TaskStatus::Succeeded => format!(
            "review it (git diff HEAD...{line}), then have the Brain accept it (task_accept \
             {id}) or drop it (task_discard {id})"
        ),
        TaskStatus::Failed => format!(
            "read why above and in `butler task log {id}`; ask again with a clearer spec, take \
             over in `butler task shell {id}`, or drop it (task_discard {id})"
        ),
        TaskStatus::Cancelled | TaskStatus::Interrupted | TaskStatus::Error => format!(
            "its line {line} is kept; look at it (butler task shell {id}) or drop it \
             (task_discard {id})"
        ),
        TaskStatus::NeedInput | TaskStatus::NeedApproval => {
            "answer what it asks through the Brain".to_owned()
        }
        TaskStatus::Accepted => "nothing: its records are on your line".to_owned(),
        TaskStatus::Discarded => {
            format!("nothing: its work is kept under refs/butler/discarded/task-{id}")
        }
    }
}

#[cfg(test)]
mod tests {
    use butler_worker::contract::{
        Activity, AgentEvent, Cost, DirectGit, Ending, TestRun, TimedEvent, Verification,
    };

    use super::*;

    fn attempt(n: u32, ending: Ending, passed: bool) -> AttemptEvidence {
        let mut activity = Activity::default();
        activity.record(TimedEvent {
            at_ms: 1,
            event: AgentEvent::command("cargo test", Some(u32::from(!passed) as i32), false),
        });
        activity.record(TimedEvent {
            at_ms: 2,
            event: AgentEvent::Usage(Usage {
                input_tokens: Some(1_000),
                cost_usd: Some(Cost(0.5)),
                turns: Some(2),
                ..Usage::default()
            }),
        });
        AttemptEvidence {
            attempt: n,
            agent_exit: ending,
            duration_ms: 10,
            changed_files: vec!["src/greet.rs".into(), "docs/x.md".into()],
            direct_git: DirectGit::from_findings(vec![DirectGitFinding::Git(Tampering::Commits {
                count: 1,
                subjects: vec!["wip".into()],
            })]),
            verify: Verification {
                scope_violation: vec!["docs/x.md".into()],
                tests: vec![TestRun {
                    command: "cargo test".into(),
                    exit_code: Some(u32::from(!passed) as i32),
                    passed,
                    stopped: None,
                    output_tail: String::new(),
                }],
                ..Verification::default()
            },
            record: None,
            worker_mcp_reached: false,
            agent_notes: vec![],
            warnings: vec!["worker MCP not reached".into()],
            sandbox: None,
            activity: Some(activity),
            leftovers: None,
        }
    }

    #[test]
    fn a_task_reads_as_outcome_changes_tests_refusals_activity_line_and_next_step() {
        let id = TaskId::new("t3").expect("id");
        let attempts = vec![
            attempt(
                1,
                Ending::Looped {
                    repeated: "shell: ls".into(),
                    times: 5,
                },
                false,
            ),
            attempt(2, Ending::Exited { code: 0 }, true),
        ];
        let text = summary(&TaskView {
            task_id: &id,
            subject: "Add a greeting",
            status: TaskStatus::Succeeded,
            branch: "butler/task-t3",
            worktree: Some("/data/wt/task-t3"),
            attempts: &attempts,
            tool_config: &[butler_worker::tool_config::ToolConfigChange {
                path: "build.rs".into(),
                kind: butler_worker::tool_config::ToolConfigKind::Build,
            }],
            error: None,
        });
        assert_eq!(
            text,
            "Task t3 succeeded: Add a greeting (2 attempts)\n\
             \x20 changed   src/greet.rs\n\
             \x20 tools     build.rs (configure tools or run code: confirm them when accepting)\n\
             \x20 tests     1 of 1 passed\n\
             \x20 refused   out of scope, set aside: docs/x.md; 2 commit(s) of its own undone (changes kept)\n\
             \x20 agent     0 tool call(s), 2 command(s) (1 failed), 0 file edit(s), 0 error(s); 2.0k tokens in, $1.0000, 4 turn(s)\n\
             \x20 attempts  1: agent stopped after repeating `shell: ls` 5 times without changing a file · 2: agent exit code 0\n\
             \x20 warnings  attempt 1: worker MCP not reached · attempt 2: worker MCP not reached\n\
             \x20 line      butler/task-t3 (worktree /data/wt/task-t3)\n\
             \x20 next      review it (git diff HEAD...butler/task-t3), then have the Brain accept it (task_accept t3) or drop it (task_discard t3)\n\
             \x20 more      butler task log t3 · butler task show t3 --json · butler task shell t3\n"
        );
    }

    #[test]
    fn an_error_and_a_running_task_say_so() {
        let id = TaskId::new("t4").expect("id");
        let view = TaskView {
            task_id: &id,
            subject: "x",
            status: TaskStatus::Error,
            branch: "butler/task-t4",
            worktree: None,
            attempts: &[],
            tool_config: &[],
            error: Some("disk full\x1b[2J"),
        };
        let text = summary(&view);
        assert!(
            text.starts_with("Task t4 stopped on an error: x\n  error     disk full?[2J\n"),
            "{text}"
        );
        let running = summary(&TaskView {
            status: TaskStatus::Running,
            error: None,
            ..view
        });
        assert!(
            running.contains("follow it: butler task log t4 --follow"),
            "{running}"
        );
        assert!(!running.contains("  changed"), "{running}");
    }
}
