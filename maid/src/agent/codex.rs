//! OpenAI Codex: `codex exec --sandbox workspace-write --skip-git-repo-check --ephemeral
//! --ignore-user-config -C <worktree> -c mcp_servers.butler.… -`, the prompt on stdin.
//!
//! The `mcp_servers` overrides follow Codex's `config.toml` keys (`command`, `args`, `env`);
//! their `-c` form is not confirmed against a real Codex run yet.

use crate::contract::AgentKind;
use crate::env::AgentEnvNeeds;
use crate::error::MaidError;

use super::{AgentAdapter, AgentCommand, AgentConfig, Launch, os, resolve_program};

pub struct Codex {
    config: AgentConfig,
}

impl Codex {
    pub fn new(config: AgentConfig) -> Self {
        Self { config }
    }
}

/// A TOML basic string (JSON's string escapes are valid TOML).
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serialises")
}

impl AgentAdapter for Codex {
    fn kind(&self) -> AgentKind {
        AgentKind::Codex
    }

    fn env_needs(&self) -> AgentEnvNeeds {
        AgentEnvNeeds {
            pass: vec!["OPENAI_*", "CODEX_*"],
            set: Vec::new(),
        }
    }

    fn command(&self, launch: &Launch<'_>) -> Result<AgentCommand, MaidError> {
        let program =
            resolve_program(AgentKind::Codex, self.config.program.as_deref(), launch.env)?;
        let worker = launch.worker_mcp;
        let worker_program = worker.program.to_str().ok_or_else(|| {
            MaidError::WorkerCommand(format!("`{}` is not UTF-8", worker.program.display()))
        })?;
        let worker_args: Vec<String> = worker.args.iter().map(|a| toml_string(a)).collect();
        let worker_env: Vec<String> = worker
            .env
            .iter()
            .map(|(k, v)| format!("{} = {}", toml_string(k), toml_string(v)))
            .collect();

        let mut args = os([
            "exec",
            "--sandbox",
            "workspace-write",
            "--skip-git-repo-check",
            "--ephemeral",
            "--ignore-user-config",
            "-C",
        ]);
        args.push(launch.workdir.as_os_str().to_owned());
        if let Some(model) = &self.config.model {
            args.extend(os(["--model", model.as_str()]));
        }
        args.extend(os([
            "-c".to_owned(),
            format!("mcp_servers.butler.command={}", toml_string(worker_program)),
            "-c".to_owned(),
            format!("mcp_servers.butler.args=[{}]", worker_args.join(", ")),
        ]));
        if !worker_env.is_empty() {
            args.extend(os([
                "-c".to_owned(),
                format!("mcp_servers.butler.env={{ {} }}", worker_env.join(", ")),
            ]));
        }
        args.extend(os(&self.config.extra_args));
        args.push("-".into());
        Ok(AgentCommand {
            program,
            args,
            stdin: Some(launch.prompt.as_bytes().to_vec()),
            files: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::test_support::*;
    use super::*;

    #[test]
    fn exec_in_the_worktree_with_the_workspace_sandbox() {
        let (dir, env) = fake_path("codex");
        let worker = worker();
        let launch = Launch {
            prompt: "the prompt",
            workdir: Path::new("/repo/.git/butler/worktrees/task-1"),
            task_dir: Path::new("/tasks/1"),
            worker_mcp: &worker,
            targets: &[],
            env: &env,
        };
        let config = AgentConfig {
            model: Some("gpt-x".into()),
            ..Default::default()
        };
        let cmd = Codex::new(config).command(&launch).expect("builds");
        assert_eq!(cmd.program, dir.path().join("codex"));
        assert_eq!(
            strings(&cmd.args),
            vec![
                "exec",
                "--sandbox",
                "workspace-write",
                "--skip-git-repo-check",
                "--ephemeral",
                "--ignore-user-config",
                "-C",
                "/repo/.git/butler/worktrees/task-1",
                "--model",
                "gpt-x",
                "-c",
                "mcp_servers.butler.command=\"/opt/butler/bin/butler\"",
                "-c",
                "mcp_servers.butler.args=[\"worker-mcp\", \"--task\", \"20260415-003\"]",
                "-c",
                "mcp_servers.butler.env={ \"BUTLER_LEDGER\" = \"/repo/.git/butler/ledger.db\" }",
                "-",
            ]
        );
        assert_eq!(cmd.stdin.as_deref(), Some(b"the prompt".as_slice()));
    }
}
