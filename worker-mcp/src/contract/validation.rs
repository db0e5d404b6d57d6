//! A `run_implement` request checked once into a Task Contract, so the rest of Butler works
//! with values that are known to be sane. Every refusal names the field and says what is wrong.

use serde::{Deserialize, Serialize};

use super::{
    AgentKind, CommandCheck, Constraints, DelegationMode, FileCheck, FileExpectation,
    ImplementTarget, SuccessCriteria, TaskContract, TaskId, Work,
};
use crate::time::Timestamp;

/// Shortest and longest wall-clock limit an attempt may be given, in seconds.
pub const TIMEOUT_BOUNDS_S: (u64, u64) = (10, 4 * 60 * 60);
/// Wall-clock limit of one attempt when the request names none.
pub const DEFAULT_TIMEOUT_S: u64 = 30 * 60;
/// Attempts in all: the first one and two retries.
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
    #[error("intent `{0}` is not a name (lower-case letters, digits and `_`)")]
    BadIntent(String),
    #[error("the task's intent is `{0}`; only `implement` tasks are run by an agent here")]
    NotImplementation(String),
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
    /// The task may change or remove tests (see [`Constraints::allow_test_changes`]).
    #[serde(default)]
    pub allow_test_changes: bool,
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

impl TaskContract {
    /// Validates `request` and builds the contract. `task_id` comes from the ledger.
    pub fn from_request(
        request: ImplementRequest,
        task_id: TaskId,
        requested_by: impl Into<String>,
        requested_at: Timestamp,
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
            work: Work::Implement(ImplementTarget {
                goal,
                spec: request.spec,
                target_paths,
            }),
            delegation_mode: DelegationMode::Agent,
            constraints: Constraints {
                agent,
                timeout_s,
                max_attempts: MAX_ATTEMPTS,
                no_direct_git: true,
                require_approval_for: Vec::new(),
                allow_test_changes: request.allow_test_changes,
            },
            success_criteria: SuccessCriteria {
                commands: test_commands,
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

fn validate_test_commands(raw: Vec<String>) -> Result<Vec<CommandCheck>, ContractError> {
    check_count("test_commands", raw.len(), MAX_TEST_COMMANDS)?;
    let mut out = Vec::with_capacity(raw.len());
    for (index, command) in raw.into_iter().enumerate() {
        let command = command.trim().to_owned();
        if command.is_empty() {
            return Err(ContractError::EmptyTestCommand(index));
        }
        check_len("test_commands", &command, 4_000)?;
        out.push(CommandCheck::exit_zero(command));
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

pub(super) fn validate_file_check(
    index: usize,
    spec: FileCheckSpec,
) -> Result<FileCheck, ContractError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(targets: &[&str]) -> ImplementRequest {
        ImplementRequest {
            goal: "Add a greeting".into(),
            spec: "print hello".into(),
            target_paths: targets.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        }
    }

    fn at() -> Timestamp {
        Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time")
    }

    fn build(req: ImplementRequest) -> Result<TaskContract, ContractError> {
        let id = TaskId::new("20260415-003").expect("valid id");
        TaskContract::from_request(req, id, "brain", at())
    }

    #[test]
    fn a_plain_request_becomes_a_contract_with_defaults() {
        let c = build(request(&["src/", "./README.md", "src/"])).expect("valid");
        let target = c.implement().expect("implement");
        assert_eq!(target.target_paths, vec!["src/", "README.md"]);
        assert_eq!(c.constraints.timeout_s, DEFAULT_TIMEOUT_S);
        assert_eq!(c.constraints.max_attempts, 3);
        assert_eq!(c.intent(), "implement");
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
        assert_eq!(
            c.implement().expect("implement").target_paths,
            vec!["src/**/*.rs", ".", "docs/a.md"]
        );
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
}
