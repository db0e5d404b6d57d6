//! Where a task runs: here, in a worktree beside the Brain's tree (the [`crate::run`] module),
//! or in a Kubernetes Job (`kubernetes`), chosen by the user's `[runner]` settings. A task run
//! elsewhere runs the very same [`crate::run::run_task`] inside its pod (`pod`: the in-pod
//! command's work) and talks back through its log (`wire`).

pub mod pod;
pub mod wire;
