//! `[runner]`: where the Maid's tasks run — here (the default) or as Kubernetes Jobs. Only the
//! user's own configuration file may set it: it decides which cluster gets the project's code,
//! which image runs it and which Secrets it receives. A project's file naming it is reported
//! as ignored, trusted or not.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where tasks run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunnerKind {
    /// In a worktree beside the Brain's tree, on this machine.
    #[default]
    Local,
    /// As a Job on a Kubernetes cluster.
    Kubernetes,
}

/// The `[runner]` section as written (see `docs/kubernetes.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerConfig {
    #[serde(default)]
    pub kind: RunnerKind,
    /// The kubeconfig context (default: the current one, or the in-cluster configuration).
    pub context: Option<String>,
    /// Default: the context's namespace, else `default`.
    pub namespace: Option<String>,
    /// The task's image: `butler` on its `PATH` and the agent.
    pub image: Option<String>,
    /// The pod's service account (its token is never mounted).
    pub service_account: Option<String>,
    /// A Secret whose keys become the agent's environment (its model key).
    pub model_secret: Option<String>,
    /// A Secret with `username` and `token` that may push `refs/heads/butler/*` to the
    /// destination.
    pub push_secret: Option<String>,
    /// The shared destination: a remote of the project (default `origin`) or a URL.
    pub destination: Option<String>,
    /// The pod's CPU and memory (requests and limits alike).
    pub cpu: Option<String>,
    pub memory: Option<String>,
    /// How long a finished Job is kept (default one hour).
    pub ttl_seconds_after_finished: Option<u32>,
    /// A pod that cannot start (image, scheduling) for this long fails the task (default 300).
    pub pending_timeout_s: Option<u64>,
    /// The Job's `activeDeadlineSeconds` (default: the task's attempts × (its timeout + the
    /// test timeout) + 600).
    pub active_deadline_s: Option<u64>,
    /// Plain settings for the pod's environment (`BUTLER_AGENT`, `BUTLER_GOOSE_PROVIDER`, …).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The variables Butler sets on a task's pod itself; `[runner] env` may not name them
/// (`BUTLER_SANDBOX` it may: `auto` unless set).
pub(crate) const RESERVED_ENV_PREFIXES: &[&str] =
    &["BUTLER_TASK_", "BUTLER_PUSH_", "BUTLER_TERMINATION"];
pub(crate) const RESERVED_ENV: &[&str] = &["HOME", "TMPDIR"];

impl RunnerConfig {
    /// What the types cannot say: a Kubernetes runner names its image; `[runner] env` names
    /// plain variables Butler does not set itself.
    pub(super) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.kind == RunnerKind::Kubernetes && self.image.as_deref().is_none_or(str::is_empty) {
            problems.push("[runner] kind = \"kubernetes\" needs `image`".to_owned());
        }
        for name in self.env.keys() {
            let plain = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !plain {
                problems.push(format!("[runner] env: `{name}` is not a variable name"));
            } else if RESERVED_ENV_PREFIXES.iter().any(|p| name.starts_with(p))
                || RESERVED_ENV.contains(&name.as_str())
            {
                problems.push(format!("[runner] env: `{name}` is set by Butler itself"));
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RunnerConfig, String> {
        toml::from_str::<RunnerConfig>(text).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn local_is_the_default_and_kubernetes_needs_an_image() {
        assert_eq!(parse("").expect("empty").kind, RunnerKind::Local);
        let k = parse("kind = \"kubernetes\"").expect("parses");
        assert_eq!(
            k.problems(),
            ["[runner] kind = \"kubernetes\" needs `image`"]
        );
        let k =
            parse("kind = \"kubernetes\"\nimage = \"r/b:1\"\nenv = { BUTLER_AGENT = \"goose\" }")
                .expect("parses");
        assert!(k.problems().is_empty(), "{:?}", k.problems());
    }

    #[test]
    fn unknown_keys_kinds_and_reserved_variables_are_refused() {
        assert!(parse("kind = \"nomad\"").is_err());
        assert!(parse("imag = \"x\"").is_err());
        let k = parse("env = { BUTLER_TASK_BASE = \"x\", \"A-B\" = \"y\", HOME = \"/\" }")
            .expect("parses");
        assert_eq!(k.problems().len(), 3, "{:?}", k.problems());
    }
}
