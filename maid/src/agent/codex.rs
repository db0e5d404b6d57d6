//! OpenAI Codex CLI, as it was seen to work (0.171.0 against a scripted model):
//! `codex exec --json --skip-git-repo-check --ephemeral --ignore-user-config -C <worktree>
//! --sandbox <mode> -c model_provider=butler -c model_providers.butler={…} -c mcp_servers.butler…
//! -`, the prompt on stdin.
//!
//! - The provider comes from `-c` (with `--ignore-user-config` there is none otherwise, and
//!   Codex hangs offline): `base_url` from `OPENAI_BASE_URL` in the agent's environment,
//!   `wire_api = "responses"`, no retries (an HTTP 500 costs one request instead of 30), and
//!   `env_key = "OPENAI_API_KEY"` only when that key is set (without `env_key` no
//!   `Authorization` is sent, which local endpoints accept).
//! - The worker MCP's tools are approved (`default_tools_approval_mode = "approve"`; under
//!   `codex exec` anything else is refused) and `required = true` (a broken command fails the
//!   run at once instead of silently running without it). It gets only the variables it is
//!   given (`env`).
//! - Commands run with `bash -c`, not `bash -lc` (`allow_login_shell = false`: a login shell
//!   resets `PATH`), and never see the provider key or other secrets
//!   (`shell_environment_policy`: the default excludes of `*KEY*`/`*TOKEN*`/`*SECRET*` applied,
//!   and the key's name excluded explicitly).
//! - An unreachable endpoint makes Codex wait forever even with no retries: the Maid's wall
//!   clock stops it.
//! - Codex's own sandbox is bubblewrap, which needs user namespaces that Landlock refuses, so
//!   the two cannot be stacked. Under Butler's sandbox Codex runs with `--sandbox
//!   danger-full-access` and Butler's rules hold for Codex itself, its commands and its MCP
//!   servers alike (Codex's own confines only its commands). Without Butler's sandbox, Codex's
//!   `workspace-write` is kept, with `/tmp` and `$TMPDIR` excluded from its writable roots.

use crate::activity::Format;
use crate::contract::AgentKind;
use crate::env::{AgentEnvNeeds, lookup};
use crate::error::MaidError;

use super::{AgentAdapter, AgentCommand, AgentConfig, Launch, os, resolve_program};

/// The provider id the Maid defines on the command line.
const PROVIDER: &str = "butler";
/// The variable that holds the provider's key, when it needs one.
const KEY_VAR: &str = "OPENAI_API_KEY";
/// The variable that names the provider's endpoint (Codex itself ignores it; the Maid reads it).
const BASE_URL_VAR: &str = "OPENAI_BASE_URL";

pub(crate) struct Codex {
    config: AgentConfig,
}

impl Codex {
    pub(crate) fn new(config: AgentConfig) -> Self {
        Self { config }
    }
}

/// A TOML basic string (JSON's string escapes are valid TOML).
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serialises")
}

fn toml_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.into_iter().map(toml_string).collect();
    format!("[{}]", items.join(","))
}

impl AgentAdapter for Codex {
    fn kind(&self) -> AgentKind {
        AgentKind::Codex
    }

    fn env_needs(&self) -> AgentEnvNeeds {
        AgentEnvNeeds {
            // Not `CODEX_*`: a `CODEX_HOME` of the user's would take Codex out of its own
            // HOME (where it writes about 1 MB of state per run).
            pass: vec!["OPENAI_*"],
            set: Vec::new(),
        }
    }

    fn command(&self, launch: &Launch<'_>) -> Result<AgentCommand, MaidError> {
        let program =
            resolve_program(AgentKind::Codex, self.config.program.as_deref(), launch.env)?;
        let text = |name: &str| {
            lookup(launch.env, name)
                .and_then(|v| v.to_str())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let base_url = text(BASE_URL_VAR).ok_or(MaidError::AgentNotConfigured {
            agent: "codex",
            what: "the model endpoint",
            env: BASE_URL_VAR,
        })?;
        let worker = launch.worker_mcp;
        let worker_program = worker.program.to_str().ok_or_else(|| {
            MaidError::WorkerCommand(format!("`{}` is not UTF-8", worker.program.display()))
        })?;
        let worker_env: Vec<String> = worker
            .env
            .iter()
            .map(|(k, v)| format!("{}={}", toml_string(k), toml_string(v)))
            .collect();
        let name = self
            .config
            .provider
            .as_deref()
            .unwrap_or("OpenAI-compatible");
        let mut provider = vec![
            format!("name={}", toml_string(name)),
            format!("base_url={}", toml_string(&base_url)),
            "wire_api=\"responses\"".to_owned(),
            "request_max_retries=0".to_owned(),
            "stream_max_retries=0".to_owned(),
        ];
        if text(KEY_VAR).is_some() {
            provider.push(format!("env_key={}", toml_string(KEY_VAR)));
        }

        let mut args = os([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--ephemeral",
            "--ignore-user-config",
            "-C",
        ]);
        args.push(launch.workdir.as_os_str().to_owned());
        if launch.confined {
            args.extend(os(["--sandbox", "danger-full-access"]));
        } else {
            args.extend(os([
                "--sandbox",
                "workspace-write",
                "-c",
                "sandbox_workspace_write.exclude_slash_tmp=true",
                "-c",
                "sandbox_workspace_write.exclude_tmpdir_env_var=true",
            ]));
        }
        if let Some(model) = &self.config.model {
            args.extend(os(["-m", model.as_str()]));
        }
        let settings = [
            format!("model_provider={}", toml_string(PROVIDER)),
            format!("model_providers.{PROVIDER}={{{}}}", provider.join(",")),
            format!("mcp_servers.butler.command={}", toml_string(worker_program)),
            format!(
                "mcp_servers.butler.args={}",
                toml_list(worker.args.iter().map(String::as_str))
            ),
            format!("mcp_servers.butler.env={{{}}}", worker_env.join(",")),
            "mcp_servers.butler.default_tools_approval_mode=\"approve\"".to_owned(),
            "mcp_servers.butler.required=true".to_owned(),
            "allow_login_shell=false".to_owned(),
            "shell_environment_policy.ignore_default_excludes=false".to_owned(),
            format!("shell_environment_policy.exclude={}", toml_list([KEY_VAR])),
        ];
        for setting in settings {
            args.push("-c".into());
            args.push(setting.into());
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

    fn output_format(&self) -> Format {
        Format::CodexJson
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::test_support::*;
    use super::*;

    fn launch<'a>(
        env: &'a [(std::ffi::OsString, std::ffi::OsString)],
        worker: &'a super::super::WorkerMcpCommand,
        confined: bool,
    ) -> Launch<'a> {
        Launch {
            prompt: "the prompt",
            workdir: Path::new("/data/worktrees/repo-0123/task-1"),
            task_dir: Path::new("/tasks/1"),
            scratch: Path::new("/data/worktrees/repo-0123/task-1.agent"),
            worker_mcp: worker,
            targets: &[],
            env,
            confined,
        }
    }

    #[test]
    fn exec_with_the_observed_provider_mcp_and_shell_settings() {
        let (dir, mut env) = fake_path("codex");
        env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:4000/v1".into()));
        env.push(("OPENAI_API_KEY".into(), "sk-test".into()));
        let worker = worker();
        let config = AgentConfig {
            model: Some("gpt-x".into()),
            provider: Some("local".into()),
            ..Default::default()
        };
        let cmd = Codex::new(config)
            .command(&launch(&env, &worker, true))
            .expect("builds");
        assert_eq!(cmd.program, dir.path().join("codex"));
        assert_eq!(
            strings(&cmd.args),
            vec![
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--ephemeral",
                "--ignore-user-config",
                "-C",
                "/data/worktrees/repo-0123/task-1",
                "--sandbox",
                "danger-full-access",
                "-m",
                "gpt-x",
                "-c",
                "model_provider=\"butler\"",
                "-c",
                "model_providers.butler={name=\"local\",base_url=\"http://127.0.0.1:4000/v1\",\
                 wire_api=\"responses\",request_max_retries=0,stream_max_retries=0,\
                 env_key=\"OPENAI_API_KEY\"}",
                "-c",
                "mcp_servers.butler.command=\"/opt/butler/bin/butler\"",
                "-c",
                "mcp_servers.butler.args=[\"worker-mcp\",\"--task-file\",\
                 \"/repo/.git/butler/tasks/t3/task.json\"]",
                "-c",
                "mcp_servers.butler.env={\"BUTLER_LOG\"=\"warn\"}",
                "-c",
                "mcp_servers.butler.default_tools_approval_mode=\"approve\"",
                "-c",
                "mcp_servers.butler.required=true",
                "-c",
                "allow_login_shell=false",
                "-c",
                "shell_environment_policy.ignore_default_excludes=false",
                "-c",
                "shell_environment_policy.exclude=[\"OPENAI_API_KEY\"]",
                "-",
            ]
        );
        assert_eq!(cmd.stdin.as_deref(), Some(b"the prompt".as_slice()));
    }

    #[test]
    fn unconfined_it_keeps_its_own_sandbox_without_tmp_and_a_keyless_endpoint_sends_no_key() {
        let (_dir, mut env) = fake_path("codex");
        env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:4000/v1".into()));
        let worker = worker();
        let cmd = Codex::new(AgentConfig::default())
            .command(&launch(&env, &worker, false))
            .expect("builds");
        let args = strings(&cmd.args);
        assert_eq!(
            &args[7..13],
            [
                "--sandbox",
                "workspace-write",
                "-c",
                "sandbox_workspace_write.exclude_slash_tmp=true",
                "-c",
                "sandbox_workspace_write.exclude_tmpdir_env_var=true"
            ]
        );
        assert!(args.iter().all(|a| !a.contains("env_key")), "{args:?}");
    }

    #[test]
    fn without_an_endpoint_codex_is_not_launched() {
        let (_dir, env) = fake_path("codex");
        let worker = worker();
        let err = Codex::new(AgentConfig::default())
            .command(&launch(&env, &worker, true))
            .expect_err("no endpoint");
        assert!(err.to_string().contains("OPENAI_BASE_URL"), "{err}");
    }
}
