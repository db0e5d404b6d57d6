//! Aider, with the command line that kept a real aider 0.86.2 on its configured endpoint and
//! left no files in the tree (tried against a scripted model). The prompt goes in a file
//! (`--message-file`, so its size is not bound by the argument limit); stdin is `/dev/null`.
//! Aider has no MCP client and no hooks: it gets no worker MCP. Its history files go to the
//! agent's own writable directory. Under Butler's sandbox it also gets `--no-git`: its own
//! `git add` would be refused at the kernel anyway (the index is read-only to it), and the Maid
//! records the work.

use std::path::Path;

use crate::activity::Format;
use crate::contract::AgentKind;
use crate::env::AgentEnvNeeds;
use crate::error::MaidError;

use super::{AgentAdapter, AgentCommand, AgentConfig, Launch, os, resolve_program};

pub(crate) struct Aider {
    config: AgentConfig,
}

impl Aider {
    pub(crate) fn new(config: AgentConfig) -> Self {
        Self { config }
    }
}

impl AgentAdapter for Aider {
    fn kind(&self) -> AgentKind {
        AgentKind::Aider
    }

    fn env_needs(&self) -> AgentEnvNeeds {
        AgentEnvNeeds {
            pass: vec!["OPENAI_*", "ANTHROPIC_*", "AIDER_*"],
            // Without it, aider fetches price lists from the internet.
            set: vec![("LITELLM_LOCAL_MODEL_COST_MAP", "True".into())],
        }
    }

    fn default_endpoints(
        &self,
        _env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Vec<butler_worker::egress::Endpoint> {
        // Aider's model decides the provider; without an endpoint of the user's, the two it
        // is mostly run against.
        let mut list = super::public("https://api.openai.com");
        list.extend(super::public("https://api.anthropic.com"));
        list
    }

    fn command(&self, launch: &Launch<'_>) -> Result<AgentCommand, MaidError> {
        let program =
            resolve_program(AgentKind::Aider, self.config.program.as_deref(), launch.env)?;
        let prompt_file = launch.task_dir.join("aider-prompt.md");
        let mut args = Vec::new();
        if let Some(model) = &self.config.model {
            args.extend(os(["--model", model.as_str()]));
        }
        args.extend(os([
            "--edit-format",
            "diff",
            "--yes-always",
            "--no-auto-commits",
            "--no-dirty-commits",
            "--no-suggest-shell-commands",
            "--no-auto-lint",
            "--no-auto-test",
            "--no-check-update",
            "--no-analytics",
            "--no-show-release-notes",
            "--no-show-model-warnings",
            "--map-tokens",
            "0",
            "--no-gitignore",
            "--env-file",
            "/dev/null",
        ]));
        for (flag, name) in [
            ("--input-history-file", "aider-input.history"),
            ("--chat-history-file", "aider-chat.md"),
        ] {
            args.push(flag.into());
            args.push(launch.scratch.join(name).into_os_string());
        }
        if launch.confined {
            args.push("--no-git".into());
        }
        args.push("--message-file".into());
        args.push(prompt_file.clone().into_os_string());
        args.extend(os(&self.config.extra_args));
        // Plain file targets that exist go into the chat; directories and globs do not.
        for target in launch.targets {
            let plain =
                !target.ends_with('/') && !target.contains(['*', '?', '[']) && target != ".";
            if plain && Path::new(launch.workdir).join(target).is_file() {
                args.push(target.into());
            }
        }
        Ok(AgentCommand {
            program,
            args,
            stdin: None,
            files: vec![(prompt_file, launch.prompt.to_owned())],
        })
    }

    fn output_format(&self) -> Format {
        Format::AiderText
    }

    fn has_mcp_client(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn observed_flags_prompt_file_and_existing_file_targets() {
        let (dir, env) = fake_path("aider");
        let work = tempfile::tempdir().expect("tempdir");
        std::fs::write(work.path().join("README.md"), "x").expect("write");
        let worker = worker();
        let targets = vec![
            "README.md".to_owned(),
            "src/".to_owned(),
            "missing.rs".to_owned(),
        ];
        let launch = Launch {
            prompt: "the prompt",
            workdir: work.path(),
            task_dir: Path::new("/tasks/1"),
            scratch: Path::new("/wt/task-1.agent"),
            worker_mcp: &worker,
            targets: &targets,
            env: &env,
            confined: false,
        };
        let config = AgentConfig {
            model: Some("openai/fake".into()),
            ..Default::default()
        };
        let cmd = Aider::new(config).command(&launch).expect("builds");
        assert_eq!(cmd.program, dir.path().join("aider"));
        assert_eq!(
            strings(&cmd.args),
            vec![
                "--model",
                "openai/fake",
                "--edit-format",
                "diff",
                "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-suggest-shell-commands",
                "--no-auto-lint",
                "--no-auto-test",
                "--no-check-update",
                "--no-analytics",
                "--no-show-release-notes",
                "--no-show-model-warnings",
                "--map-tokens",
                "0",
                "--no-gitignore",
                "--env-file",
                "/dev/null",
                "--input-history-file",
                "/wt/task-1.agent/aider-input.history",
                "--chat-history-file",
                "/wt/task-1.agent/aider-chat.md",
                "--message-file",
                "/tasks/1/aider-prompt.md",
                "README.md",
            ]
        );
        assert_eq!(cmd.stdin, None);
        assert_eq!(
            cmd.files,
            vec![("/tasks/1/aider-prompt.md".into(), "the prompt".to_owned())]
        );
        let confined = Launch {
            confined: true,
            ..launch
        };
        let cmd = Aider::new(AgentConfig::default())
            .command(&confined)
            .expect("builds");
        assert!(strings(&cmd.args).contains(&"--no-git"));
    }
}
