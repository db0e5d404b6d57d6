//! Claude Code in print mode: `claude -p --output-format stream-json --verbose` (every tool call
//! as it happens, see [`crate::activity`]) with only Butler's worker MCP (`--mcp-config`,
//! `--strict-mcp-config`), a fixed tool set, `--permission-mode dontAsk`, and — when a hook
//! command is configured — the Brain's git policy hook installed through `--settings`.
//!
//! Claude Code refuses its `Write`/`Edit` tools under any `.git/` path; the task's worktree
//! lies outside the git directory for that reason. Its own state goes to the agent's `HOME`
//! (writable under Butler's sandbox); its worker MCP runs as its child, inside the sandbox.

use serde_json::json;

use crate::activity::Format;
use crate::contract::AgentKind;
use crate::env::AgentEnvNeeds;
use crate::error::MaidError;

use super::{AgentAdapter, AgentCommand, AgentConfig, Launch, os, resolve_program};

/// Built-in tools the agent gets: file work and a shell (whose git use the hook blocks).
const TOOLS: &str = "Bash,Edit,Write,Read,Glob,Grep";
/// The worker MCP's server name; its tools appear as `mcp__butler__<tool>`.
const SERVER: &str = "butler";

pub(crate) struct Claude {
    config: AgentConfig,
}

impl Claude {
    pub(crate) fn new(config: AgentConfig) -> Self {
        Self { config }
    }
}

impl AgentAdapter for Claude {
    fn kind(&self) -> AgentKind {
        AgentKind::Claude
    }

    fn env_needs(&self) -> AgentEnvNeeds {
        AgentEnvNeeds {
            pass: vec!["ANTHROPIC_*", "CLAUDE_CODE_*"],
            set: vec![
                ("DISABLE_AUTOUPDATER", "1".into()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ],
        }
    }

    fn command(&self, launch: &Launch<'_>) -> Result<AgentCommand, MaidError> {
        let program = resolve_program(
            AgentKind::Claude,
            self.config.program.as_deref(),
            launch.env,
        )?;
        let worker = launch.worker_mcp;
        let env: serde_json::Map<String, serde_json::Value> = worker
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mcp = json!({"mcpServers": {SERVER: {
            "type": "stdio",
            "command": worker.program,
            "args": worker.args,
            "env": env,
        }}});
        let mcp_path = launch.task_dir.join("claude-mcp.json");
        let mut files = vec![(mcp_path.clone(), pretty(&mcp))];
        let allowed = format!("{TOOLS},mcp__{SERVER}");
        // stream-json needs --verbose in print mode; it shows every tool call as it happens.
        let mut args = os([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--mcp-config",
        ]);
        args.push(mcp_path.into_os_string());
        args.extend(os([
            "--strict-mcp-config",
            "--tools",
            TOOLS,
            "--allowedTools",
            &allowed,
            "--permission-mode",
            "dontAsk",
            "--no-session-persistence",
        ]));
        if let Some(hook) = &self.config.git_hook_command {
            let settings = json!({"hooks": {"PreToolUse": [{
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": hook}],
            }]}});
            let settings_path = launch.task_dir.join("claude-settings.json");
            files.push((settings_path.clone(), pretty(&settings)));
            args.push("--settings".into());
            args.push(settings_path.into_os_string());
        }
        if let Some(model) = &self.config.model {
            args.extend(os(["--model", model.as_str()]));
        }
        args.extend(os(&self.config.extra_args));
        Ok(AgentCommand {
            program,
            args,
            stdin: Some(launch.prompt.as_bytes().to_vec()),
            files,
        })
    }

    fn installs_git_hook(&self) -> bool {
        self.config.git_hook_command.is_some()
    }

    fn default_endpoints(
        &self,
        _env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Vec<butler_worker::egress::Endpoint> {
        super::public("https://api.anthropic.com")
    }

    fn output_format(&self) -> Format {
        Format::ClaudeStreamJson
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).expect("a JSON value always serialises")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::test_support::*;
    use super::*;

    #[test]
    fn print_mode_with_only_the_worker_mcp_and_the_git_hook() {
        let (dir, env) = fake_path("claude");
        let worker = worker();
        let config = AgentConfig {
            model: Some("sonnet".into()),
            git_hook_command: Some("/opt/butler/bin/butler hook".into()),
            ..Default::default()
        };
        let launch = Launch {
            prompt: "the prompt",
            workdir: Path::new("/wt"),
            task_dir: Path::new("/tasks/1"),
            scratch: Path::new("/wt.agent"),
            worker_mcp: &worker,
            targets: &[],
            env: &env,
            confined: true,
        };
        let adapter = Claude::new(config);
        let cmd = adapter.command(&launch).expect("builds");
        assert_eq!(cmd.program, dir.path().join("claude"));
        assert_eq!(
            strings(&cmd.args),
            vec![
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--mcp-config",
                "/tasks/1/claude-mcp.json",
                "--strict-mcp-config",
                "--tools",
                "Bash,Edit,Write,Read,Glob,Grep",
                "--allowedTools",
                "Bash,Edit,Write,Read,Glob,Grep,mcp__butler",
                "--permission-mode",
                "dontAsk",
                "--no-session-persistence",
                "--settings",
                "/tasks/1/claude-settings.json",
                "--model",
                "sonnet",
            ]
        );
        assert_eq!(cmd.stdin.as_deref(), Some(b"the prompt".as_slice()));
        assert!(adapter.installs_git_hook());

        let mcp: serde_json::Value = serde_json::from_str(&cmd.files[0].1).expect("json");
        assert_eq!(
            mcp["mcpServers"]["butler"]["command"],
            "/opt/butler/bin/butler"
        );
        assert_eq!(mcp["mcpServers"]["butler"]["args"][0], "worker-mcp");
        let settings: serde_json::Value = serde_json::from_str(&cmd.files[1].1).expect("json");
        let hook = &settings["hooks"]["PreToolUse"][0];
        assert_eq!(hook["matcher"], "Bash");
        assert_eq!(hook["hooks"][0]["command"], "/opt/butler/bin/butler hook");
    }

    #[test]
    fn without_a_hook_command_no_settings_are_passed() {
        let (_dir, env) = fake_path("claude");
        let worker = worker();
        let launch = Launch {
            prompt: "p",
            workdir: Path::new("/wt"),
            task_dir: Path::new("/tasks/1"),
            scratch: Path::new("/wt.agent"),
            worker_mcp: &worker,
            targets: &[],
            env: &env,
            confined: true,
        };
        let adapter = Claude::new(AgentConfig::default());
        let cmd = adapter.command(&launch).expect("builds");
        assert!(!strings(&cmd.args).contains(&"--settings"));
        assert_eq!(cmd.files.len(), 1);
        assert!(!adapter.installs_git_hook());
    }
}
