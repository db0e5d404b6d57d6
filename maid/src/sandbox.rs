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

use butler_worker::egress::{
    AllowList, Connections, EgressProxy, Endpoint, HostPattern, NO_PROXY_VARS, OwnPorts,
    PROXY_VARS, ProxySettings,
};
use butler_worker::process::ChildEnv;
use butler_worker::sandbox::deny_read::{Denied, UserDirs, deny_list};
use butler_worker::sandbox::{
    ABI_WITH_TCP, EgressReport, Enforcement, HelperReport, HelperRun, KernelProbe, Network,
    NetworkChoice, Policy, RefusalSource, RunningKernel, SandboxMode, SandboxReport, scan_refusals,
    unmet,
};
use butler_worker::time::SharedClock;

use crate::error::MaidError;
use butler_worker::contract::{LeftoverProcesses, StartedBy};
use butler_worker::process::ChildSpec;
use butler_worker::process::reaper::Leftovers;
use butler_worker::sandbox::syscalls::SyscallRefusals;

/// How the Maid confines agents and verify commands (`[agent] sandbox`, `network`,
/// `network_allow`, `sandbox_writable`; Butler's program as the helper).
#[derive(Debug, Clone)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// `[agent] network`; `None`: not set (the egress proxy where the kernel's Landlock has
    /// network rules, else open).
    pub network: Option<NetworkChoice>,
    /// Hosts the egress proxy admits besides the agent's model endpoints.
    pub network_allow: Vec<HostPattern>,
    /// Butler's listening ports, which the egress proxy never connects to.
    pub own_ports: OwnPorts,
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
    /// `auto`, the default network, no helper yet (the edge names Butler's program).
    fn default() -> Self {
        Self {
            mode: SandboxMode::Auto,
            network: None,
            network_allow: Vec::new(),
            own_ports: OwnPorts::default(),
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
        // Only what was asked for explicitly must be enforced; the default proxy falls back to
        // an open network on a kernel without network rules (and says so in the evidence).
        let needs = match (&self.network, self.mode) {
            (Some(NetworkChoice::Ports(ports)), _) => Network::Restricted {
                connect_tcp: ports.clone(),
            },
            (Some(NetworkChoice::Proxy), SandboxMode::Required) => Network::Restricted {
                connect_tcp: Vec::new(),
            },
            _ => Network::Open,
        };
        unmet(self.probe.landlock_abi(), &needs)
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
pub(crate) struct Confinement {
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
    pub(crate) fn wrap(&self, spec: ChildSpec, grace: Duration) -> ChildSpec {
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
    pub(crate) fn confines(&self) -> bool {
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
    egress: Egress,
}

/// The task's network, once decided.
#[derive(Debug, Clone)]
enum Egress {
    /// `open`, a port list, or nothing confined: no proxy.
    Rule(Network),
    /// The egress proxy is to run (see [`TaskSandbox::start_egress`]).
    Pending,
    /// The egress proxy runs (stopped when the last handle goes with the task).
    Proxy(Arc<EgressProxy>, AllowList),
    /// The proxy was the default, but the kernel's Landlock has no network rules: open.
    Fallback(String),
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
        let egress = match (&decision, &settings.network) {
            (Err(_), _) | (_, Some(NetworkChoice::Open)) => Egress::Rule(Network::Open),
            (_, Some(NetworkChoice::Ports(ports))) => Egress::Rule(Network::Restricted {
                connect_tcp: ports.clone(),
            }),
            (Ok(()), None | Some(NetworkChoice::Proxy)) => match settings.probe.landlock_abi() {
                Some(abi) if abi >= ABI_WITH_TCP => Egress::Pending,
                abi => Egress::Fallback(format!(
                    "the kernel's Landlock has no network rules (ABI {}, network rules need \
                     {ABI_WITH_TCP}): the network is open, without the egress proxy",
                    abi.map_or_else(|| "none".to_owned(), |a| a.to_string())
                )),
            },
        };
        Ok(Self {
            settings: settings.clone(),
            decision,
            agent_writable,
            verify_writable,
            denied: deny_list(user, &entries),
            readable: dirs.repository.iter().map(|p| p.to_path_buf()).collect(),
            task_dir: task_dir.to_path_buf(),
            egress,
        })
    }

    /// Starts the task's egress proxy when its network goes through one, admitting the agent's
    /// model `endpoints` and `[agent] network_allow`; times in its log come from `clock`. Runs
    /// on the current tokio runtime until the task's sandbox is dropped.
    pub(crate) fn start_egress(
        &mut self,
        endpoints: Vec<Endpoint>,
        clock: SharedClock,
    ) -> Result<(), MaidError> {
        if !matches!(self.egress, Egress::Pending) {
            return Ok(());
        }
        let mut allow = AllowList {
            endpoints: Vec::new(),
            hosts: self.settings.network_allow.clone(),
        };
        for endpoint in endpoints {
            allow.add_endpoint(endpoint);
        }
        let mut settings = ProxySettings::new(allow.clone());
        settings.own_ports = self.settings.own_ports.clone();
        let proxy = EgressProxy::start(settings, clock)
            .map_err(|e| MaidError::io("starting the egress proxy on", "127.0.0.1", e))?;
        tracing::debug!(addr = %proxy.addr(), "the task's egress proxy listens");
        self.egress = Egress::Proxy(Arc::new(proxy), allow);
        Ok(())
    }

    /// The network rule of the task's commands.
    fn network(&self) -> Network {
        match &self.egress {
            Egress::Rule(rule) => rule.clone(),
            Egress::Proxy(proxy, _) => Network::Proxy {
                proxy: proxy.addr(),
            },
            Egress::Pending | Egress::Fallback(_) => Network::Open,
        }
    }

    /// Points `env` at the task's proxy (every proxy variable, both spellings) and removes
    /// what would exempt hosts from it; leaves it alone without a proxy.
    pub(crate) fn proxy_env(&self, env: &mut ChildEnv) {
        if let Egress::Proxy(proxy, _) = &self.egress {
            let url = proxy.url();
            for name in PROXY_VARS {
                env.set(*name, &url);
            }
            for name in NO_PROXY_VARS {
                env.remove(name);
            }
        }
    }

    /// The connections made through the proxy since the last call (`None` without a proxy),
    /// once those still open have ended (at most a second: the helper has ended every process
    /// that could hold one).
    pub(crate) async fn take_egress(&self) -> Option<Connections> {
        let Egress::Proxy(proxy, _) = &self.egress else {
            return None;
        };
        proxy.settle(Duration::from_secs(1)).await;
        Some(proxy.log().take())
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
        if matches!(self.egress, Egress::Pending) {
            return Err(MaidError::io(
                "starting",
                "the egress proxy",
                std::io::Error::other("the task's egress proxy was not started"),
            ));
        }
        let mut policy = Policy::new(self.settings.mode, writable.to_vec(), self.network());
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

    /// The attempt's report: the rules, what the helper says the kernel enforced, the
    /// refusals in the agent's output and the verify commands' output, and the connections
    /// through the egress proxy (`egress`: the agent's, the verify commands').
    pub(crate) fn report(
        &self,
        agent: Option<&Confinement>,
        verify: Option<&Confinement>,
        agent_output: &str,
        verify_outputs: &[&str],
        egress: (Option<Connections>, Option<Connections>),
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
                self.network()
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
            egress: match &self.egress {
                Egress::Proxy(_, allow) => Some(EgressReport {
                    not_applied: None,
                    endpoints: allow.endpoints.clone(),
                    allowed_hosts: allow.hosts.clone(),
                    agent: egress.0.unwrap_or_default(),
                    verify: egress.1.unwrap_or_default(),
                }),
                Egress::Fallback(why) => Some(EgressReport {
                    not_applied: Some(why.clone()),
                    ..EgressReport::default()
                }),
                Egress::Rule(_) | Egress::Pending => None,
            },
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
        let report = sandbox.report(None, None, "x: Permission denied", &[], (None, None));
        assert!(!report.applied);
        assert!(report.not_applied.expect("why").contains("no Landlock"));
        assert_eq!(report.refused_total, 1);
    }

    #[derive(Debug)]
    struct NoNetworkRules;

    impl KernelProbe for NoNetworkRules {
        fn landlock_abi(&self) -> Option<u8> {
            Some(3)
        }
    }

    #[test]
    fn without_network_rules_the_default_proxy_falls_back_to_open_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        let mut s = settings(SandboxMode::Auto);
        s.probe = Arc::new(NoNetworkRules);
        let mut sandbox =
            TaskSandbox::new(&s, Dirs::under(p).task(), &UserDirs::default(), p).expect("sandbox");
        assert!(sandbox.confines(), "the files are still confined");
        sandbox
            .start_egress(Vec::new(), butler_worker::time::SystemClock::shared())
            .expect("nothing to start");
        sandbox.agent(1).expect("policy").expect("confined");
        let policy = Policy::read_from(&p.join("attempt-1-agent-sandbox.json")).expect("policy");
        assert_eq!(policy.network, Network::Open);
        let mut env = ChildEnv::new();
        env.set("NO_PROXY", "x");
        sandbox.proxy_env(&mut env);
        assert!(env.get("HTTPS_PROXY").is_none());
        let report = sandbox.report(None, None, "", &[], (None, None));
        let egress = report.egress.expect("the egress section");
        assert!(
            egress
                .not_applied
                .expect("why")
                .contains("no network rules (ABI 3"),
        );
        // Asked for explicitly with a required sandbox, it is refused instead.
        s.mode = SandboxMode::Required;
        s.network = Some(NetworkChoice::Proxy);
        let err = s.check().expect_err("refused");
        assert!(err.to_string().contains("ABI 4"), "{err}");
    }

    #[tokio::test]
    async fn the_default_network_is_the_tasks_proxy_in_the_policy_and_the_environment() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        let mut s = settings(SandboxMode::Auto);
        s.probe = Arc::new(RunningKernel);
        s.own_ports = OwnPorts::new();
        s.network_allow = vec![HostPattern::parse("pypi.org").expect("pattern")];
        let mut sandbox =
            TaskSandbox::new(&s, Dirs::under(p).task(), &UserDirs::default(), p).expect("sandbox");
        let endpoint = Endpoint::parse("http://127.0.0.1:4000", 443, true).expect("endpoint");
        sandbox
            .start_egress(
                vec![endpoint.clone()],
                butler_worker::time::SystemClock::shared(),
            )
            .expect("started");
        sandbox.verify(1).expect("policy").expect("confined");
        let policy = Policy::read_from(&p.join("attempt-1-verify-sandbox.json")).expect("policy");
        let Network::Proxy { proxy } = policy.network else {
            panic!("{:?}", policy.network);
        };
        assert!(proxy.ip().is_loopback());
        assert_eq!(policy.network.connect_ports(), Some(vec![proxy.port()]));
        assert!(s.own_ports.is_butler(proxy), "the proxy's port is Butler's");
        let mut env = ChildEnv::new();
        env.set("NO_PROXY", "*")
            .set("no_proxy", "*")
            .set("HTTP_PROXY", "http://corp:3128");
        sandbox.proxy_env(&mut env);
        for name in PROXY_VARS {
            assert_eq!(
                env.get(name).and_then(|v| v.to_str()),
                Some(format!("http://{proxy}").as_str()),
                "{name}"
            );
        }
        assert!(env.get("NO_PROXY").is_none() && env.get("no_proxy").is_none());
        let taken = sandbox.take_egress().await.expect("a proxy");
        assert_eq!(taken.total, 0);
        let report = sandbox.report(None, None, "", &[], (Some(taken), None));
        let egress = report.egress.expect("egress");
        assert_eq!(egress.endpoints, vec![endpoint]);
        assert_eq!(egress.allowed_hosts, s.network_allow);
        drop(sandbox);
        assert!(!s.own_ports.is_butler(proxy), "stopped with the task");
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
        s.network = Some(NetworkChoice::Open);
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
