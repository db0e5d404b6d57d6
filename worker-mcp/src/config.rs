//! Butler's configuration: the user's own file (`$XDG_CONFIG_HOME/butler/config.toml`, default
//! `~/.config/butler/config.toml`) and the project's `.butler/config.toml`, overridden by
//! environment variables. All are read once: the environment when the process starts
//! ([`Environment`], built in `main` and passed down), the files when a session opens its
//! project ([`ProjectConfig::load`]); nothing below reads them again.
//!
//! **Who may lower a guard.** Settings that decide what runs and where it may reach (`[agent]
//! sandbox`, `network`, `network_allow`, `programs`, `env_allow`, `sandbox_writable`, `worktrees_dir`,
//! `[delegation] env_allow`, `[mcp_servers.*]`) are taken from the user's file, and from the
//! project's only when the user trusted that exact content (`butler trust`, see [`trust`]):
//! a repository's committed file, or an agent's change to it, never lowers one. An untrusted
//! project file may still make Butler stricter (`sandbox = "required"`, a narrower `network`,
//! more `destructive_commands`) and sets what decides nothing of the sort (language, issues,
//! agent and model choice, loop limits). The table per setting is in [`layers`].
//!
//! The project file holds every section below but `[runner]`; the user's holds `[agent]`,
//! `[delegation]`, `[mcp_servers.*]` and `[runner]` (where tasks run: only the user decides
//! which cluster gets the project's code, see [`RunnerConfig`]). Tokens are never read from a file (it may be committed); they come from
//! the environment only and are held in a [`Secret`]. Where the token may be sent is also the
//! environment's say only (`BUTLER_GITEA_URL`, `BUTLER_GITEA_HOSTS`): the file may name a
//! server, but the token goes there only when the user bound it (see
//! [`crate::issues::binding`]).
//!
//! ```toml
//! language = "ja"                       # Butler's texts: "en" (default) | "ja"; see BUTLER_LANG
//!
//! [issues]
//! backend = "auto"                      # "local" | "gitea" | "auto" (default)
//! gitea_url = "https://example.com/git" # optional; else derived from the git remote
//! repo = "owner/name"                   # optional; else derived from the git remote
//! timeout_secs = 10                     # optional; per HTTP request
//!
//! [agent]
//! default = "goose"                     # goose (default) | claude | codex | aider
//! provider = "openai"                   # the agent's model provider (goose)
//! model = "gpt-4o-mini"                 # the agent's model
//! programs = { goose = "/opt/goose/bin/goose" }  # else found on PATH (guard)
//! env_allow = ["OPENAI_HOST"]           # extra variables passed to the agent (guard)
//! stagnation_secs = 300                 # no output and no file change for this long: stop
//! loop_repeats = 5                      # the same tool call this often, no file change: stop (0: off)
//! loop_quiet_secs = 600                 # activity without a file change this long: stop (0: off)
//! sandbox = "auto"                      # "required" | "auto" (default) | "off" (guard)
//! network = "proxy"                     # default: by name through Butler's proxy; "open"; or ports: ["127.0.0.1:11434"] (guard)
//! network_allow = ["pypi.org", "*.npmjs.org"]  # hosts the proxy admits besides the model endpoint (guard)
//! sandbox_writable = []                 # more trees agents and verify commands may write (guard)
//! worktrees_dir = "/srv/butler/wt"      # else $XDG_DATA_HOME/butler/worktrees (guard)
//! deny_read = ["~/.vault", "/srv/keys"] # more paths agents may not read (any file may add)
//!
//! [delegation]                          # delegated operations (submit_task, teach, …)
//! promote_after = 3                     # verified successes that make a procedure active
//! destructive_commands = ["helm uninstall"]  # more commands that always need approval
//! env_allow = ["KUBECONFIG"]            # extra variables procedure steps inherit (guard)
//!
//! [mcp_servers.kb]                      # a server `mcp_call` steps may reach, by name (guard)
//! command = "/usr/local/bin/kb-mcp"
//! args = ["--stdio"]
//! env_allow = ["KB_URL"]                # variables it inherits (Butler's secrets never)
//!
//! [runner]                              # the user's file only: where tasks run (docs/kubernetes.md)
//! kind = "kubernetes"                   # "local" (default) | "kubernetes"
//! image = "registry.example.com/butler-goose:0.1"
//! namespace = "butler"                  # else the kubeconfig context's
//! model_secret = "butler-model"         # its keys become the agent's environment
//! push_secret = "butler-push"           # `username`, `token`: may push refs/heads/butler/*
//! ```

mod layers;
mod runner;
pub(crate) mod trust;

pub use runner::{RunnerConfig, RunnerKind};

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The project config file, relative to the project root.
pub const CONFIG_FILE: &str = ".butler/config.toml";

/// The language of Butler's texts when the project's file does not set one (`en`, `ja`).
pub const ENV_LANG: &str = "BUTLER_LANG";
/// Chooses the issue backend: `local`, `gitea` or `auto`.
pub(crate) const ENV_BACKEND: &str = "BUTLER_ISSUE_BACKEND";
/// The Gitea/Forgejo web root (e.g. `https://example.com/git`).
pub const ENV_GITEA_URL: &str = "BUTLER_GITEA_URL";
/// The Gitea/Forgejo access token.
pub const ENV_GITEA_TOKEN: &str = "BUTLER_GITEA_TOKEN";
/// The fallback token variable, shared with other Gitea tools.
pub(crate) const ENV_GITEA_TOKEN_FALLBACK: &str = "GITEA_TOKEN";
/// More servers the token may be sent to (origins, separated by commas or spaces), besides
/// `BUTLER_GITEA_URL`'s.
pub const ENV_GITEA_HOSTS: &str = "BUTLER_GITEA_HOSTS";
/// `1`: the user allows the token over plain http to the non-loopback servers they named.
pub(crate) const ENV_GITEA_INSECURE_HTTP: &str = "BUTLER_GITEA_INSECURE_HTTP";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT_SECS: u64 = 300;

/// Environment variables that hold secrets, read for the tracker's token in this order; no
/// child inherits them ([`crate::process::env::is_secret`]).
pub(crate) fn secret_env_names() -> &'static [&'static str] {
    &[ENV_GITEA_TOKEN, ENV_GITEA_TOKEN_FALLBACK]
}

/// A secret string (an access token). `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Which issue backend the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The embedded store, always.
    Local,
    /// Gitea or Forgejo, always; missing token or URL is an error.
    Gitea,
    /// Gitea when a token is configured and the remote's host answers the Gitea API, else local.
    #[default]
    Auto,
}

impl BackendChoice {
    fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "local" => Some(Self::Local),
            "gitea" | "forgejo" => Some(Self::Gitea),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Gitea => "gitea",
            Self::Auto => "auto",
        }
    }
}

/// Where a setting came from, so `work_session_start` can explain its choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Default,
    File,
    Env(&'static str),
}

/// The resolved issue-backend configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueConfig {
    pub backend: BackendChoice,
    pub backend_source: Source,
    /// The Gitea web root (not the API base), when configured explicitly.
    pub gitea_url: Option<url::Url>,
    /// `owner/repo` override, when configured explicitly.
    pub repo: Option<(String, String)>,
    pub token: Option<Secret>,
    pub token_source: Option<&'static str>,
    /// The origins the user bound the token to (`BUTLER_GITEA_URL`'s and `BUTLER_GITEA_HOSTS`);
    /// never read from the project's file. See [`crate::issues::binding`].
    pub token_hosts: Vec<url::Origin>,
    /// `BUTLER_GITEA_INSECURE_HTTP=1`: the token may go over plain http to a bound origin.
    pub insecure_http: bool,
    /// Timeout of each HTTP request.
    pub timeout: Duration,
}

impl Default for IssueConfig {
    fn default() -> Self {
        Self {
            backend: BackendChoice::Auto,
            backend_source: Source::Default,
            gitea_url: None,
            repo: None,
            token: None,
            token_source: None,
            token_hosts: Vec::new(),
            insecure_http: false,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// What can be wrong with the configuration. Messages never contain secrets.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read `{}`", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is not valid: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("issue backend `{value}` from {origin} is not one of `local`, `gitea`, `auto`")]
    InvalidBackend { value: String, origin: String },
    #[error("the Gitea URL from {origin} is not an http(s) URL without credentials")]
    InvalidUrl { origin: String },
    #[error("`repo` in `{CONFIG_FILE}` must look like `owner/name`")]
    InvalidRepo,
    #[error(
        "`{ENV_GITEA_HOSTS}` must list http(s) servers such as `https://git.example.com` or \
         `git.example.com:3000`, separated by commas or spaces, without credentials"
    )]
    InvalidHosts,
    #[error(
        "tokens are not read from `{CONFIG_FILE}`; remove it and set `{ENV_GITEA_TOKEN}` instead"
    )]
    TokenInFile,
    #[error("neither `XDG_CONFIG_HOME` nor `HOME` names the user's configuration directory")]
    NoUserDir,
}

/// Butler's environment, read once where the process starts (`main`) and passed down to what
/// needs a setting from it; tests build their own instead of setting process variables. Its
/// `Debug` names the variables, never their values (tokens are among them).
#[derive(Clone, Default)]
pub struct Environment {
    vars: std::collections::BTreeMap<String, String>,
}

impl Environment {
    /// From `(name, value)` pairs (`std::env::vars_os()` at the edge); pairs that are not UTF-8
    /// are left out.
    pub fn from_vars<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<std::ffi::OsString>,
        V: Into<std::ffi::OsString>,
    {
        Self {
            vars: vars
                .into_iter()
                .filter_map(|(k, v)| {
                    Some((k.into().into_string().ok()?, v.into().into_string().ok()?))
                })
                .collect(),
        }
    }

    /// The variable's value, when it is set and not blank.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

/// The user's configuration file, inside the user's configuration directory.
pub(crate) const USER_CONFIG_FILE: &str = "config.toml";

/// The user's configuration directory: `$XDG_CONFIG_HOME/butler`, else `$HOME/.config/butler`
/// (`None` when neither names an absolute path).
pub(crate) fn user_config_dir(env: &Environment) -> Option<PathBuf> {
    env.get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env.get("HOME")
                .map(|h| PathBuf::from(h).join(".config"))
                .filter(|p| p.is_absolute())
        })
        .map(|dir| dir.join("butler"))
}

/// A project's configuration, read and parsed once per session: the user's file and the
/// project's `.butler/config.toml` merged by who may decide what (see the module's
/// documentation), with the environment's overrides of the issue backend applied (the agent's
/// are applied by the orchestrator, which knows the agents).
#[derive(Debug, Clone, Default)]
pub struct ProjectConfig {
    pub issues: IssueConfig,
    /// `[agent]` in force.
    pub agent: AgentFileConfig,
    /// `[delegation]` and `[mcp_servers.*]` in force.
    pub delegation: DelegationFileConfig,
    /// `[runner]`: the user's file's only.
    pub runner: RunnerConfig,
    /// `language`, as written (the orchestrator's catalogue says what it means).
    pub language: Option<String>,
    /// Whether the project's file was trusted, and what of it was left out.
    pub trust: ProjectTrust,
}

/// The trust of a project's `.butler/config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectTrust {
    /// The file (its project's path resolved), as `butler trust` records it.
    pub file: PathBuf,
    pub state: TrustState,
    /// The project's settings left out because the file is not trusted (`[agent] sandbox`,
    /// `[mcp_servers.kb]`), or because no project file may set them (`[runner]`), as written.
    pub ignored: Vec<String>,
}

/// Whether the user trusts a project's configuration file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TrustState {
    /// The project has no `.butler/config.toml`.
    #[default]
    NoFile,
    /// The user trusted exactly this content.
    Trusted,
    /// Never trusted, or changed since.
    Untrusted,
}

impl ProjectConfig {
    /// Reads the user's file (from `env`'s `XDG_CONFIG_HOME` or `HOME`), the project's
    /// `<project_root>/.butler/config.toml` and the user's trust store; missing files are the
    /// defaults. A trust store that cannot be read trusts nothing (logged).
    pub fn load(project_root: &Path, env: &Environment) -> Result<Self, ConfigError> {
        let user_dir = user_config_dir(env);
        let (user, runner) = match &user_dir {
            Some(dir) => read_user_file(&dir.join(USER_CONFIG_FILE))?,
            None => Default::default(),
        };
        let path = project_root.join(CONFIG_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let text = bytes
            .as_deref()
            .map(|b| {
                std::str::from_utf8(b).map_err(|_| ConfigError::Parse {
                    path: path.clone(),
                    message: "not UTF-8 text".into(),
                })
            })
            .transpose()?;
        let file = parse_file(text, &path)?;
        let sections = file.sections(&path)?;
        let recorded = trust::project_file(project_root);
        let state = match &bytes {
            None => TrustState::NoFile,
            Some(bytes) if trusted(user_dir.as_deref(), &recorded, bytes) => TrustState::Trusted,
            Some(_) => TrustState::Untrusted,
        };
        let mut merged = layers::merge(user, sections, state == TrustState::Trusted);
        if file.runner.is_some() {
            merged.ignored.push("[runner]".to_owned());
        }
        Ok(Self {
            issues: IssueConfig::from_file(file.issues, |name| env.get(name).map(str::to_owned))?,
            agent: merged.agent,
            delegation: merged.delegation,
            runner,
            language: file.language,
            trust: ProjectTrust {
                file: recorded,
                state,
                ignored: merged.ignored,
            },
        })
    }
}

/// What `butler trust` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trusted {
    /// The project file, as recorded.
    pub file: PathBuf,
    /// `sha256:<hex>` of the content trusted.
    pub digest: String,
    /// The settings in it that only a trusted file may set (`[agent] sandbox`, …), as written.
    pub guard_settings: Vec<String>,
}

/// `butler trust`: records the project's `.butler/config.toml` as it is now in the user's trust
/// store. A file that does not parse is not trusted.
pub fn trust_project(project_root: &Path, env: &Environment) -> Result<Trusted, ConfigError> {
    let dir = user_config_dir(env).ok_or(ConfigError::NoUserDir)?;
    let path = project_root.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
        path: path.clone(),
        source,
    })?;
    let file = parse_file(Some(&text), &path)?;
    IssueConfig::from_file(file.issues.clone(), |_| None)?;
    let sections = file.sections(&path)?;
    let guard_settings = layers::merge(layers::Sections::default(), sections, false).ignored;
    let mut store = trust::TrustStore::open(&dir)?;
    let recorded = trust::project_file(project_root);
    let digest = store.trust(&recorded, text.as_bytes());
    store.save()?;
    Ok(Trusted {
        file: recorded,
        digest,
        guard_settings,
    })
}

/// `butler trust --revoke`: forgets the project's file; whether it was trusted.
pub fn revoke_project(project_root: &Path, env: &Environment) -> Result<bool, ConfigError> {
    let dir = user_config_dir(env).ok_or(ConfigError::NoUserDir)?;
    let mut store = trust::TrustStore::open(&dir)?;
    let revoked = store.revoke(&trust::project_file(project_root));
    if revoked {
        store.save()?;
    }
    Ok(revoked)
}

/// Whether the user's trust store records exactly `content` for `file`.
fn trusted(user_dir: Option<&Path>, file: &Path, content: &[u8]) -> bool {
    let Some(dir) = user_dir else {
        return false;
    };
    match trust::TrustStore::open(dir) {
        Ok(store) => store.is_trusted(file, content),
        Err(err) => {
            tracing::warn!(error = %err, "the trust store could not be read; trusting nothing");
            false
        }
    }
}

/// The user's configuration file: `[agent]`, `[delegation]`, `[mcp_servers.*]` and `[runner]`
/// (a missing file is the defaults).
fn read_user_file(path: &Path) -> Result<(layers::Sections, RunnerConfig), ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_sections(&text, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(source) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses the sections the user's file may hold (anything else is refused).
fn parse_sections(
    text: &str,
    path: &Path,
) -> Result<(layers::Sections, RunnerConfig), ConfigError> {
    let file = toml::from_str::<UserFile>(text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let sections = layers::Sections {
        agent: file.agent,
        delegation: file.delegation,
        mcp_servers: file.mcp_servers,
    };
    validate(&sections, path)?;
    if let Some(problem) = file.runner.problems().into_iter().next() {
        return Err(ConfigError::Parse {
            path: path.to_path_buf(),
            message: problem,
        });
    }
    Ok((sections, file.runner))
}

/// The user's file: the sections of what runs and how (no `language` or `[issues]`: those are
/// the project's, or the environment's).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFile {
    #[serde(default)]
    agent: AgentFileConfig,
    #[serde(default)]
    delegation: FileDelegation,
    #[serde(default)]
    mcp_servers: std::collections::BTreeMap<String, McpServerConfig>,
    #[serde(default)]
    runner: RunnerConfig,
}

/// `<project_root>/.butler/config.toml` parsed (a missing file is the defaults).
fn read_file(project_root: &Path) -> Result<FileConfig, ConfigError> {
    let path = project_root.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    parse_file(text.as_deref(), &path)
}

fn parse_file(text: Option<&str>, path: &Path) -> Result<FileConfig, ConfigError> {
    match text {
        Some(text) => toml::from_str::<FileConfig>(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        }),
        None => Ok(FileConfig::default()),
    }
}

#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    /// The language of Butler's texts (read by the orchestrator's catalogue).
    language: Option<String>,
    #[serde(default)]
    issues: FileIssues,
    #[serde(default)]
    agent: AgentFileConfig,
    #[serde(default)]
    delegation: FileDelegation,
    #[serde(default)]
    mcp_servers: std::collections::BTreeMap<String, McpServerConfig>,
    /// Never taken from a project's file; kept to say it was ignored.
    runner: Option<toml::Value>,
}

impl FileConfig {
    /// The sections the user's file shares, checked.
    fn sections(&self, path: &Path) -> Result<layers::Sections, ConfigError> {
        let sections = layers::Sections {
            agent: self.agent.clone(),
            delegation: self.delegation.clone(),
            mcp_servers: self.mcp_servers.clone(),
        };
        validate(&sections, path)?;
        Ok(sections)
    }
}

/// What the types cannot say: `promote_after` at least 1, servers named plainly.
fn validate(sections: &layers::Sections, path: &Path) -> Result<(), ConfigError> {
    if sections.delegation.promote_after == Some(0) {
        return Err(ConfigError::Parse {
            path: path.to_path_buf(),
            message: "[delegation] promote_after must be at least 1".into(),
        });
    }
    if let Some(name) = sections.mcp_servers.keys().find(|n| !server_name_ok(n)) {
        return Err(ConfigError::Parse {
            path: path.to_path_buf(),
            message: format!(
                "[mcp_servers.{name}]: name servers with letters, digits, `-` and `_`"
            ),
        });
    }
    Ok(())
}

/// The `[delegation]` section as written (unset values are `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDelegation {
    promote_after: Option<u32>,
    #[serde(default)]
    destructive_commands: Vec<String>,
    #[serde(default)]
    env_allow: Vec<String>,
    network: Option<crate::sandbox::NetworkSetting>,
}

/// The `[delegation]` settings in force: how delegated operations run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DelegationConfig {
    /// Verified successes after which a taught procedure becomes `active` (at least 1).
    pub promote_after: u32,
    /// Commands (a program name and optionally words among its arguments, `"docker rm"`) that
    /// need the user's approval each time a step runs them, besides Butler's own list.
    pub destructive_commands: Vec<String>,
    /// Extra variables procedure steps inherit from Butler's environment (secrets never).
    pub env_allow: Vec<String>,
    /// What confined steps may reach: `"open"` (when unset) or endpoints (their TCP ports), as
    /// `[agent] network` is written.
    pub network: Option<crate::sandbox::NetworkSetting>,
}

impl DelegationConfig {
    /// `promote_after` when no file sets it.
    pub(crate) const DEFAULT_PROMOTE_AFTER: u32 = 3;
}

impl Default for DelegationConfig {
    fn default() -> Self {
        Self {
            promote_after: Self::DEFAULT_PROMOTE_AFTER,
            destructive_commands: Vec::new(),
            env_allow: Vec::new(),
            network: None,
        }
    }
}

/// One `[mcp_servers.<name>]` entry: a stdio MCP server `mcp_call` steps may reach.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program (absolute, or found on `PATH`).
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables it inherits from Butler's environment besides the basic ones (secrets never).
    #[serde(default)]
    pub env_allow: Vec<String>,
}

/// What delegated operations run with: `[delegation]` and `[mcp_servers.*]` in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelegationFileConfig {
    pub delegation: DelegationConfig,
    pub mcp_servers: std::collections::BTreeMap<String, McpServerConfig>,
}

fn server_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The `[agent]` section: the ImplementMaid's agent settings (environment variables, read by
/// the orchestrator, win over these).
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFileConfig {
    /// `goose`, `claude`, `codex` or `aider`.
    pub default: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Program per agent name, when not found on PATH.
    #[serde(default)]
    pub programs: std::collections::BTreeMap<String, String>,
    /// Extra environment variables passed to the agent (Butler's secrets never are).
    #[serde(default)]
    pub env_allow: Vec<String>,
    pub stagnation_secs: Option<u64>,
    /// The same tool call (same arguments) this many times with no file change stops an
    /// attempt as a loop (0: never).
    pub loop_repeats: Option<u32>,
    /// This long of activity without a file change stops an attempt (0: never).
    pub loop_quiet_secs: Option<u64>,
    /// `required`, `auto` (default) or `off`: the Landlock sandbox of agents and verify commands.
    pub sandbox: Option<String>,
    /// `"proxy"` (the default where Landlock has network rules: everything through the task's
    /// egress proxy), `"open"`, or the endpoints (their TCP ports) a confined agent may
    /// connect to.
    pub network: Option<crate::sandbox::NetworkSetting>,
    /// Hosts the egress proxy admits besides the agent's model endpoint: `"pypi.org"`,
    /// `"*.npmjs.org"` (the names below it).
    #[serde(default)]
    pub network_allow: Vec<String>,
    /// More trees confined agents and verify commands may write (e.g. a build cache).
    #[serde(default)]
    pub sandbox_writable: Vec<String>,
    /// Where task worktrees live (default: `$XDG_DATA_HOME/butler/worktrees`).
    pub worktrees_dir: Option<String>,
    /// More paths (absolute, or `~/…` in the user's `HOME`) confined agents and verify commands
    /// may neither read nor write, besides the credential stores Butler always leaves out.
    #[serde(default)]
    pub deny_read: Vec<String>,
}

/// The `language` of `<project_root>/.butler/config.toml`, as written (`None` when the file or
/// the key is absent), for what runs without a session (the hook, the instructions). What it
/// means is the orchestrator's catalogue's to say.
pub fn file_language(project_root: &Path) -> Result<Option<String>, ConfigError> {
    Ok(read_file(project_root)?.language)
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileIssues {
    backend: Option<String>,
    gitea_url: Option<String>,
    repo: Option<String>,
    timeout_secs: Option<u64>,
    token: Option<toml::Value>,
}

impl IssueConfig {
    /// Builds the configuration from the file's text (if any) and an environment lookup.
    /// Environment variables win over the file; empty variables count as unset.
    pub fn from_sources(
        file_text: Option<&str>,
        file_path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        Self::from_file(parse_file(file_text, file_path)?.issues, env)
    }

    fn from_file(
        issues: FileIssues,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        if issues.token.is_some() {
            return Err(ConfigError::TokenInFile);
        }
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut cfg = Self::default();

        if let Some(value) = env(ENV_BACKEND) {
            cfg.backend = parse_backend(&value, ENV_BACKEND)?;
            cfg.backend_source = Source::Env(ENV_BACKEND);
        } else if let Some(value) = issues.backend {
            cfg.backend = parse_backend(&value, CONFIG_FILE)?;
            cfg.backend_source = Source::File;
        }

        if let Some(value) = env(ENV_GITEA_URL) {
            let url = parse_web_url(&value, ENV_GITEA_URL)?;
            // The user named this server outside the project: the token may go there.
            cfg.token_hosts.push(url.origin());
            cfg.gitea_url = Some(url);
        } else if let Some(value) = issues.gitea_url {
            cfg.gitea_url = Some(parse_web_url(&value, CONFIG_FILE)?);
        }

        if let Some(repo) = issues.repo {
            cfg.repo = Some(parse_repo(&repo).ok_or(ConfigError::InvalidRepo)?);
        }
        if let Some(secs) = issues.timeout_secs {
            cfg.timeout = Duration::from_secs(secs.clamp(1, MAX_TIMEOUT_SECS));
        }

        if let Some(list) = env(ENV_GITEA_HOSTS) {
            let hosts = parse_origins(&list).ok_or(ConfigError::InvalidHosts)?;
            cfg.token_hosts.extend(hosts);
        }
        cfg.insecure_http = env(ENV_GITEA_INSECURE_HTTP).is_some_and(|v| v.trim() == "1");

        for name in secret_env_names() {
            if let Some(token) = env(name) {
                cfg.token = Some(Secret::new(token.trim()));
                cfg.token_source = Some(name);
                break;
            }
        }
        Ok(cfg)
    }
}

fn parse_backend(value: &str, origin: &str) -> Result<BackendChoice, ConfigError> {
    BackendChoice::parse(value).ok_or_else(|| ConfigError::InvalidBackend {
        value: value.chars().take(40).collect(),
        origin: format!("`{origin}`"),
    })
}

/// Parses a Gitea web root. Credentials in the URL are refused (the token has its own place).
fn parse_web_url(value: &str, origin: &str) -> Result<url::Url, ConfigError> {
    let invalid = || ConfigError::InvalidUrl {
        origin: format!("`{origin}`"),
    };
    let mut url = url::Url::parse(value.trim()).map_err(|_| invalid())?;
    let usable = matches!(url.scheme(), "http" | "https")
        && url.host().is_some()
        && url.username().is_empty()
        && url.password().is_none();
    if !usable {
        return Err(invalid());
    }
    url.set_query(None);
    url.set_fragment(None);
    let trimmed = url.path().trim_end_matches('/').to_string();
    // A URL given with the API suffix is accepted too.
    let trimmed = trimmed
        .strip_suffix("/api/v1")
        .unwrap_or(&trimmed)
        .to_string();
    url.set_path(&trimmed);
    Ok(url)
}

/// Reads one origin the user bound the token to (see [`crate::issues::binding`]):
/// `https://git.example.com`, `http://127.0.0.1:3000`, or a bare `git.example.com[:port]`
/// (https). Paths are ignored; credentials are refused.
fn parse_origin(entry: &str) -> Option<url::Origin> {
    let entry = entry.trim();
    let text = if entry.contains("://") {
        entry.to_string()
    } else {
        format!("https://{entry}")
    };
    let url = url::Url::parse(&text).ok()?;
    let usable = matches!(url.scheme(), "http" | "https")
        && url.host().is_some()
        && url.username().is_empty()
        && url.password().is_none();
    usable.then(|| url.origin())
}

/// Reads a list of origins separated by commas or white space; `None` if any entry is bad.
pub(crate) fn parse_origins(list: &str) -> Option<Vec<url::Origin>> {
    list.split([',', ' ', '\t', '\n'])
        .filter(|e| !e.trim().is_empty())
        .map(parse_origin)
        .collect()
}

fn parse_repo(value: &str) -> Option<(String, String)> {
    let (owner, repo) = value.trim().split_once('/')?;
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    (ok(owner) && ok(repo)).then(|| (owner.to_string(), repo.to_string()))
}

#[cfg(test)]
mod agent_tests {
    use super::*;

    /// A project dir and a user configuration dir, with the environment naming the latter.
    struct Dirs {
        project: tempfile::TempDir,
        config: tempfile::TempDir,
    }

    impl Dirs {
        fn new() -> Self {
            let d = Dirs {
                project: tempfile::tempdir().expect("tempdir"),
                config: tempfile::tempdir().expect("tempdir"),
            };
            std::fs::create_dir_all(d.project.path().join(".butler")).expect("mkdir");
            d
        }
        fn env(&self) -> Environment {
            Environment::from_vars([("XDG_CONFIG_HOME", self.config.path())])
        }
        fn project_file(&self, text: &str) {
            std::fs::write(self.project.path().join(CONFIG_FILE), text).expect("write");
        }
        fn user_file(&self, text: &str) {
            let dir = self.config.path().join("butler");
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(USER_CONFIG_FILE), text).expect("write");
        }
        fn trust(&self) {
            let mut store =
                trust::TrustStore::open(&self.config.path().join("butler")).expect("store");
            let file = trust::project_file(self.project.path());
            store.trust(&file, &std::fs::read(&file).expect("read"));
            store.save().expect("save");
        }
        fn load(&self) -> ProjectConfig {
            ProjectConfig::load(self.project.path(), &self.env()).expect("loads")
        }
    }

    #[test]
    fn only_the_users_file_says_where_tasks_run() {
        let d = Dirs::new();
        d.user_file("[runner]\nkind = \"kubernetes\"\nimage = \"r/b:1\"\nnamespace = \"ns\"\n");
        d.project_file("[runner]\nkind = \"local\"\nimage = \"evil/b:1\"\n");
        for trusted in [false, true] {
            if trusted {
                d.trust();
            }
            let cfg = d.load();
            assert_eq!(
                cfg.runner.kind,
                RunnerKind::Kubernetes,
                "trusted: {trusted}"
            );
            assert_eq!(cfg.runner.image.as_deref(), Some("r/b:1"));
            assert!(
                cfg.trust.ignored.contains(&"[runner]".to_owned()),
                "{:?}",
                cfg.trust.ignored
            );
        }
        d.user_file("[runner]\nkind = \"kubernetes\"\n");
        assert!(
            ProjectConfig::load(d.project.path(), &d.env()).is_err(),
            "no image"
        );
    }

    #[test]
    fn the_agent_section_is_read_and_unknown_keys_are_refused() {
        let d = Dirs::new();
        let none = d.load();
        assert_eq!(none.agent, AgentFileConfig::default());
        assert_eq!(none.trust.state, TrustState::NoFile);
        d.project_file(
            "[issues]\nbackend = \"local\"\n[agent]\ndefault = \"claude\"\nmodel = \"m\"\n\
             programs = { claude = \"/opt/claude\" }\nenv_allow = [\"X\"]\n\
             sandbox = \"required\"\nnetwork = [\"127.0.0.1:11434\"]\n\
             sandbox_writable = [\"/srv/cache\"]\nworktrees_dir = \"/srv/wt\"\n",
        );
        let cfg = d.load();
        assert_eq!(cfg.trust.state, TrustState::Untrusted);
        assert_eq!(cfg.agent.default.as_deref(), Some("claude"));
        assert_eq!(cfg.agent.model.as_deref(), Some("m"));
        assert!(
            cfg.agent.programs.is_empty(),
            "an untrusted file names no program"
        );
        assert!(cfg.agent.env_allow.is_empty());
        assert_eq!(
            cfg.agent.sandbox.as_deref(),
            Some("required"),
            "stricter applies"
        );
        assert_eq!(
            cfg.agent.network, None,
            "a port list is not narrower than the default proxy"
        );
        assert!(cfg.agent.sandbox_writable.is_empty());
        assert_eq!(cfg.agent.worktrees_dir, None);
        assert_eq!(
            cfg.trust.ignored,
            [
                "[agent] programs",
                "[agent] env_allow",
                "[agent] sandbox_writable",
                "[agent] worktrees_dir",
                "[agent] network"
            ]
        );

        d.trust();
        let cfg = d.load();
        assert_eq!(cfg.trust.state, TrustState::Trusted);
        assert!(cfg.trust.ignored.is_empty());
        assert_eq!(
            cfg.agent.programs.get("claude").map(String::as_str),
            Some("/opt/claude")
        );
        assert_eq!(cfg.agent.env_allow, ["X"]);
        assert_eq!(cfg.agent.sandbox_writable, ["/srv/cache"]);
        assert_eq!(cfg.agent.worktrees_dir.as_deref(), Some("/srv/wt"));

        // Any change makes it untrusted again.
        d.project_file("[agent]\nsandbox = \"off\"\n");
        let cfg = d.load();
        assert_eq!(cfg.trust.state, TrustState::Untrusted);
        assert_eq!(cfg.agent.sandbox, None);
        assert_eq!(cfg.trust.ignored, ["[agent] sandbox"]);

        // The user's own file lowers it.
        d.user_file("[agent]\nsandbox = \"off\"\nnetwork = \"open\"\n");
        let cfg = d.load();
        assert_eq!(cfg.agent.sandbox.as_deref(), Some("off"));
        assert!(
            cfg.trust.ignored.is_empty(),
            "off asked where off is in force"
        );
        assert_eq!(
            cfg.agent.network,
            Some(crate::sandbox::NetworkSetting::Word("open".into()))
        );

        d.project_file("[agent]\ntoken = \"x\"\n");
        assert!(matches!(
            ProjectConfig::load(d.project.path(), &d.env()),
            Err(ConfigError::Parse { .. })
        ));
        d.project_file("");
        d.user_file("language = \"ja\"\n");
        assert!(matches!(
            ProjectConfig::load(d.project.path(), &d.env()),
            Err(ConfigError::Parse { .. })
        ));
    }

    #[test]
    fn the_user_directory_follows_xdg_then_home() {
        let env = Environment::from_vars([("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(user_config_dir(&env), Some(PathBuf::from("/x/butler")));
        let env = Environment::from_vars([("XDG_CONFIG_HOME", "rel"), ("HOME", "/h")]);
        assert_eq!(
            user_config_dir(&env),
            Some(PathBuf::from("/h/.config/butler"))
        );
        assert_eq!(user_config_dir(&Environment::default()), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_parsed_strictly() {
        let origin = |u: &str| url::Url::parse(u).unwrap().origin();
        assert_eq!(
            parse_origin("git.example.com:3000").unwrap(),
            origin("https://git.example.com:3000")
        );
        assert!(parse_origin("https://user:pw@git.example.com").is_none());
        assert!(parse_origin("ssh://git.example.com").is_none());
        assert!(parse_origins("https://a.example, ftp://b.example").is_none());
        assert_eq!(parse_origins(" ").unwrap(), vec![]);
    }

    #[test]
    fn every_token_variable_is_a_secret_no_child_inherits() {
        for name in secret_env_names() {
            assert!(crate::process::env::is_secret(name), "{name}");
        }
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn load(file: Option<&str>, env: &[(&str, &str)]) -> Result<IssueConfig, ConfigError> {
        IssueConfig::from_sources(file, Path::new(".butler/config.toml"), env_of(env))
    }

    #[test]
    fn defaults_to_auto_without_token() {
        let cfg = load(None, &[]).unwrap();
        assert_eq!(cfg.backend, BackendChoice::Auto);
        assert_eq!(cfg.backend_source, Source::Default);
        assert!(cfg.token.is_none());
        assert_eq!(cfg.timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn env_wins_over_file() {
        let file = "[issues]\nbackend = \"local\"\ngitea_url = \"https://a.example/git/\"\n";
        let cfg = load(
            Some(file),
            &[
                (ENV_BACKEND, "gitea"),
                (ENV_GITEA_URL, "https://b.example:3000/x/api/v1"),
            ],
        )
        .unwrap();
        assert_eq!(cfg.backend, BackendChoice::Gitea);
        assert_eq!(cfg.backend_source, Source::Env(ENV_BACKEND));
        assert_eq!(cfg.gitea_url.unwrap().as_str(), "https://b.example:3000/x");
    }

    #[test]
    fn file_values_apply() {
        let file = "[issues]\nbackend = \"Local\"\ngitea_url = \"https://a.example/git/\"\n\
                    repo = \"me/proj.git\"\ntimeout_secs = 3\n";
        let cfg = load(Some(file), &[]).unwrap();
        assert_eq!(cfg.backend, BackendChoice::Local);
        assert_eq!(cfg.backend_source, Source::File);
        assert_eq!(cfg.gitea_url.unwrap().as_str(), "https://a.example/git");
        assert_eq!(cfg.repo, Some(("me".into(), "proj".into())));
        assert_eq!(cfg.timeout, Duration::from_secs(3));
    }

    #[test]
    fn token_prefers_butler_variable_and_falls_back() {
        let cfg = load(
            None,
            &[(ENV_GITEA_TOKEN, "aaa"), (ENV_GITEA_TOKEN_FALLBACK, "bbb")],
        );
        let cfg = cfg.unwrap();
        assert_eq!(cfg.token.unwrap().expose(), "aaa");
        assert_eq!(cfg.token_source, Some(ENV_GITEA_TOKEN));
        let cfg = load(
            None,
            &[(ENV_GITEA_TOKEN, " "), (ENV_GITEA_TOKEN_FALLBACK, "bbb")],
        );
        let cfg = cfg.unwrap();
        assert_eq!(cfg.token.unwrap().expose(), "bbb");
        assert_eq!(cfg.token_source, Some(ENV_GITEA_TOKEN_FALLBACK));
    }

    #[test]
    fn the_token_is_bound_only_to_servers_named_in_the_environment() {
        let file = "[issues]\ngitea_url = \"https://hostile.example/\"\n";
        let cfg = load(Some(file), &[(ENV_GITEA_TOKEN, "t0k-abcdefgh")]).unwrap();
        assert_eq!(cfg.token_hosts, vec![], "the project's file binds nothing");
        let cfg = load(
            Some(file),
            &[
                (ENV_GITEA_URL, "https://git.example.com/sub"),
                (
                    ENV_GITEA_HOSTS,
                    "git.example.org:3000, http://127.0.0.1:8080",
                ),
            ],
        )
        .unwrap();
        let origin = |u: &str| url::Url::parse(u).unwrap().origin();
        assert_eq!(
            cfg.token_hosts,
            vec![
                origin("https://git.example.com"),
                origin("https://git.example.org:3000"),
                origin("http://127.0.0.1:8080"),
            ]
        );
        assert!(!cfg.insecure_http);
        let cfg = load(None, &[(ENV_GITEA_INSECURE_HTTP, "1")]).unwrap();
        assert!(cfg.insecure_http);
        let err = load(None, &[(ENV_GITEA_HOSTS, "https://u:pw@git.example.com")]).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidHosts));
        assert!(!err.to_string().contains("pw"));
    }

    #[test]
    fn token_in_file_is_refused() {
        let err = load(Some("[issues]\ntoken = \"s3cr3t-value\"\n"), &[]).unwrap_err();
        assert!(matches!(err, ConfigError::TokenInFile));
        assert!(!err.to_string().contains("s3cr3t-value"));
    }

    #[test]
    fn bad_values_are_typed_errors() {
        let err = load(None, &[(ENV_BACKEND, "github")]).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidBackend { .. }), "{err}");
        let err = load(None, &[(ENV_GITEA_URL, "https://user:pw@host/")]).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidUrl { .. }));
        assert!(!err.to_string().contains("pw"));
        let err = load(None, &[(ENV_GITEA_URL, "ssh://host/")]).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidUrl { .. }));
        let err = load(Some("[issues]\nbakend = \"local\"\n"), &[]).unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }), "{err}");
        let err = load(Some("[issues]\nrepo = \"justone\"\n"), &[]).unwrap_err();
        assert!(matches!(err, ConfigError::InvalidRepo));
    }

    #[test]
    fn other_sections_are_tolerated() {
        let cfg = load(Some("language = \"ja\"\n[maid]\nagent = \"goose\"\n"), &[]).unwrap();
        assert_eq!(cfg.backend, BackendChoice::Auto);
    }

    #[test]
    fn delegation_and_mcp_servers_are_read_with_their_defaults() {
        let path = Path::new("/p/.butler/config.toml");
        let (cfg, _) = parse_sections(
            "[delegation]\npromote_after = 2\ndestructive_commands = [\"helm uninstall\"]\n\
             [mcp_servers.kb]\ncommand = \"/bin/kb\"\nargs = [\"--stdio\"]\n",
            path,
        )
        .expect("valid");
        assert_eq!(cfg.delegation.promote_after, Some(2));
        assert_eq!(cfg.delegation.destructive_commands, ["helm uninstall"]);
        let kb = cfg.mcp_servers.get("kb").expect("kb");
        assert_eq!((kb.command.as_str(), kb.args.len()), ("/bin/kb", 1));
        let (none, runner) = parse_sections("", path).expect("valid");
        assert_eq!(runner, RunnerConfig::default());
        assert_eq!(none.delegation.promote_after, None);
        assert!(none.mcp_servers.is_empty());
        assert_eq!(DelegationConfig::default().promote_after, 3);
        for bad in [
            "[delegation]\npromote_after = 0\n",
            "[delegation]\npromote = 2\n",
            "[mcp_servers.kb]\nargs = []\n",
            "[mcp_servers.\"a b\"]\ncommand = \"x\"\n",
            "language = \"ja\"\n",
            "[issues]\nbackend = \"local\"\n",
        ] {
            assert!(parse_sections(bad, path).is_err(), "{bad}");
        }
    }

    #[test]
    fn secret_never_formats() {
        let s = Secret::new("tok-123456");
        assert!(!format!("{s:?} {s}").contains("tok-123456"));
        let cfg = load(None, &[(ENV_GITEA_TOKEN, "tok-123456")]).unwrap();
        assert!(!format!("{cfg:?}").contains("tok-123456"));
    }
}
