//! Butler's test kit: what every test and benchmark stands on.
//!
//! - [`World`]: a hermetic repository world in a temp dir (a project, a bare shared destination,
//!   more clones), with git's global and system configuration shut out, `HOME` and
//!   `XDG_CONFIG_HOME` inside the temp dir, a fixed identity, fixed dates and `LC_ALL=C`.
//! - [`gitea`]: a wiremock Gitea — scenario builders ([`GiteaMock::unauthorized`], …), fixtures
//!   shaped like Gitea 1.27's schemas, and [`LiveGitea`], an in-memory Gitea that keeps state.
//! - [`kube`]: a stand-in Kubernetes API server ([`kube::KubeStandIn`]) speaking the pinned API
//!   subset, whose kubelet emulation runs a Job's pod as a local child process.
//! - [`fake_agent()`]: the path of the scripted fake agent (this package's `fake-agent` binary),
//!   found among Cargo's own build artifacts.
//!
//! The kit depends on no Butler crate, so a crate's unit tests can use it too; the Brain's MCP
//! client is the orchestrator's (`butler_orchestrator::client`).
#![allow(
    clippy::disallowed_methods,
    reason = "the kit is the user's side of the world: it runs git and test programs directly"
)]

pub mod fake_agent;
pub mod gitea;
pub mod kube;
pub mod module_graph;
mod world;

pub use fake_agent::fake_agent;
pub use gitea::{GiteaMock, LiveGitea};
pub use world::{AUTHOR_EMAIL, AUTHOR_NAME, BASE_DATE, World, write_executable, write_file};
