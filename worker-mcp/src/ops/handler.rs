//! Who runs a delegated task and where its run starts: what the engine decides (from the
//! capabilities, the ledger's procedures, an approval) and hands the runner.

use std::sync::Arc;

use super::capability::Capability;
use crate::contract::Handler;
use crate::ledger::ProcedureRow;

/// Who runs a task.
#[derive(Clone)]
pub(super) enum HandlerRef {
    Capability(Arc<dyn Capability>),
    Procedure(ProcedureRow),
}

impl HandlerRef {
    /// The handler as the evidence names it.
    pub(super) fn describe(&self) -> Handler {
        match self {
            HandlerRef::Capability(c) => Handler::Capability {
                name: c.name().to_owned(),
            },
            HandlerRef::Procedure(p) => Handler::Procedure {
                id: p.id,
                signature: p.signature.to_string(),
                status: p.status,
            },
        }
    }
}

/// Where a run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Start {
    /// From the beginning, nothing approved.
    Fresh,
    /// The task-level approval was given: from the beginning.
    TaskApproved,
    /// From step `index` (0-based), whose gate the approval with `fingerprint` opens.
    StepApproved { index: usize, fingerprint: String },
    /// From step `index`, which needs no approval any more.
    Resume { index: usize },
}
