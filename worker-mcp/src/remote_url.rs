//! Remote URL resolution: which server, owner and repository a git remote URL points at.
//!
//! Follows git's own reading of remote URLs (`git-clone(1)`, "GIT URLS"): `scheme://` URLs,
//! scp-like `[user@]host:path` (only when no `/` comes before the first `:`), and everything else
//! is a local path. Owner and repository are the last two path segments; anything before them is
//! the server's sub-path (Gitea behind `ROOT_URL=https://example.com/git/`). Credentials are
//! dropped while parsing, so a [`RemoteRepo`] cannot leak them through `Debug` or `Display`.

use std::fmt;

/// How the remote is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Https,
    Http,
    /// `ssh://`, `git+ssh://`, `ssh+git://`.
    Ssh,
    /// `git://` (the git daemon).
    Git,
    /// `[user@]host:owner/repo`.
    ScpLike,
}

/// A remote that names a server, an owner and a repository. Holds no credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRepo {
    pub scheme: Scheme,
    /// Lower-cased; an IPv6 literal without its brackets (`::1`).
    pub host: String,
    /// The port written in the URL (for ssh this is the ssh port, not the web port).
    pub port: Option<u16>,
    /// Path before the owner, with a leading `/` and none trailing (`"/git"`), or `""`.
    pub base_path: String,
    /// Original case kept.
    pub owner: String,
    /// Without `.git`; original case kept.
    pub repo: String,
}

impl RemoteRepo {
    /// The web root of the server the remote points at, without a trailing `/`
    /// (`https://example.com/git`).
    ///
    /// For http(s) remotes: the same scheme, host, port and sub-path. For ssh, scp-like and
    /// git-daemon remotes: `https://` on the same host, without the port (it is the ssh or
    /// daemon port) and without the path prefix (an ssh path prefix is a directory on the
    /// server, not the web sub-path). Every parsed remote has a host, so this always exists.
    pub(crate) fn web_base(&self) -> String {
        let host = self.host_for_url();
        match self.scheme {
            Scheme::Https | Scheme::Http => {
                let scheme = if self.scheme == Scheme::Https {
                    "https"
                } else {
                    "http"
                };
                let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
                format!("{scheme}://{host}{port}{}", self.base_path)
            }
            Scheme::Ssh | Scheme::Git | Scheme::ScpLike => format!("https://{host}"),
        }
    }

    fn host_for_url(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

impl fmt::Display for RemoteRepo {
    /// A credential-free spelling of the remote, e.g. `ssh://host:2222/owner/repo`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = self.host_for_url();
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        // A name that itself ends in `.git` needs one more, or reading it back would strip it.
        let repo = if self.repo.ends_with(".git") {
            format!("{}.git", self.repo)
        } else {
            self.repo.clone()
        };
        let (owner, base) = (&self.owner, &self.base_path);
        match self.scheme {
            Scheme::ScpLike => {
                write!(
                    f,
                    "{host}:{}{owner}/{repo}",
                    base.strip_prefix('/')
                        .map_or(String::new(), |b| format!("{b}/"))
                )
            }
            Scheme::Https => write!(f, "https://{host}{port}{base}/{owner}/{repo}"),
            Scheme::Http => write!(f, "http://{host}{port}{base}/{owner}/{repo}"),
            Scheme::Ssh => write!(f, "ssh://{host}{port}{base}/{owner}/{repo}"),
            Scheme::Git => write!(f, "git://{host}{port}{base}/{owner}/{repo}"),
        }
    }
}

/// Reads a remote URL (as `git remote get-url` prints it). `None` when it names no server
/// repository: local paths, `file://`, `<helper>::<address>`, bundles, unknown schemes, or a
/// path without both an owner and a repository.
pub fn parse_remote(url: &str) -> Option<RemoteRepo> {
    let url = url.trim();
    if url.is_empty() || is_remote_helper(url) {
        return None;
    }
    match url.find("://") {
        Some(at) if is_scheme(&url[..at]) => parse_url(&url[..at], &url[at + 3..]),
        _ => parse_scp_like(url),
    }
}

/// `<transport>::<address>`: git hands these to `git-remote-<transport>`.
fn is_remote_helper(url: &str) -> bool {
    let end = url
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.')))
        .unwrap_or(url.len());
    end > 0 && url[end..].starts_with("::")
}

fn is_scheme(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn parse_url(scheme: &str, rest: &str) -> Option<RemoteRepo> {
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        "ssh" | "git+ssh" | "ssh+git" => Scheme::Ssh,
        "git" => Scheme::Git,
        _ => return None, // file://, ftp://, unknown transports
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_userinfo, hp)| hp);
    let (host, port) = split_host_port(host_port)?;
    let segments = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect::<Option<Vec<_>>>()?;
    build(scheme, host, port, segments)
}

/// `[user@]host:path`, or `[user@][v6]:path`; a `/` before the first `:` makes it a local path.
fn parse_scp_like(url: &str) -> Option<RemoteRepo> {
    let colon = url.find(':')?;
    if url.find('/').is_some_and(|slash| slash < colon) || is_windows_drive(url) {
        return None;
    }
    let at_bracket = url.find('[').filter(|&b| b < colon);
    let (host_part, path) = match at_bracket {
        Some(open) => {
            let close = open + url[open..].find(']')?;
            let after = &url[close + 1..];
            (&url[..=close], after.strip_prefix(':')?)
        }
        None => (&url[..colon], &url[colon + 1..]),
    };
    let host = host_part.rsplit_once('@').map_or(host_part, |(_user, h)| h);
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let segments = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    build(Scheme::ScpLike, valid_host(host)?, None, segments)
}

/// `C:/x` or `C:\x`: a Windows path, never a host called `C`.
fn is_windows_drive(url: &str) -> bool {
    let b = url.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'/' | b'\\')
}

fn split_host_port(host_port: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, _)) if host.contains(':') => return None, // IPv6 needs brackets
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    let port = match port {
        None | Some("") => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((valid_host(host)?, port))
}

fn valid_host(host: &str) -> Option<String> {
    let ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '%'));
    ok.then(|| host.to_lowercase())
}

fn build(
    scheme: Scheme,
    host: String,
    port: Option<u16>,
    mut segments: Vec<String>,
) -> Option<RemoteRepo> {
    let last = segments.pop()?;
    let repo = last.strip_suffix(".git").unwrap_or(&last).to_string();
    let owner = segments.pop()?;
    if !valid_name(&owner) || !valid_name(&repo) || repo.ends_with(".bundle") {
        return None;
    }
    if segments.iter().any(|s| s == ".." || s == ".") {
        return None;
    }
    let base_path = segments.iter().map(|s| format!("/{s}")).collect();
    Some(RemoteRepo {
        scheme,
        host,
        port,
        base_path,
        owner,
        repo,
    })
}

/// Owner and repository names as forges allow them: letters, digits, `-`, `_`, `.`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `%XX` → byte; `None` for a broken escape or text that is not UTF-8 (the decoding library
/// keeps a broken escape as it is, so it is refused here first).
fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let broken = bytes.iter().enumerate().any(|(i, b)| {
        *b == b'%'
            && !bytes
                .get(i + 1..i + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    if broken {
        return None;
    }
    percent_encoding::percent_decode(bytes)
        .decode_utf8()
        .ok()
        .map(|text| text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::Scheme::*;
    use super::*;

    #[test]
    fn percent_escapes_decode_and_broken_ones_are_refused() {
        assert_eq!(percent_decode("%2e%2E").as_deref(), Some(".."));
        assert_eq!(percent_decode("caf%C3%A9").as_deref(), Some("café"));
        assert_eq!(percent_decode("plain").as_deref(), Some("plain"));
        for broken in ["%zz", "%4", "%", "a%+1", "%FF"] {
            assert_eq!(percent_decode(broken), None, "{broken}");
        }
    }

    /// (url, expected (scheme, host, port, base_path, owner, repo) or None)
    type Row = (
        &'static str,
        Option<(
            Scheme,
            &'static str,
            Option<u16>,
            &'static str,
            &'static str,
            &'static str,
        )>,
    );

    const TABLE: &[Row] = &[
        // 1-2: http(s), with and without .git and trailing slash
        (
            "https://example.com/owner/repo.git",
            Some((Https, "example.com", None, "", "owner", "repo")),
        ),
        (
            "https://example.com/owner/repo",
            Some((Https, "example.com", None, "", "owner", "repo")),
        ),
        (
            "https://example.com/owner/repo/",
            Some((Https, "example.com", None, "", "owner", "repo")),
        ),
        (
            "https://example.com/owner/repo.git/",
            Some((Https, "example.com", None, "", "owner", "repo")),
        ),
        (
            "http://example.com/Owner/Repo.git",
            Some((Http, "example.com", None, "", "Owner", "Repo")),
        ),
        (
            "HTTPS://Example.COM/owner/repo",
            Some((Https, "example.com", None, "", "owner", "repo")),
        ),
        // only one .git is stripped
        (
            "https://h.io/o/r.git.git",
            Some((Https, "h.io", None, "", "o", "r.git")),
        ),
        // 3: ports
        (
            "https://git.local:3000/owner/repo.git",
            Some((Https, "git.local", Some(3000), "", "owner", "repo")),
        ),
        (
            "http://localhost:3000/a/b",
            Some((Http, "localhost", Some(3000), "", "a", "b")),
        ),
        (
            "https://host:/o/r",
            Some((Https, "host", None, "", "o", "r")),
        ),
        // 4: credentials are dropped
        (
            "https://user:s3cret@example.com/owner/repo.git",
            Some((Https, "example.com", None, "", "owner", "repo")),
        ),
        (
            "https://oauth2:TOKEN123@example.com:8443/o/r",
            Some((Https, "example.com", Some(8443), "", "o", "r")),
        ),
        (
            "https://user:p@ss@example.com/o/r",
            Some((Https, "example.com", None, "", "o", "r")),
        ),
        // 5: sub-paths
        (
            "https://example.com/git/owner/repo.git",
            Some((Https, "example.com", None, "/git", "owner", "repo")),
        ),
        (
            "https://example.com/a/b/owner/repo",
            Some((Https, "example.com", None, "/a/b", "owner", "repo")),
        ),
        (
            "https://example.com//git//owner//repo//",
            Some((Https, "example.com", None, "/git", "owner", "repo")),
        ),
        // 6: ssh
        (
            "ssh://git@example.com/owner/repo.git",
            Some((Ssh, "example.com", None, "", "owner", "repo")),
        ),
        (
            "ssh://git@example.com:2222/owner/repo.git",
            Some((Ssh, "example.com", Some(2222), "", "owner", "repo")),
        ),
        (
            "ssh://example.com/owner/repo",
            Some((Ssh, "example.com", None, "", "owner", "repo")),
        ),
        (
            "git+ssh://git@example.com/o/r.git",
            Some((Ssh, "example.com", None, "", "o", "r")),
        ),
        (
            "ssh+git://example.com/o/r",
            Some((Ssh, "example.com", None, "", "o", "r")),
        ),
        // 7: scp-like
        (
            "git@example.com:owner/repo.git",
            Some((ScpLike, "example.com", None, "", "owner", "repo")),
        ),
        (
            "example.com:owner/repo",
            Some((ScpLike, "example.com", None, "", "owner", "repo")),
        ),
        (
            "user@host:owner/repo",
            Some((ScpLike, "host", None, "", "owner", "repo")),
        ),
        (
            "git@example.com:/owner/repo.git",
            Some((ScpLike, "example.com", None, "", "owner", "repo")),
        ),
        (
            "git@example.com:srv/git/owner/repo.git",
            Some((ScpLike, "example.com", None, "/srv/git", "owner", "repo")),
        ),
        (
            "git@[::1]:owner/repo.git",
            Some((ScpLike, "::1", None, "", "owner", "repo")),
        ),
        ("host:~user/repo.git", None),
        ("git@host:repo.git", None),
        // 8: git daemon
        (
            "git://example.com/owner/repo.git",
            Some((Git, "example.com", None, "", "owner", "repo")),
        ),
        (
            "git://example.com:9418/owner/repo",
            Some((Git, "example.com", Some(9418), "", "owner", "repo")),
        ),
        // 9: IPv6
        (
            "ssh://git@[::1]:2222/owner/repo.git",
            Some((Ssh, "::1", Some(2222), "", "owner", "repo")),
        ),
        (
            "http://[::1]:3000/owner/repo.git",
            Some((Http, "::1", Some(3000), "", "owner", "repo")),
        ),
        (
            "https://[2001:DB8::1]/o/r",
            Some((Https, "2001:db8::1", None, "", "o", "r")),
        ),
        // percent-decoding
        (
            "https://example.com/my%2Downer/repo%2Egit",
            Some((Https, "example.com", None, "", "my-owner", "repo")),
        ),
        (
            "https://example.com/%E3%81%82/r",
            Some((Https, "example.com", None, "", "あ", "r")),
        ),
        (
            "https://example.com/sub%20dir/o/r",
            Some((Https, "example.com", None, "/sub dir", "o", "r")),
        ),
        ("https://example.com/o%2Fx/r", None),
        ("https://example.com/o/r%ZZ", None),
        ("https://example.com/o%20x/r", None),
        // query and fragment are not part of the path
        (
            "https://example.com/o/r.git?ref=main#frag",
            Some((Https, "example.com", None, "", "o", "r")),
        ),
        // 10: unresolvable
        ("/path/to/repo.git", None),
        ("./foo:bar", None),
        ("../sibling/repo", None),
        ("repo", None),
        ("file:///srv/git/owner/repo.git", None),
        ("file://localhost/srv/owner/repo", None),
        ("persistent-https::https://example.com/o/r", None),
        ("x::y", None),
        ("C:/Users/me/repo", None),
        ("/tmp/backup.bundle", None),
        ("https://example.com/o/backup.bundle", None),
        ("ftp://example.com/o/r.git", None),
        ("https://example.com/repo.git", None),
        ("https://example.com", None),
        ("https:///o/r", None),
        ("https://::1/o/r", None),
        ("https://example.com:abc/o/r", None),
        ("https://example.com:99999/o/r", None),
        ("https://example.com/../r", None),
        ("", None),
    ];

    #[test]
    fn every_remote_form_in_the_table() {
        assert!(TABLE.len() >= 30);
        for (url, want) in TABLE {
            let got = parse_remote(url);
            let want = want.map(|(scheme, host, port, base, owner, repo)| RemoteRepo {
                scheme,
                host: host.into(),
                port,
                base_path: base.into(),
                owner: owner.into(),
                repo: repo.into(),
            });
            assert_eq!(got, want, "{url}");
        }
    }

    #[test]
    fn web_base_keeps_http_port_and_sub_path_but_not_the_ssh_port() {
        let web = |u: &str| parse_remote(u).expect(u).web_base();
        assert_eq!(
            web("https://example.com/git/owner/repo.git"),
            "https://example.com/git"
        );
        assert_eq!(web("http://host:3000/o/r"), "http://host:3000");
        assert_eq!(web("ssh://git@host:2222/o/r.git"), "https://host");
        assert_eq!(web("git@host:srv/o/r.git"), "https://host");
        assert_eq!(web("git://host:9418/o/r"), "https://host");
        assert_eq!(web("http://[::1]:3000/o/r"), "http://[::1]:3000");
        assert_eq!(web("git@[fe80::1]:o/r"), "https://[fe80::1]");
    }

    #[test]
    fn credentials_never_show_in_debug_or_display() {
        let r = parse_remote("https://oauth2:TOKEN123@example.com/git/o/r.git").expect("parses");
        assert!(!format!("{r:?}").contains("TOKEN123"));
        assert!(!format!("{r:?}").contains("oauth2"));
        assert_eq!(r.to_string(), "https://example.com/git/o/r");
        let s = parse_remote("ssh://git@[::1]:2222/o/r.git").expect("parses");
        assert_eq!(s.to_string(), "ssh://[::1]:2222/o/r");
        let scp = parse_remote("git@host:srv/o/r.git").expect("parses");
        assert_eq!(scp.to_string(), "host:srv/o/r");
        assert_eq!((scp.owner.as_str(), scp.repo.as_str()), ("o", "r"));
    }

    #[test]
    fn display_round_trips() {
        for (url, want) in TABLE {
            if want.is_some() {
                let r = parse_remote(url).expect("parses");
                assert_eq!(
                    parse_remote(&r.to_string()),
                    Some(r.clone()),
                    "{url} -> {r}"
                );
            }
        }
    }
}
