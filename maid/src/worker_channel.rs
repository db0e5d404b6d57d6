//! How the restricted worker MCP, started by the agent inside its sandbox, gets its task and
//! hands back the agent's notes without ever opening the ledger: the Maid writes the Task
//! Contract to `<task dir>/task.json` (read-only to the agent), the worker MCP appends notes to
//! `<agent dir>/notes.jsonl` (the agent's writable directory), and after each attempt the Maid
//! takes them into the ledger ([`store_notes`]).

use std::path::{Path, PathBuf};

use butler_worker::agent_notes::take_notes;
use butler_worker::ledger::Ledger;

use crate::agent::WorkerMcpCommand;
use crate::contract::{TaskContract, TaskId};
use crate::error::MaidError;

/// The files of one task's channel.
#[derive(Debug, Clone)]
pub(crate) struct WorkerChannel {
    task_file: PathBuf,
    notes_file: PathBuf,
}

impl WorkerChannel {
    pub(crate) fn new(task_dir: &Path, agent_dir: &Path) -> Self {
        Self {
            task_file: task_dir.join("task.json"),
            notes_file: agent_dir.join("notes.jsonl"),
        }
    }

    /// Writes the contract for the worker MCP to read.
    pub(crate) fn write_task(&self, contract: &TaskContract) -> Result<(), MaidError> {
        let text = serde_json::to_string_pretty(contract).expect("contracts always serialise");
        std::fs::write(&self.task_file, text)
            .map_err(|e| MaidError::io("writing", &self.task_file, e))
    }

    /// `base` with `--task-file <file> --notes <file>` appended.
    pub(crate) fn command(&self, base: &WorkerMcpCommand) -> WorkerMcpCommand {
        let mut cmd = base.clone();
        cmd.args.extend([
            "--task-file".to_owned(),
            self.task_file.to_string_lossy().into_owned(),
            "--notes".to_owned(),
            self.notes_file.to_string_lossy().into_owned(),
        ]);
        cmd
    }

    /// Moves the notes written since the last call into the ledger.
    pub(crate) fn store_notes(&self, ledger: &Ledger, task: &TaskId) -> Result<(), MaidError> {
        let notes = take_notes(&self.notes_file)
            .map_err(|e| MaidError::io("reading", &self.notes_file, e))?;
        for (kind, text) in notes {
            ledger.add_task_note(task, kind, &text)?;
        }
        Ok(())
    }
}
