//! The environment of the Maid's children, built on the foundation's allow-lists
//! ([`butler_worker::process::env`]): an agent gets the base variables, what its adapter names,
//! the configured allow-list, its own `HOME` and a git identity; a verify command gets what a
//! project's tests need to find their toolchain. Butler's secrets never pass, whatever the
//! configuration says, and neither do git's variables (they could point a child at another
//! repository or make it run programs).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use butler_worker::process::ChildEnv;
use butler_worker::process::env::{
    BASE, DEFAULT_PATH, HOME_DIRS, NETWORK, TOOLCHAINS, inherited, is_secret,
};

use crate::error::MaidError;

/// Butler's own environment as name/value pairs (what a child's environment is built from).
pub(crate) type EnvVars = Vec<(OsString, OsString)>;

/// Where the agent's `HOME` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeChoice {
    /// A directory of the task's own (goose and aider write into `HOME`).
    Isolated(PathBuf),
    /// The user's real home (only when configured).
    Real,
}

/// The identity the agent's own git commits would carry (they are unwound, but must never take
/// the user's name or write one into the shared repository configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitIdentity {
    pub name: String,
    pub email: String,
}

impl Default for GitIdentity {
    fn default() -> Self {
        Self {
            name: "Butler agent".into(),
            email: "agent@butler.invalid".into(),
        }
    }
}

/// How an agent's environment is built.
#[derive(Debug, Clone)]
pub struct EnvPolicy {
    pub home: HomeChoice,
    /// Extra names passed through: exact (`FAKE_AGENT_SCRIPT`) or a prefix (`MY_PROXY_*`).
    /// Butler's secrets stay out even if listed here.
    pub allow: Vec<String>,
    pub git_identity: GitIdentity,
}

/// What an agent itself needs: its provider settings and fixed variables.
#[derive(Debug, Clone, Default)]
pub struct AgentEnvNeeds {
    /// Passed through from Butler's environment: exact or `PREFIX_*`.
    pub pass: Vec<&'static str>,
    /// Set to these values, whatever Butler's environment says.
    pub set: Vec<(&'static str, String)>,
}

/// Never passed to an agent or a verify command: Butler's secrets ([`is_secret`]) and git's
/// variables.
fn is_forbidden(name: &str) -> bool {
    is_secret(name) || name.to_ascii_uppercase().starts_with("GIT_")
}

/// Butler's own environment.
pub(crate) fn parent_env() -> EnvVars {
    inherited().to_vec()
}

/// Looks a variable up in `env`.
pub(crate) fn lookup<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

/// `parent` without git's variables (the foundation already keeps Butler's secrets out).
fn without_git(parent: &[(OsString, OsString)]) -> EnvVars {
    parent
        .iter()
        .filter(|(k, _)| k.to_str().is_some_and(|k| !is_forbidden(k)))
        .cloned()
        .collect()
}

/// The agent's environment: base variables, the agent's provider settings, the configured
/// allow-list, `HOME`, the git identity, and the agent's fixed settings — in that order of
/// precedence from low to high. Butler's secrets are dropped at every step.
pub fn agent_env(
    parent: &[(OsString, OsString)],
    policy: &EnvPolicy,
    needs: &AgentEnvNeeds,
) -> ChildEnv {
    let parent = without_git(parent);
    let allow: Vec<&str> = policy.allow.iter().map(String::as_str).collect();
    let mut out = ChildEnv::new();
    out.inherit(&parent, BASE)
        .inherit(&parent, &needs.pass)
        .inherit(&parent, &allow)
        .set_default("PATH", DEFAULT_PATH);
    match &policy.home {
        HomeChoice::Isolated(dir) => {
            out.set("HOME", dir);
        }
        HomeChoice::Real => {
            out.inherit(&parent, HOME_DIRS);
            if out.get("HOME").is_none() {
                tracing::warn!("the real HOME was asked for but Butler has none");
            }
        }
    }
    out.set("TERM", "dumb")
        .set("NO_COLOR", "1")
        .set("GIT_TERMINAL_PROMPT", "0");
    let id = &policy.git_identity;
    for (k, v) in [
        ("GIT_AUTHOR_NAME", &id.name),
        ("GIT_AUTHOR_EMAIL", &id.email),
        ("GIT_COMMITTER_NAME", &id.name),
        ("GIT_COMMITTER_EMAIL", &id.email),
    ] {
        out.set(k, v);
    }
    for (k, v) in &needs.set {
        if !is_secret(k) {
            out.set(*k, v);
        }
    }
    out
}

/// The environment of a verify command (a test command the Brain gave, run in the task's
/// worktree): the base variables, the user's home, network settings and toolchains, and the
/// configured allow-list (`allow`, as for agents). Never Butler's secrets nor git's variables.
pub(crate) fn verify_env(parent: &[(OsString, OsString)], allow: &[String]) -> ChildEnv {
    let parent = without_git(parent);
    let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
    let mut out = ChildEnv::new();
    for group in [BASE, HOME_DIRS, NETWORK, TOOLCHAINS, &allow[..]] {
        out.inherit(&parent, group);
    }
    out.set_default("PATH", DEFAULT_PATH)
        .set("GIT_TERMINAL_PROMPT", "0");
    out
}

/// Creates an isolated home with a `.gitconfig` that carries the agent's identity, so an agent
/// that asks `git config user.name` finds one instead of writing its own into the repository.
pub(crate) fn prepare_isolated_home(dir: &Path, identity: &GitIdentity) -> Result<(), MaidError> {
    std::fs::create_dir_all(dir).map_err(|e| MaidError::io("creating the agent home", dir, e))?;
    let gitconfig = dir.join(".gitconfig");
    let text = format!(
        "[user]\n\tname = {}\n\temail = {}\n",
        identity.name, identity.email
    );
    std::fs::write(&gitconfig, text).map_err(|e| MaidError::io("writing", gitconfig, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> EnvVars {
        [
            ("PATH", "/opt/bin:/usr/bin"),
            ("HOME", "/home/me"),
            ("LANG", "ja_JP.UTF-8"),
            ("LC_ALL", "C.UTF-8"),
            ("GOOSE_PROVIDER", "openai"),
            ("GOOSE_MODE", "approve"),
            ("OPENAI_API_KEY", "sk-agent"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("BUTLER_GITEA_TOKEN", "secret1"),
            ("GITEA_TOKEN", "secret2"),
            ("BUTLER_CONFIG", "/etc/butler"),
            ("GIT_DIR", "/elsewhere/.git"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("FAKE_AGENT_SCRIPT", "/tmp/script"),
            ("XDG_CONFIG_HOME", "/home/me/.config"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    fn goose_needs() -> AgentEnvNeeds {
        AgentEnvNeeds {
            pass: vec!["GOOSE_*", "OPENAI_*"],
            set: vec![("GOOSE_MODE", "auto".into())],
        }
    }

    fn policy(allow: &[&str]) -> EnvPolicy {
        EnvPolicy {
            home: HomeChoice::Isolated("/tmp/task-1/home".into()),
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            git_identity: GitIdentity::default(),
        }
    }

    fn get<'a>(env: &'a ChildEnv, k: &str) -> Option<&'a str> {
        env.get(k).and_then(OsStr::to_str)
    }

    #[test]
    fn passes_what_the_agent_needs() {
        let env = agent_env(&parent(), &policy(&[]), &goose_needs());
        assert_eq!(get(&env, "PATH"), Some("/opt/bin:/usr/bin"));
        assert_eq!(get(&env, "LANG"), Some("ja_JP.UTF-8"));
        assert_eq!(get(&env, "LC_ALL"), Some("C.UTF-8"));
        assert_eq!(get(&env, "GOOSE_PROVIDER"), Some("openai"));
        assert_eq!(get(&env, "OPENAI_API_KEY"), Some("sk-agent"));
        assert_eq!(get(&env, "HOME"), Some("/tmp/task-1/home"));
        assert_eq!(get(&env, "GIT_AUTHOR_NAME"), Some("Butler agent"));
        assert_eq!(
            get(&env, "GIT_COMMITTER_EMAIL"),
            Some("agent@butler.invalid")
        );
        assert_eq!(get(&env, "TERM"), Some("dumb"));
    }

    #[test]
    fn fixed_settings_override_butlers_environment() {
        let env = agent_env(&parent(), &policy(&[]), &goose_needs());
        assert_eq!(get(&env, "GOOSE_MODE"), Some("auto"));
    }

    #[test]
    fn keeps_out_what_the_agent_does_not_need() {
        let env = agent_env(&parent(), &policy(&[]), &goose_needs());
        for k in [
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "FAKE_AGENT_SCRIPT",
            "XDG_CONFIG_HOME",
        ] {
            assert_eq!(get(&env, k), None, "{k}");
        }
    }

    #[test]
    fn never_passes_butlers_secrets_even_when_allowed() {
        let allow = [
            "BUTLER_GITEA_TOKEN",
            "GITEA_TOKEN",
            "BUTLER_*",
            "GIT_DIR",
            "FAKE_AGENT_SCRIPT",
        ];
        let env = agent_env(&parent(), &policy(&allow), &goose_needs());
        for k in [
            "BUTLER_GITEA_TOKEN",
            "GITEA_TOKEN",
            "BUTLER_CONFIG",
            "GIT_DIR",
        ] {
            assert_eq!(get(&env, k), None, "{k}");
        }
        assert!(env.iter().all(|(_, v)| v != "secret1" && v != "secret2"));
        assert_eq!(
            get(&env, "FAKE_AGENT_SCRIPT"),
            Some("/tmp/script"),
            "allow-list works"
        );
    }

    #[test]
    fn allow_list_takes_prefixes() {
        let env = agent_env(&parent(), &policy(&["AWS_*"]), &goose_needs());
        assert_eq!(get(&env, "AWS_SECRET_ACCESS_KEY"), Some("aws"));
    }

    #[test]
    fn real_home_when_configured() {
        let mut p = policy(&[]);
        p.home = HomeChoice::Real;
        let env = agent_env(&parent(), &p, &goose_needs());
        assert_eq!(get(&env, "HOME"), Some("/home/me"));
        assert_eq!(get(&env, "XDG_CONFIG_HOME"), Some("/home/me/.config"));
    }

    #[test]
    fn default_path_when_butler_has_none() {
        let env = agent_env(&[], &policy(&[]), &AgentEnvNeeds::default());
        assert_eq!(get(&env, "PATH"), Some(DEFAULT_PATH));
    }

    #[test]
    fn verify_env_keeps_toolchains_but_not_secrets() {
        let mut parent = parent();
        parent.push(("CARGO_HOME".into(), "/opt/cargo".into()));
        let env = verify_env(&parent, &[]);
        assert_eq!(get(&env, "HOME"), Some("/home/me"));
        assert_eq!(get(&env, "CARGO_HOME"), Some("/opt/cargo"));
        assert_eq!(get(&env, "XDG_CONFIG_HOME"), Some("/home/me/.config"));
        for k in [
            "AWS_SECRET_ACCESS_KEY",
            "OPENAI_API_KEY",
            "BUTLER_GITEA_TOKEN",
            "GITEA_TOKEN",
            "BUTLER_CONFIG",
            "GIT_DIR",
        ] {
            assert_eq!(get(&env, k), None, "{k}");
        }
        let allow = ["AWS_*".to_owned(), "BUTLER_*".to_owned()];
        let env = verify_env(&parent, &allow);
        assert_eq!(get(&env, "AWS_SECRET_ACCESS_KEY"), Some("aws"));
        assert_eq!(get(&env, "BUTLER_CONFIG"), None);
    }

    #[test]
    fn isolated_home_gets_a_git_identity() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        prepare_isolated_home(&home, &GitIdentity::default()).expect("prepared");
        let text = std::fs::read_to_string(home.join(".gitconfig")).expect("written");
        assert!(text.contains("name = Butler agent"), "{text}");
    }
}
