//! Capabilities: intents that need more than steps (the seed's handlers with their declared
//! intents), written in code and registered at the edge, so the engine never depends on any of
//! them. A capability says what it would do ([`Capability::plan`], before anything runs: the
//! approval gate reads it) and then does it ([`Capability::run`]), reporting each action as
//! step evidence.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::contract::{DelegationMode, ResultContract, StepEvidence, TaskContract};

/// A boxed future a capability returns (the trait stays object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Progress for MCP notifications: a one-line message and the fraction of the work done.
pub type Progress = Arc<dyn Fn(String, f64) + Send + Sync>;

/// `progress` for one part of the work, which spans `from`..`to` of the whole and reports its
/// own fractions from 0.0 to 1.0: a capability's run between the runner's "running" and
/// "verifying", so that its first report does not fall back below the runner's.
pub(crate) fn within(progress: &Progress, from: f64, to: f64) -> Progress {
    let progress = progress.clone();
    Arc::new(move |message, fraction| {
        progress(message, from + (to - from) * fraction.clamp(0.0, 1.0));
    })
}

/// What a capability would do for a contract, decided before anything runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What exactly would happen, in one line (shown to the user when approval is needed).
    pub operation: String,
    /// The particulars, one line each (the records to share, the destination).
    pub details: Vec<String>,
    /// What an approval of this plan is bound to, in no language (the message, the
    /// destination, the commits and files by id): `operation` and `details` are worded in the
    /// asking session's language, and a session in another may relay the approval.
    pub binds: Vec<String>,
    /// The operations it performs, by name (`git_commit`, `git_push`): any of them in the
    /// contract's `require_approval_for` needs the user's approval first.
    pub operations: Vec<&'static str>,
    /// It needs the user's approval every time, whatever the contract says (`git_push`).
    pub always_approve: bool,
}

/// One run of a capability.
pub struct CapabilityCall {
    pub contract: TaskContract,
    pub progress: Progress,
    pub cancel: CancellationToken,
}

/// What a capability did.
#[derive(Debug, Clone, PartialEq)]
pub enum CapabilityOutcome {
    /// Its actions, one evidence entry each, and its answer for the Brain.
    Done {
        steps: Vec<StepEvidence>,
        output: Option<Value>,
    },
    /// It ran as a task of its own (created and stored by itself), with this result.
    OwnTask(ResultContract),
}

/// Why a capability could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapabilityError {
    /// A value of the contract does not fit (the field, as a contract path, and why).
    #[error("`{field}`: {reason}")]
    Input { field: String, reason: String },
    /// The project's state does not allow it now; the hint names what to do first.
    #[error("{reason}")]
    Refused { reason: String, hint: String },
    /// It failed in a way the Brain cannot fix (details are logged, not shown).
    #[error("{0}")]
    Failed(String),
}

/// The slim contract of one intent, for `get_skill_usage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    pub intent: String,
    /// What it does, in a sentence.
    pub summary: String,
    pub delegation_mode: DelegationMode,
    /// The target's names and what each means (`{}`: no target).
    pub target: Vec<(String, String)>,
    /// When it waits for the user's approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// A contract to copy.
    pub example: Value,
}

/// An intent handler in code.
pub trait Capability: Send + Sync {
    /// Its name (`git`, `implement`, `context`).
    fn name(&self) -> &'static str;
    /// The intents it handles.
    fn intents(&self) -> &'static [&'static str];
    /// The slim contract of one of its intents.
    fn usage(&self, intent: &str) -> Usage;
    /// What it would do for `contract`, without doing it.
    fn plan<'a>(
        &'a self,
        contract: &'a TaskContract,
    ) -> BoxFuture<'a, Result<Plan, CapabilityError>>;
    /// Does it (the gate has been passed).
    fn run(
        &self,
        call: CapabilityCall,
    ) -> BoxFuture<'_, Result<CapabilityOutcome, CapabilityError>>;
    /// It creates and stores its own task (the ImplementMaid does): the engine creates none
    /// and asks no approval for it.
    fn owns_task(&self) -> bool {
        false
    }
}

/// The capabilities of one Butler, registered at the edge.
#[derive(Clone, Default)]
pub struct Registry {
    capabilities: Vec<Arc<dyn Capability>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.capabilities.iter().map(|c| c.name()))
            .finish()
    }
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a capability; an intent already handled stays with the first one registered.
    pub fn with(mut self, capability: impl Capability + 'static) -> Self {
        self.capabilities.push(Arc::new(capability));
        self
    }

    /// The capability that handles `intent`.
    pub(crate) fn find(&self, intent: &str) -> Option<Arc<dyn Capability>> {
        self.capabilities
            .iter()
            .find(|c| c.intents().contains(&intent))
            .cloned()
    }

    /// Every registered capability, in order.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Arc<dyn Capability>> {
        self.capabilities.iter()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn a_part_reports_within_its_span_of_the_whole() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let whole: Progress = {
            let seen = seen.clone();
            Arc::new(move |message, fraction| {
                seen.lock().expect("seen").push((message, fraction));
            })
        };
        let part = within(&whole, 0.1, 0.9);
        for fraction in [0.0, 0.5, 1.0, 2.0, -1.0] {
            part("step".into(), fraction);
        }
        let fractions: Vec<f64> = seen.lock().expect("seen").iter().map(|s| s.1).collect();
        assert_eq!(fractions, [0.1, 0.5, 0.9, 0.9, 0.1]);
    }
}
