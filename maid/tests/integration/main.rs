//! The Maid's integration tests, in one test binary: each module was a file
//! of its own in `tests/`, its own binary linking every dependency again.
//! `cargo test -p butler-maid --test integration <module>::` runs one module's tests.
//!
//! The modules share this process, and none changes process-wide state (the environment, the
//! current directory, signal dispositions, a `prctl`, seccomp or Landlock on itself): what is
//! confined or supervised runs as a child process.

mod fake_agent;
mod module_graph;
mod sandbox;
mod syscall_filter;
mod task;
