//! The environment an agent (or a verify command) runs with, built on purpose: cleared, then
//! filled with what it needs. Butler's own secrets never pass, whatever the configuration says.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::error::MaidError;

/// An environment as name/value pairs (what [`crate::supervise::ChildSpec`] takes).
pub type EnvVars = Vec<(OsString, OsString)>;

/// Used when Butler itself has no `PATH`.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Passed through from Butler's environment when present: locale, time zone, temp dir, user.
const BASE_PASS: &[&str] = &["PATH", "LANG", "LC_*", "TZ", "TMPDIR", "USER", "LOGNAME"];
/// Passed as well when the agent uses the real home.
const REAL_HOME_PASS: &[&str] = &[
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
];

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

/// Never passed to an agent or a verify command: Butler's own settings and tokens, the tracker's,
/// and git's (which could point the agent at another repository or run programs).
pub fn is_forbidden(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("BUTLER_")
        || upper.starts_with("GIT_")
        || upper.contains("GITEA")
        || upper.contains("FORGEJO")
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Butler's own environment.
pub fn parent_env() -> EnvVars {
    std::env::vars_os().collect()
}

/// Looks a variable up in `env`.
pub fn lookup<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

/// The agent's environment: base variables, the agent's provider settings, the configured
/// allow-list, `HOME`, the git identity, and the agent's fixed settings — in that order of
/// precedence from low to high. Butler's secrets are dropped at every step.
pub fn agent_env(
    parent: &[(OsString, OsString)],
    policy: &EnvPolicy,
    needs: &AgentEnvNeeds,
) -> EnvVars {
    let mut pass: Vec<&str> = BASE_PASS.to_vec();
    if policy.home == HomeChoice::Real {
        pass.extend_from_slice(REAL_HOME_PASS);
        pass.push("HOME");
    }
    pass.extend(needs.pass.iter().copied());
    pass.extend(policy.allow.iter().map(String::as_str));

    let mut out: BTreeMap<OsString, OsString> = BTreeMap::new();
    for (name, value) in parent {
        let Some(text) = name.to_str() else { continue };
        if !is_forbidden(text) && pass.iter().any(|p| matches(p, text)) {
            out.insert(name.clone(), value.clone());
        }
    }
    out.entry("PATH".into())
        .or_insert_with(|| DEFAULT_PATH.into());
    match &policy.home {
        HomeChoice::Isolated(dir) => {
            out.insert("HOME".into(), dir.clone().into_os_string());
        }
        HomeChoice::Real => {
            if !out.contains_key(OsStr::new("HOME")) {
                tracing::warn!("the real HOME was asked for but Butler has none");
            }
        }
    }
    out.insert("TERM".into(), "dumb".into());
    out.insert("NO_COLOR".into(), "1".into());
    out.insert("GIT_TERMINAL_PROMPT".into(), "0".into());
    let id = &policy.git_identity;
    for (k, v) in [
        ("GIT_AUTHOR_NAME", &id.name),
        ("GIT_AUTHOR_EMAIL", &id.email),
        ("GIT_COMMITTER_NAME", &id.name),
        ("GIT_COMMITTER_EMAIL", &id.email),
    ] {
        out.insert(k.into(), v.into());
    }
    for (k, v) in &needs.set {
        if !is_forbidden(k) || k.starts_with("GIT_") {
            out.insert((*k).into(), v.into());
        }
    }
    out.into_iter().collect()
}

/// The environment of a verify command: Butler's own, less its secrets and git's variables.
/// (Test commands are the Brain's, run by Butler; they need the real toolchains' settings.)
pub fn verify_env(parent: &[(OsString, OsString)]) -> EnvVars {
    let mut out: EnvVars = parent
        .iter()
        .filter(|(k, _)| k.to_str().is_some_and(|k| !is_forbidden(k)))
        .cloned()
        .collect();
    out.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    out
}

/// Creates an isolated home with a `.gitconfig` that carries the agent's identity, so an agent
/// that asks `git config user.name` finds one instead of writing its own into the repository.
pub fn prepare_isolated_home(dir: &Path, identity: &GitIdentity) -> Result<(), MaidError> {
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

    fn get<'a>(env: &'a EnvVars, k: &str) -> Option<&'a str> {
        lookup(env, k).and_then(OsStr::to_str)
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
        let env = verify_env(&parent());
        assert_eq!(get(&env, "HOME"), Some("/home/me"));
        assert_eq!(get(&env, "AWS_SECRET_ACCESS_KEY"), Some("aws"));
        assert_eq!(get(&env, "BUTLER_GITEA_TOKEN"), None);
        assert_eq!(get(&env, "GITEA_TOKEN"), None);
        assert_eq!(get(&env, "GIT_DIR"), None);
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
