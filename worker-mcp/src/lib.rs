//! Butler's worker layer: everything that touches git, the ledger (SQLite) and issue backends.
//!
//! It knows nothing of the Brain or of MCP sessions; the orchestrator and the ImplementMaid call
//! it. Only this crate spawns git.

pub mod agent_mcp;
pub mod config;
pub mod git;
pub mod issues;
pub mod ledger;
pub mod remote_url;
pub mod secrets;
