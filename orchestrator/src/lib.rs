//! Butler's Brain-facing layer: the MCP server with the `work_*` / `issue_*` vocabulary and the
//! git interception hook.

pub mod args;
pub mod auto_finish;
pub mod backend;
pub mod catalogue;
pub mod client;
pub mod delegate;
pub mod envelope;
pub mod equivalents;
pub mod error;
pub mod hook;
pub mod http;
pub mod implement;
pub mod install;
pub mod instructions;
pub mod issue_body;
pub mod issue_ops;
pub mod server;
pub mod session;
pub mod tool;
pub mod transport;
pub mod vcs_policy;
pub mod work;

#[cfg(test)]
mod floors;
