//! Butler's project configuration: `.butler/config.toml` in the project, overridden by
//! environment variables.
//!
//! Two sections: the issue backend (`[issues]`) and the ImplementMaid's agents (`[agent]`).
//! Tokens are never read from the file (it may be committed); they come from the environment
//! only and are held in a [`Secret`]. Where the token may be sent is also the environment's
//! say only (`BUTLER_GITEA_URL`, `BUTLER_GITEA_HOSTS`): the file may name a server, but the
//! token goes there only when the user bound it (see [`crate::issues::binding`]).
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
//! programs = { goose = "/opt/goose/bin/goose" }  # else found on PATH
//! env_allow = ["OPENAI_HOST"]           # extra variables passed to the agent
//! stagnation_secs = 300                 # no output and no file change for this long: stop
//! sandbox = "auto"                      # "required" | "auto" (default) | "off"
//! network = "open"                      # or endpoints agents may reach: ["127.0.0.1:11434"]
//! sandbox_writable = []                 # more trees agents and verify commands may write
//! worktrees_dir = "/srv/butler/wt"      # else $XDG_DATA_HOME/butler/worktrees
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The project config file, relative to the project root.
pub const CONFIG_FILE: &str = ".butler/config.toml";

/// The language of Butler's texts when the project's file does not set one (`en`, `ja`).
pub const ENV_LANG: &str = "BUTLER_LANG";
/// Chooses the issue backend: `local`, `gitea` or `auto`.
pub const ENV_BACKEND: &str = "BUTLER_ISSUE_BACKEND";
/// The Gitea/Forgejo web root (e.g. `https://example.com/git`).
pub const ENV_GITEA_URL: &str = "BUTLER_GITEA_URL";
/// The Gitea/Forgejo access token.
pub const ENV_GITEA_TOKEN: &str = "BUTLER_GITEA_TOKEN";
/// The fallback token variable, shared with other Gitea tools.
pub const ENV_GITEA_TOKEN_FALLBACK: &str = "GITEA_TOKEN";
/// More servers the token may be sent to (origins, separated by commas or spaces), besides
/// `BUTLER_GITEA_URL`'s.
pub const ENV_GITEA_HOSTS: &str = "BUTLER_GITEA_HOSTS";
/// `1`: the user allows the token over plain http to the non-loopback servers they named.
pub const ENV_GITEA_INSECURE_HTTP: &str = "BUTLER_GITEA_INSECURE_HTTP";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT_SECS: u64 = 300;

/// Environment variables that hold secrets; whoever spawns an agent strips these from its
/// environment.
pub fn secret_env_names() -> &'static [&'static str] {
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
}

#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    /// The language of Butler's texts (read by the orchestrator's catalogue).
    language: Option<String>,
    #[serde(default)]
    issues: FileIssues,
    #[serde(default)]
    agent: AgentFileConfig,
}

/// The `[agent]` section: the ImplementMaid's agent settings (environment variables, read by
/// the orchestrator, win over these).
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
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
    /// `required`, `auto` (default) or `off`: the Landlock sandbox of agents and verify commands.
    pub sandbox: Option<String>,
    /// `"open"` (default) or the endpoints (their TCP ports) a confined agent may connect to.
    pub network: Option<crate::sandbox::NetworkSetting>,
    /// More trees confined agents and verify commands may write (e.g. a build cache).
    #[serde(default)]
    pub sandbox_writable: Vec<String>,
    /// Where task worktrees live (default: `$XDG_DATA_HOME/butler/worktrees`).
    pub worktrees_dir: Option<String>,
}

impl AgentFileConfig {
    /// Reads the `[agent]` section of `<project_root>/.butler/config.toml` (empty when the
    /// file or the section is absent).
    pub fn load(project_root: &Path) -> Result<Self, ConfigError> {
        let path = project_root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let file = toml::from_str::<FileConfig>(&text).map_err(|e| ConfigError::Parse {
            path: path.clone(),
            message: e.message().to_string(),
        })?;
        Ok(file.agent)
    }
}

/// The `language` of `<project_root>/.butler/config.toml`, as written (`None` when the file or
/// the key is absent). What it means is the orchestrator's catalogue's to say.
pub fn file_language(project_root: &Path) -> Result<Option<String>, ConfigError> {
    let path = project_root.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let file = toml::from_str::<FileConfig>(&text).map_err(|e| ConfigError::Parse {
        path: path.clone(),
        message: e.message().to_string(),
    })?;
    Ok(file.language)
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileIssues {
    backend: Option<String>,
    gitea_url: Option<String>,
    repo: Option<String>,
    timeout_secs: Option<u64>,
    token: Option<toml::Value>,
}

impl IssueConfig {
    /// Reads `<project_root>/.butler/config.toml` (if present) and the process environment.
    pub fn load(project_root: &Path) -> Result<Self, ConfigError> {
        let path = project_root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Self::from_sources(text.as_deref(), &path, |name| std::env::var(name).ok())
    }

    /// Builds the configuration from the file's text (if any) and an environment lookup.
    /// Environment variables win over the file; empty variables count as unset.
    pub fn from_sources(
        file_text: Option<&str>,
        file_path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let file = match file_text {
            Some(text) => toml::from_str::<FileConfig>(text).map_err(|e| ConfigError::Parse {
                path: file_path.to_path_buf(),
                message: e.message().to_string(),
            })?,
            None => FileConfig::default(),
        };
        let issues = file.issues;
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
            let hosts =
                crate::issues::binding::parse_origins(&list).ok_or(ConfigError::InvalidHosts)?;
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

    #[test]
    fn the_agent_section_is_read_and_unknown_keys_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            AgentFileConfig::load(dir.path()).expect("no file"),
            AgentFileConfig::default()
        );
        std::fs::create_dir_all(dir.path().join(".butler")).expect("mkdir");
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(
            &file,
            "[issues]\nbackend = \"local\"\n[agent]\ndefault = \"claude\"\nmodel = \"m\"\n\
             programs = { claude = \"/opt/claude\" }\nenv_allow = [\"X\"]\n",
        )
        .expect("write");
        let cfg = AgentFileConfig::load(dir.path()).expect("reads");
        assert_eq!(cfg.default.as_deref(), Some("claude"));
        assert_eq!(
            cfg.programs.get("claude").map(String::as_str),
            Some("/opt/claude")
        );
        assert_eq!(cfg.env_allow, vec!["X".to_string()]);
        std::fs::write(
            &file,
            "[agent]\nsandbox = \"required\"\nnetwork = [\"127.0.0.1:11434\"]\n\
             sandbox_writable = [\"/srv/cache\"]\nworktrees_dir = \"/srv/wt\"\n",
        )
        .expect("write");
        let cfg = AgentFileConfig::load(dir.path()).expect("reads");
        assert_eq!(cfg.sandbox.as_deref(), Some("required"));
        assert_eq!(
            cfg.network,
            Some(crate::sandbox::NetworkSetting::Endpoints(vec![
                "127.0.0.1:11434".into()
            ]))
        );
        assert_eq!(cfg.sandbox_writable, vec!["/srv/cache".to_string()]);
        assert_eq!(cfg.worktrees_dir.as_deref(), Some("/srv/wt"));
        std::fs::write(&file, "[agent]\nnetwork = \"open\"\n").expect("write");
        assert_eq!(
            AgentFileConfig::load(dir.path()).expect("reads").network,
            Some(crate::sandbox::NetworkSetting::Word("open".into()))
        );
        std::fs::write(&file, "[agent]\ntoken = \"x\"\n").expect("write");
        assert!(matches!(
            AgentFileConfig::load(dir.path()),
            Err(ConfigError::Parse { .. })
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn secret_never_formats() {
        let s = Secret::new("tok-123456");
        assert!(!format!("{s:?} {s}").contains("tok-123456"));
        let cfg = load(None, &[(ENV_GITEA_TOKEN, "tok-123456")]).unwrap();
        assert!(!format!("{cfg:?}").contains("tok-123456"));
    }
}
