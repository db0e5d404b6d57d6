//! Which hosts the egress proxy admits: the agent's model endpoints (each an exact host and
//! port) and the user's `[agent] network_allow` patterns (`pypi.org`, `*.npmjs.org`, any port).
//! Names are compared as DNS compares them: ASCII case ignored, one trailing dot ignored.
//! Non-ASCII names must be written in their IDNA (`xn--`) form.

use serde::{Deserialize, Serialize};

/// A host name or address as the proxy compares it: lower case, no trailing dot, an IPv6
/// address without brackets. `None` for what is not a host.
pub(crate) fn normalize_host(host: &str) -> Option<String> {
    let host = host.trim();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Some(ip.to_string());
    }
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    (!host.is_empty() && host.len() <= 253 && host.split('.').all(label_ok)).then_some(host)
}

/// One `network_allow` entry: a host exactly, or every name below a domain (`*.npmjs.org`
/// admits `registry.npmjs.org`, not `npmjs.org` itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum HostPattern {
    Exact(String),
    Below(String),
}

impl HostPattern {
    /// Reads `pypi.org` or `*.npmjs.org`; the error says what is wrong with the entry.
    pub fn parse(entry: &str) -> Result<Self, String> {
        let shown: String = entry.chars().take(60).collect();
        let trimmed = entry.trim();
        let (below, name) = match trimmed.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let name = normalize_host(name)
            .filter(|n| !n.contains('*'))
            .ok_or_else(|| format!("`{shown}` is not a host name or `*.domain`"))?;
        if below && name.parse::<std::net::IpAddr>().is_ok() {
            return Err(format!("`{shown}`: `*.` goes before a domain name"));
        }
        if below && !name.contains('.') {
            return Err(format!("`{shown}` would admit a whole top-level domain"));
        }
        Ok(if below {
            Self::Below(name)
        } else {
            Self::Exact(name)
        })
    }

    /// Whether the pattern admits `host` (normalized, see [`normalize_host`]).
    pub(crate) fn matches(&self, host: &str) -> bool {
        match self {
            Self::Exact(name) => host == name,
            Self::Below(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

impl From<HostPattern> for String {
    fn from(p: HostPattern) -> String {
        match p {
            HostPattern::Exact(name) => name,
            HostPattern::Below(domain) => format!("*.{domain}"),
        }
    }
}

impl TryFrom<String> for HostPattern {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Self::parse(&s)
    }
}

/// A model endpoint the agent talks to: an exact host and port. `configured` when the user
/// named it (a variable such as `OPENAI_BASE_URL`, a provider they chose): only such an endpoint
/// may be on this machine or the local network's special addresses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub configured: bool,
}

impl Endpoint {
    /// `scheme://host[:port][/…]`, or `host[:port]` with `bare_port` when it has none. `None`
    /// for what names no host.
    pub fn parse(value: &str, bare_port: u16, configured: bool) -> Option<Self> {
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        let with_scheme = if value.contains("://") {
            value.to_owned()
        } else {
            format!("http://{value}")
        };
        let url = url::Url::parse(&with_scheme).ok()?;
        let host = normalize_host(url.host_str()?)?;
        let port = match url.port() {
            Some(p) => p,
            None if value.contains("://") => url.port_or_known_default()?,
            None => bare_port,
        };
        (port != 0).then_some(Self {
            host,
            port,
            configured,
        })
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// What the proxy admits by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowList {
    /// The agent's model endpoints (always admitted).
    pub endpoints: Vec<Endpoint>,
    /// `[agent] network_allow`.
    pub hosts: Vec<HostPattern>,
}

/// Why a name is admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// An endpoint the user configured: its exact host and port may be anywhere, this machine
    /// included.
    ConfiguredEndpoint,
    /// A default endpoint or an allowed pattern: ordinary addresses only.
    Allowed,
}

impl AllowList {
    /// Whether `host` (normalized) at `port` is admitted, and how.
    pub(crate) fn admits(&self, host: &str, port: u16) -> Option<Admission> {
        let endpoint = self
            .endpoints
            .iter()
            .filter(|e| e.host == host && e.port == port)
            .map(|e| e.configured)
            .max();
        match endpoint {
            Some(true) => Some(Admission::ConfiguredEndpoint),
            Some(false) => Some(Admission::Allowed),
            None => self
                .hosts
                .iter()
                .any(|p| p.matches(host))
                .then_some(Admission::Allowed),
        }
    }

    /// Adds an endpoint unless it is there already (a configured one wins over a default).
    pub fn add_endpoint(&mut self, endpoint: Endpoint) {
        match self
            .endpoints
            .iter_mut()
            .find(|e| e.host == endpoint.host && e.port == endpoint.port)
        {
            Some(e) => e.configured |= endpoint.configured,
            None => self.endpoints.push(endpoint),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_compared_as_dns_compares_them() {
        assert_eq!(normalize_host("PyPI.org."), Some("pypi.org".into()));
        assert_eq!(normalize_host("[::1]"), Some("::1".into()));
        assert_eq!(normalize_host("127.0.0.1"), Some("127.0.0.1".into()));
        for bad in ["", "a..b", "ex ample.com", "exämple.com", "a/b", "a:b", "."] {
            assert_eq!(normalize_host(bad), None, "{bad}");
        }
    }

    #[test]
    fn patterns_admit_a_host_or_the_names_below_a_domain() {
        let exact = HostPattern::parse("PyPI.org").expect("exact");
        assert!(exact.matches("pypi.org"));
        assert!(!exact.matches("files.pypi.org"));
        assert!(!exact.matches("evilpypi.org"));
        let below = HostPattern::parse("*.npmjs.org").expect("below");
        assert!(below.matches("registry.npmjs.org"));
        assert!(below.matches("a.b.npmjs.org"));
        assert!(
            !below.matches("npmjs.org"),
            "the domain itself is listed apart"
        );
        assert!(!below.matches("evilnpmjs.org"));
        assert!(!below.matches("npmjs.org.evil.com"));
        for bad in [
            "*",
            "*.com",
            "**.x.org",
            "*.1.2.3.4",
            "a.*.org",
            "https://x.org",
            "",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(String::from(below), "*.npmjs.org");
    }

    #[test]
    fn endpoints_are_read_from_urls_and_host_port() {
        let e = |v: &str| Endpoint::parse(v, 11434, true).map(|e| e.to_string());
        assert_eq!(
            e("https://API.openai.com/v1").as_deref(),
            Some("api.openai.com:443")
        );
        assert_eq!(
            e("http://127.0.0.1:4000/v1").as_deref(),
            Some("127.0.0.1:4000")
        );
        assert_eq!(e("localhost").as_deref(), Some("localhost:11434"));
        assert_eq!(e("0.0.0.0:8080").as_deref(), Some("0.0.0.0:8080"));
        assert_eq!(e("http://[::1]:9/").as_deref(), Some("[::1]:9"));
        assert_eq!(e(""), None);
        assert_eq!(e("http://"), None);
    }

    #[test]
    fn configured_endpoints_are_admitted_by_exact_host_and_port() {
        let mut list = AllowList {
            endpoints: vec![Endpoint::parse("https://api.anthropic.com", 0, false).expect("e")],
            hosts: vec![HostPattern::parse("*.npmjs.org").expect("p")],
        };
        list.add_endpoint(Endpoint::parse("http://127.0.0.1:11434", 0, true).expect("e"));
        assert_eq!(
            list.admits("127.0.0.1", 11434),
            Some(Admission::ConfiguredEndpoint)
        );
        assert_eq!(list.admits("127.0.0.1", 11435), None);
        assert_eq!(
            list.admits("api.anthropic.com", 443),
            Some(Admission::Allowed)
        );
        assert_eq!(list.admits("api.anthropic.com", 80), None);
        assert_eq!(
            list.admits("registry.npmjs.org", 8443),
            Some(Admission::Allowed)
        );
        assert_eq!(list.admits("example.com", 443), None);
        list.add_endpoint(Endpoint::parse("https://api.anthropic.com", 0, true).expect("e"));
        assert_eq!(list.endpoints.len(), 2);
        assert_eq!(
            list.admits("api.anthropic.com", 443),
            Some(Admission::ConfiguredEndpoint)
        );
    }
}
