//! Goose, launched as the user's earlier Butler launched it:
//! `goose run --instructions - --no-session --quiet --provider P --model M --no-profile
//! --with-builtin developer --with-extension "<worker MCP>" [--with-extension …]`, the prompt on
//! stdin, plus `--output-format stream-json` so its tool calls can be watched
//! ([`crate::activity`]). Goose starts the worker MCP as its own child, so under Butler's sandbox the worker MCP
//! is confined too: it writes the agent's notes to the notes file in the agent's own directory,
//! never to the ledger.

use crate::activity::Format;
use crate::contract::AgentKind;
use crate::env::{AgentEnvNeeds, lookup};
use crate::error::MaidError;

use super::{
    AgentAdapter, AgentCommand, AgentConfig, Launch, WorkerMcpCommand, os, resolve_program,
};

pub(crate) struct Goose {
    config: AgentConfig,
}

impl Goose {
    pub(crate) fn new(config: AgentConfig) -> Self {
        Self { config }
    }

    /// From the config, else from `GOOSE_<ENV>` in the agent's environment.
    fn setting(
        &self,
        configured: Option<&String>,
        what: &'static str,
        env_name: &'static str,
        launch: &Launch<'_>,
    ) -> Result<String, MaidError> {
        configured
            .cloned()
            .or_else(|| {
                lookup(launch.env, env_name)
                    .and_then(|v| v.to_str())
                    .map(str::to_owned)
            })
            .filter(|v| !v.trim().is_empty())
            .ok_or(MaidError::AgentNotConfigured {
                agent: "goose",
                what,
                env: env_name,
            })
    }
}

impl AgentAdapter for Goose {
    fn kind(&self) -> AgentKind {
        AgentKind::Goose
    }

    fn env_needs(&self) -> AgentEnvNeeds {
        AgentEnvNeeds {
            pass: vec![
                "GOOSE_*",
                "OPENAI_*",
                "ANTHROPIC_*",
                "OLLAMA_*",
                "OPENROUTER_*",
                "GOOGLE_*",
                "GEMINI_*",
                "AZURE_OPENAI_*",
                "DATABRICKS_*",
                "GROQ_*",
                "XAI_*",
            ],
            set: vec![
                // Unset means auto in 1.43, but `approve` from the user's env would exit 1 at
                // the first tool call (seen with goose 1.43 and a scripted model).
                ("GOOSE_MODE", "auto".into()),
                ("GOOSE_DISABLE_SESSION_NAMING", "true".into()),
                ("GOOSE_DISABLE_KEYRING", "1".into()),
                ("GOOSE_TELEMETRY_ENABLED", "false".into()),
            ],
        }
    }

    fn command(&self, launch: &Launch<'_>) -> Result<AgentCommand, MaidError> {
        let program =
            resolve_program(AgentKind::Goose, self.config.program.as_deref(), launch.env)?;
        let provider = self.setting(
            self.config.provider.as_ref(),
            "provider",
            "GOOSE_PROVIDER",
            launch,
        )?;
        let model = self.setting(self.config.model.as_ref(), "model", "GOOSE_MODEL", launch)?;
        let worker = extension_string(launch.worker_mcp)?;
        let mut args = os([
            "run",
            "--instructions",
            "-",
            "--no-session",
            "--quiet",
            "--output-format",
            "stream-json",
            "--provider",
            &provider,
            "--model",
            &model,
            "--no-profile",
            "--with-builtin",
            "developer",
            "--with-extension",
            &worker,
        ]);
        for extra in &self.config.extra_extensions {
            args.extend(os(["--with-extension", extra.as_str()]));
        }
        args.extend(os(&self.config.extra_args));
        Ok(AgentCommand {
            program,
            args,
            stdin: Some(launch.prompt.as_bytes().to_vec()),
            files: Vec::new(),
        })
    }

    fn output_format(&self) -> Format {
        Format::GooseStreamJson
    }

    /// The provider's public host (configured or `GOOSE_PROVIDER`); ollama's default is a
    /// model on this machine, which choosing that provider configures.
    fn default_endpoints(
        &self,
        env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Vec<butler_worker::egress::Endpoint> {
        let provider = self.config.provider.clone().or_else(|| {
            lookup(env, "GOOSE_PROVIDER")
                .and_then(|v| v.to_str())
                .map(str::to_owned)
        });
        let url = match provider.as_deref().map(str::trim) {
            Some("openai") => "https://api.openai.com",
            Some("anthropic") => "https://api.anthropic.com",
            Some("openrouter") => "https://openrouter.ai",
            Some("google" | "gemini") => "https://generativelanguage.googleapis.com",
            Some("groq") => "https://api.groq.com",
            Some("xai") => "https://api.x.ai",
            Some("ollama") => {
                return butler_worker::egress::Endpoint::parse("localhost", 11434, true)
                    .into_iter()
                    .collect();
            }
            _ => return Vec::new(),
        };
        super::public(url)
    }
}

/// Writes the worker MCP command in goose's `--with-extension` syntax: leading `KEY=VAL`
/// tokens are the server's environment, then the command and its arguments; `"…"` groups a
/// token with spaces; there are no escapes, so a `"` cannot be passed at all.
pub(crate) fn extension_string(cmd: &WorkerMcpCommand) -> Result<String, MaidError> {
    let program = cmd.program.to_str().ok_or_else(|| {
        MaidError::WorkerCommand(format!("`{}` is not UTF-8", cmd.program.display()))
    })?;
    if program.contains('=') {
        return Err(MaidError::WorkerCommand(format!(
            "`{program}` contains `=` and would be read as an environment variable"
        )));
    }
    let mut tokens = Vec::new();
    for (key, value) in &cmd.env {
        tokens.push(token(&format!("{key}={value}"))?);
    }
    tokens.push(token(program)?);
    for arg in &cmd.args {
        tokens.push(token(arg)?);
    }
    Ok(tokens.join(" "))
}

fn token(text: &str) -> Result<String, MaidError> {
    if text.contains('"') {
        return Err(MaidError::WorkerCommand(format!(
            "`{text}` contains a `\"`"
        )));
    }
    if text.is_empty() || text.contains(char::is_whitespace) || text.starts_with('\'') {
        Ok(format!("\"{text}\""))
    } else {
        Ok(text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::Path;

    use super::super::test_support::*;
    use super::*;

    fn launch<'a>(env: &'a [(OsString, OsString)], worker: &'a WorkerMcpCommand) -> Launch<'a> {
        Launch {
            prompt: "do the thing",
            workdir: Path::new("/data/butler/worktrees/repo-0123/task-1"),
            task_dir: Path::new("/repo/.git/butler/tasks/1"),
            scratch: Path::new("/data/butler/worktrees/repo-0123/task-1.agent"),
            worker_mcp: worker,
            targets: &[],
            env,
            confined: true,
        }
    }

    #[test]
    fn command_line_is_the_seeds() {
        let (dir, env) = fake_path("goose");
        let worker = worker();
        let config = AgentConfig {
            provider: Some("openai".into()),
            model: Some("gpt-x".into()),
            extra_extensions: vec!["npx -y @acme/docs-mcp".into()],
            ..Default::default()
        };
        let cmd = Goose::new(config)
            .command(&launch(&env, &worker))
            .expect("builds");
        assert_eq!(cmd.program, dir.path().join("goose"));
        assert_eq!(
            strings(&cmd.args),
            vec![
                "run",
                "--instructions",
                "-",
                "--no-session",
                "--quiet",
                "--output-format",
                "stream-json",
                "--provider",
                "openai",
                "--model",
                "gpt-x",
                "--no-profile",
                "--with-builtin",
                "developer",
                "--with-extension",
                "BUTLER_LOG=warn /opt/butler/bin/butler worker-mcp --task-file /repo/.git/butler/tasks/t3/task.json",
                "--with-extension",
                "npx -y @acme/docs-mcp",
            ]
        );
        assert_eq!(cmd.stdin.as_deref(), Some(b"do the thing".as_slice()));
        assert!(cmd.files.is_empty());
    }

    #[test]
    fn provider_and_model_come_from_the_environment_when_not_configured() {
        let (_dir, mut env) = fake_path("goose");
        env.push(("GOOSE_PROVIDER".into(), "anthropic".into()));
        env.push(("GOOSE_MODEL".into(), "claude-x".into()));
        let worker = worker();
        let cmd = Goose::new(AgentConfig::default())
            .command(&launch(&env, &worker))
            .expect("builds");
        let args = strings(&cmd.args);
        assert_eq!(
            &args[7..11],
            ["--provider", "anthropic", "--model", "claude-x"]
        );
    }

    #[test]
    fn missing_model_is_a_configuration_error() {
        let (_dir, mut env) = fake_path("goose");
        env.push(("GOOSE_PROVIDER".into(), "openai".into()));
        let worker = worker();
        let err = Goose::new(AgentConfig::default())
            .command(&launch(&env, &worker))
            .expect_err("no model");
        assert!(
            matches!(err, MaidError::AgentNotConfigured { what: "model", .. }),
            "{err}"
        );
    }

    #[test]
    fn extension_tokens_with_spaces_are_quoted_and_quotes_refused() {
        let mut worker = worker();
        worker.program = "/opt/my tools/butler".into();
        assert_eq!(
            extension_string(&worker).expect("quotable"),
            "BUTLER_LOG=warn \"/opt/my tools/butler\" worker-mcp --task-file /repo/.git/butler/tasks/t3/task.json"
        );
        worker.args.push("say \"hi\"".into());
        assert!(extension_string(&worker).is_err());
    }

    #[test]
    fn goose_mode_is_forced_to_auto() {
        let needs = Goose::new(AgentConfig::default()).env_needs();
        assert!(needs.set.contains(&("GOOSE_MODE", "auto".into())));
        assert!(
            needs
                .set
                .contains(&("GOOSE_DISABLE_SESSION_NAMING", "true".into()))
        );
    }
}
