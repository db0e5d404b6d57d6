//! The Maid's side of the sandbox: whether a task's agent and verify commands can be confined,
//! the policy of each (written for `butler sandbox-exec`), the wrapping of their command lines
//! (always under the helper, whose reaper ends what they leave running, confined or not), the
//! [`SandboxReport`] of each attempt and what they left running ([`LeftoverProcesses`]).
//!
//! The agent may write its worktree and its own directory (its `HOME`, `TMPDIR` and the worker
//! MCP's notes file); a verify command its worktree and its own temp dir. Everything else —
//! the repository's git data, the ledger, the Brain's tree, the real `HOME`, the rest of `/tmp`
//! — is read-only to them. The `.git` pointer file at the worktree's root is the one piece of
//! git inside a writable tree (Landlock cannot carve a read-only hole into a writable tree): the
//! Maid restores it before any git runs in the worktree and reports the change.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use butler_worker::sandbox::deny_read::{Denied, UserDirs, deny_list};
use butler_worker::sandbox::{
    Enforcement, HelperReport, HelperRun, KernelProbe, Network, Policy, RefusalSource,
    RunningKernel, SandboxMode, SandboxReport, scan_refusals, unmet,
};

use crate::error::MaidError;
use butler_worker::contract::{LeftoverProcesses, StartedBy};
use butler_worker::process::ChildSpec;
use butler_worker::process::reaper::Leftovers;
use butler_worker::sandbox::syscalls::SyscallRefusals;

/// How the Maid confines agents and verify commands (`[agent] sandbox`, `network`,
/// `sandbox_writable`; Butler's program as the helper).
#[derive(Debug, Clone)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    pub network: Network,
    /// More trees agents and verify commands may write (e.g. a shared build cache).
    pub extra_writable: Vec<PathBuf>,
    /// More paths they may neither read nor write (`[agent] deny_read`: absolute, or `~/…` in
    /// the user's `HOME`), besides the credential stores and Butler's own directories.
    pub deny_read: Vec<String>,
    /// Butler's program, run as `<helper> sandbox-exec …`. Without it nothing can be confined.
    pub helper: Option<PathBuf>,
    /// What the kernel offers (injected: tests stand for a kernel without Landlock).
    pub probe: Arc<dyn KernelProbe>,
}

impl Default for SandboxSettings {
    /// `auto`, open network, no helper yet (the edge names Butler's program).
    fn default() -> Self {
        Self {
            mode: SandboxMode::Auto,
            network: Network::Open,
            extra_writable: Vec::new(),
            deny_read: Vec::new(),
            helper: None,
            probe: Arc::new(RunningKernel),
        }
    }
}

impl SandboxSettings {
    /// No confinement at all.
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            ..Self::default()
        }
    }

    /// Why commands cannot be confined here, or `None` when they can.
    fn unavailable(&self) -> Option<String> {
        if self.helper.is_none() {
            return Some("no sandbox helper (Butler's program) is configured".into());
        }
        unmet(self.probe.landlock_abi(), &self.network)
    }

    /// [0] A `required` sandbox that cannot be applied stops the task before anything exists.
    pub(crate) fn check(&self) -> Result<(), MaidError> {
        match (self.mode, self.unavailable()) {
            (SandboxMode::Required, Some(reason)) => Err(MaidError::SandboxUnavailable(reason)),
            _ => Ok(()),
        }
    }
}

/// How one kind of command (the agent, the verify commands) of an attempt runs: under the
/// helper, which reaps whatever the command leaves running (always), and confines it when the
/// sandbox is applied (a policy to read and a report to write).
#[derive(Debug, Clone)]
pub struct Confinement {
    helper: PathBuf,
    /// The policy file and the report file; `None` when the sandbox is not applied.
    policy: Option<(PathBuf, PathBuf)>,
    /// Where the helper appends what it had to end (one JSON line per run).
    leftovers_file: PathBuf,
    /// Where the helper appends what its system-call filter refused (one JSON line per run).
    syscalls_file: PathBuf,
}

impl Confinement {
    /// The command of `spec` under the helper (see [`HelperRun::wrap`]); `grace` is the
    /// supervisor's.
    pub fn wrap(&self, spec: ChildSpec, grace: Duration) -> ChildSpec {
        HelperRun {
            policy: self
                .policy
                .as_ref()
                .map(|(policy, report)| (policy.as_path(), report.as_path())),
            leftovers: Some(&self.leftovers_file),
            syscalls: self.policy.as_ref().map(|_| self.syscalls_file.as_path()),
            grace,
        }
        .wrap(&self.helper, spec)
    }

    /// Whether the command runs in the sandbox.
    pub fn confines(&self) -> bool {
        self.policy.is_some()
    }

    /// What the helper reported (`None` when unconfined, or it never ran or wrote nothing).
    fn helper_report(&self) -> Option<HelperReport> {
        let text = std::fs::read_to_string(&self.policy.as_ref()?.1).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// What the system-call filter refused in each run, in order (the first 256 KiB).
    pub(crate) fn syscall_refusals(&self) -> Vec<SyscallRefusals> {
        read_lines(&self.syscalls_file)
    }

    /// What the helper had to end after each run, in order (the first 256 KiB of its account:
    /// with the sandbox off, the agent could have written there too).
    pub(crate) fn leftovers(&self) -> Vec<Leftovers> {
        read_lines(&self.leftovers_file)
    }
}

/// The JSON lines of one of the helper's account files (the first 256 KiB: with the sandbox
/// off, the agent could have written there too).
fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    use std::io::Read;
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(256 * 1024).read_to_string(&mut text);
    }
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The directories of one task a sandbox is built around.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskDirs<'a> {
    pub worktree: &'a Path,
    pub agent_dir: &'a Path,
    pub verify_tmp: &'a Path,
    /// The user's `HOME`, when the agent was given it (writable to it).
    pub real_home: Option<&'a Path>,
    /// Where every task's worktree lives (`[agent] worktrees_dir`), denied but for the task's.
    pub worktrees_root: Option<&'a Path>,
    /// The project's working tree and git directory: readable whatever denial holds them.
    pub repository: [&'a Path; 2],
}

/// Where a task's sandbox keeps its files and what each command may write.
#[derive(Debug, Clone)]
pub(crate) struct TaskSandbox {
    settings: SandboxSettings,
    /// `Err(reason)` when nothing is confined.
    decision: Result<(), String>,
    agent_writable: Vec<PathBuf>,
    verify_writable: Vec<PathBuf>,
    /// What neither may read or write (the stores that exist when the task starts).
    denied: Vec<Denied>,
    /// What both read whatever is denied above it (the repository).
    readable: Vec<PathBuf>,
    /// The Maid's evidence directory (read-only to the agent): policies and reports.
    task_dir: PathBuf,
}

impl TaskSandbox {
    /// The sandbox of one task whose agent writes `worktree` and `agent_dir` (plus the real
    /// `HOME` when it was given one), and whose verify commands write `worktree` and
    /// `verify_tmp`. Neither reads nor writes the credential stores of the user whose
    /// directories `user` names (Butler's own `HOME`), Butler's directories, the worktrees of
    /// other tasks (`worktrees_root`) and the configured `deny_read`.
    pub(crate) fn new(
        settings: &SandboxSettings,
        dirs: TaskDirs<'_>,
        user: &UserDirs,
        task_dir: &Path,
    ) -> Result<Self, MaidError> {
        settings.check()?;
        let decision = match (settings.mode, settings.unavailable()) {
            (SandboxMode::Off, _) => Err("sandbox = \"off\"".to_owned()),
            (_, Some(reason)) => Err(reason),
            (_, None) => Ok(()),
        };
        let mut agent_writable = vec![dirs.worktree.to_path_buf(), dirs.agent_dir.to_path_buf()];
        agent_writable.extend(dirs.real_home.map(Path::to_path_buf));
        agent_writable.extend(settings.extra_writable.iter().cloned());
        let mut verify_writable = vec![dirs.worktree.to_path_buf(), dirs.verify_tmp.to_path_buf()];
        verify_writable.extend(settings.extra_writable.iter().cloned());
        let mut entries = settings.deny_read.clone();
        entries.extend(dirs.worktrees_root.map(|root| root.display().to_string()));
        Ok(Self {
            settings: settings.clone(),
            decision,
            agent_writable,
            verify_writable,
            denied: deny_list(user, &entries),
            readable: dirs.repository.iter().map(|p| p.to_path_buf()).collect(),
            task_dir: task_dir.to_path_buf(),
        })
    }

    /// Whether the agent runs under Butler's sandbox (an agent with a sandbox of its own
    /// steps aside for it).
    pub(crate) fn confines(&self) -> bool {
        self.decision.is_ok()
    }

    fn confinement(
        &self,
        who: &str,
        attempt: u32,
        writable: &[PathBuf],
    ) -> Result<Option<Confinement>, MaidError> {
        let Some(helper) = self.settings.helper.clone() else {
            return Ok(None);
        };
        let file = |what: &str| {
            self.task_dir
                .join(format!("attempt-{attempt}-{who}-{what}"))
        };
        let leftovers_file = file("leftovers.jsonl");
        let _ = std::fs::remove_file(&leftovers_file);
        let syscalls_file = file("syscalls.jsonl");
        let _ = std::fs::remove_file(&syscalls_file);
        if !self.confines() {
            return Ok(Some(Confinement {
                helper,
                policy: None,
                leftovers_file,
                syscalls_file,
            }));
        }
        let mut policy = Policy::new(
            self.settings.mode,
            writable.to_vec(),
            self.settings.network.clone(),
        );
        policy.deny_read = self.denied.iter().map(|d| d.path.clone()).collect();
        if !policy.deny_read.is_empty() {
            policy.readable = self.readable.clone();
        }
        let policy_file = file("sandbox.json");
        policy
            .write_to(&policy_file)
            .map_err(|e| MaidError::io("writing", &policy_file, e))?;
        let report_file = file("sandbox-report.json");
        let _ = std::fs::remove_file(&report_file);
        Ok(Some(Confinement {
            helper,
            policy: Some((policy_file, report_file)),
            leftovers_file,
            syscalls_file,
        }))
    }

    /// How the agent runs for `attempt` (its policy written when confined), or `None` without
    /// a helper.
    pub(crate) fn agent(&self, attempt: u32) -> Result<Option<Confinement>, MaidError> {
        self.confinement("agent", attempt, &self.agent_writable)
    }

    /// How the verify commands run for `attempt`, or `None` without a helper.
    pub(crate) fn verify(&self, attempt: u32) -> Result<Option<Confinement>, MaidError> {
        self.confinement("verify", attempt, &self.verify_writable)
    }

    /// What the attempt's agent and verify commands left running, which the helper ended
    /// (`None` when nothing was).
    pub(crate) fn leftovers(
        agent: Option<&Confinement>,
        verify: Option<&Confinement>,
    ) -> Option<LeftoverProcesses> {
        let mut all = LeftoverProcesses {
            processes: Vec::new(),
            total: 0,
        };
        for (started_by, confinement) in [(StartedBy::Agent, agent), (StartedBy::Verify, verify)] {
            for run in confinement.map(Confinement::leftovers).unwrap_or_default() {
                all.add(started_by, run.ended, run.total);
            }
        }
        (all.total > 0).then_some(all)
    }

    /// The attempt's report: the rules, what the helper says the kernel enforced, and the
    /// refusals in the agent's output and the verify commands' output.
    pub(crate) fn report(
        &self,
        agent: Option<&Confinement>,
        verify: Option<&Confinement>,
        agent_output: &str,
        verify_outputs: &[&str],
    ) -> SandboxReport {
        let helper = agent.and_then(Confinement::helper_report);
        let restricted = helper.as_ref().and_then(|h| h.restricted.clone());
        let applied = restricted
            .as_ref()
            .is_some_and(|r| r.enforcement != Enforcement::None);
        let not_applied = match (&self.decision, &helper) {
            (Err(reason), _) => Some(reason.clone()),
            (Ok(()), None) => Some("the sandbox helper did not report".to_owned()),
            (Ok(()), Some(h)) if !applied => h
                .problem
                .clone()
                .or_else(|| Some("the kernel enforced nothing".to_owned())),
            (Ok(()), Some(_)) => None,
        };
        let mut report = SandboxReport {
            mode: self.settings.mode,
            applied,
            not_applied,
            enforcement: restricted.as_ref().map(|r| r.enforcement),
            landlock_abi: restricted.as_ref().and_then(|r| r.landlock_abi),
            writable: if applied {
                self.agent_writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect()
            } else {
                Vec::new()
            },
            network: if applied {
                self.settings.network.clone()
            } else {
                Network::Open
            },
            verify_confined: verify.is_some_and(Confinement::confines),
            denied_read: if applied {
                let mut names: Vec<String> = Vec::new();
                for d in &self.denied {
                    if !names.contains(&d.name) {
                        names.push(d.name.clone());
                    }
                }
                names
            } else {
                Vec::new()
            },
            refused: Vec::new(),
            refused_total: 0,
            syscall_filter: helper.as_ref().is_some_and(|h| h.syscall_filter),
            syscalls_refused: Vec::new(),
            syscalls_refused_total: 0,
            proxied_connections: 0,
        };
        for (source, confinement) in [
            (RefusalSource::Agent, agent),
            (RefusalSource::Verify, verify),
        ] {
            for run in confinement
                .map(Confinement::syscall_refusals)
                .unwrap_or_default()
            {
                report.add_syscall_refusals(source, run);
            }
        }
        report.add_refusals(scan_refusals(agent_output, RefusalSource::Agent));
        for output in verify_outputs {
            report.add_refusals(scan_refusals(output, RefusalSource::Verify));
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct NoLandlock;

    impl KernelProbe for NoLandlock {
        fn landlock_abi(&self) -> Option<u8> {
            None
        }
    }

    /// A task's directories under `p`, named as the Maid names them.
    struct Dirs(PathBuf, PathBuf, PathBuf, PathBuf, PathBuf);

    impl Dirs {
        fn under(p: &Path) -> Self {
            Self(
                p.join("wt"),
                p.join("agent"),
                p.join("verify"),
                p.join("project"),
                p.join("project/.git"),
            )
        }

        fn task(&self) -> TaskDirs<'_> {
            TaskDirs {
                worktree: &self.0,
                agent_dir: &self.1,
                verify_tmp: &self.2,
                real_home: None,
                worktrees_root: None,
                repository: [&self.3, &self.4],
            }
        }
    }

    fn settings(mode: SandboxMode) -> SandboxSettings {
        SandboxSettings {
            mode,
            helper: Some("/opt/butler".into()),
            probe: Arc::new(NoLandlock),
            ..SandboxSettings::default()
        }
    }

    #[test]
    fn required_refuses_and_auto_runs_unconfined_without_landlock() {
        let err = settings(SandboxMode::Required)
            .check()
            .expect_err("refused");
        assert!(err.to_string().contains("no Landlock"), "{err}");
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        let sandbox = TaskSandbox::new(
            &settings(SandboxMode::Auto),
            Dirs::under(p).task(),
            &UserDirs::default(),
            p,
        )
        .expect("auto");
        assert!(!sandbox.confines());
        let reaped = sandbox.agent(1).expect("written").expect("a helper");
        assert!(!reaped.confines(), "unconfined, still under the reaper");
        let spec = reaped.wrap(
            ChildSpec::shell("true", p, butler_worker::process::ChildEnv::new()),
            Duration::from_secs(4),
        );
        let args: Vec<&str> = spec
            .args
            .iter()
            .map(|a| a.to_str().expect("utf-8"))
            .collect();
        assert_eq!(args[..2], ["sandbox-exec", "--unconfined"]);
        assert_eq!(args[4..], ["--grace-ms", "2000", "--", "sh", "-c", "true"]);
        let report = sandbox.report(None, None, "x: Permission denied", &[]);
        assert!(!report.applied);
        assert!(report.not_applied.expect("why").contains("no Landlock"));
        assert_eq!(report.refused_total, 1);
    }

    #[test]
    fn the_wrapped_command_runs_through_the_helper() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        let mut s = settings(SandboxMode::Auto);
        s.probe = Arc::new(RunningKernel);
        std::fs::create_dir_all(p.join("home/.ssh")).expect("mkdir");
        s.deny_read = vec!["~/.vault".into(), p.join("keys").display().to_string()];
        std::fs::write(p.join("home/.vault"), "x").expect("write");
        let user = UserDirs {
            home: Some(p.join("home")),
            ..UserDirs::default()
        };
        let sandbox = TaskSandbox::new(&s, Dirs::under(p).task(), &user, p).expect("sandbox");
        let c = sandbox.agent(2).expect("policy").expect("confined");
        let spec = c.wrap(
            ChildSpec::shell("true", p, butler_worker::process::ChildEnv::new()),
            Duration::from_secs(1),
        );
        assert_eq!(spec.program, "/opt/butler");
        let args: Vec<&str> = spec
            .args
            .iter()
            .map(|a| a.to_str().expect("utf-8"))
            .collect();
        assert_eq!(args[0], "sandbox-exec");
        assert_eq!(args[1], "--policy");
        assert_eq!(
            &args[5..],
            [
                "--leftovers",
                &p.join("attempt-2-agent-leftovers.jsonl").to_string_lossy(),
                "--syscalls",
                &p.join("attempt-2-agent-syscalls.jsonl").to_string_lossy(),
                "--grace-ms",
                "500",
                "--",
                "sh",
                "-c",
                "true"
            ]
        );
        let policy = Policy::read_from(&p.join("attempt-2-agent-sandbox.json")).expect("policy");
        assert_eq!(policy.writable, vec![p.join("wt"), p.join("agent")]);
        assert_eq!(
            policy.deny_read,
            [p.join("home/.ssh"), p.join("home/.vault")],
            "what exists is denied"
        );
        assert_eq!(
            policy.readable,
            [p.join("project"), p.join("project/.git")],
            "the repository stays readable whatever holds it"
        );
    }
}
