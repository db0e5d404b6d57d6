//! Delegated steps in the agents' sandbox: every `cmd`, `check`, `wait` and verifier program,
//! and every `mcp_call` server, runs under `butler sandbox-exec` with a [`Policy`] built here —
//! the same helper and policy code as the ImplementMaid's agents.
//!
//! A step that may change the project ([`Access::Tree`]: `cmd`, an `mcp_call` server) may write
//! the project's working tree but never its git data. The tree is the Brain's own checkout, its
//! `.git` directory at the root, and Landlock rules only add rights, so the rule is written per
//! top-level entry: every file and directory at the root except `.git` (and except links, whose
//! targets would get the right). The cost: a step cannot create, delete or rename entries at the
//! root itself (`touch NEW` or `rm a.txt` there is refused; inside `src/` it is not) unless it
//! declares them (`writes: ["dist/"]`, created as a directory before the step). Besides, each
//! step writes its own temp dir (`TMPDIR`, removed after it), the paths it declares outside the
//! project, and the user's `[agent] sandbox_writable`. A step that only looks ([`Access::Look`]:
//! `check`, `wait`, the contract's verifiers) writes its temp dir alone.
//!
//! Reading is allowed everywhere the policy allows (the deny list of credential stores, when the
//! policy has one); Butler's own environment is out of reach (the helper drops the capabilities
//! that would let a confined process read `/proc/<pid>/environ`, and Landlock's ptrace scoping
//! refuses it otherwise). The network is `[delegation] network`.
//!
//! With `[agent] sandbox = "off"`, no Landlock in the kernel, or no helper, the step runs
//! unconfined and its evidence says so (`unconfined`); `required` refuses to run it. Once a step
//! is to be confined, its policy is `required` whatever the mode: the gate judged it as confined,
//! so the helper runs nothing it cannot confine.

use std::path::{Path, PathBuf};

use crate::sandbox::{HelperReport, Network, Policy, SandboxMode, unmet};

/// How steps are confined: the agents' mode (`[agent] sandbox`), the procedures' network
/// (`[delegation] network`), the user's extra writable trees (`[agent] sandbox_writable`) and
/// what the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepSandbox {
    pub mode: SandboxMode,
    pub network: Network,
    pub extra_writable: Vec<PathBuf>,
    /// What no step may read: the agents' deny list (credential stores, Butler's own
    /// directories, `[agent] deny_read`), see [`crate::sandbox::deny_read`].
    pub deny_read: Vec<PathBuf>,
    /// Readable whatever denial holds them: the project's tree and git directory.
    pub readable: Vec<PathBuf>,
    /// The kernel's Landlock ABI (`None`: no Landlock).
    pub landlock_abi: Option<u8>,
}

impl Default for StepSandbox {
    /// `auto`, open network, the running kernel.
    fn default() -> Self {
        Self {
            mode: SandboxMode::Auto,
            network: Network::Open,
            extra_writable: Vec::new(),
            deny_read: Vec::new(),
            readable: Vec::new(),
            landlock_abi: crate::sandbox::kernel_abi(),
        }
    }
}

/// What a step's program may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The project's files (not its git data), its declared paths, its temp dir.
    Tree,
    /// Its temp dir only: checks and verifiers look.
    Look,
}

/// How one program run is confined, decided before it starts.
#[derive(Debug)]
pub enum Decision {
    /// Under this policy (written to `policy`, the helper's report to `report`).
    Confined { policy: PathBuf, report: PathBuf },
    /// Unconfined, and why (the evidence says it).
    Unconfined(String),
    /// Not run at all: the sandbox is required and cannot be applied.
    Refused(String),
}

/// A step's private directory: its `TMPDIR` (writable to it) and, beside it, the policy and
/// the helper's report (not writable to it). Removed when dropped.
#[derive(Debug)]
pub(crate) struct StepDir {
    dir: tempfile::TempDir,
}

impl StepDir {
    pub(crate) fn new() -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("butler-step-").tempdir()?;
        std::fs::create_dir(dir.path().join("tmp"))?;
        Ok(Self { dir })
    }

    /// The step's `TMPDIR`.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// The trees a step of the project at `root` may write: every top-level entry but `.git` and
/// links, the declared paths (resolved by [`super::exec::StepPlace::declared`]), and `extra`
/// (but one holding the project or inside its git data). A declared project path that does not
/// exist yet is created as a directory.
pub(crate) fn tree_writable(
    root: &Path,
    declared: &[PathBuf],
    extra: &[PathBuf],
) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_name() == ".git" || entry.file_type()?.is_symlink() {
            continue;
        }
        out.push(entry.path());
    }
    out.sort();
    for path in declared {
        if path.starts_with(root) && !path.exists() {
            std::fs::create_dir_all(path)?;
        }
        out.push(path.clone());
    }
    // The user's extra trees, but never one that holds the project (its git data with it) or
    // lies in its git data: what undoes a step stays out of its reach.
    let git = root.join(".git");
    out.extend(
        extra
            .iter()
            .filter(|p| {
                let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                !root.starts_with(&p) && !p.starts_with(&git)
            })
            .cloned(),
    );
    Ok(out)
}

impl StepSandbox {
    /// Whether steps run confined here (what the gate assumes before a step runs).
    pub(crate) fn applies(&self, helper: Option<&Path>) -> bool {
        self.unavailable(helper).is_none()
    }

    /// Why nothing can be confined here (`None`: it can).
    fn unavailable(&self, helper: Option<&Path>) -> Option<String> {
        if self.mode == SandboxMode::Off {
            return Some("sandbox = \"off\"".into());
        }
        if helper.is_none() {
            return Some("no sandbox helper (Butler's program) is known".into());
        }
        unmet(self.landlock_abi, &self.network)
    }

    /// Decides how one run is confined and writes its policy into `dir`.
    pub(crate) fn decide(
        &self,
        helper: Option<&Path>,
        dir: &StepDir,
        writable: Vec<PathBuf>,
    ) -> Decision {
        match (self.mode, self.unavailable(helper)) {
            (SandboxMode::Required, Some(why)) => {
                return Decision::Refused(format!(
                    "the sandbox is required but cannot be applied: {why}"
                ));
            }
            (_, Some(why)) => return Decision::Unconfined(why),
            (_, None) => {}
        }
        // Once the gate counted on the sandbox (`rm` and the like not asked for), a step that
        // cannot be confined after all must not run: the helper refuses it as `required`.
        let mut policy = Policy::new(SandboxMode::Required, writable, self.network.clone());
        if !self.deny_read.is_empty() {
            policy.deny_read = self.deny_read.clone();
            policy.readable = self.readable.clone();
        }
        let (file, report) = (dir.file("policy.json"), dir.file("report.json"));
        match policy.write_to(&file) {
            Ok(()) => Decision::Confined {
                policy: file,
                report,
            },
            Err(e) if self.mode == SandboxMode::Required => {
                Decision::Refused(format!("the step's sandbox policy cannot be written: {e}"))
            }
            Err(e) => {
                Decision::Unconfined(format!("the step's sandbox policy cannot be written: {e}"))
            }
        }
    }
}

/// After a confined run: why it was not confined after all (the helper's report says the
/// kernel enforced nothing, or it never reported), `None` when it was.
pub(crate) fn not_applied(report: &Path) -> Option<String> {
    let text = match std::fs::read_to_string(report) {
        Ok(text) => text,
        Err(_) => return Some("the sandbox helper did not report".into()),
    };
    match serde_json::from_str::<HelperReport>(&text) {
        Ok(r) => match r.restricted {
            Some(ref restricted) if restricted.enforcement != crate::sandbox::Enforcement::None => {
                None
            }
            _ => Some(
                r.problem
                    .unwrap_or_else(|| "the kernel enforced nothing".to_owned()),
            ),
        },
        Err(_) => Some("the sandbox helper's report cannot be read".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_is_writable_per_top_level_entry_but_git_and_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).expect("git");
        std::fs::create_dir(root.join("src")).expect("src");
        std::fs::write(root.join("a.txt"), "a").expect("a");
        std::os::unix::fs::symlink("/etc", root.join("etc")).expect("link");
        let writable = tree_writable(
            root,
            &[root.join("dist"), PathBuf::from("/var/cache/x")],
            &[
                PathBuf::from("/opt/cache"),
                dir.path().to_path_buf(),
                root.join(".git/hooks"),
            ],
        )
        .expect("listed");
        assert_eq!(
            writable,
            [
                root.join("a.txt"),
                root.join("src"),
                root.join("dist"),
                PathBuf::from("/var/cache/x"),
                PathBuf::from("/opt/cache"),
            ]
        );
        assert!(root.join("dist").is_dir(), "declared, created");
        assert!(
            !Path::new("/var/cache/x").exists(),
            "outside: never created"
        );
    }

    #[test]
    fn off_no_kernel_and_required_decide_as_the_agents_sandbox_does() {
        let dir = StepDir::new().expect("dir");
        let helper = Some(Path::new("/opt/butler"));
        let mut s = StepSandbox {
            mode: SandboxMode::Off,
            ..StepSandbox::default()
        };
        assert!(
            matches!(s.decide(helper, &dir, vec![]), Decision::Unconfined(w) if w.contains("off"))
        );
        s.mode = SandboxMode::Auto;
        s.landlock_abi = None;
        assert!(
            matches!(s.decide(helper, &dir, vec![]), Decision::Unconfined(w) if w.contains("Landlock"))
        );
        s.mode = SandboxMode::Required;
        assert!(matches!(
            s.decide(helper, &dir, vec![]),
            Decision::Refused(_)
        ));
        s.landlock_abi = Some(7);
        match s.decide(helper, &dir, vec![dir.tmp()]) {
            Decision::Confined { policy, .. } => {
                let read = Policy::read_from(&policy).expect("policy");
                assert_eq!(read.writable, vec![dir.tmp()]);
                assert_eq!(read.mode, SandboxMode::Required);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(s.decide(None, &dir, vec![]), Decision::Refused(_)));
    }
}
