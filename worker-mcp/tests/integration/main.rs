//! The worker's integration tests, in one test binary: each module was a file
//! of its own in `tests/`, its own binary linking every dependency again.
//! `cargo test -p butler-worker --test integration <module>::` runs one module's tests.
//!
//! The modules share this process, and none changes process-wide state (the environment, the
//! current directory, signal dispositions, a `prctl`, seccomp or Landlock on itself): what is
//! confined or supervised runs as a child process.

mod gitea_backend;

mod egress_proxy;
mod git_loss;
mod git_worker;
mod gitea_client;
mod gitea_errors;
mod gitea_select;
mod module_graph;
mod secret_additions;
mod supervise;
