//! Agent adapters: how each headless agent is launched for one attempt, behind one trait.
//!
//! An adapter only builds a command line, its stdin and the files it needs; the Maid writes the
//! files, builds the environment ([`crate::env`]) and runs the command ([`butler_worker::process::supervise`]).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use butler_worker::egress::Endpoint;

use crate::activity::Format;
use crate::contract::AgentKind;
use crate::env::AgentEnvNeeds;
use crate::error::MaidError;

mod aider;
mod claude;
mod codex;
mod goose;

pub(crate) use aider::Aider;
pub(crate) use claude::Claude;
pub(crate) use codex::Codex;
pub(crate) use goose::Goose;

/// Configuration of one agent (from Butler's config file; every field optional).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentConfig {
    /// The program; found on the agent's `PATH` when unset or a bare name.
    pub program: Option<PathBuf>,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// More MCP servers for the agent, in the agent's own syntax (goose: `--with-extension`).
    pub extra_extensions: Vec<String>,
    /// Appended to the command line as they are.
    pub extra_args: Vec<String>,
    /// The git policy hook command (Butler's PreToolUse hook), installed where the agent
    /// supports hooks.
    pub git_hook_command: Option<String>,
}

/// The restricted worker MCP server the agent may use (never the orchestrator's MCP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerMcpCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables the server needs (never secrets: the worker MCP holds no token).
    pub env: Vec<(String, String)>,
}

/// Everything an adapter needs to build one attempt's command.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    pub prompt: &'a str,
    /// The task's worktree; the agent runs there.
    pub workdir: &'a Path,
    /// A directory of the Maid's outside the worktree, for the agent's config files (read-only
    /// to the agent under the sandbox).
    pub task_dir: &'a Path,
    /// The agent's own directory outside the worktree, which it may write (history files).
    pub scratch: &'a Path,
    pub worker_mcp: &'a WorkerMcpCommand,
    /// The task's target paths (normalised, relative).
    pub targets: &'a [String],
    /// The agent's environment (already built), for `PATH` and provider settings.
    pub env: &'a [(OsString, OsString)],
    /// Whether Butler's sandbox confines the agent (an agent with a sandbox of its own, which
    /// cannot be built inside Butler's, leaves confinement to Butler's).
    pub confined: bool,
}

/// One attempt's command, ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Fed to stdin, which is then closed; `None` gives the agent `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// Files to write before the launch (all under `Launch::task_dir`).
    pub files: Vec<(PathBuf, String)>,
}

impl AgentCommand {
    /// Writes the command's files.
    pub fn write_files(&self) -> Result<(), MaidError> {
        for (path, text) in &self.files {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| MaidError::io("creating", parent, e))?;
            }
            std::fs::write(path, text).map_err(|e| MaidError::io("writing", path, e))?;
        }
        Ok(())
    }
}

/// One headless agent.
pub trait AgentAdapter: Send + Sync {
    fn kind(&self) -> AgentKind;

    /// What of Butler's environment the agent needs, and what it must be given.
    fn env_needs(&self) -> AgentEnvNeeds;

    /// Builds the command for one attempt.
    fn command(&self, launch: &Launch<'_>) -> Result<AgentCommand, MaidError>;

    /// Whether the Brain's git policy hook is installed for this agent too.
    fn installs_git_hook(&self) -> bool {
        false
    }

    /// How the command built by [`AgentAdapter::command`] writes what the agent does on
    /// stdout.
    fn output_format(&self) -> Format;

    /// Whether the agent has an MCP client, so the worker MCP is offered to it (and its
    /// absence is worth a warning).
    fn has_mcp_client(&self) -> bool {
        true
    }

    /// The model endpoints the agent uses when the user configured none in its environment
    /// (see [`AgentAdapter::model_endpoints`]): its provider's public host.
    fn default_endpoints(&self, _env: &[(OsString, OsString)]) -> Vec<Endpoint> {
        Vec::new()
    }

    /// The model endpoints the task's egress proxy admits for the agent: those the user
    /// configured in the agent's environment `env` ([`ENDPOINT_VARS`], passed by the adapter
    /// or by `env_allow`), else the agent's defaults.
    fn model_endpoints(&self, env: &[(OsString, OsString)]) -> Vec<Endpoint> {
        let configured: Vec<Endpoint> = ENDPOINT_VARS
            .iter()
            .filter_map(|(name, bare_port)| {
                let value = crate::env::lookup(env, name)?.to_str()?;
                Endpoint::parse(value, *bare_port, true)
            })
            .collect();
        if configured.is_empty() {
            self.default_endpoints(env)
        } else {
            configured
        }
    }
}

/// Variables that name a model endpoint (a URL, or `host[:port]` meaning the port given here),
/// as the agents and their providers read them.
pub(crate) const ENDPOINT_VARS: &[(&str, u16)] = &[
    ("OPENAI_BASE_URL", 443),
    ("OPENAI_API_BASE", 443),
    ("OPENAI_HOST", 443),
    ("ANTHROPIC_BASE_URL", 443),
    ("ANTHROPIC_HOST", 443),
    ("OLLAMA_HOST", 11434),
    ("OPENROUTER_HOST", 443),
    ("AZURE_OPENAI_ENDPOINT", 443),
    ("DATABRICKS_HOST", 443),
    ("GOOGLE_HOST", 443),
];

/// A provider's public endpoint (not configured: only an ordinary address of it is admitted).
pub(crate) fn public(url: &str) -> Vec<Endpoint> {
    Endpoint::parse(url, 443, false).into_iter().collect()
}

/// The adapter for `kind`.
pub fn adapter(kind: AgentKind, config: AgentConfig) -> Box<dyn AgentAdapter> {
    match kind {
        AgentKind::Goose => Box::new(Goose::new(config)),
        AgentKind::Claude => Box::new(Claude::new(config)),
        AgentKind::Codex => Box::new(Codex::new(config)),
        AgentKind::Aider => Box::new(Aider::new(config)),
    }
}

/// Resolves the agent's program: a configured path as it is, otherwise the name looked up on
/// the agent's `PATH`.
pub(crate) fn resolve_program(
    kind: AgentKind,
    configured: Option<&Path>,
    env: &[(OsString, OsString)],
) -> Result<PathBuf, MaidError> {
    let unavailable = |reason: String| MaidError::AgentUnavailable {
        agent: kind.name(),
        reason,
    };
    let wanted = configured.unwrap_or_else(|| Path::new(kind.name()));
    if wanted.components().count() > 1 || wanted.is_absolute() {
        return if butler_worker::process::is_executable(wanted) {
            Ok(wanted.to_path_buf())
        } else {
            Err(unavailable(format!(
                "`{}` is not an executable file",
                wanted.display()
            )))
        };
    }
    let path = crate::env::lookup(env, "PATH").unwrap_or(OsStr::new(""));
    std::env::split_paths(path)
        .map(|dir| dir.join(wanted))
        .find(|candidate| butler_worker::process::is_executable(candidate))
        .ok_or_else(|| unavailable(format!("`{}` is not on PATH", wanted.display())))
}

fn os(items: impl IntoIterator<Item = impl Into<OsString>>) -> Vec<OsString> {
    items.into_iter().map(Into::into).collect()
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// A directory with an executable `name` in it, and an env whose PATH is that directory.
    pub(crate) fn fake_path(name: &str) -> (tempfile::TempDir, Vec<(OsString, OsString)>) {
        let dir = tempfile::tempdir().expect("tempdir");
        butler_testkit::write_executable(&dir.path().join(name), "#!/bin/sh\n");
        let env = vec![("PATH".into(), dir.path().as_os_str().to_owned())];
        (dir, env)
    }

    pub(crate) fn worker() -> WorkerMcpCommand {
        WorkerMcpCommand {
            program: "/opt/butler/bin/butler".into(),
            args: vec![
                "worker-mcp".into(),
                "--task-file".into(),
                "/repo/.git/butler/tasks/t3/task.json".into(),
            ],
            env: vec![("BUTLER_LOG".into(), "warn".into())],
        }
    }

    pub(crate) fn strings(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().expect("utf-8")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    #[test]
    fn program_is_found_on_the_agents_path() {
        let (dir, env) = fake_path("goose");
        let found = resolve_program(AgentKind::Goose, None, &env).expect("found");
        assert_eq!(found, dir.path().join("goose"));
    }

    #[test]
    fn a_missing_program_is_reported() {
        let (_dir, env) = fake_path("goose");
        let err = resolve_program(AgentKind::Claude, None, &env).expect_err("missing");
        assert!(err.to_string().contains("`claude` is not on PATH"), "{err}");
        let err = resolve_program(AgentKind::Goose, Some(Path::new("/nope/goose")), &env)
            .expect_err("missing");
        assert!(err.to_string().contains("not an executable"), "{err}");
    }

    #[test]
    fn a_configured_path_is_used_as_it_is() {
        let (dir, _env) = fake_path("my-goose");
        let configured = dir.path().join("my-goose");
        let found = resolve_program(AgentKind::Goose, Some(&configured), &[]).expect("found");
        assert_eq!(found, configured);
    }

    #[test]
    fn model_endpoints_are_the_users_else_the_agents_defaults() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        let shown = |list: Vec<Endpoint>| -> Vec<String> {
            list.iter()
                .map(|e| {
                    format!(
                        "{e} {}",
                        if e.configured {
                            "configured"
                        } else {
                            "default"
                        }
                    )
                })
                .collect()
        };
        let claude = adapter(AgentKind::Claude, AgentConfig::default());
        assert_eq!(
            shown(claude.model_endpoints(&env(&[]))),
            ["api.anthropic.com:443 default"]
        );
        assert_eq!(
            shown(claude.model_endpoints(&env(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/x")]))),
            ["127.0.0.1:9 configured"]
        );
        let goose = adapter(AgentKind::Goose, AgentConfig::default());
        assert_eq!(
            shown(goose.model_endpoints(&env(&[("GOOSE_PROVIDER", "ollama")]))),
            ["localhost:11434 configured"]
        );
        assert_eq!(
            shown(goose.model_endpoints(&env(&[
                ("GOOSE_PROVIDER", "ollama"),
                ("OLLAMA_HOST", "10.0.0.2")
            ]))),
            ["10.0.0.2:11434 configured"]
        );
        assert_eq!(
            shown(goose.model_endpoints(&env(&[("GOOSE_PROVIDER", "openai")]))),
            ["api.openai.com:443 default"]
        );
        assert!(goose.model_endpoints(&env(&[])).is_empty());
        let codex = adapter(AgentKind::Codex, AgentConfig::default());
        assert_eq!(
            shown(codex.model_endpoints(&env(&[("OPENAI_BASE_URL", "https://llm.corp/v1")]))),
            ["llm.corp:443 configured"]
        );
        let aider = adapter(AgentKind::Aider, AgentConfig::default());
        assert_eq!(aider.model_endpoints(&env(&[])).len(), 2);
    }

    #[test]
    fn every_kind_has_an_adapter() {
        for kind in [
            AgentKind::Goose,
            AgentKind::Claude,
            AgentKind::Codex,
            AgentKind::Aider,
        ] {
            assert_eq!(adapter(kind, AgentConfig::default()).kind(), kind);
        }
    }
}
