//! Where the tracker token may go: only to a server the user named outside the repository.
//!
//! The user binds the token to origins (scheme, host and port) in Butler's environment:
//! `BUTLER_GITEA_URL`'s origin and every origin in `BUTLER_GITEA_HOSTS`. Nothing the
//! repository holds — its `.butler/config.toml`, its remotes — can add one, so checking out a
//! hostile branch cannot send the token anywhere. Even to a bound origin the token does not go
//! in clear text (`http://`) unless the host is this machine (loopback) or the user allowed it
//! (`BUTLER_GITEA_INSECURE_HTTP=1`). The configuration reads the origins ([`crate::config`]).

use url::{Host, Origin, Url};

/// Why the token may not be sent to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The server's origin is not one the user bound the token to.
    NotBound,
    /// Plain http to a host that is not this machine, and the user did not allow it.
    PlainHttp,
}

/// Whether the token may be sent to `url` given the origins the user bound it to.
pub(crate) fn token_may_go_to(
    url: &Url,
    bound: &[Origin],
    insecure_http: bool,
) -> Result<(), Refusal> {
    if !bound.contains(&url.origin()) {
        return Err(Refusal::NotBound);
    }
    if url.scheme() == "http" && !is_loopback(url) && !insecure_http {
        return Err(Refusal::PlainHttp);
    }
    Ok(())
}

/// `scheme://host:port` of `url`, for messages (never carries a path, a query or credentials).
pub(crate) fn origin_label(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// This machine: `localhost` (and `*.localhost`), 127.0.0.0/8, `::1`.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_origins;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("test URL")
    }

    #[test]
    fn only_bound_origins_get_the_token() {
        let bound = parse_origins("https://git.example.com, http://127.0.0.1:3000").unwrap();
        assert_eq!(
            token_may_go_to(&url("https://git.example.com/sub/api/v1"), &bound, false),
            Ok(())
        );
        assert_eq!(
            token_may_go_to(&url("https://GIT.example.com:443/"), &bound, false),
            Ok(()),
            "case and the default port do not matter"
        );
        for other in [
            "https://git.example.com:8443/",
            "http://git.example.com/",
            "https://evil.example.com/",
            "https://git.example.com.evil.test/",
            "http://127.0.0.1:3001/",
        ] {
            assert_eq!(
                token_may_go_to(&url(other), &bound, false),
                Err(Refusal::NotBound),
                "{other}"
            );
        }
        assert_eq!(
            token_may_go_to(&url("http://127.0.0.1:3000/"), &bound, false),
            Ok(()),
            "loopback may use plain http"
        );
    }

    #[test]
    fn plain_http_to_another_machine_needs_the_users_consent() {
        let bound = parse_origins("http://git.lan:3000").unwrap();
        let target = url("http://git.lan:3000/");
        assert_eq!(
            token_may_go_to(&target, &bound, false),
            Err(Refusal::PlainHttp)
        );
        assert_eq!(token_may_go_to(&target, &bound, true), Ok(()));
    }

    #[test]
    fn only_this_machine_is_loopback() {
        assert!(is_loopback(&url("http://localhost:3000/")));
        assert!(is_loopback(&url("http://[::1]:3000/")));
        assert!(!is_loopback(&url("http://127.0.0.1.nip.io/")));
    }
}
