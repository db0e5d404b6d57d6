//! What one confined command may do: the [`Policy`] the Maid writes for `butler sandbox-exec`,
//! the [`SandboxMode`] the user chose, and the [`Network`] rule parsed from `[agent] network`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SandboxError;

/// How strictly agents and verify commands are confined (`[agent] sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Refuse to start an agent that cannot be confined.
    Required,
    /// Confine when the kernel supports it; otherwise run unconfined and say so in the evidence.
    #[default]
    Auto,
    /// Never confine (detection after the run is the only line).
    Off,
}

impl SandboxMode {
    /// Every mode, in the order the settings list them.
    pub const ALL: [SandboxMode; 3] = [Self::Required, Self::Auto, Self::Off];

    /// `required`, `auto` or `off` (any case, surrounding blanks ignored).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "required" => Some(Self::Required),
            "auto" => Some(Self::Auto),
            "off" => Some(Self::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Auto => "auto",
            Self::Off => "off",
        }
    }
}

/// The `[agent] network` setting as written: `"proxy"`, `"open"`, or a list of endpoints.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum NetworkSetting {
    Word(String),
    Endpoints(Vec<String>),
}

/// Which TCP connections a confined command may open.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Network {
    /// No network rule.
    #[default]
    Open,
    /// TCP `connect` only to these ports (on any host: Landlock filters by port alone); TCP
    /// `bind` refused.
    Restricted { connect_tcp: Vec<u16> },
    /// Everything through the task's egress proxy, Butler's own, listening at `proxy` on
    /// loopback: Landlock allows TCP `connect` to its port only (no `bind`), and the system-call
    /// filter lets a connection reach that exact address and nothing else.
    Proxy { proxy: std::net::SocketAddr },
}

/// The `[agent] network` setting, read: through the task's egress proxy (the default, and
/// `"proxy"`), `"open"`, or TCP to a list of ports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NetworkChoice {
    #[default]
    Proxy,
    Open,
    Ports(Vec<u16>),
}

impl NetworkChoice {
    /// Reads `"proxy"`, `"open"`, or endpoints such as `"11434"`, `"127.0.0.1:11434"`,
    /// `"[::1]:8080"` or `"https://api.example.com/v1"` (its port, or the scheme's default).
    /// The error names the entry that could not be read.
    pub fn from_setting(setting: &NetworkSetting) -> Result<Self, String> {
        match setting {
            NetworkSetting::Word(word) if word.trim().eq_ignore_ascii_case("open") => {
                Ok(Self::Open)
            }
            NetworkSetting::Word(word) if word.trim().eq_ignore_ascii_case("proxy") => {
                Ok(Self::Proxy)
            }
            NetworkSetting::Word(word) => Err(format!(
                "`{}` is neither `proxy`, `open` nor a list of endpoints",
                word.chars().take(60).collect::<String>()
            )),
            NetworkSetting::Endpoints(list) => {
                let mut ports = Vec::new();
                for entry in list {
                    let port = endpoint_port(entry).ok_or_else(|| {
                        format!(
                            "`{}` is not a port, `host:port` or URL",
                            entry.chars().take(60).collect::<String>()
                        )
                    })?;
                    if !ports.contains(&port) {
                        ports.push(port);
                    }
                }
                ports.sort_unstable();
                Ok(Self::Ports(ports))
            }
        }
    }
}

impl Network {
    /// Whether TCP is restricted by Landlock (needs ABI 4).
    pub(crate) fn is_restricted(&self) -> bool {
        !matches!(self, Self::Open)
    }

    /// The egress proxy's address, when everything goes through it.
    pub(crate) fn proxy(&self) -> Option<std::net::SocketAddr> {
        match self {
            Self::Proxy { proxy } => Some(*proxy),
            _ => None,
        }
    }

    /// The ports Landlock lets a confined command `connect` to (`None`: any).
    pub fn connect_ports(&self) -> Option<Vec<u16>> {
        match self {
            Self::Open => None,
            Self::Restricted { connect_tcp } => Some(connect_tcp.clone()),
            Self::Proxy { proxy } => Some(vec![proxy.port()]),
        }
    }
}

/// The port of `12`, `host:12`, `[v6]:12`, or a URL (`scheme://host[:port]/…`).
fn endpoint_port(entry: &str) -> Option<u16> {
    let entry = entry.trim();
    if entry.contains("://") {
        let url = url::Url::parse(entry).ok()?;
        return url.port_or_known_default().filter(|p| *p != 0);
    }
    let port = match entry.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => port,
        Some(_) => return None,
        None => entry,
    };
    port.parse::<u16>().ok().filter(|p| *p != 0)
}

/// Device files every confined command may read, write, truncate and use `ioctl` on (shells
/// write to `/dev/null` with `O_TRUNC`); nothing else of `/dev` is readable. No terminal: the
/// commands' standard streams are pipes, and the user's terminals (`/dev/tty`, `/dev/pts/*`)
/// are not theirs to read or write. Missing ones are skipped.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// What one confined command may do. Reading is allowed everywhere but under `deny_read` and in
/// `/dev`; writing only under `writable` (each a whole tree, but its denied paths) and to
/// `devices`; the network as `network` says. Signals to and abstract UNIX sockets of processes
/// outside the sandbox are refused where the kernel can (Landlock ABI 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// `Auto` or `Required` (`Off` never reaches the helper).
    pub mode: SandboxMode,
    pub writable: Vec<PathBuf>,
    #[serde(default)]
    pub devices: Vec<PathBuf>,
    #[serde(default)]
    pub network: Network,
    /// Paths neither read nor written, whatever else the policy grants around them (the
    /// credential stores, Butler's own directories; see [`super::deny_read`]): globs
    /// expanded; the helper resolves links and denies both the link and its target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_read: Vec<PathBuf>,
    /// Trees read even beneath a denied path (the project's working tree and git directory,
    /// which a configured denial such as `worktrees_dir` may hold); denied paths inside them
    /// stay denied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readable: Vec<PathBuf>,
}

impl Policy {
    /// A policy with the default [`DEVICES`].
    pub fn new(mode: SandboxMode, writable: Vec<PathBuf>, network: Network) -> Self {
        Self {
            mode,
            writable,
            devices: DEVICES.iter().map(PathBuf::from).collect(),
            network,
            deny_read: Vec::new(),
            readable: Vec::new(),
        }
    }

    /// Writes the policy as JSON.
    pub fn write_to(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).expect("a policy always serialises");
        std::fs::write(path, text)
    }

    /// Reads a policy written by [`Policy::write_to`].
    pub fn read_from(path: &Path) -> Result<Self, SandboxError> {
        let text = std::fs::read_to_string(path).map_err(|e| SandboxError::Policy {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let policy: Self = serde_json::from_str(&text).map_err(|e| SandboxError::Policy {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        if let Some(relative) = policy
            .writable
            .iter()
            .chain(&policy.devices)
            .chain(&policy.deny_read)
            .chain(&policy.readable)
            .find(|p| !p.is_absolute())
        {
            return Err(SandboxError::Policy {
                path: path.to_path_buf(),
                reason: format!("`{}` is not an absolute path", relative.display()),
            });
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(list: &[&str]) -> NetworkSetting {
        NetworkSetting::Endpoints(list.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn network_settings_are_read_by_port() {
        assert_eq!(
            NetworkChoice::from_setting(&NetworkSetting::Word("Open".into())),
            Ok(NetworkChoice::Open)
        );
        assert_eq!(
            NetworkChoice::from_setting(&NetworkSetting::Word(" proxy".into())),
            Ok(NetworkChoice::Proxy)
        );
        assert_eq!(
            NetworkChoice::from_setting(&endpoints(&[
                "127.0.0.1:11434",
                "11434",
                "[::1]:8080",
                "https://api.example.com/v1",
                "http://localhost:3000/x",
            ])),
            Ok(NetworkChoice::Ports(vec![443, 3000, 8080, 11434]))
        );
        assert_eq!(
            NetworkChoice::from_setting(&endpoints(&[])),
            Ok(NetworkChoice::Ports(vec![]))
        );
        for bad in ["closed", "all"] {
            assert!(NetworkChoice::from_setting(&NetworkSetting::Word(bad.into())).is_err());
        }
        for bad in ["host:", ":80", "0", "70000", "example.com", "ftp://"] {
            let err = NetworkChoice::from_setting(&endpoints(&[bad])).expect_err(bad);
            assert!(err.contains("is not a port"), "{err}");
        }
    }

    #[test]
    fn modes_parse() {
        assert_eq!(
            SandboxMode::parse(" Required "),
            Some(SandboxMode::Required)
        );
        assert_eq!(SandboxMode::parse("auto"), Some(SandboxMode::Auto));
        assert_eq!(SandboxMode::parse("off"), Some(SandboxMode::Off));
        assert_eq!(SandboxMode::parse("on"), None);
    }

    #[test]
    fn a_policy_round_trips_and_relative_paths_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("policy.json");
        let policy = Policy::new(
            SandboxMode::Required,
            vec![dir.path().join("wt")],
            Network::Restricted {
                connect_tcp: vec![11434],
            },
        );
        policy.write_to(&file).expect("written");
        assert_eq!(Policy::read_from(&file).expect("read"), policy);
        let mut bad = policy;
        bad.writable.push("relative/dir".into());
        bad.write_to(&file).expect("written");
        let err = Policy::read_from(&file).expect_err("relative");
        assert!(err.to_string().contains("relative/dir"), "{err}");
    }
}
