//! Butler's Brain-facing layer: the MCP server with the `work_*` / `issue_*` vocabulary and the
//! git interception hook.

pub mod equivalents;
pub mod hook;
