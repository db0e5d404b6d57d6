//! [8] The attempt's evidence: the agent's notes taken from the worker MCP's channel into the
//! ledger, the sandbox's report, what the agent and the verify commands left running (ended by
//! the helper), and the [`AttemptEvidence`] stored with the attempt.

use butler_worker::ledger::TaskNote;

use super::TaskRun;
use super::attempt::AttemptStart;
use super::launch::AgentRun;
use super::record::Recorded;
use super::verify::Checked;
use super::workspace::Workspace;
use crate::contract::{AgentNote, AttemptEvidence, DirectGit, DirectGitFinding, NoteKind};
use crate::error::MaidError;
use crate::sandbox::TaskSandbox;

/// The evidence line when the agent never started the worker MCP.
pub(crate) const WORKER_MCP_NOT_REACHED: &str = "worker MCP not reached";

impl TaskRun<'_> {
    /// Builds the attempt's evidence and stores it in the ledger.
    pub(super) async fn evidence(
        &self,
        workspace: &Workspace,
        start: AttemptStart,
        run: AgentRun,
        findings: Vec<DirectGitFinding>,
        recorded: Recorded,
        checked: Checked,
    ) -> Result<AttemptEvidence, MaidError> {
        let notes = self.take_notes(workspace, start.note_mark).await?;
        let Checked {
            verification: verify,
            confined: verify_confined,
            egress: verify_egress,
            ..
        } = checked;
        let verify_outputs: Vec<&str> = verify
            .tests
            .iter()
            .map(|t| t.output_tail.as_str())
            .collect();
        let sandbox_report = workspace.sandbox.report(
            run.confined.as_ref(),
            verify_confined.as_ref(),
            &run.output,
            &verify_outputs,
            (run.egress.clone(), verify_egress),
        );
        let leftovers = TaskSandbox::leftovers(run.confined.as_ref(), verify_confined.as_ref());
        let worker_mcp_reached = notes.iter().any(|n| n.kind == NoteKind::Connected);
        let mut item = AttemptEvidence {
            attempt: start.attempt,
            agent_exit: run.ending,
            duration_ms: u64::try_from(run.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            changed_files: recorded.changed,
            direct_git: DirectGit::from_findings(findings),
            verify,
            record: recorded.record,
            worker_mcp_reached,
            agent_notes: notes
                .iter()
                .filter(|n| n.kind != NoteKind::Connected)
                .map(|n| AgentNote {
                    kind: n.kind,
                    text: n.body.clone(),
                })
                .collect(),
            // Only an agent with an MCP client can miss the worker MCP.
            warnings: if worker_mcp_reached || !workspace.agent.has_mcp_client() {
                Vec::new()
            } else {
                vec![WORKER_MCP_NOT_REACHED.to_owned()]
            },
            sandbox: Some(sandbox_report),
            activity: (!run.activity.is_empty()).then_some(run.activity),
            leftovers,
        };
        if let Some(reason) = self.stop_reason() {
            item.warnings.push(reason);
        }
        let stored = item.clone();
        self.blocking(move |s| s.with_ledger(|l| Ok(l.finish_attempt(s.id(), &stored)?)))
            .await?;
        Ok(item)
    }

    /// Why the task was stopped, when its process stopped it (it is ending).
    fn stop_reason(&self) -> Option<String> {
        let reason = self.shared.ctx.stop.reason()?;
        self.cancel
            .is_cancelled()
            .then(|| format!("stopped: {reason}; the agent's process group was ended"))
    }

    /// The notes the agent left through the worker MCP during the attempt, moved into the
    /// ledger first.
    async fn take_notes(
        &self,
        workspace: &Workspace,
        note_mark: i64,
    ) -> Result<Vec<TaskNote>, MaidError> {
        let channel = workspace.channel.clone();
        self.blocking(move |s| {
            s.with_ledger(|l| {
                channel.store_notes(l, s.id())?;
                Ok(l.task_notes(s.id(), note_mark)?)
            })
        })
        .await
    }
}
