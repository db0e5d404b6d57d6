//! A Task Contract as the Brain submits it (`submit_task(contract)`), checked field by field
//! into a [`TaskContract`]. Every wrong field is named, all at once, so one `need_input` answer
//! lets the Brain fix the whole contract.
//!
//! ```json
//! {"intent": "restart", "target": {"service": "api"}, "delegation_mode": "teach_if_unknown",
//!  "constraints": {"timeout_s": 300, "require_approval_for": ["restart"]},
//!  "success_criteria": {"commands": [{"command": "curl -fs localhost:8080/health",
//!                                     "output_matches": "ok"}],
//!                       "file_checks": [{"path": "run/api.pid", "exists": true}]},
//!  "requested_by": "brain", "requested_at": "2026-04-15T10:00:00+09:00", "task_id": "deploy-7"}
//! ```
//!
//! `task_id`, `constraints`, `success_criteria`, `requested_by` and `requested_at` may be left
//! out: Butler allocates the id, applies the defaults, and stamps who and when. An `implement`
//! contract is checked as `run_implement`'s request is (its target is `{goal, spec,
//! target_paths}`, its mode `agent`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::validation::{normalise_relative, validate_file_check};
use super::written::{Given, Read, Wrong, fields, join, read, variants};
use super::{
    AgentKind, CommandCheck, Constraints, DelegationMode, FileCheck, FileCheckSpec,
    ImplementRequest, IntentName, OperationTarget, SuccessCriteria, TaskContract, TaskId, Work,
};
use crate::time::Timestamp;

/// A contract as the Brain writes it: each field read on its own (a wrong one is kept with the
/// others, to be named with them). The fields in the order the refusal of an unknown one lists
/// them.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Written {
    task_id: Given<String>,
    intent: Given<String>,
    /// Read by the intent's own type once the intent is known.
    target: Given<Value>,
    delegation_mode: Given<DelegationMode>,
    constraints: Given<Map<String, Value>>,
    success_criteria: Given<Map<String, Value>>,
    requested_by: Given<String>,
    requested_at: Given<String>,
    issue_id: Given<u64>,
}

/// `constraints` as written; `timeout_s`'s bounds, and which fields apply, depend on the intent.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct WrittenConstraints {
    timeout_s: Given<u64>,
    require_approval_for: Given<Vec<Given<IntentName>>>,
    agent: Given<String>,
    allow_test_changes: Given<bool>,
}

/// `success_criteria` as written; each entry is checked on its own.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct WrittenCriteria {
    commands: Given<Vec<Value>>,
    file_checks: Given<Vec<Value>>,
}

/// The fields a submitted contract may have.
pub(crate) fn contract_fields() -> &'static [&'static str] {
    fields::<Written>()
}

/// Longest and shortest limit of a whole operation, in seconds, and the default.
pub(crate) const OPERATION_TIMEOUT_BOUNDS_S: (u64, u64) = (1, 24 * 60 * 60);
pub(crate) const OPERATION_DEFAULT_TIMEOUT_S: u64 = 30 * 60;
/// Most target entries, and the longest key and value.
const MAX_TARGET_KEYS: usize = 16;
const MAX_KEY_CHARS: usize = 32;
pub(crate) const MAX_VALUE_CHARS: usize = 200;
const MAX_COMMANDS: usize = 20;
const MAX_COMMAND_CHARS: usize = 4_000;
const MAX_FILE_CHECKS: usize = 50;

/// One wrong field of a submitted contract: where (`target.service`,
/// `success_criteria.commands[1].output_matches`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldProblem {
    pub field: String,
    pub problem: String,
}

impl FieldProblem {
    fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// A contract as the Brain wrote it, not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSubmission(pub Value);

impl TaskSubmission {
    /// Checks every field and builds the contract; `now` stamps it when `requested_at` is left
    /// out. Butler allocates the id when `task_id` is left out (the returned contract then has
    /// a placeholder id).
    pub(crate) fn validate(self, now: Timestamp) -> Result<TaskContract, Vec<FieldProblem>> {
        let Value::Object(fields) = self.0 else {
            return Err(vec![FieldProblem::new(
                "contract",
                "give the Task Contract as a JSON object",
            )]);
        };
        let mut problems = Vec::new();
        let Read {
            value: written,
            unknown,
            broken,
        } = read::<Written>(&fields);
        for name in unknown {
            problems.push(FieldProblem::new(
                name,
                format!(
                    "not a contract field (fields: {})",
                    contract_fields().join(", ")
                ),
            ));
        }
        let mut p = Problems(&mut problems);
        p.broken(broken);
        let task_id = p.task_id(&written.task_id);
        let intent = p.intent(&written.intent);
        let mode = p.mode(&written.delegation_mode);
        let requested_by = p.requested_by(&written.requested_by);
        let requested_at = p.requested_at(&written.requested_at, now);
        let issue_id = p.issue_id(&written.issue_id);
        let criteria = p.criteria(&written.success_criteria);
        // `null` is kept as written: an `implement` target names it in its refusal.
        let target = match written.target {
            Given::Is(target) => Some(target),
            Given::Null => Some(Value::Null),
            Given::Absent | Given::Wrong(_) => None,
        };
        let target = target.as_ref();
        let implement = intent
            .as_ref()
            .is_some_and(|i| i.as_str() == Work::IMPLEMENT);
        let constraints = p.constraints(&written.constraints, implement);
        let work = match (&intent, implement) {
            (Some(_), true) => None,
            (Some(intent), false) => p.target(target).map(|target| Work::Operation {
                intent: intent.clone(),
                target,
            }),
            // A bad intent does not hide what is wrong with the target.
            (None, _) => {
                p.target(target);
                None
            }
        };
        match (mode, implement) {
            (Some(DelegationMode::Agent), false) if intent.is_some() => p.add(
                "delegation_mode",
                "`agent` runs only `implement` (the ImplementMaid); use `known_only` or \
                 `teach_if_unknown`",
            ),
            (Some(m), true) if m != DelegationMode::Agent => p.add(
                "delegation_mode",
                "an `implement` task is run by an agent: set `delegation_mode` to `agent`",
            ),
            _ => {}
        }
        let id = task_id.unwrap_or_else(placeholder_id);
        let contract = if implement {
            let (Some(criteria), Some(constraints), Some(requested_at)) =
                (criteria.clone(), constraints.clone(), requested_at)
            else {
                p.target_of_implement(target);
                return Err(problems);
            };
            p.implement(
                target,
                id.clone(),
                criteria,
                constraints,
                &requested_by,
                requested_at,
                issue_id,
            )
        } else {
            None
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        if let Some(contract) = contract {
            return Ok(contract);
        }
        match (work, mode, constraints, criteria, requested_at) {
            (
                Some(work),
                Some(delegation_mode),
                Some(constraints),
                Some(success_criteria),
                Some(requested_at),
            ) => Ok(TaskContract {
                task_id: id,
                work,
                delegation_mode,
                constraints,
                success_criteria,
                requested_by,
                requested_at,
                issue_id,
            }),
            _ => Err(vec![FieldProblem::new(
                "contract",
                "the contract is incomplete",
            )]),
        }
    }
}

/// `` `a`, `b`, `c` ``: names as the Brain writes them.
fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The id a contract carries until the ledger allocates its own.
fn placeholder_id() -> TaskId {
    TaskId::new("t0").expect("t0 is a valid id")
}

/// Whether `id` has the form of the ids the ledger allocates (`t` and digits).
pub(crate) fn is_allocated_form(id: &str) -> bool {
    id.len() > 1 && id.starts_with('t') && id[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The problems found so far, with one checker per field.
struct Problems<'a>(&'a mut Vec<FieldProblem>);

impl Problems<'_> {
    fn add(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.0.push(FieldProblem::new(field, problem));
    }

    /// A form that did not read as a whole (a field that is not a [`Given`]).
    fn broken(&mut self, broken: Option<Wrong>) {
        if let Some(wrong) = broken {
            let field = if wrong.path.is_empty() {
                "contract".to_owned()
            } else {
                wrong.path
            };
            self.add(field, wrong.reason);
        }
    }

    fn task_id(&mut self, value: &Given<String>) -> Option<TaskId> {
        let text = match value {
            Given::Absent | Given::Null => return None,
            Given::Is(text) => text,
            Given::Wrong(_) => {
                self.add(
                    "task_id",
                    "give a string, or leave it out for Butler to allocate",
                );
                return None;
            }
        };
        if is_allocated_form(text) {
            self.add(
                "task_id",
                "ids of the form `t<number>` are Butler's; choose another or leave it out",
            );
            return None;
        }
        match TaskId::new(text.as_str()) {
            Ok(id) => Some(id),
            Err(_) => {
                self.add(
                    "task_id",
                    "use 1 to 64 ASCII letters, digits, `-` and `_`, not starting with `-`",
                );
                None
            }
        }
    }

    fn intent(&mut self, value: &Given<String>) -> Option<IntentName> {
        match value {
            Given::Is(text) => match IntentName::new(text.as_str()) {
                Ok(name) => Some(name),
                Err(e) => {
                    self.add("intent", e.to_string());
                    None
                }
            },
            _ => {
                self.add(
                    "intent",
                    "missing: name what to achieve (`restart`, `collect_logs`, …)",
                );
                None
            }
        }
    }

    fn mode(&mut self, value: &Given<DelegationMode>) -> Option<DelegationMode> {
        match value {
            Given::Is(mode) => Some(*mode),
            _ => {
                self.add(
                    "delegation_mode",
                    format!("give one of {}", ticked(variants::<DelegationMode>())),
                );
                None
            }
        }
    }

    fn requested_by(&mut self, value: &Given<String>) -> String {
        match value {
            Given::Absent | Given::Null => "brain".to_owned(),
            Given::Is(who) if !who.trim().is_empty() && who.chars().count() <= 64 => {
                who.trim().to_owned()
            }
            _ => {
                self.add(
                    "requested_by",
                    "give who asks in at most 64 characters (`brain`)",
                );
                "brain".to_owned()
            }
        }
    }

    fn requested_at(&mut self, value: &Given<String>, now: Timestamp) -> Option<Timestamp> {
        match value {
            Given::Absent | Given::Null => Some(now),
            Given::Is(text) => match Timestamp::parse(text) {
                Ok(at) => Some(at),
                Err(e) => {
                    self.add("requested_at", e.to_string());
                    None
                }
            },
            Given::Wrong(_) => {
                self.add("requested_at", "give an RFC 3339 time, or leave it out");
                None
            }
        }
    }

    fn issue_id(&mut self, value: &Given<u64>) -> Option<u64> {
        match value {
            Given::Absent | Given::Null => None,
            Given::Is(n) if *n > 0 => Some(*n),
            _ => {
                self.add("issue_id", "give an issue number (a positive integer)");
                None
            }
        }
    }

    fn target(&mut self, value: Option<&Value>) -> Option<OperationTarget> {
        let Some(Value::Object(map)) = value else {
            self.add(
                "target",
                "give what the operation acts on as an object of names and text values \
                 (`{\"service\": \"api\"}`; `{}` for none)",
            );
            return None;
        };
        if map.len() > MAX_TARGET_KEYS {
            self.add("target", format!("at most {MAX_TARGET_KEYS} entries"));
            return None;
        }
        let before = self.0.len();
        let mut target = BTreeMap::new();
        // Sorted, so the problems come in one order however the map was parsed.
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_unstable_by_key(|(key, _)| *key);
        for (key, value) in entries {
            let field = format!("target.{key}");
            if let Some(problem) = key_problem(key) {
                self.add(field, problem);
                continue;
            }
            match value.as_str() {
                Some(text) => match value_problem(text) {
                    Some(problem) => self.add(field, problem),
                    None => {
                        target.insert(key.clone(), text.to_owned());
                    }
                },
                None => self.add(field, "give the value as text"),
            }
        }
        (self.0.len() == before).then_some(OperationTarget(target))
    }

    fn constraints(
        &mut self,
        value: &Given<Map<String, Value>>,
        implement: bool,
    ) -> Option<Constraints> {
        let empty = Map::new();
        let map = match value {
            Given::Absent | Given::Null => &empty,
            Given::Is(map) => map,
            Given::Wrong(_) => {
                self.add("constraints", "give an object, or leave it out");
                return None;
            }
        };
        let before = self.0.len();
        let Read {
            value: written,
            unknown,
            broken,
        } = read::<WrittenConstraints>(map);
        for key in unknown {
            self.add(
                join("constraints", &key),
                format!(
                    "not a constraint (constraints: {})",
                    fields::<WrittenConstraints>().join(", ")
                ),
            );
        }
        if let Some(wrong) = broken {
            self.add(join("constraints", &wrong.path), wrong.reason);
        }
        let timeout_s = match written.timeout_s {
            Given::Absent | Given::Null if implement => super::DEFAULT_TIMEOUT_S,
            Given::Absent | Given::Null => OPERATION_DEFAULT_TIMEOUT_S,
            given => {
                let (min, max) = if implement {
                    super::TIMEOUT_BOUNDS_S
                } else {
                    OPERATION_TIMEOUT_BOUNDS_S
                };
                match given {
                    Given::Is(s) if (min..=max).contains(&s) => s,
                    _ => {
                        self.add(
                            "constraints.timeout_s",
                            format!("give whole seconds in {min}..={max}"),
                        );
                        0
                    }
                }
            }
        };
        let mut require_approval_for = Vec::new();
        match written.require_approval_for {
            Given::Absent | Given::Null => {}
            Given::Is(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    match item {
                        Given::Is(name) => require_approval_for.push(name),
                        _ => self.add(
                            format!("constraints.require_approval_for[{i}]"),
                            "give an intent or operation name (`git_push`)",
                        ),
                    }
                }
            }
            Given::Wrong(_) => self.add(
                "constraints.require_approval_for",
                "give a list of intent names",
            ),
        }
        let agent = match written.agent {
            Given::Absent | Given::Null => None,
            _ if !implement => {
                self.add("constraints.agent", "only `implement` tasks have an agent");
                None
            }
            given => match given {
                Given::Is(name) => AgentKind::parse(&name).ok(),
                _ => None,
            }
            .or_else(|| {
                self.add(
                    "constraints.agent",
                    format!("one of {}", variants::<AgentKind>().join(", ")),
                );
                None
            }),
        };
        let allow_test_changes = match written.allow_test_changes {
            Given::Absent | Given::Null => false,
            Given::Is(allowed) if implement => allowed,
            Given::Is(_) => {
                self.add(
                    "constraints.allow_test_changes",
                    "only `implement` tasks have tests to change",
                );
                false
            }
            Given::Wrong(_) => {
                self.add("constraints.allow_test_changes", "give true or false");
                false
            }
        };
        (self.0.len() == before).then_some(Constraints {
            agent,
            allow_test_changes,
            timeout_s,
            max_attempts: if implement { super::MAX_ATTEMPTS } else { 1 },
            no_direct_git: implement,
            require_approval_for,
        })
    }

    fn criteria(&mut self, value: &Given<Map<String, Value>>) -> Option<SuccessCriteria> {
        let empty = Map::new();
        let map = match value {
            Given::Absent | Given::Null => &empty,
            Given::Is(map) => map,
            Given::Wrong(_) => {
                self.add("success_criteria", "give an object, or leave it out");
                return None;
            }
        };
        let before = self.0.len();
        let Read {
            value: written,
            unknown,
            broken,
        } = read::<WrittenCriteria>(map);
        for key in unknown {
            self.add(
                join("success_criteria", &key),
                format!(
                    "not a criterion (criteria: {})",
                    fields::<WrittenCriteria>().join(", ")
                ),
            );
        }
        if let Some(wrong) = broken {
            self.add(join("success_criteria", &wrong.path), wrong.reason);
        }
        let commands = self.commands(&written.commands);
        let file_checks = self.file_checks(&written.file_checks);
        (self.0.len() == before).then_some(SuccessCriteria {
            commands,
            file_checks,
            in_scope_only: false,
        })
    }

    fn commands(&mut self, value: &Given<Vec<Value>>) -> Vec<CommandCheck> {
        let items = match value {
            Given::Absent | Given::Null => return Vec::new(),
            Given::Is(items) if items.len() <= MAX_COMMANDS => items,
            _ => {
                self.add(
                    "success_criteria.commands",
                    format!("give a list of at most {MAX_COMMANDS} checks"),
                );
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = format!("success_criteria.commands[{i}]");
            match command_check(item) {
                Ok(check) => out.push(check),
                Err(problem) => self.add(field, problem),
            }
        }
        out
    }

    fn file_checks(&mut self, value: &Given<Vec<Value>>) -> Vec<FileCheck> {
        let items = match value {
            Given::Absent | Given::Null => return Vec::new(),
            Given::Is(items) if items.len() <= MAX_FILE_CHECKS => items,
            _ => {
                self.add(
                    "success_criteria.file_checks",
                    format!("give a list of at most {MAX_FILE_CHECKS} checks"),
                );
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match file_check(i, item) {
                Ok(check) => out.push(check),
                Err(problem) => self.add(format!("success_criteria.file_checks[{i}]"), problem),
            }
        }
        out
    }

    fn target_of_implement(&mut self, value: Option<&Value>) {
        if !matches!(value, Some(Value::Object(_))) {
            self.add(
                "target",
                "give `{goal, spec, target_paths}` for `implement`",
            );
        }
    }

    /// An `implement` contract, checked as `run_implement`'s request is.
    #[allow(clippy::too_many_arguments)]
    fn implement(
        &mut self,
        target: Option<&Value>,
        id: TaskId,
        criteria: SuccessCriteria,
        constraints: Constraints,
        requested_by: &str,
        requested_at: Timestamp,
        issue_id: Option<u64>,
    ) -> Option<TaskContract> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Target {
            goal: String,
            #[serde(default)]
            spec: String,
            target_paths: Vec<String>,
        }
        let target: Target = match target.map(|t| serde_json::from_value(t.clone())) {
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                self.add("target", format!("`{{goal, spec, target_paths}}`: {e}"));
                return None;
            }
            None => {
                self.target_of_implement(None);
                return None;
            }
        };
        for (i, check) in criteria.commands.iter().enumerate() {
            if check.exit_code != 0 || check.output_matches.is_some() {
                self.add(
                    format!("success_criteria.commands[{i}]"),
                    "an implementation's commands must exit 0 (give `command` and at most \
                     `output_contains`)",
                );
            }
        }
        let request = ImplementRequest {
            goal: target.goal,
            spec: target.spec,
            target_paths: target.target_paths,
            test_commands: criteria
                .commands
                .iter()
                .map(|c| c.command.clone())
                .collect(),
            file_checks: criteria
                .file_checks
                .iter()
                .map(FileCheckSpec::from)
                .collect(),
            agent: constraints.agent.map(|a| a.name().to_owned()),
            timeout_s: Some(constraints.timeout_s),
            issue_id,
            allow_test_changes: constraints.allow_test_changes,
        };
        match TaskContract::from_request(request, id, requested_by, requested_at) {
            Ok(mut contract) => {
                contract.success_criteria.commands = criteria.commands;
                contract.constraints.require_approval_for = constraints.require_approval_for;
                Some(contract)
            }
            Err(e) => {
                self.add(contract_field(&e), e.to_string());
                None
            }
        }
    }
}

/// The field a `run_implement` refusal is about, as a contract path.
fn contract_field(e: &super::ContractError) -> String {
    use super::ContractError as E;
    match e {
        E::EmptyGoal => "target.goal",
        E::TooLong { field, .. } | E::TooMany { field, .. } => return format!("target.{field}"),
        E::NoTargets | E::BadPath { .. } => "target.target_paths",
        E::BadTimeout(_) => "constraints.timeout_s",
        E::EmptyTestCommand(_) => "success_criteria.commands",
        E::BadFileCheck { .. } => "success_criteria.file_checks",
        E::UnknownAgent(_) => "constraints.agent",
        E::BadTaskId(_) => "task_id",
        E::BadIntent(_) | E::NotImplementation(_) => "intent",
    }
    .to_owned()
}

impl From<&FileCheck> for FileCheckSpec {
    fn from(check: &FileCheck) -> Self {
        use super::FileExpectation as X;
        let mut spec = FileCheckSpec {
            path: check.path.clone(),
            ..Default::default()
        };
        match &check.expect {
            X::Exists => spec.exists = Some(true),
            X::Absent => spec.absent = Some(true),
            X::Contains(text) => spec.contains = Some(text.clone()),
        }
        spec
    }
}

/// What is wrong with a target key, if anything: lower-case letters, digits and `_`.
pub(crate) fn key_problem(key: &str) -> Option<String> {
    let ok = !key.is_empty()
        && key.len() <= MAX_KEY_CHARS
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    (!ok).then(|| format!("name it with 1 to {MAX_KEY_CHARS} lower-case letters, digits and `_`"))
}

/// What is wrong with a target value, if anything. Values reach programs as whole arguments,
/// so one that reads as an option (`-…`) is refused, as are control characters.
pub(crate) fn value_problem(value: &str) -> Option<String> {
    if value.is_empty() || value.chars().count() > MAX_VALUE_CHARS {
        return Some(format!("give 1 to {MAX_VALUE_CHARS} characters"));
    }
    if value.chars().any(char::is_control) {
        return Some("it contains control characters".into());
    }
    if value.starts_with('-') {
        return Some("a value may not start with `-` (programs would read it as an option)".into());
    }
    if value == "*" {
        return Some("`*` (any value) is for taught procedures, not for a task".into());
    }
    None
}

/// One `success_criteria.commands` entry: `{command, exit_code?, output_contains?,
/// output_matches?}`.
pub(crate) fn command_check(item: &Value) -> Result<CommandCheck, String> {
    let check: CommandCheck = serde_json::from_value(item.clone()).map_err(|e| {
        format!("give `{{command, exit_code?, output_contains?, output_matches?}}`: {e}")
    })?;
    let command = check.command.trim();
    if command.is_empty() || command.len() > MAX_COMMAND_CHARS {
        return Err(format!(
            "`command` must have 1 to {MAX_COMMAND_CHARS} characters"
        ));
    }
    if let Some(object) = item.as_object()
        && let Some(key) = object
            .keys()
            .find(|k| !fields::<CommandCheck>().contains(&k.as_str()))
    {
        return Err(format!("`{key}` is not a field of a command check"));
    }
    if let Some(pattern) = &check.output_matches
        && let Err(e) = CommandCheck::pattern(pattern)
    {
        return Err(format!(
            "`output_matches` is not a usable regular expression: {e}"
        ));
    }
    Ok(CommandCheck {
        command: command.to_owned(),
        ..check
    })
}

/// One file check: `{path, exists|absent: true}` or `{path, contains}`, inside the project.
pub(crate) fn file_check(index: usize, item: &Value) -> Result<FileCheck, String> {
    let spec: FileCheckSpec = serde_json::from_value(item.clone()).map_err(|e| {
        format!("give `{{path, exists|absent: true}}` or `{{path, contains}}`: {e}")
    })?;
    if let Some(object) = item.as_object()
        && let Some(key) = object
            .keys()
            .find(|k| !fields::<FileCheckSpec>().contains(&k.as_str()))
    {
        return Err(format!("`{key}` is not a field of a file check"));
    }
    validate_file_check(index, spec).map_err(|e| e.to_string())
}

/// A project-relative path (a step's working directory): normalised, inside the project.
pub(crate) fn relative_path(path: &str) -> Result<String, String> {
    normalise_relative(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn now() -> Timestamp {
        Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time")
    }

    fn check(v: Value) -> Result<TaskContract, Vec<FieldProblem>> {
        TaskSubmission(v).validate(now())
    }

    fn fields(problems: &[FieldProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.field.as_str()).collect()
    }

    #[test]
    fn a_minimal_operation_contract_gets_its_defaults() {
        let c = check(json!({"intent": "restart", "target": {"service": "api"},
                             "delegation_mode": "teach_if_unknown"}))
        .expect("valid");
        assert_eq!(c.intent(), "restart");
        assert_eq!(c.requested_by, "brain");
        assert_eq!(c.requested_at, now());
        assert_eq!(c.constraints.timeout_s, OPERATION_DEFAULT_TIMEOUT_S);
        assert_eq!(c.constraints.max_attempts, 1);
        assert!(c.success_criteria.commands.is_empty());
        assert_eq!(c.task_id.as_str(), "t0");
    }

    #[test]
    fn every_wrong_field_is_named_at_once() {
        let problems = check(json!({
            "intent": "Restart!",
            "target": {"Service": "api", "env": 3, "host": "-rf"},
            "delegation_mode": "whenever",
            "constraints": {"timeout_s": 0, "retries": 2},
            "success_criteria": {"commands": [{"command": "x", "output_matches": "("}],
                                 "file_checks": [{"path": "../etc/passwd", "exists": true}]},
            "requested_at": "yesterday",
            "colour": "blue"
        }))
        .expect_err("refused");
        let named = fields(&problems);
        for field in [
            "colour",
            "intent",
            "target.Service",
            "target.env",
            "delegation_mode",
            "requested_at",
            "success_criteria.commands[0]",
            "success_criteria.file_checks[0]",
            "constraints.retries",
            "constraints.timeout_s",
        ] {
            assert!(named.contains(&field), "{field} not named: {named:?}");
        }
    }

    #[test]
    fn target_values_are_text_and_never_options() {
        let problems = check(json!({"intent": "restart", "delegation_mode": "known_only",
                                    "target": {"Service": "api", "env": 3, "host": "-rf",
                                               "any": "*"}}))
        .expect_err("refused");
        assert_eq!(
            fields(&problems),
            ["target.Service", "target.any", "target.env", "target.host"]
        );
    }

    #[test]
    fn agent_mode_is_for_implement_only_and_implement_needs_it() {
        let p = check(json!({"intent": "restart", "target": {}, "delegation_mode": "agent"}))
            .expect_err("refused");
        assert_eq!(fields(&p), ["delegation_mode"]);
        let p = check(
            json!({"intent": "implement", "delegation_mode": "known_only",
                             "target": {"goal": "g", "target_paths": ["src/"]}}),
        )
        .expect_err("refused");
        assert_eq!(fields(&p), ["delegation_mode"]);
    }

    #[test]
    fn an_implement_contract_is_checked_as_run_implement_checks_it() {
        let c = check(json!({"intent": "implement", "delegation_mode": "agent",
            "target": {"goal": "Add greet", "target_paths": ["src/"]},
            "success_criteria": {"commands": [{"command": "test -f src/greet.rs"}]},
            "constraints": {"agent": "claude", "timeout_s": 600}}))
        .expect("valid");
        let target = c.implement().expect("implement");
        assert_eq!(target.target_paths, ["src/"]);
        assert_eq!(c.constraints.timeout_s, 600);
        assert_eq!(
            c.success_criteria.commands[0].command,
            "test -f src/greet.rs"
        );
        let p = check(json!({"intent": "implement", "delegation_mode": "agent",
            "target": {"goal": "", "target_paths": ["/etc"]}}))
        .expect_err("refused");
        assert_eq!(fields(&p), ["target.goal"]);
    }

    #[test]
    fn task_ids_of_the_ledgers_form_are_refused() {
        let p = check(json!({"task_id": "t12", "intent": "x", "target": {},
                             "delegation_mode": "known_only"}))
        .expect_err("refused");
        assert_eq!(fields(&p), ["task_id"]);
        let c = check(json!({"task_id": "deploy-7", "intent": "x", "target": {},
                             "delegation_mode": "known_only"}))
        .expect("valid");
        assert_eq!(c.task_id.as_str(), "deploy-7");
    }

    #[test]
    fn not_an_object_is_one_problem() {
        let p = check(json!("restart the api")).expect_err("refused");
        assert_eq!(fields(&p), ["contract"]);
    }
}
