//! The restricted worker MCP: the only MCP server an implementation agent is given
//! (`butler worker-mcp --task-file <contract.json> --notes <notes.jsonl>`, started by the agent
//! over stdio).
//!
//! It offers only what an implementation agent needs: read its task, leave a note, save a
//! summary of its progress, report that it is blocked. It runs as the agent's child, inside the
//! agent's sandbox, so it never opens the ledger: it reads the task from the contract file the
//! Maid wrote and appends notes to the notes file ([`crate::agent_notes`]), which the Maid
//! stores in the ledger after each attempt and relays with its own credentials. There are no git
//! tools, no `run_implement`, no issue operations and no token here. On start it leaves a
//! `connected` note, so the Maid can tell that the agent really reached it (goose silently runs
//! without an extension that failed to start).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent_notes::{MAX_NOTE_CHARS, append_note};
use crate::contract::{CommandCheck, FileCheck, NoteKind, TaskContract, TaskId};

const INSTRUCTIONS: &str = "Tools of the Butler task you are working on. Read the task with \
read_task. You cannot save work here and you must not use git: edit the files, and the Maid \
records your work when you finish. Leave notes for the task's issue with leave_note, a summary \
of what is done with save_progress, and use report_blocked when you cannot go on.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoteArgs {
    /// The note, in plain words (at most 4000 characters).
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ProgressArgs {
    /// What is done so far and what is left (at most 4000 characters).
    summary: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BlockedArgs {
    /// Why you cannot go on, and what you would need (at most 4000 characters).
    reason: String,
}

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = (*rmcp::handler::server::common::schema_for_type::<T>()).clone();
    schema.remove("$schema");
    schema.remove("title");
    Arc::new(schema)
}

fn parse<T: DeserializeOwned>(raw: JsonObject) -> Result<T, String> {
    serde_json::from_value(Value::Object(raw)).map_err(|e| {
        let mut reason = format!("invalid arguments: {e}");
        reason.truncate(300);
        reason
    })
}

/// What `read_task` shows the agent: its implementation task, typed from the stored contract.
#[derive(Debug, Serialize)]
struct TaskBrief<'a> {
    task_id: &'a TaskId,
    goal: &'a str,
    spec: &'a str,
    target_paths: &'a [String],
    test_commands: &'a [CommandCheck],
    file_checks: &'a [FileCheck],
    rules: &'static str,
}

const RULES: &str = "Edit only the target paths. Do not use git (no commit, add, checkout, switch, \
reset, stash, config); the Maid records your work.";

impl<'a> TaskBrief<'a> {
    fn of(contract: &'a TaskContract) -> Result<TaskBrief<'a>, String> {
        let target = contract.implement().ok_or_else(|| {
            format!(
                "task {} is a `{}` task, not an implementation",
                contract.task_id,
                contract.intent()
            )
        })?;
        Ok(TaskBrief {
            task_id: &contract.task_id,
            goal: &target.goal,
            spec: &target.spec,
            target_paths: &target.target_paths,
            test_commands: &contract.success_criteria.commands,
            file_checks: &contract.success_criteria.file_checks,
            rules: RULES,
        })
    }
}

fn reply(outcome: Result<Value, String>) -> CallToolResult {
    match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

/// The restricted server for one task.
#[derive(Clone)]
pub(crate) struct AgentMcp {
    /// The Task Contract as the Maid wrote it.
    contract: Arc<TaskContract>,
    notes: PathBuf,
    tool_router: ToolRouter<Self>,
}

impl AgentMcp {
    /// Reads the task's contract (typed: a file that is not a Task Contract is refused) and
    /// leaves the `connected` note.
    pub(crate) fn start(task_file: &Path, notes: &Path) -> Result<AgentMcp, std::io::Error> {
        let text = std::fs::read_to_string(task_file)?;
        let contract: TaskContract = serde_json::from_str(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} holds no task: {e}", task_file.display()),
            )
        })?;
        append_note(notes, NoteKind::Connected, "worker MCP started")?;
        Ok(AgentMcp {
            contract: Arc::new(contract),
            notes: notes.to_path_buf(),
            tool_router: Self::tool_router(),
        })
    }

    fn note(&self, kind: NoteKind, text: &str) -> Result<Value, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("the text is empty".into());
        }
        let len = text.chars().count();
        if len > MAX_NOTE_CHARS {
            return Err(format!(
                "the text has {len} characters; at most {MAX_NOTE_CHARS} are accepted"
            ));
        }
        append_note(&self.notes, kind, text).map_err(|e| format!("the note was not kept: {e}"))?;
        Ok(json!({ "status": "ok", "kind": kind.as_str() }))
    }

    fn read(&self) -> Result<Value, String> {
        let brief = TaskBrief::of(&self.contract)?;
        Ok(serde_json::to_value(brief).expect("a task brief always serialises"))
    }
}

#[tool_router]
impl AgentMcp {
    /// Reads your task: goal, spec, the paths you may change, and how it will be checked.
    #[tool(input_schema = schema::<NoArgs>(), annotations(read_only_hint = true))]
    async fn read_task(&self, raw: JsonObject) -> CallToolResult {
        reply(parse::<NoArgs>(raw).and_then(|_| self.read()))
    }

    /// Leaves a note on the task (passed on to its issue).
    #[tool(input_schema = schema::<NoteArgs>(), annotations(read_only_hint = false, destructive_hint = false))]
    async fn leave_note(&self, raw: JsonObject) -> CallToolResult {
        reply(parse::<NoteArgs>(raw).and_then(|a| self.note(NoteKind::Note, &a.text)))
    }

    /// Saves a summary of your progress. Your files are saved by the Maid, not by this tool.
    #[tool(input_schema = schema::<ProgressArgs>(), annotations(read_only_hint = false, destructive_hint = false))]
    async fn save_progress(&self, raw: JsonObject) -> CallToolResult {
        reply(parse::<ProgressArgs>(raw).and_then(|a| self.note(NoteKind::Progress, &a.summary)))
    }

    /// Reports that you cannot go on, and why. Then stop.
    #[tool(input_schema = schema::<BlockedArgs>(), annotations(read_only_hint = false, destructive_hint = false))]
    async fn report_blocked(&self, raw: JsonObject) -> CallToolResult {
        reply(parse::<BlockedArgs>(raw).and_then(|a| self.note(NoteKind::Blocked, &a.reason)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AgentMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "butler-worker",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Serves the restricted worker MCP for the task in `task_file` on stdin/stdout until the agent
/// disconnects; notes go to `notes`.
pub async fn serve_agent_mcp(task_file: PathBuf, notes: PathBuf) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let server = crate::offload::blocking(move || AgentMcp::start(&task_file, &notes))
        .await
        .map_err(std::io::Error::other)??;
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::contract::{ImplementRequest, IntentName, OperationTarget, Work};
    use crate::time::Timestamp;

    fn contract(id: TaskId) -> TaskContract {
        let request = ImplementRequest {
            goal: "Add greet".into(),
            target_paths: vec!["src/".into()],
            ..Default::default()
        };
        let at = Timestamp::parse("2026-04-15T10:00:00+09:00").expect("time");
        TaskContract::from_request(request, id, "brain", at).expect("valid")
    }

    #[test]
    fn only_the_four_task_tools_are_offered_and_start_is_noted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let task = dir.path().join("task.json");
        let notes = dir.path().join("notes.jsonl");
        std::fs::write(&task, "{}").expect("write");
        assert!(AgentMcp::start(&task, &notes).is_err(), "no task");
        let c = contract(TaskId::new("t1").expect("id"));
        std::fs::write(&task, serde_json::to_string(&c).expect("json")).expect("write");
        let server = AgentMcp::start(&task, &notes).expect("start");
        let mut names: Vec<String> = server
            .tool_router
            .list_all()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["leave_note", "read_task", "report_blocked", "save_progress"]
        );
        assert_eq!(server.read().expect("read")["target_paths"][0], "src/");
        let long = "x".repeat(MAX_NOTE_CHARS + 1);
        assert!(server.note(NoteKind::Note, &long).is_err());
        server.note(NoteKind::Note, "hi").expect("noted");
        let taken = crate::agent_notes::take_notes(&notes).expect("notes");
        assert_eq!(
            taken,
            vec![
                (NoteKind::Connected, "worker MCP started".to_owned()),
                (NoteKind::Note, "hi".to_owned())
            ]
        );
    }

    #[test]
    fn a_task_that_is_not_an_implementation_is_not_shown_as_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let task = dir.path().join("task.json");
        let notes = dir.path().join("notes.jsonl");
        let c = TaskContract {
            work: Work::Operation {
                intent: IntentName::new("restart").expect("name"),
                target: OperationTarget(BTreeMap::new()),
            },
            ..contract(TaskId::new("t1").expect("id"))
        };
        std::fs::write(&task, serde_json::to_string(&c).expect("json")).expect("write");
        let server = AgentMcp::start(&task, &notes).expect("start");
        let err = server.read().expect_err("not an implementation");
        assert!(err.contains("`restart`"), "{err}");
    }
}
