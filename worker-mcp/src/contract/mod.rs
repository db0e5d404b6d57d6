//! The Task Contract (what the Brain asked for, validated at the edge) and the Result Contract
//! (what happened, with its evidence): the typed agreement between the Brain and Butler.
//!
//! One set of types serves every layer: the ImplementMaid runs a contract, the ledger stores it
//! and reads it back typed, the agents' worker MCP shows it to the agent, and delegated
//! operations build on it. A contract carries its intent and a target typed per intent
//! ([`Work`]): `implement` has its goal, spec and target paths; any other intent (taught
//! procedures) has a flat map of named strings.
//!
//! - [`ids`]: task ids, intent names and record ids.
//! - [`task`]: the Task Contract.
//! - [`validation`]: a `run_implement` request checked once into a Task Contract.
//! - [`result`]: the Result Contract and the task's status.
//! - [`evidence`]: what one attempt did and how the verifiers judged it.
//! - [`operation`]: what a delegated operation did, step by step, and how it was judged.
//! - [`procedure`]: the steps of a procedure the Brain teaches, checked field by field.
//! - [`signature`]: the target signature a procedure is matched by.
//! - [`submission`]: a Task Contract as the Brain submits it, checked field by field.
//! - [`written`]: reading what the Brain writes into types, every wrong field named at once.
//! - [`activity`]: what the agent's own output showed of its work (events, usage).

pub mod activity;
pub(crate) mod evidence;
pub(crate) mod ids;
pub(crate) mod operation;
pub(crate) mod procedure;
pub(crate) mod result;
pub(crate) mod signature;
pub(crate) mod submission;
pub mod task;
pub(crate) mod validation;
pub(crate) mod written;

#[cfg(test)]
mod problems_tests;

pub use activity::{Activity, ActivityCounts, AgentEvent, Cost, TimedEvent, Usage};
pub use evidence::{
    AgentNote, AttemptEvidence, DirectGit, DirectGitFinding, EndedProcess, Ending, FileCheckResult,
    GuardFinding, LeftoverProcess, LeftoverProcesses, NoteKind, StartedBy, Tampering, TestRun,
    Verification,
};
pub use ids::{IntentName, RecordId, RecordIdError, TaskId};
pub use operation::{
    ApprovalRequest, Handler, Needed, OperationChecks, OperationEvidence, ProcedureStatus,
    StepEvidence, StepKind, StepOutcome, StopReason, Stopped,
};
pub use procedure::{CommandLine, Step, parse_steps};
pub use result::{Evidence, ImplementEvidence, Outcome, ResultContract, ResultStatus, TaskStatus};
pub(crate) use signature::Signature;
pub use submission::{FieldProblem, TaskSubmission};
pub use task::{
    AgentKind, CommandCheck, Constraints, DelegationMode, FileCheck, FileExpectation,
    ImplementTarget, OperationTarget, SuccessCriteria, TaskContract, Work,
};
pub use validation::{
    ContractError, DEFAULT_TIMEOUT_S, FileCheckSpec, ImplementRequest, MAX_ATTEMPTS,
    TIMEOUT_BOUNDS_S,
};
