//! The ImplementMaid: runs an implementation agent on a task branch under supervision.
//!
//! The contracts, the agent's environment, the agent adapters, prompts, scope, verification, and
//! the task sequence that ties them to the git worker and the ledger. This crate spawns no git:
//! every git operation goes through `butler_worker::git::TaskGit`; agents and verify commands run
//! under the worker layer's supervisor (`butler_worker::process`).

#![warn(unreachable_pub)]

pub mod activity;
pub mod agent;
pub mod cluster;
pub mod contract;
pub mod env;
mod error;
mod prompt;
mod run;
pub mod runner;
mod sandbox;
mod scope;
pub mod summary;
mod verify;
mod worker_channel;

pub use butler_worker::process::{ChildSpec, Ending, Limits, Stagnation, Supervised, supervise};
pub use contract::{
    AgentKind, AgentNote, AttemptEvidence, ContractError, DirectGit, DirectGitFinding,
    ImplementEvidence, ImplementRequest, Outcome, ResultContract, TaskContract, TaskId,
    Verification,
};
pub use error::MaidError;
pub use run::{
    Accepted, MaidContext, Progress, TaskStop, accept, discard, mark_interrupted, prepare_task,
    run_task,
};
pub use sandbox::SandboxSettings;
