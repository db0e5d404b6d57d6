//! The Task Contract (what the Brain asked for, validated at the edge) and the Result Contract
//! (what happened, as evidence).
//!
//! A `run_implement` call arrives as an [`ImplementRequest`]; [`TaskContract::from_request`]
//! checks every field once, so the rest of the Maid works with values that are known to be sane.

use std::fmt;

use butler_worker::git::Tampering;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::supervise::Ending;

/// Shortest and longest wall-clock limit an attempt may be given, in seconds.
pub const TIMEOUT_BOUNDS_S: (u64, u64) = (10, 4 * 60 * 60);
/// Wall-clock limit of one attempt when the request names none.
pub const DEFAULT_TIMEOUT_S: u64 = 30 * 60;
/// Attempts in all: the first one and two retries (seed 004).
pub const MAX_ATTEMPTS: u32 = 3;

const MAX_GOAL_CHARS: usize = 4_000;
const MAX_SPEC_CHARS: usize = 100_000;
const MAX_TARGET_PATHS: usize = 200;
const MAX_TEST_COMMANDS: usize = 20;
const MAX_FILE_CHECKS: usize = 100;

/// Why a request was refused at the edge. Every message names the field and says what is wrong.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ContractError {
    #[error("`goal` is empty: say what the task must achieve")]
    EmptyGoal,
    #[error("`{field}` is too long ({len} characters, at most {max})")]
    TooLong {
        field: &'static str,
        len: usize,
        max: usize,
    },
    #[error("`target_paths` is empty: name the files, directories or globs the task may change")]
    NoTargets,
    #[error("`{field}` has too many entries ({len}, at most {max})")]
    TooMany {
        field: &'static str,
        len: usize,
        max: usize,
    },
    #[error("target path `{path}` is not allowed: {reason}")]
    BadPath { path: String, reason: &'static str },
    #[error("`timeout_s` = {0} is out of range ({min}..={max} seconds)", min = TIMEOUT_BOUNDS_S.0, max = TIMEOUT_BOUNDS_S.1)]
    BadTimeout(u64),
    #[error("`test_commands` entry {0} is empty")]
    EmptyTestCommand(usize),
    #[error("`file_checks` entry {index} ({path}): {reason}")]
    BadFileCheck {
        index: usize,
        path: String,
        reason: &'static str,
    },
    #[error("`agent` = `{0}` is unknown (known: goose, claude, codex, aider)")]
    UnknownAgent(String),
    #[error("task id `{0}` is not usable in a branch name")]
    BadTaskId(String),
}

/// The arguments of `run_implement` as the Brain sent them (unvalidated).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ImplementRequest {
    pub goal: String,
    #[serde(default)]
    pub spec: String,
    pub target_paths: Vec<String>,
    #[serde(default)]
    pub test_commands: Vec<String>,
    #[serde(default)]
    pub file_checks: Vec<FileCheckSpec>,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// The issue the task works on: the Maid's records refer to it.
    #[serde(default)]
    pub issue_id: Option<u64>,
}

/// One file check as the Brain writes it: `{path, exists: true}`, `{path, absent: true}` or
/// `{path, contains: "text"}` — exactly one of the three.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileCheckSpec {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
}

/// A task's id, safe to use in a branch name and a directory name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TaskId(String);

impl TaskId {
    /// Accepts ASCII letters, digits, `-` and `_`, 1 to 64 characters (ledger ids look like
    /// `20260415-003`).
    pub fn new(id: impl Into<String>) -> Result<Self, ContractError> {
        let id = id.into();
        let ok = !id.is_empty()
            && id.len() <= 64
            && !id.starts_with('-')
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(id))
        } else {
            Err(ContractError::BadTaskId(id))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The task's branch: `butler/task-<id>`.
    pub fn branch(&self) -> String {
        format!("butler/task-{}", self.0)
    }
}

impl TryFrom<String> for TaskId {
    type Error = ContractError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<TaskId> for String {
    fn from(value: TaskId) -> Self {
        value.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which headless agent runs the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    #[default]
    Goose,
    Claude,
    Codex,
    Aider,
}

impl AgentKind {
    pub fn parse(name: &str) -> Result<Self, ContractError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "goose" => Ok(Self::Goose),
            "claude" | "claude-code" | "claude_code" => Ok(Self::Claude),
            "codex" => Ok(Self::Codex),
            "aider" => Ok(Self::Aider),
            _ => Err(ContractError::UnknownAgent(name.to_owned())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Goose => "goose",
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Aider => "aider",
        }
    }
}

/// What the task is for. The Maid only knows one intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    Implement,
}

/// How the work is delegated (PRINCIPLES: `known_only`, `teach_if_unknown`, `agent`); an
/// implementation task is always run by an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelegationMode {
    Agent,
}

/// What the task works on: the goal, the spec, and the paths it may change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub goal: String,
    pub spec: String,
    /// Normalised relative paths, directories (`src/`) or globs (`src/**/*.rs`).
    pub target_paths: Vec<String>,
}

/// Limits the task runs under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraints {
    /// `None`: the configured default agent.
    pub agent: Option<AgentKind>,
    /// Wall-clock limit of one attempt.
    pub timeout_s: u64,
    pub max_attempts: u32,
    /// The agent must not run git itself; the Maid records its work.
    pub no_direct_git: bool,
}

/// What must hold for the task to count as done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuccessCriteria {
    pub test_commands: Vec<String>,
    pub file_checks: Vec<FileCheck>,
    /// Every changed path lies inside `target.target_paths`.
    pub in_scope_only: bool,
}

/// A validated file check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheck {
    pub path: String,
    pub expect: FileExpectation,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileExpectation {
    Exists,
    Absent,
    Contains(String),
}

/// The typed Task Contract (PRINCIPLES): built once from a request, then read-only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskContract {
    pub task_id: TaskId,
    pub intent: Intent,
    pub target: Target,
    pub delegation_mode: DelegationMode,
    pub constraints: Constraints,
    pub success_criteria: SuccessCriteria,
    pub requested_by: String,
    pub requested_at: DateTime<Utc>,
    /// The issue the task works on, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_id: Option<u64>,
}

impl TaskContract {
    /// Validates `request` and builds the contract. `task_id` comes from the ledger.
    pub fn from_request(
        request: ImplementRequest,
        task_id: TaskId,
        requested_by: impl Into<String>,
        requested_at: DateTime<Utc>,
    ) -> Result<Self, ContractError> {
        let goal = request.goal.trim().to_owned();
        if goal.is_empty() {
            return Err(ContractError::EmptyGoal);
        }
        check_len("goal", &goal, MAX_GOAL_CHARS)?;
        check_len("spec", &request.spec, MAX_SPEC_CHARS)?;
        let target_paths = validate_targets(&request.target_paths)?;
        let test_commands = validate_test_commands(request.test_commands)?;
        let file_checks = validate_file_checks(request.file_checks)?;
        let agent = request.agent.as_deref().map(AgentKind::parse).transpose()?;
        let timeout_s = request.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        if !(TIMEOUT_BOUNDS_S.0..=TIMEOUT_BOUNDS_S.1).contains(&timeout_s) {
            return Err(ContractError::BadTimeout(timeout_s));
        }
        Ok(Self {
            task_id,
            intent: Intent::Implement,
            target: Target {
                goal,
                spec: request.spec,
                target_paths,
            },
            delegation_mode: DelegationMode::Agent,
            constraints: Constraints {
                agent,
                timeout_s,
                max_attempts: MAX_ATTEMPTS,
                no_direct_git: true,
            },
            success_criteria: SuccessCriteria {
                test_commands,
                file_checks,
                in_scope_only: true,
            },
            requested_by: requested_by.into(),
            requested_at,
            issue_id: request.issue_id,
        })
    }
}

fn check_len(field: &'static str, text: &str, max: usize) -> Result<(), ContractError> {
    let len = text.chars().count();
    if len > max {
        Err(ContractError::TooLong { field, len, max })
    } else {
        Ok(())
    }
}

fn check_count(field: &'static str, len: usize, max: usize) -> Result<(), ContractError> {
    if len > max {
        Err(ContractError::TooMany { field, len, max })
    } else {
        Ok(())
    }
}

fn validate_targets(raw: &[String]) -> Result<Vec<String>, ContractError> {
    if raw.is_empty() {
        return Err(ContractError::NoTargets);
    }
    check_count("target_paths", raw.len(), MAX_TARGET_PATHS)?;
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for path in raw {
        let normalised = normalise_relative(path)?;
        if !out.contains(&normalised) {
            out.push(normalised);
        }
    }
    Ok(out)
}

/// Normalises a project-relative path or glob: trims, drops `./` segments and doubled slashes,
/// keeps a trailing `/` (it marks a directory). Refuses absolute paths, `..`, `.git` and control
/// characters. The whole project is written `.`.
pub(crate) fn normalise_relative(path: &str) -> Result<String, ContractError> {
    let bad = |reason| ContractError::BadPath {
        path: path.to_owned(),
        reason,
    };
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err(bad("it is empty"));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(bad("it contains control characters"));
    }
    if trimmed.starts_with('/') || trimmed.starts_with('~') || trimmed.contains('\\') {
        return Err(bad(
            "it must be relative to the project root, with `/` separators",
        ));
    }
    let is_dir = trimmed.ends_with('/');
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(bad("`..` leaves the project")),
            _ if part.eq_ignore_ascii_case(".git") => {
                return Err(bad("the repository's `.git` is never a target"));
            }
            _ => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Ok(".".to_owned());
    }
    let mut joined = parts.join("/");
    if is_dir {
        joined.push('/');
    }
    Ok(joined)
}

fn validate_test_commands(raw: Vec<String>) -> Result<Vec<String>, ContractError> {
    check_count("test_commands", raw.len(), MAX_TEST_COMMANDS)?;
    let mut out = Vec::with_capacity(raw.len());
    for (index, command) in raw.into_iter().enumerate() {
        let command = command.trim().to_owned();
        if command.is_empty() {
            return Err(ContractError::EmptyTestCommand(index));
        }
        check_len("test_commands", &command, 4_000)?;
        out.push(command);
    }
    Ok(out)
}

fn validate_file_checks(raw: Vec<FileCheckSpec>) -> Result<Vec<FileCheck>, ContractError> {
    check_count("file_checks", raw.len(), MAX_FILE_CHECKS)?;
    raw.into_iter()
        .enumerate()
        .map(|(index, spec)| validate_file_check(index, spec))
        .collect()
}

fn validate_file_check(index: usize, spec: FileCheckSpec) -> Result<FileCheck, ContractError> {
    let bad = |reason| ContractError::BadFileCheck {
        index,
        path: spec.path.clone(),
        reason,
    };
    let path = normalise_relative(&spec.path)
        .map_err(|_| bad("the path must be relative, inside the project, without `..`"))?;
    if path == "." || path.ends_with('/') || path.contains(['*', '?', '[']) {
        return Err(bad("name one file, not a directory or a glob"));
    }
    let given = [
        spec.exists.is_some(),
        spec.absent.is_some(),
        spec.contains.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(bad("give exactly one of `exists`, `absent`, `contains`"));
    }
    let expect = match (spec.exists, spec.absent, spec.contains.clone()) {
        (Some(true), _, _) | (_, Some(false), _) => FileExpectation::Exists,
        (Some(false), _, _) | (_, Some(true), _) => FileExpectation::Absent,
        (_, _, Some(text)) if text.is_empty() => return Err(bad("`contains` is empty")),
        (_, _, Some(text)) => FileExpectation::Contains(text),
        (None, None, None) => unreachable!("exactly one of the three was checked above"),
    };
    Ok(FileCheck { path, expect })
}

// ---------------------------------------------------------------------------------------------
// Result Contract

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// An attempt passed every verifier; its work is recorded on the task branch.
    Succeeded,
    /// Every attempt failed verification; the evidence says why.
    Failed,
    /// The Brain (or the user) cancelled the task.
    Cancelled,
}

/// The typed Result Contract returned to the Brain when a task ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultContract {
    pub task_id: TaskId,
    pub branch: String,
    pub outcome: Outcome,
    pub attempts: Vec<AttemptEvidence>,
}

/// What one attempt did and how it was judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptEvidence {
    /// 1-based.
    pub attempt: u32,
    /// The agent's exit code or how it was stopped. Information, never success.
    pub agent_exit: Ending,
    pub duration_ms: u64,
    pub changed_files: Vec<String>,
    pub direct_git: DirectGit,
    pub verify: Verification,
    /// The ledger record the Maid made of this attempt's work, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// Whether the restricted worker MCP was started for this attempt (an agent such as goose
    /// silently runs without an extension that failed to start).
    #[serde(default)]
    pub worker_mcp_reached: bool,
    /// Notes the agent left through the worker MCP during the attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_notes: Vec<AgentNote>,
    /// Things the Brain should know that are not failures (e.g. `worker MCP not reached`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the sandbox did: mode, whether applied, the kernel's ABI, the rules, the refusals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<butler_worker::sandbox::SandboxReport>,
}

/// A note the agent left through the worker MCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentNote {
    /// `note`, `progress` or `blocked`.
    pub kind: String,
    pub text: String,
}

/// Git the agent ran itself, and tampering found against the baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectGit {
    pub detected: bool,
    pub findings: Vec<DirectGitFinding>,
}

impl DirectGit {
    pub fn from_findings(findings: Vec<DirectGitFinding>) -> Self {
        Self {
            detected: !findings.is_empty(),
            findings,
        }
    }
}

/// One thing the agent did to git or outside its tree (all restored by the Maid). What it did
/// to git is the git worker's [`Tampering`], shown with the same `kind` tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DirectGitFinding {
    /// A file written outside the task's worktree.
    OutsideWrite { path: String },
    /// Agent configuration planted in the tree (`.aider.conf.yml`, `.goosehints`, …).
    AgentConfigPlanted { path: String },
    /// Commits, switched or moved refs, staged files, changed config or hooks.
    #[serde(untagged)]
    Git(Tampering),
}

impl From<Tampering> for DirectGitFinding {
    fn from(t: Tampering) -> Self {
        Self::Git(t)
    }
}

/// The verifiers' findings for one attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// Changed paths outside `target_paths`; not carried into the task's record.
    pub scope_violation: Vec<String>,
    pub tests: Vec<TestRun>,
    pub file_checks: Vec<FileCheckResult>,
    /// Changed lines that delete or weaken tests and assertions.
    pub weakened_tests: Vec<GuardFinding>,
    /// Stubs left in added lines (`todo!()`, `TODO`, `pass`-only bodies, …).
    pub stubs: Vec<GuardFinding>,
}

impl Verification {
    /// Scope, tests and file checks all passed. The two guards are reported as evidence for the
    /// Brain to judge; they do not fail an attempt by themselves.
    pub fn passed(&self) -> bool {
        self.scope_violation.is_empty()
            && self.tests.iter().all(|t| t.passed)
            && self.file_checks.iter().all(|c| c.passed)
    }
}

/// One test command's run in the task's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    pub command: String,
    /// `None` when the command was stopped (time limit, cancellation) or killed by a signal.
    pub exit_code: Option<i32>,
    pub passed: bool,
    /// How it ended, when not by a plain exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Ending>,
    /// The last part of its combined output (bounded).
    pub output_tail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheckResult {
    pub path: String,
    pub expect: FileExpectation,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A line flagged by one of the two diff guards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardFinding {
    pub path: String,
    /// Line number in the new file (added lines) or the old file (removed lines).
    pub line: u32,
    pub what: String,
    /// The line itself, trimmed and shortened.
    pub text: String,
}

#[cfg(test)]
mod tests {
    #[test]
    fn findings_keep_one_flat_kind_tag_and_read_back() {
        use super::{DirectGitFinding, Tampering};
        let findings = vec![
            DirectGitFinding::Git(Tampering::Commits {
                count: 1,
                subjects: vec!["wip".into()],
            }),
            DirectGitFinding::Git(Tampering::IndexChanged),
            DirectGitFinding::OutsideWrite {
                path: "../x".into(),
            },
        ];
        let json = serde_json::to_value(&findings).expect("json");
        assert_eq!(
            json,
            serde_json::json!([
                {"kind": "commits", "count": 1, "subjects": ["wip"]},
                {"kind": "index_changed"},
                {"kind": "outside_write", "path": "../x"}
            ])
        );
        let back: Vec<DirectGitFinding> = serde_json::from_value(json).expect("reads back");
        assert_eq!(back, findings);
    }

    use super::*;

    fn request(targets: &[&str]) -> ImplementRequest {
        ImplementRequest {
            goal: "Add a greeting".into(),
            spec: "print hello".into(),
            target_paths: targets.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        }
    }

    fn build(req: ImplementRequest) -> Result<TaskContract, ContractError> {
        let id = TaskId::new("20260415-003").expect("valid id");
        TaskContract::from_request(req, id, "brain", Utc::now())
    }

    #[test]
    fn a_plain_request_becomes_a_contract_with_defaults() {
        let c = build(request(&["src/", "./README.md", "src/"])).expect("valid");
        assert_eq!(c.target.target_paths, vec!["src/", "README.md"]);
        assert_eq!(c.constraints.timeout_s, DEFAULT_TIMEOUT_S);
        assert_eq!(c.constraints.max_attempts, 3);
        assert_eq!(c.intent, Intent::Implement);
        assert_eq!(c.task_id.branch(), "butler/task-20260415-003");
    }

    #[test]
    fn empty_goal_is_refused() {
        let mut r = request(&["src/"]);
        r.goal = "  \n".into();
        assert_eq!(build(r), Err(ContractError::EmptyGoal));
    }

    #[test]
    fn no_targets_is_refused() {
        assert_eq!(build(request(&[])), Err(ContractError::NoTargets));
    }

    #[test]
    fn paths_leaving_the_project_are_refused() {
        for bad in [
            "/etc/passwd",
            "../x",
            "src/../../x",
            "~/x",
            ".git/config",
            "a/.git/",
            "",
            "a\\b",
        ] {
            let err = build(request(&[bad])).expect_err(bad);
            assert!(
                matches!(err, ContractError::BadPath { .. }),
                "{bad}: {err:?}"
            );
        }
    }

    #[test]
    fn globs_and_the_whole_project_are_allowed() {
        let c = build(request(&["src/**/*.rs", ".", "docs//a.md"])).expect("valid");
        assert_eq!(c.target.target_paths, vec!["src/**/*.rs", ".", "docs/a.md"]);
    }

    #[test]
    fn timeout_must_be_within_bounds() {
        let mut r = request(&["src/"]);
        r.timeout_s = Some(1);
        assert_eq!(build(r.clone()), Err(ContractError::BadTimeout(1)));
        r.timeout_s = Some(10 * 60 * 60);
        assert!(matches!(
            build(r.clone()),
            Err(ContractError::BadTimeout(_))
        ));
        r.timeout_s = Some(600);
        assert_eq!(build(r).expect("valid").constraints.timeout_s, 600);
    }

    #[test]
    fn file_checks_need_exactly_one_expectation() {
        let mut r = request(&["src/"]);
        r.file_checks = vec![
            FileCheckSpec {
                path: "a.txt".into(),
                exists: Some(true),
                ..Default::default()
            },
            FileCheckSpec {
                path: "b.txt".into(),
                absent: Some(true),
                ..Default::default()
            },
            FileCheckSpec {
                path: "c.txt".into(),
                contains: Some("hi".into()),
                ..Default::default()
            },
        ];
        let c = build(r.clone()).expect("valid");
        let expects: Vec<_> = c
            .success_criteria
            .file_checks
            .iter()
            .map(|f| &f.expect)
            .collect();
        assert_eq!(
            expects,
            vec![
                &FileExpectation::Exists,
                &FileExpectation::Absent,
                &FileExpectation::Contains("hi".into())
            ]
        );

        r.file_checks = vec![FileCheckSpec {
            path: "a".into(),
            exists: Some(true),
            contains: Some("x".into()),
            ..Default::default()
        }];
        assert!(matches!(
            build(r.clone()),
            Err(ContractError::BadFileCheck { index: 0, .. })
        ));
        r.file_checks = vec![FileCheckSpec {
            path: "a".into(),
            ..Default::default()
        }];
        assert!(matches!(
            build(r.clone()),
            Err(ContractError::BadFileCheck { .. })
        ));
        r.file_checks = vec![FileCheckSpec {
            path: "../a".into(),
            exists: Some(true),
            ..Default::default()
        }];
        assert!(matches!(
            build(r.clone()),
            Err(ContractError::BadFileCheck { .. })
        ));
        r.file_checks = vec![FileCheckSpec {
            path: "src/*.rs".into(),
            exists: Some(true),
            ..Default::default()
        }];
        assert!(matches!(build(r), Err(ContractError::BadFileCheck { .. })));
    }

    #[test]
    fn file_checks_deserialize_from_the_brains_shape() {
        let json = r#"{"goal":"g","target_paths":["src/"],
            "file_checks":[{"path":"a","exists":true},{"path":"b","contains":"fn x"}]}"#;
        let r: ImplementRequest = serde_json::from_str(json).expect("parses");
        assert_eq!(r.file_checks[1].contains.as_deref(), Some("fn x"));
        assert!(build(r).is_ok());
    }

    #[test]
    fn agent_names_are_checked() {
        let mut r = request(&["src/"]);
        r.agent = Some("Claude".into());
        assert_eq!(
            build(r.clone()).expect("valid").constraints.agent,
            Some(AgentKind::Claude)
        );
        r.agent = Some("cursor".into());
        assert_eq!(build(r), Err(ContractError::UnknownAgent("cursor".into())));
    }

    #[test]
    fn task_ids_are_branch_safe() {
        assert!(TaskId::new("20260415-001").is_ok());
        for bad in ["", "a b", "../x", "-x", "a/b", "x~1"] {
            assert!(TaskId::new(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<TaskId>("\"a/b\"").is_err());
    }

    #[test]
    fn result_contract_serialises_with_the_issue_field_names() {
        let result = ResultContract {
            task_id: TaskId::new("t1").expect("valid"),
            branch: "butler/task-t1".into(),
            outcome: Outcome::Failed,
            attempts: vec![AttemptEvidence {
                attempt: 1,
                agent_exit: Ending::Exited { code: 0 },
                duration_ms: 12,
                changed_files: vec!["src/a.rs".into()],
                direct_git: DirectGit::from_findings(vec![DirectGitFinding::Git(
                    Tampering::Commits {
                        count: 1,
                        subjects: vec!["wip".into()],
                    },
                )]),
                verify: Verification {
                    scope_violation: vec!["Cargo.toml".into()],
                    tests: vec![TestRun {
                        command: "cargo test".into(),
                        exit_code: Some(101),
                        passed: false,
                        stopped: None,
                        output_tail: "failed".into(),
                    }],
                    ..Default::default()
                },
                record: None,
                worker_mcp_reached: false,
                agent_notes: vec![],
                warnings: vec!["worker MCP not reached".into()],
                sandbox: None,
            }],
        };
        let v = serde_json::to_value(&result).expect("serialises");
        assert_eq!(v["attempts"][0]["warnings"][0], "worker MCP not reached");
        assert_eq!(v["outcome"], "failed");
        let a = &v["attempts"][0];
        assert_eq!(
            a["agent_exit"],
            serde_json::json!({"kind": "exited", "code": 0})
        );
        assert_eq!(a["direct_git"]["detected"], true);
        assert_eq!(a["direct_git"]["findings"][0]["kind"], "commits");
        assert_eq!(a["verify"]["scope_violation"][0], "Cargo.toml");
        assert_eq!(a["verify"]["tests"][0]["exit_code"], 101);
        assert!(
            a["verify"]["weakened_tests"]
                .as_array()
                .expect("array")
                .is_empty()
        );
        let back: ResultContract = serde_json::from_value(v).expect("round trip");
        assert_eq!(back, result);
        assert!(!back.attempts[0].verify.passed());
    }
}
