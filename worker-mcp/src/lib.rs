//! Butler's worker layer: everything that touches git, the ledger (SQLite) and issue backends,
//! and the foundation every layer stands on: the Task and Result contracts, the record
//! protocol, time, and the engine of delegated operations ([`ops`]).
//!
//! It knows nothing of the Brain or of MCP sessions; the orchestrator and the ImplementMaid call
//! it. Only this crate spawns git, and every child process of Butler starts in [`process`].

#![warn(unreachable_pub)]

pub mod agent_mcp;
pub mod agent_notes;
pub mod config;
pub mod contract;
pub mod egress;
mod file_lock;
pub mod git;
pub mod http_client;
pub mod issues;
pub mod ledger;
pub mod nofollow;
pub mod offload;
pub mod ops;
pub mod plain;
pub mod process;
pub mod record;
pub mod remote_url;
pub mod sandbox;
pub mod secrets;
pub mod time;
pub mod tool_config;
