//! The sandbox every agent and every verify command runs in: a Landlock ruleset applied by a
//! small helper mode of Butler's program, `butler sandbox-exec`, whose second stage restricts
//! itself and then `exec`s the command (Butler itself is never confined), under the helper's first stage, a reaper that ends whatever the command leaves
//! running ([`crate::process::reaper`]) — also when the sandbox is off.
//!
//! - [`Policy`]: what one command may do (read everywhere but the credential stores and
//!   Butler's own directories ([`deny_read`]) and `/dev`; write only its trees and the device
//!   files; TCP by port, or to the task's egress proxy only, see [`crate::egress`]), written by
//!   the Maid as JSON for the helper, which carves the read and write rules around the denied
//!   paths (`carve`).
//! - [`helper_main`]: the helper itself (parses its arguments; the reaper; restricts, reports,
//!   `exec`s); [`HelperRun`] builds its command line.
//! - [`KernelProbe`]: whether the kernel offers Landlock, asked before a task starts.
//! - [`syscalls`]: the seccomp filter the second stage installs and the supervisor in the
//!   first stage that answers what it hands over (the one module with unsafe code).
//! - [`SandboxReport`]: what the evidence says the sandbox did, with the refusals found in the
//!   command's output ([`scan_refusals`]).

mod carve;
pub mod deny_read;
mod helper;
mod landlock_rules;
mod policy;
mod refusals;
mod report;
pub mod syscalls;

pub use helper::{
    DEFAULT_GRACE, EXIT_EXEC_FAILED, EXIT_SANDBOX_FAILED, HELPER_SUBCOMMAND, HelperReport,
    HelperRun, helper_main,
};
pub use landlock_rules::{Enforcement, Restricted, kernel_abi};
pub use policy::{DEVICES, Network, NetworkChoice, NetworkSetting, Policy, SandboxMode};
pub use refusals::{MAX_REFUSALS, scan_refusals};
pub use report::{EgressReport, Refusal, RefusalSource, SandboxReport, SyscallRefusalSeen};

use std::path::PathBuf;

/// What can stop the sandbox from being applied.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox policy `{}` cannot be used: {reason}", path.display())]
    Policy { path: PathBuf, reason: String },
    #[error("the Landlock ruleset could not be applied: {0}")]
    Landlock(String),
}

/// Whether (and how far) the kernel can confine a command. Injected into the Maid, so tests
/// can stand for a kernel without Landlock.
pub trait KernelProbe: Send + Sync + std::fmt::Debug {
    /// The Landlock ABI the kernel offers (see [`kernel_abi`]), `None` without Landlock.
    fn landlock_abi(&self) -> Option<u8>;
}

/// The running kernel.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunningKernel;

impl KernelProbe for RunningKernel {
    fn landlock_abi(&self) -> Option<u8> {
        kernel_abi()
    }
}

/// The lowest Landlock ABI with TCP rules.
pub const ABI_WITH_TCP: u8 = 4;

/// Why a command asked to run under `policy` cannot be confined on a kernel offering `abi`
/// (`None` when it can).
pub fn unmet(abi: Option<u8>, network: &Network) -> Option<String> {
    match abi {
        None => Some("the kernel offers no Landlock (not built in, or disabled at boot)".into()),
        Some(n) if network.is_restricted() && n < ABI_WITH_TCP => Some(format!(
            "the network allow-list needs Landlock ABI {ABI_WITH_TCP} (TCP rules); the kernel has ABI {n}"
        )),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_offers_landlock_with_tcp_rules() {
        // The machines Butler is built on run Linux 6.18 (Landlock ABI 7).
        let abi = kernel_abi().expect("Landlock");
        assert!(abi >= 6, "{abi}");
        assert_eq!(unmet(Some(abi), &Network::Open), None);
    }

    #[test]
    fn requirements_name_what_is_missing() {
        let restricted = Network::Restricted {
            connect_tcp: vec![1],
        };
        assert!(
            unmet(None, &Network::Open)
                .expect("unmet")
                .contains("no Landlock")
        );
        assert!(
            unmet(Some(3), &restricted)
                .expect("unmet")
                .contains("ABI 4")
        );
        assert_eq!(unmet(Some(3), &Network::Open), None);
    }
}
