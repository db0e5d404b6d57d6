//! Child processes: the one way Butler runs another program.
//!
//! Every child — git and the hooks it runs, agents, verify commands, `doctor`'s probes, the
//! server a client starts — is described by a [`ChildSpec`] whose environment is a [`ChildEnv`]
//! built on purpose from the allow-lists in [`env`] (Butler's secrets never pass), and runs
//! under [`supervise`]: a process group of its own and no controlling terminal (a session of
//! its own when Butler has a terminal), stdin fed then closed, output
//! captured within bounds ([`CapturedOutput`]), a time limit, optional stagnation detection and
//! cancellation, an optional observer of its stdout lines that may stop it ([`LineObserver`],
//! [`supervise_observed`]: the ImplementMaid's loop watch), the whole group taken down at the end (TERM, grace, KILL), and an [`Ending`]
//! saying how it ended. Synchronous callers use [`run_blocking`]; a child Butler talks to over
//! its pipes (an MCP server) is started with [`converse`]. Only `spawn.rs` creates processes
//! (`clippy.toml` forbids `Command::new` elsewhere), but for the sandbox helper, which starts
//! the one command it runs under [`reaper`]: a child subreaper that ends everything the command
//! left (double forks and `setsid` included) before it exits.

mod blocking;
pub(crate) mod capture;
pub mod env;
mod fingerprint;
mod group;
pub(crate) mod pidfd;
pub mod reaper;
mod spawn;
mod supervise;

pub use blocking::run_blocking;
pub use capture::{CapturedOutput, tail_of};
pub use env::ChildEnv;
pub use spawn::{ChildSpec, is_executable, run_attended};
pub use supervise::{
    Conversation, Ending, Keep, Limits, LineObserver, LineSeen, Stagnation, Supervised, Verdict,
    converse, supervise, supervise_observed,
};
