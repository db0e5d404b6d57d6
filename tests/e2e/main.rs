//! Butler end to end, in one test binary: every integration test of the `butler` package is a
//! module here, so the bundled SQLite, libgit2, rustls, hyper, rmcp and kube are linked once,
//! not once per file. `cargo test -p butler --test e2e <module>::` runs one module's tests.
//!
//! The modules share this process: none changes process-wide state (the environment, the
//! current directory, signal dispositions, a `prctl` or Landlock on itself) — Butler and its
//! helpers run as child processes, each with the state it needs. Insta names the snapshots in
//! `snapshots/` after the module path (`e2e__<module>__<name>.snap`).

mod common;

mod agent_activity;
mod agent_leftovers;
mod agent_lifetime;
mod bad_input;
mod child_env;
mod conflicts;
mod crash_safety;
mod delegate;
mod delegate_confined;
mod egress;
mod finish_auto;
mod hook_binary;
mod hostile_worktree;
mod http;
mod implement;
mod implement_guards;
mod implement_mcp;
mod implement_parallel;
mod implement_terminal;
mod install_path;
mod issue_backends;
mod japanese;
mod kubernetes;
mod lines;
mod one_identity;
mod oplog;
mod proposed_messages;
mod protocol;
mod repo_shapes;
mod sandbox;
mod secrets;
mod task_run;
mod tool_config;
mod tool_surface;
mod tracker_hostile;
mod trust;
mod work_record;
mod work_states;
mod work_vcs;
mod work_vcs_spellings;
