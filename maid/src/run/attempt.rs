//! [2]–[3] The start of an attempt: its row in the ledger, the baseline of the worktree's git
//! and of the Brain's tree (to find what the agent did to them), and its prompt.

use butler_worker::git::Baseline;

use super::TaskRun;
use super::inspect::BrainState;
use super::modes::StateModes;
use super::workspace::Workspace;
use crate::contract::AttemptEvidence;
use crate::error::MaidError;
use crate::prompt::{WorkerTools, first_prompt, retry_prompt};

/// What an attempt started from.
pub(super) struct AttemptStart {
    pub attempt: u32,
    /// The worktree's git before the agent ran.
    pub baseline: Baseline,
    /// The Brain's tree before the agent ran.
    pub brain: BrainState,
    /// The modes of Butler's state before the agent ran.
    pub modes: StateModes,
    /// The last note id before the attempt: the attempt's notes come after it.
    pub note_mark: i64,
}

impl TaskRun<'_> {
    /// [2] Begins the attempt in the ledger and takes its baselines.
    pub(super) async fn begin_attempt(
        &self,
        workspace: &Workspace,
        attempt: u32,
    ) -> Result<AttemptStart, MaidError> {
        let wt = workspace.wt.clone();
        self.blocking(move |s| {
            let note_mark = s.with_ledger(|l| {
                l.begin_attempt(s.id(), attempt)?;
                Ok(l.last_note_id()?)
            })?;
            Ok(AttemptStart {
                attempt,
                baseline: wt.baseline(&format!("refs/heads/{}", s.id().branch()))?,
                brain: BrainState::take(&s.main, &s.worktrees)?,
                modes: s.state_modes(),
                note_mark,
            })
        })
        .await
    }

    /// [3] The first prompt, or the compact retry prompt that says what failed last time.
    pub(super) fn prompt(&self, attempt: u32, last: Option<&AttemptEvidence>) -> String {
        let tools = WorkerTools::default();
        match last {
            None => first_prompt(self.contract(), &tools),
            Some(last) => retry_prompt(self.contract(), &tools, attempt, last),
        }
    }
}
