//! Delegated operations (the seeds' task API): the Brain hands Butler a typed Task Contract
//! (what to achieve, on what, how success is judged), Butler runs it without waking the Brain
//! and answers with a Result Contract and its evidence.
//!
//! Who runs a contract: a capability in code for its intent ([`capability`]: a trait and a
//! registry, filled at the edge — the engine depends on none of them), else a procedure the
//! Brain taught (its steps are the contract's, [`crate::contract::procedure`]), found by intent
//! and target signature ([`crate::contract::signature`]) in the ledger, where it goes from
//! `candidate` to `active` after the configured verified runs and to `deprecated` when
//! replaced. Unknown with `teach_if_unknown`: the task waits for `teach`.
//!
//! - [`engine`]: submit, teach, approve, cancel, status — the public face.
//! - [`runner`]: one task's run: gates, steps, verifiers, lifecycle, evidence.
//! - [`handler`]: who runs a task and where its run starts, as the engine hands it to the runner.
//! - [`judge`]: what a step's command starts and which need approval every time.
//! - [`exec`] and [`mcp_call`]: one step, under the supervisor.
//! - [`confine`]: the sandbox each step's program runs in.
//! - [`running`]: the tasks running in this process, for cancellation.
//! - [`skills`]: `list_skills` and `get_skill_usage`.

pub(crate) mod capability;
pub mod confine;
pub(crate) mod engine;
pub mod error;
pub mod exec;
mod handler;
pub(crate) mod judge;
pub(crate) mod mcp_call;
mod runner;
pub mod running;
pub mod skills;

pub use capability::{
    BoxFuture, Capability, CapabilityCall, CapabilityError, CapabilityOutcome, Plan, Progress,
    Registry, Usage,
};
pub use engine::{
    Approved, Decision, Engine, EngineParts, ProcedureSummary, TaskView, Taught, TeachRequest,
};
pub use error::OpsError;
pub use judge::{
    Active, Assessment, CommandJudge, DestructiveCommands, GitVerdict, Reading, assess,
    placeholder_misuse,
};
// What a procedure is made of is the contract's; the judge reads its command lines.
pub use crate::contract::{CommandLine, Step, parse_steps};
pub use skills::{Skill, SkillUsage};
