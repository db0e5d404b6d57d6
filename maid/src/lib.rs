//! The ImplementMaid: runs an implementation agent on a task branch under supervision.
//!
//! Phase A (this crate so far): the contracts, child supervision, the agent's environment, the
//! agent adapters, prompts, scope, and verification. The task sequence that ties them to git
//! and the ledger comes next.

pub mod agent;
pub mod contract;
pub mod env;
pub mod error;
pub mod output;
pub mod prompt;
pub mod scope;
pub mod supervise;
pub mod task;
pub mod taskgit;
pub mod verify;

pub use contract::{
    AgentKind, AttemptEvidence, ContractError, DirectGit, DirectGitFinding, ImplementRequest,
    Outcome, ResultContract, TaskContract, TaskId, Verification,
};
pub use error::MaidError;
pub use supervise::{ChildSpec, Ending, Limits, Stagnation, Supervised, supervise};
pub use task::{MaidContext, Progress, accept, discard, run_task};
