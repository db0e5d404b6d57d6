//! Builds the Landlock ruleset of a [`Policy`] and restricts the calling thread with it, and
//! probes which Landlock ABI the kernel offers without restricting anything.
//!
//! Only `butler sandbox-exec` calls [`restrict_self`] (then `exec`s the confined program);
//! Butler's own process never does. The restriction is inherited across `fork` and `exec` and
//! cannot be lifted.

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, NetPort,
    PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use serde::{Deserialize, Serialize};

use std::path::{Path, PathBuf};

use super::SandboxError;
use super::carve::{Grant, carve, resolve};
use super::policy::Policy;

/// The ABI whose rights Butler asks for: vetted on Linux 6.18 (ABI 7). Newer rights (UDP at ABI
/// 10, UNIX socket paths at ABI 9) are not handled until they are tested here.
const TARGET: ABI = ABI::V7;

/// How much of the ruleset the kernel enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Enforcement {
    /// Every right the policy handles is enforced.
    Full,
    /// Some rights are enforced (an older kernel lacks the rest).
    Partial,
    /// Nothing is enforced (no Landlock in this kernel, or it is disabled).
    None,
}

/// What restricting the calling thread did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restricted {
    pub enforcement: Enforcement,
    /// The kernel's Landlock ABI, when it has Landlock.
    pub landlock_abi: Option<u8>,
    /// Whether `no_new_privs` is set (set-uid programs cannot gain rights).
    pub no_new_privs: bool,
    /// Policy paths that did not exist and got no rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// How many read rules the file system was carved into around the denied paths.
    #[serde(default)]
    pub read_rules: usize,
}

fn abi_number(status: &LandlockStatus) -> Option<u8> {
    match status {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => {
            let n = kernel_abi.unwrap_or(*effective_abi as i32);
            u8::try_from(n).ok()
        }
        _ => None,
    }
}

fn ruleset_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Landlock(e.to_string())
}

/// Restricts the calling thread (and everything it later `exec`s) to `policy`: reading
/// everywhere but `policy.deny_read` and `/dev`, writing under `policy.writable` (but its
/// denied paths) and to the device files, TCP as
/// `policy.network` says, no signals to or abstract sockets of processes outside. Best effort
/// on older kernels; the result says what is enforced.
pub(crate) fn restrict_self(policy: &Policy) -> Result<Restricted, SandboxError> {
    let all = AccessFs::from_all(TARGET);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(ruleset_error)?
        .scope(Scope::from_all(TARGET))
        .map_err(ruleset_error)?;
    if policy.network.is_restricted() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET))
            .map_err(ruleset_error)?;
    }
    let mut created = ruleset.create().map_err(ruleset_error)?;
    let mut missing = Vec::new();
    let rule = |created: landlock::RulesetCreated,
                path: &Path,
                dir: bool,
                access: BitFlags<AccessFs>|
     -> Result<landlock::RulesetCreated, SandboxError> {
        let access = if dir {
            access
        } else {
            access & AccessFs::from_file(TARGET)
        };
        match PathFd::new(path) {
            Ok(fd) => created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(ruleset_error),
            // Gone since it was listed: nothing to grant.
            Err(_) => Ok(created),
        }
    };
    // Reading: everywhere but the denied paths and `/dev` (only its listed devices), carved
    // out of `/`. The directories on the way down to a denied path may be listed only.
    let denied = resolve(&policy.deny_read);
    let mut unreadable = denied.clone();
    unreadable.push(PathBuf::from("/dev"));
    let read = AccessFs::from_read(TARGET);
    let mut read_rules = 0;
    for c in carve(Path::new("/"), &unreadable) {
        let access = match c.grant {
            Grant::Tree => read,
            Grant::Along => AccessFs::ReadDir.into(),
        };
        created = rule(created, &c.path, c.dir, access)?;
        read_rules += 1;
    }
    // Trees named readable (the project) even beneath a denied path, carved the same way.
    for tree in &policy.readable {
        let Ok(real) = std::fs::canonicalize(tree) else {
            continue;
        };
        for c in carve(&real, &denied) {
            let access = match c.grant {
                Grant::Tree => read,
                Grant::Along => AccessFs::ReadDir.into(),
            };
            created = rule(created, &c.path, c.dir, access)?;
        }
    }
    // Writing: each writable tree, carved the same way around the denied paths inside it.
    for tree in &policy.writable {
        let Ok(real) = std::fs::canonicalize(tree) else {
            missing.push(tree.display().to_string());
            continue;
        };
        for c in carve(&real, &denied) {
            let access = match c.grant {
                Grant::Tree => all,
                Grant::Along => AccessFs::ReadDir.into(),
            };
            created = rule(created, &c.path, c.dir, access)?;
        }
    }
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    for dev in &policy.devices {
        match std::fs::metadata(dev) {
            Ok(meta) => created = rule(created, dev, meta.is_dir(), device)?,
            Err(_) => missing.push(dev.display().to_string()),
        }
    }
    if let Some(ports) = policy.network.connect_ports() {
        for port in ports {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(ruleset_error)?;
        }
    }
    let status = created.restrict_self().map_err(ruleset_error)?;
    Ok(Restricted {
        enforcement: match status.ruleset {
            RulesetStatus::FullyEnforced => Enforcement::Full,
            RulesetStatus::PartiallyEnforced => Enforcement::Partial,
            RulesetStatus::NotEnforced => Enforcement::None,
        },
        landlock_abi: abi_number(&status.landlock),
        no_new_privs: status.no_new_privs,
        missing,
        read_rules,
    })
}

/// Whether the kernel offers every right Butler uses from `abi` (a ruleset is created and
/// dropped: nothing is restricted).
fn supports(abi: ABI) -> bool {
    let hard = || Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    let mut ruleset = match hard().handle_access(AccessFs::from_all(abi)) {
        Ok(r) => r,
        Err(_) => return false,
    };
    if !AccessNet::from_all(abi).is_empty() {
        ruleset = match ruleset.handle_access(AccessNet::from_all(abi)) {
            Ok(r) => r,
            Err(_) => return false,
        };
    }
    if !Scope::from_all(abi).is_empty() {
        ruleset = match ruleset.scope(Scope::from_all(abi)) {
            Ok(r) => r,
            Err(_) => return false,
        };
    }
    ruleset.create().is_ok()
}

/// The highest Landlock ABI whose rights the kernel offers, from Butler's process without
/// restricting it; `None` without Landlock. ABI 7 added only logging controls, so a kernel
/// with ABI 7 reads as 6 here (`butler sandbox-exec` reports the exact number).
pub fn kernel_abi() -> Option<u8> {
    [
        (6, ABI::V6),
        (5, ABI::V5),
        (4, ABI::V4),
        (3, ABI::V3),
        (2, ABI::V2),
        (1, ABI::V1),
    ]
    .into_iter()
    .find(|(_, abi)| supports(*abi))
    .map(|(n, _)| n)
}
