//! The task inside its pod (`butler task run`): the base commit fetched from the shared
//! destination, the very same task run as locally, the task line pushed back, the Result
//! Contract handed back.
//!
//! Everything comes from the pod's environment ([`PodTask::from_env`]): the Task Contract
//! (`BUTLER_TASK_CONTRACT`, checked as if it came from outside), the destination
//! (`BUTLER_TASK_DESTINATION`), the base commit and the ref it is on (`BUTLER_TASK_BASE`,
//! `BUTLER_TASK_BASE_REF`), the ref the task line goes to (`BUTLER_TASK_PUSH_REF`) and the
//! directory of the push credentials (`BUTLER_PUSH_CREDENTIALS`, optional). The steps:
//! [`checkout_base`] makes a fresh repository under the work dir on the base's line;
//! [`run_in_pod`] creates the task in the fresh ledger under the contract's own id, runs
//! [`crate::run::run_task`] (its progress as [`PodMessage::Progress`] lines) and pushes the task
//! line; [`hand_back`] turns the end into the one last line (and the termination message).
//!
//! The credentials never reach the agent: git reads them itself when the destination asks
//! (`butler_worker::git::FileCredentials`), their directory is on the task's deny-read list,
//! and no `BUTLER_*` variable passes into an agent's environment ([`crate::env`]). No line
//! this module hands out carries the token ([`PodOutput`]).

use std::path::{Path, PathBuf};

use butler_worker::contract::{
    CommandCheck, DelegationMode, FileCheckSpec, ImplementRequest, MAX_ATTEMPTS, ResultContract,
    TaskContract,
};
use butler_worker::git::{Access, FileCredentials, GitError, GitRepo, shown_destination};
use butler_worker::ledger::{LEDGER_DIR, LEDGER_FILE, Ledger, LedgerError};
use tokio_util::sync::CancellationToken;

use super::wire::PodMessage;
use crate::error::MaidError;
use crate::run::{MaidContext, Progress, blocking};

/// The Task Contract, as JSON.
pub(crate) const CONTRACT_VAR: &str = "BUTLER_TASK_CONTRACT";
/// The shared destination: a git URL or a path.
pub(crate) const DESTINATION_VAR: &str = "BUTLER_TASK_DESTINATION";
/// The base commit (40 hex digits).
pub(crate) const BASE_VAR: &str = "BUTLER_TASK_BASE";
/// The destination's ref holding the base commit.
pub(crate) const BASE_REF_VAR: &str = "BUTLER_TASK_BASE_REF";
/// The destination's ref the task line is pushed to.
pub(crate) const PUSH_REF_VAR: &str = "BUTLER_TASK_PUSH_REF";
/// The directory holding `username` and `token` for the destination (optional).
pub(crate) const CREDENTIALS_VAR: &str = "BUTLER_PUSH_CREDENTIALS";
/// Where the final line is written for Kubernetes' termination message.
pub(crate) const TERMINATION_LOG_VAR: &str = "BUTLER_TERMINATION_LOG";
/// The termination message file when [`TERMINATION_LOG_VAR`] is not set.
pub(crate) const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";
/// The largest termination message Kubernetes keeps.
pub(crate) const TERMINATION_LOG_MAX: usize = 4096;
/// The refs a pod reads its base from and pushes its line to lie under this prefix.
pub(crate) const REF_PREFIX: &str = "refs/heads/butler/";
/// The fresh repository's directory inside the work dir.
pub(crate) const REPOSITORY_DIR: &str = "repo";

/// The longest contract accepted (Kubernetes keeps a whole object under about 1 MiB).
const MAX_CONTRACT_BYTES: usize = 1 << 20;

/// Why the task could not be run or handed back. The text names what failed; it never holds
/// a credential (URLs are shown without their user info, and [`PodOutput`] removes the token
/// from every line).
#[derive(Debug, thiserror::Error)]
pub enum PodError {
    /// A variable of the pod's environment is missing or wrong.
    #[error("`{name}` {problem}")]
    Setting { name: &'static str, problem: String },
    /// The Task Contract could not be read or is not one this pod may run.
    #[error("the task contract (`{CONTRACT_VAR}`) is not valid: {0}")]
    Contract(String),
    /// The work dir could not be read or written.
    #[error("{action} `{}`: {source}", path.display())]
    WorkDir {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The fresh repository could not be made or its line switched to.
    #[error("{step}: {source}")]
    Repository {
        step: &'static str,
        #[source]
        source: GitError,
    },
    /// Fetching the base from the destination failed.
    #[error("fetching `{base_ref}` from {destination}: {}", git_text(source))]
    Fetch {
        base_ref: String,
        destination: String,
        #[source]
        source: GitError,
    },
    /// The destination has no base ref.
    #[error("the destination {destination} has no `{base_ref}`: the base commit was not pushed")]
    BaseMissing {
        base_ref: String,
        destination: String,
    },
    /// The base ref holds another commit than the one the task was given.
    #[error(
        "`{base_ref}` on the destination is {found}, not the task's base {expected}: the base moved"
    )]
    BaseMismatch {
        base_ref: String,
        expected: String,
        found: String,
    },
    /// The task could not be created in the fresh ledger.
    #[error("creating the task in the ledger: {0}")]
    Ledger(#[from] LedgerError),
    /// Butler's settings for the task could not be read (configuration, agent settings).
    #[error("{what}: {reason}")]
    Prepare { what: &'static str, reason: String },
    /// The task itself stopped before it could end.
    #[error("the task stopped: {0}")]
    Run(#[from] MaidError),
    /// The destination did not take the task line.
    #[error(
        "pushing the task line `{line}` to `{push_ref}` on {destination}: {}",
        git_text(source)
    )]
    Push {
        line: String,
        push_ref: String,
        destination: String,
        #[source]
        source: GitError,
    },
}

/// A git failure in words, with what the destination said when it refused.
fn git_text(err: &GitError) -> String {
    match err {
        GitError::HookRejected { hook, output_tail } => {
            let by = hook
                .as_deref()
                .map_or_else(|| "a rule".to_owned(), |h| format!("its `{h}` hook"));
            let said = output_tail.trim();
            if said.is_empty() {
                format!("the destination refused it ({by})")
            } else {
                format!("the destination refused it ({by}): {said}")
            }
        }
        GitError::Rejected => {
            "the destination refused it: the ref there holds other work (never forced)".to_owned()
        }
        other => other.to_string(),
    }
}

/// What the pod's environment says about its task.
#[derive(Debug, Clone)]
pub struct PodTask {
    /// The validated contract.
    pub contract: TaskContract,
    /// The shared destination (URL or path), as given.
    pub destination: String,
    /// The base commit (40 lower-case hex digits).
    pub base: String,
    /// The destination's ref holding the base (`refs/heads/butler/…`).
    pub base_ref: String,
    /// The destination's ref the task line goes to (`refs/heads/butler/…`).
    pub push_ref: String,
    /// The push credentials, when given.
    pub credentials: Option<FileCredentials>,
}

impl PodTask {
    /// Reads and checks the task from the environment (`var` looks a variable up). Relative
    /// paths (the credentials' directory) are taken from `work_dir`.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        work_dir: &Path,
    ) -> Result<PodTask, PodError> {
        let required = |name: &'static str| {
            var(name)
                .filter(|v| !v.trim().is_empty())
                .ok_or(PodError::Setting {
                    name,
                    problem: "is not set".to_owned(),
                })
        };
        let contract = read_contract(&required(CONTRACT_VAR)?)?;
        let destination = required(DESTINATION_VAR)?.trim().to_owned();
        if destination.starts_with('-') || destination.chars().any(char::is_control) {
            return Err(PodError::Setting {
                name: DESTINATION_VAR,
                problem: "is not a git URL or path".to_owned(),
            });
        }
        let base = required(BASE_VAR)?.trim().to_ascii_lowercase();
        if base.len() != 40 || !base.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(PodError::Setting {
                name: BASE_VAR,
                problem: "is not a commit id (40 hex digits)".to_owned(),
            });
        }
        let base_ref = butler_ref(BASE_REF_VAR, required(BASE_REF_VAR)?)?;
        let push_ref = butler_ref(PUSH_REF_VAR, required(PUSH_REF_VAR)?)?;
        if push_ref == base_ref {
            return Err(PodError::Setting {
                name: PUSH_REF_VAR,
                problem: format!("is the base ref `{base_ref}`: the task line needs its own"),
            });
        }
        let credentials = match var(CREDENTIALS_VAR).filter(|v| !v.trim().is_empty()) {
            None => None,
            Some(dir) => Some(FileCredentials::new(credentials_dir(&dir, work_dir)?)),
        };
        Ok(PodTask {
            contract,
            destination,
            base,
            base_ref,
            push_ref,
            credentials,
        })
    }

    /// The destination as it may be shown (no user info).
    pub fn shown_destination(&self) -> String {
        shown_destination(&self.destination)
    }

    /// The local line the base is checked out on: the base ref's own name.
    pub(crate) fn base_line(&self) -> &str {
        self.base_ref.trim_start_matches("refs/heads/")
    }
}

/// `value` when it is a full ref name under `refs/heads/butler/` that git accepts.
fn butler_ref(name: &'static str, value: String) -> Result<String, PodError> {
    let value = value.trim().to_owned();
    let bad = |problem: &str| PodError::Setting {
        name,
        problem: problem.to_owned(),
    };
    let Some(rest) = value.strip_prefix(REF_PREFIX) else {
        return Err(bad(&format!("must be a ref under `{REF_PREFIX}`")));
    };
    let valid = !rest.is_empty()
        && value.len() <= 255
        && !value.contains("..")
        && !value.contains("@{")
        && !value.contains("//")
        && !value.ends_with('/')
        && !value.ends_with('.')
        && !value.ends_with(".lock")
        && value.split('/').all(|part| !part.starts_with('.'))
        && value.bytes().all(|b| {
            b.is_ascii_graphic() && !matches!(b, b'~' | b'^' | b':' | b'?' | b'*' | b'[' | b'\\')
        });
    if !valid {
        return Err(bad("is not a valid ref name"));
    }
    Ok(value)
}

/// The credentials' directory: absolute, existing, holding `username` and `token`.
fn credentials_dir(dir: &str, work_dir: &Path) -> Result<PathBuf, PodError> {
    let path = work_dir.join(dir.trim());
    let bad = |problem: String| PodError::Setting {
        name: CREDENTIALS_VAR,
        problem,
    };
    let path = path.canonicalize().map_err(|e| {
        bad(format!(
            "names `{}`, which cannot be read: {e}",
            path.display()
        ))
    })?;
    for file in ["username", "token"] {
        if !path.join(file).is_file() {
            return Err(bad(format!(
                "names `{}`, which has no `{file}`",
                path.display()
            )));
        }
    }
    Ok(path)
}

/// Reads the Task Contract from its JSON and checks it as Butler checks one from outside: an
/// `implement` task run by an agent whose every field passes `run_implement`'s validation
/// (normalised target paths, bounded texts, a known agent, a timeout in bounds) and whose
/// attempts are 1 to [`MAX_ATTEMPTS`]. A contract that differs from its validated form is
/// refused, never silently changed.
pub(crate) fn read_contract(json: &str) -> Result<TaskContract, PodError> {
    let bad = |problem: String| PodError::Contract(problem);
    if json.len() > MAX_CONTRACT_BYTES {
        return Err(bad(format!(
            "it is {} bytes long (at most {MAX_CONTRACT_BYTES})",
            json.len()
        )));
    }
    let given: TaskContract =
        serde_json::from_str(json).map_err(|e| bad(format!("not a Task Contract: {e}")))?;
    let Some(target) = given.implement() else {
        return Err(bad(format!(
            "its intent is `{}`; a pod runs `implement` tasks only",
            given.intent()
        )));
    };
    if given.delegation_mode != DelegationMode::Agent {
        return Err(bad(
            "an `implement` task's `delegation_mode` is `agent`".to_owned()
        ));
    }
    let constraints = &given.constraints;
    if !(1..=MAX_ATTEMPTS).contains(&constraints.max_attempts) {
        return Err(bad(format!(
            "`constraints.max_attempts` = {} is out of range (1..={MAX_ATTEMPTS})",
            constraints.max_attempts
        )));
    }
    for (i, check) in given.success_criteria.commands.iter().enumerate() {
        if check.exit_code != 0 || check.output_matches.is_some() {
            return Err(bad(format!(
                "`success_criteria.commands[{i}]`: an implementation's commands must exit 0 \
                 (at most with `output_contains`)"
            )));
        }
    }
    let request = ImplementRequest {
        goal: target.goal.clone(),
        spec: target.spec.clone(),
        target_paths: target.target_paths.clone(),
        test_commands: given
            .success_criteria
            .commands
            .iter()
            .map(|c| c.command.clone())
            .collect(),
        file_checks: given
            .success_criteria
            .file_checks
            .iter()
            .map(FileCheckSpec::from)
            .collect(),
        agent: constraints.agent.map(|a| a.name().to_owned()),
        timeout_s: Some(constraints.timeout_s),
        issue_id: given.issue_id,
        allow_test_changes: constraints.allow_test_changes,
    };
    let mut checked = TaskContract::from_request(
        request,
        given.task_id.clone(),
        given.requested_by.clone(),
        given.requested_at,
    )
    .map_err(|e| bad(e.to_string()))?;
    checked.constraints.max_attempts = constraints.max_attempts;
    checked.constraints.require_approval_for = constraints.require_approval_for.clone();
    checked.success_criteria.commands = given
        .success_criteria
        .commands
        .iter()
        .map(|c| CommandCheck {
            command: c.command.trim().to_owned(),
            ..c.clone()
        })
        .collect();
    if let Some(field) = first_difference(&given, &checked) {
        return Err(bad(format!(
            "`{field}` is not in the form Butler validates it to"
        )));
    }
    Ok(checked)
}

/// The first part of `given` that differs from its validated form `checked`.
fn first_difference(given: &TaskContract, checked: &TaskContract) -> Option<&'static str> {
    let (g, c) = (given, checked);
    [
        ("target", g.work != c.work),
        ("constraints", g.constraints != c.constraints),
        ("success_criteria", g.success_criteria != c.success_criteria),
        ("requested_by", g.requested_by != c.requested_by),
        ("issue_id", g.issue_id != c.issue_id),
    ]
    .into_iter()
    .find_map(|(field, differs)| differs.then_some(field))
}

/// [1] A fresh repository in `<work_dir>/repo` on the base's line: the base ref fetched from
/// the destination (with the credentials when given), checked to be the task's base commit,
/// and checked out. `git_env` is added to every git process (tests: a hermetic git).
/// Returns the repository's working tree (the task's project).
pub async fn checkout_base(
    task: &PodTask,
    work_dir: &Path,
    git_env: Vec<(String, String)>,
) -> Result<PathBuf, PodError> {
    let task = task.clone();
    let dir = work_dir.join(REPOSITORY_DIR);
    blocking(move || {
        let repo = GitRepo::init_fresh(&dir)
            .map_err(|source| PodError::Repository {
                step: "creating a fresh repository",
                source,
            })?
            .with_command_env(git_env);
        let fetched = repo
            .fetch_line(
                &task.destination,
                &task.base_ref,
                task.base_line(),
                Access::Only(task.credentials.as_ref()),
            )
            .map_err(|source| PodError::Fetch {
                base_ref: task.base_ref.clone(),
                destination: task.shown_destination(),
                source,
            })?;
        let Some(found) = fetched else {
            return Err(PodError::BaseMissing {
                base_ref: task.base_ref.clone(),
                destination: task.shown_destination(),
            });
        };
        if found != task.base {
            return Err(PodError::BaseMismatch {
                base_ref: task.base_ref.clone(),
                expected: task.base.clone(),
                found,
            });
        }
        repo.switch_line(task.base_line())
            .map_err(|source| PodError::Repository {
                step: "checking out the base",
                source,
            })?;
        Ok(repo.workdir().to_path_buf())
    })
    .await
}

/// [2] and [3]: the task created in the fresh ledger under the contract's own id, run exactly
/// as `butler implement` runs one (each [`Progress`] handed to `progress` as it happens), its
/// line pushed to the push ref. `ctx` is the Maid's context for the repository
/// [`checkout_base`] made; the credentials' directory is added to what the task's commands may
/// not read.
pub async fn run_in_pod(
    mut ctx: MaidContext,
    task: &PodTask,
    progress: impl Fn(Progress) + Send + Sync,
    cancel: CancellationToken,
) -> Result<ResultContract, PodError> {
    if let Some(credentials) = &task.credentials {
        ctx.sandbox
            .deny_read
            .push(credentials.dir().display().to_string());
    }
    let contract = task.contract.clone();
    let ledger_file = ledger_file(&ctx)?;
    {
        let (contract, clock) = (contract.clone(), ctx.clock.clone());
        blocking(move || {
            if let Some(dir) = ledger_file.parent() {
                std::fs::create_dir_all(dir).map_err(|source| PodError::WorkDir {
                    action: "creating",
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
            let ledger = Ledger::open_file(&ledger_file)?.with_clock(clock);
            Ok::<_, PodError>(ledger.create_named_task(&contract)?)
        })
        .await?;
    }
    let project = ctx.project_root.clone();
    let git_env = ctx.git_env.clone();
    let result = crate::run::run_task(ctx, contract, &progress, cancel).await?;
    let task = task.clone();
    let line = task.contract.task_id.branch();
    blocking(move || {
        let push_failed = |source| PodError::Push {
            line: line.clone(),
            push_ref: task.push_ref.clone(),
            destination: task.shown_destination(),
            source,
        };
        let repo = GitRepo::discover(&project)
            .map_err(push_failed)?
            .with_command_env(git_env);
        repo.push_line(
            &task.destination,
            &line,
            &task.push_ref,
            Access::Only(task.credentials.as_ref()),
        )
        .map_err(push_failed)
    })
    .await?;
    Ok(result)
}

/// The ledger of the task's repository (`<git common dir>/butler/ledger.db`, or the
/// context's own).
fn ledger_file(ctx: &MaidContext) -> Result<PathBuf, PodError> {
    if let Some(path) = &ctx.ledger_path {
        return Ok(path.clone());
    }
    let repo = GitRepo::discover(&ctx.project_root).map_err(|source| PodError::Repository {
        step: "opening the task's repository",
        source,
    })?;
    Ok(repo.common_dir().join(LEDGER_DIR).join(LEDGER_FILE))
}

/// Turns messages into the pod's log lines, with the push token (when one is readable)
/// replaced wherever it would appear.
#[derive(Debug, Clone, Default)]
pub struct PodOutput {
    token: Option<String>,
}

impl PodOutput {
    /// Lines for a pod whose environment `var` looks up (the token read from
    /// `$BUTLER_PUSH_CREDENTIALS/token` when there is one). Relative paths are taken from
    /// `work_dir`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>, work_dir: &Path) -> Self {
        let token = var(CREDENTIALS_VAR)
            .filter(|v| !v.trim().is_empty())
            .and_then(|dir| FileCredentials::new(work_dir.join(dir.trim())).token());
        Self { token }
    }

    /// `message` as one log line (no newline), without the token.
    pub fn line(&self, message: &PodMessage) -> String {
        let line = message.to_line();
        match &self.token {
            Some(token) if line.contains(token.as_str()) => {
                line.replace(token.as_str(), "[redacted]")
            }
            _ => line,
        }
    }
}

/// How the pod ends: its last line and its exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct PodEnd {
    /// The last line: the Result, or the Error (no newline, no token).
    pub line: String,
    /// 0 when a Result was handed back (whatever its outcome), 1 on an Error.
    pub code: i32,
}

/// [4] The task's end as the pod's last line, also written to the termination message file
/// (`termination_log`) when it fits in [`TERMINATION_LOG_MAX`] bytes (else the file is left
/// alone: the reader takes the log's last line).
pub fn hand_back(
    end: Result<ResultContract, PodError>,
    output: &PodOutput,
    termination_log: &Path,
) -> PodEnd {
    let (message, code) = match end {
        Ok(result) => (PodMessage::Result(result), 0),
        Err(e) => {
            tracing::warn!(error = %e, "the task ends with an error");
            (PodMessage::Error(e.to_string()), 1)
        }
    };
    let line = output.line(&message);
    if line.len() <= TERMINATION_LOG_MAX
        && let Err(e) = std::fs::write(termination_log, &line)
    {
        tracing::warn!(
            path = %termination_log.display(),
            %e,
            "the termination message could not be written"
        );
    }
    PodEnd { line, code }
}

/// The termination message file the environment names (default
/// [`DEFAULT_TERMINATION_LOG`]).
pub fn termination_log(var: impl Fn(&str) -> Option<String>) -> PathBuf {
    var(TERMINATION_LOG_VAR)
        .filter(|v| !v.trim().is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_TERMINATION_LOG), PathBuf::from)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::ffi::OsString;

    use butler_worker::contract::{TaskId, Work};
    use butler_worker::time::Timestamp;

    use super::*;
    use crate::env::{AgentEnvNeeds, EnvPolicy, GitIdentity, HomeChoice, agent_env};

    fn contract() -> TaskContract {
        let mut c = TaskContract::from_request(
            ImplementRequest {
                goal: "Add a greeting".into(),
                target_paths: vec!["src/".into()],
                test_commands: vec!["test -f src/greet.rs".into()],
                timeout_s: Some(60),
                ..Default::default()
            },
            TaskId::new("t3").expect("id"),
            "brain",
            Timestamp::parse("2026-06-12T13:00:00+09:00").expect("time"),
        )
        .expect("valid");
        c.constraints.max_attempts = 1;
        c
    }

    fn vars(extra: &[(&str, &str)]) -> HashMap<String, String> {
        let mut vars: HashMap<String, String> = [
            (
                CONTRACT_VAR,
                serde_json::to_string(&contract()).expect("json"),
            ),
            (DESTINATION_VAR, "/srv/shared.git".into()),
            (BASE_VAR, "a".repeat(40)),
            (BASE_REF_VAR, "refs/heads/butler/base/butler-x-t3".into()),
            (PUSH_REF_VAR, "refs/heads/butler/tasks/butler-x-t3".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        for (k, v) in extra {
            vars.insert((*k).to_owned(), (*v).to_owned());
        }
        vars
    }

    fn read(vars: &HashMap<String, String>) -> Result<PodTask, PodError> {
        PodTask::from_env(|name| vars.get(name).cloned(), Path::new("/"))
    }

    #[test]
    fn a_contract_butler_wrote_is_taken_as_it_is() {
        let task = read(&vars(&[])).expect("valid");
        assert_eq!(task.contract, contract());
        assert_eq!(task.base_line(), "butler/base/butler-x-t3");
        assert!(task.credentials.is_none());
    }

    #[test]
    fn broken_or_hostile_contracts_are_refused_with_a_reason() {
        let json = serde_json::to_value(contract()).expect("json");
        let with = |pointer: &str, value: serde_json::Value| {
            let mut v = json.clone();
            *v.pointer_mut(pointer).expect("field") = value;
            v.to_string()
        };
        for (text, needle) in [
            ("{not json".to_owned(), "not a Task Contract"),
            ("[]".to_owned(), "not a Task Contract"),
            (
                with("/target/target_paths", serde_json::json!(["../etc"])),
                "`..`",
            ),
            (
                with("/target/target_paths", serde_json::json!(["./src//"])),
                "target",
            ),
            (
                with("/task_id", serde_json::json!("../x")),
                "not a Task Contract",
            ),
            (
                with("/constraints/max_attempts", serde_json::json!(0)),
                "max_attempts",
            ),
            (
                with("/constraints/max_attempts", serde_json::json!(99)),
                "max_attempts",
            ),
            (
                with("/constraints/timeout_s", serde_json::json!(1)),
                "timeout_s",
            ),
            (
                with("/constraints/no_direct_git", serde_json::json!(false)),
                "constraints",
            ),
            (
                with("/success_criteria/in_scope_only", serde_json::json!(false)),
                "success_criteria",
            ),
            (
                with("/intent", serde_json::json!("restart")),
                "not a Task Contract",
            ),
            (
                with("/delegation_mode", serde_json::json!("known_only")),
                "delegation_mode",
            ),
            ("x".repeat(MAX_CONTRACT_BYTES + 1), "bytes long"),
        ] {
            let err = read_contract(&text).expect_err(needle);
            let shown = err.to_string();
            assert!(shown.contains(needle), "{needle}: {shown}");
            assert!(shown.contains(CONTRACT_VAR), "{shown}");
        }
        let mut op = contract();
        op.work = Work::Operation {
            intent: butler_worker::contract::IntentName::new("restart").expect("name"),
            target: Default::default(),
        };
        let err = read_contract(&serde_json::to_string(&op).expect("json")).expect_err("operation");
        assert!(err.to_string().contains("`implement` tasks only"), "{err}");
    }

    #[test]
    fn refs_must_be_butlers_and_the_base_a_commit_id() {
        for (name, value, needle) in [
            (BASE_REF_VAR, "refs/heads/main", "refs/heads/butler/"),
            (PUSH_REF_VAR, "refs/tags/butler/x", "refs/heads/butler/"),
            (PUSH_REF_VAR, "refs/heads/butler/../main", "not a valid ref"),
            (PUSH_REF_VAR, "refs/heads/butler/a b", "not a valid ref"),
            (
                PUSH_REF_VAR,
                "refs/heads/butler/base/butler-x-t3",
                "its own",
            ),
            (BASE_VAR, "abc", "40 hex"),
            (DESTINATION_VAR, "--upload-pack=evil", "git URL"),
            (CREDENTIALS_VAR, "/nonexistent/creds", "cannot be read"),
        ] {
            let err = read(&vars(&[(name, value)])).expect_err(value);
            let shown = err.to_string();
            assert!(shown.contains(name) && shown.contains(needle), "{shown}");
        }
        let mut missing = vars(&[]);
        missing.remove(PUSH_REF_VAR);
        let err = read(&missing).expect_err("missing");
        assert_eq!(err.to_string(), format!("`{PUSH_REF_VAR}` is not set"));
    }

    #[test]
    fn credentials_need_both_files_and_the_token_never_leaves_in_a_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("username"), "bot\n").expect("write");
        let path = dir.path().display().to_string();
        let err = read(&vars(&[(CREDENTIALS_VAR, &path)])).expect_err("no token");
        assert!(err.to_string().contains("has no `token`"), "{err}");
        std::fs::write(dir.path().join("token"), "tok-123-secret\n").expect("write");
        let task = read(&vars(&[(CREDENTIALS_VAR, &path)])).expect("valid");
        assert!(task.credentials.is_some());
        let env = vars(&[(CREDENTIALS_VAR, &path)]);
        let output = PodOutput::from_env(|n| env.get(n).cloned(), Path::new("/"));
        let log = dir.path().join("termination-log");
        let end = hand_back(
            Err(PodError::Prepare {
                what: "echo",
                reason: "the remote said tok-123-secret".into(),
            }),
            &output,
            &log,
        );
        assert_eq!(end.code, 1);
        assert!(!end.line.contains("tok-123-secret"), "{}", end.line);
        assert_eq!(std::fs::read_to_string(&log).expect("written"), end.line);
        assert!(matches!(
            PodMessage::from_line(&end.line),
            Some(PodMessage::Error(text)) if text.contains("[redacted]")
        ));
    }

    #[test]
    fn a_line_too_long_for_the_termination_message_is_not_written_there() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("termination-log");
        let end = hand_back(
            Err(PodError::Prepare {
                what: "long",
                reason: "x".repeat(TERMINATION_LOG_MAX),
            }),
            &PodOutput::default(),
            &log,
        );
        assert!(end.line.len() > TERMINATION_LOG_MAX);
        assert!(!log.exists());
    }

    #[test]
    fn refusals_are_named_with_what_the_destination_said() {
        let err = PodError::Push {
            line: "butler/task-t3".into(),
            push_ref: "refs/heads/butler/tasks/j".into(),
            destination: "https://host/o/r.git".into(),
            source: GitError::HookRejected {
                hook: Some("pre-receive".into()),
                output_tail: "remote: no pushes today\n".into(),
            },
        };
        let text = err.to_string();
        assert!(text.contains("pre-receive"), "{text}");
        assert!(text.contains("no pushes today"), "{text}");
        assert!(text.contains("refs/heads/butler/tasks/j"), "{text}");
    }

    #[test]
    fn the_pods_variables_never_reach_an_agent_even_when_allowed() {
        let parent: Vec<(OsString, OsString)> = [
            (CONTRACT_VAR, "{}"),
            (DESTINATION_VAR, "https://bot:tok@host/r.git"),
            (BASE_VAR, "abc"),
            (BASE_REF_VAR, "refs/heads/butler/base/x"),
            (PUSH_REF_VAR, "refs/heads/butler/tasks/x"),
            (CREDENTIALS_VAR, "/var/run/butler/push"),
            (TERMINATION_LOG_VAR, "/dev/termination-log"),
            ("PATH", "/usr/bin"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let policy = EnvPolicy {
            home: HomeChoice::Isolated("/tmp/agent-home".into()),
            allow: vec![
                "BUTLER_*".into(),
                "BUTLER_TASK_*".into(),
                CONTRACT_VAR.into(),
                CREDENTIALS_VAR.into(),
            ],
            git_identity: GitIdentity::default(),
        };
        let env = agent_env(&parent, &policy, &AgentEnvNeeds::default());
        let names: Vec<String> = env
            .vars()
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().any(|n| n == "PATH"), "{names:?}");
        assert!(names.iter().all(|n| !n.starts_with("BUTLER_")), "{names:?}");
    }
}
