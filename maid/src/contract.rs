//! The Task and Result contracts live in the foundation (`butler_worker::contract`), where the
//! ledger, the agents' worker MCP and delegated operations share them; the Maid's modules name
//! them through this path.

pub use butler_worker::contract::*;
