//! Where a task runs: here, in a worktree beside the Brain's tree (the [`crate::run`] module),
//! or in a Kubernetes Job (`[runner] kind = "kubernetes"`: [`crate::cluster`] for the Job,
//! `run::remote` for the orchestrator's side). A task run elsewhere runs the very same
//! [`crate::run::run_task`] inside its pod (`pod`: the in-pod command's work) and talks back
//! through its log ([`wire`]).

pub mod pod;
pub use crate::run::wire;
