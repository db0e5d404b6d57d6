//! Who may talk to the HTTP server, decided at its edge: pure functions over the bind address,
//! the configured token and origins, and a request's headers.
//!
//! - A bearer token is required for any address that is not loopback; when one is configured it
//!   is required on every request, loopback included, and compared in constant time.
//! - Browser origins (MCP's DNS-rebinding rule: a present `Origin` that is not allowed is
//!   refused with 403): the loopback origins for a loopback bind, plus the configured ones.
//! - `Host`: checked against the loopback names for a loopback bind (a rebinding page reaches
//!   the server under its own host name); on other binds the token is the guard.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use butler_worker::config::Secret;
use http::HeaderMap;
use subtle::ConstantTimeEq;

/// The environment variable that may hold the bearer token.
pub const TOKEN_ENV: &str = "BUTLER_HTTP_TOKEN";
/// Shortest token accepted: anything shorter could be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// A non-loopback address without a token.
    #[error(
        "{addr} is reachable from other machines: give a bearer token (`--token-file FILE` or \
         `{TOKEN_ENV}`), or listen on a loopback address such as 127.0.0.1"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The token file could not be read.
    #[error("the token file `{}` cannot be read: {source}", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The token is unusable (the token itself is never shown).
    #[error("the bearer token from {from} {why}")]
    BadToken {
        /// Where it came from (the file, or the variable's name).
        from: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// An allowed origin that is not `scheme://host[:port]`.
    #[error("`{0}` is not an origin: write `http://host`, `https://host:8443` or `https://host:*`")]
    BadOrigin(String),
}

/// The bearer token, read once: from `file` when given, else from the variable's value
/// (`env_value`, [`TOKEN_ENV`]); `None` when neither is set. Surrounding whitespace (a file's
/// final newline) is not part of the token.
pub fn load_token(
    file: Option<&Path>,
    env_value: Option<OsString>,
) -> Result<Option<Secret>, EdgeError> {
    let (from, text) = match (file, env_value) {
        (Some(path), _) => {
            let text = std::fs::read(path).map_err(|source| EdgeError::TokenFile {
                path: path.to_owned(),
                source,
            })?;
            (format!("`{}`", path.display()), text)
        }
        (None, Some(value)) => (format!("`{TOKEN_ENV}`"), value.into_encoded_bytes()),
        (None, None) => return Ok(None),
    };
    let bad = |why| EdgeError::BadToken {
        from: from.clone(),
        why,
    };
    let text = String::from_utf8(text).map_err(|_| bad("is not text"))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(bad("is empty"));
    }
    // What an `Authorization` header can carry after `Bearer `.
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("has spaces or characters an HTTP header cannot carry"));
    }
    if token.len() < MIN_TOKEN_LEN {
        return Err(bad("is shorter than 16 characters"));
    }
    Ok(Some(Secret::new(token)))
}

/// Whether serving on `addr` with (or without) a token is allowed.
pub fn check_bind(addr: SocketAddr, token: Option<&Secret>) -> Result<(), EdgeError> {
    if addr.ip().is_loopback() || token.is_some() {
        Ok(())
    } else {
        Err(EdgeError::TokenRequired { addr })
    }
}

/// The `Host` values accepted (host names, any port): the loopback names and the bound address
/// for a loopback bind; empty (not checked) otherwise.
pub fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    if !addr.ip().is_loopback() {
        return Vec::new();
    }
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
    let own = addr.ip().to_string();
    if !hosts.contains(&own) {
        hosts.push(own);
    }
    hosts
}

/// The browser origins accepted: the loopback origins (any port, http or https) for a loopback
/// bind, plus `extra` (checked to be origins). Any other present `Origin` is refused.
pub fn allowed_origins(addr: SocketAddr, extra: &[String]) -> Result<Vec<String>, EdgeError> {
    let mut origins = Vec::new();
    if addr.ip().is_loopback() {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(String::from).into();
        let own = match addr {
            SocketAddr::V4(a) => a.ip().to_string(),
            SocketAddr::V6(a) => format!("[{}]", a.ip()),
        };
        if !hosts.contains(&own) {
            hosts.push(own);
        }
        for host in hosts {
            origins.push(format!("http://{host}:*"));
            origins.push(format!("https://{host}:*"));
        }
    }
    for origin in extra {
        origins.push(check_origin(origin)?);
    }
    Ok(origins)
}

/// `origin` if it is `http(s)://host[:port|:*]` with nothing after the authority; without a
/// port it means the scheme's default port (as browsers serialise origins), written out.
fn check_origin(origin: &str) -> Result<String, EdgeError> {
    let bad = || EdgeError::BadOrigin(origin.to_owned());
    let trimmed = origin.trim().trim_end_matches('/');
    let any_port = trimmed.ends_with(":*");
    let base = trimmed.strip_suffix(":*").unwrap_or(trimmed);
    let uri: http::Uri = base.parse().map_err(|_| bad())?;
    let default_port = match uri.scheme_str() {
        Some("http") => 80,
        Some("https") => 443,
        _ => return Err(bad()),
    };
    let authority = uri
        .authority()
        .filter(|a| !a.host().is_empty())
        .ok_or_else(bad)?;
    let bare = uri.path_and_query().is_none_or(|p| p.as_str() == "/");
    if !bare || base.contains('@') || (any_port && authority.port().is_some()) {
        return Err(bad());
    }
    if any_port || authority.port().is_some() {
        Ok(trimmed.to_owned())
    } else {
        Ok(format!("{base}:{default_port}"))
    }
}

/// Why a request was refused at the edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization: Bearer …`, or the wrong token (401).
    Unauthorized,
}

/// Whether a request's headers carry the token (always, when no token is configured).
pub fn authorize(headers: &HeaderMap, token: Option<&Secret>) -> Result<(), Refusal> {
    let Some(token) = token else {
        return Ok(());
    };
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(Refusal::Unauthorized);
    };
    let given = value
        .to_str()
        .ok()
        .and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
        .ok_or(Refusal::Unauthorized)?;
    // Constant time over the token's bytes (a length mismatch is refused at once: the length
    // is not the secret).
    if bool::from(given.as_bytes().ct_eq(token.expose().as_bytes())) {
        Ok(())
    } else {
        Err(Refusal::Unauthorized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef-token";

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("address")
    }

    fn headers(auth: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in auth {
            map.append(
                http::header::AUTHORIZATION,
                value.parse().expect("header value"),
            );
        }
        map
    }

    #[test]
    fn a_non_loopback_bind_needs_a_token_and_a_loopback_one_does_not() {
        let token = Secret::new(TOKEN);
        for open in ["0.0.0.0:8080", "192.168.1.5:80", "[::]:9000", "10.0.0.1:1"] {
            assert!(matches!(
                check_bind(addr(open), None),
                Err(EdgeError::TokenRequired { .. })
            ));
            assert!(check_bind(addr(open), Some(&token)).is_ok());
        }
        for local in ["127.0.0.1:0", "127.0.0.2:80", "[::1]:9000"] {
            assert!(check_bind(addr(local), None).is_ok());
        }
    }

    #[test]
    fn the_token_comes_from_the_file_first_then_the_variable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("token");
        std::fs::write(&file, format!("{TOKEN}\n")).expect("write");
        let env = Some(OsString::from("from-the-environment-123"));
        let t = load_token(Some(&file), env.clone())
            .expect("ok")
            .expect("some");
        assert_eq!(t.expose(), TOKEN);
        let t = load_token(None, env).expect("ok").expect("some");
        assert_eq!(t.expose(), "from-the-environment-123");
        assert!(load_token(None, None).expect("ok").is_none());
    }

    #[test]
    fn unusable_tokens_are_refused_without_showing_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("token");
        for (text, why) in [
            ("\n", "is empty"),
            ("short-secret", "shorter than 16"),
            ("has a space in the middle", "spaces"),
        ] {
            std::fs::write(&file, text).expect("write");
            let err = load_token(Some(&file), None).expect_err("refused");
            let shown = err.to_string();
            assert!(shown.contains(why), "{shown}");
            assert!(
                !shown.contains("secret") && !shown.contains("middle"),
                "{shown}"
            );
        }
        let missing = load_token(Some(&dir.path().join("none")), None).expect_err("refused");
        assert!(matches!(missing, EdgeError::TokenFile { .. }));
    }

    #[test]
    fn only_the_exact_bearer_token_is_authorized() {
        let token = Secret::new(TOKEN);
        let ok = format!("Bearer {TOKEN}");
        assert_eq!(authorize(&headers(&[&ok]), Some(&token)), Ok(()));
        let lower = format!("bearer   {TOKEN}");
        assert_eq!(authorize(&headers(&[&lower]), Some(&token)), Ok(()));
        let longer = format!("Bearer {TOKEN}x");
        let shorter = format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]);
        let basic = format!("Basic {TOKEN}");
        let bare = TOKEN.to_string();
        for refused in [
            vec![],
            vec![longer.as_str()],
            vec![shorter.as_str()],
            vec![basic.as_str()],
            vec![bare.as_str()],
            vec!["Bearer "],
            vec![ok.as_str(), ok.as_str()],
        ] {
            assert_eq!(
                authorize(&headers(&refused), Some(&token)),
                Err(Refusal::Unauthorized),
                "{refused:?}"
            );
        }
        // No token configured: nothing to check.
        assert_eq!(authorize(&headers(&[]), None), Ok(()));
    }

    #[test]
    fn loopback_binds_allow_loopback_hosts_and_origins_plus_the_configured_ones() {
        let extra = vec!["https://app.example.com".to_string()];
        let origins = allowed_origins(addr("127.0.0.1:7000"), &extra).expect("valid");
        assert!(origins.contains(&"http://localhost:*".to_string()));
        assert!(origins.contains(&"https://[::1]:*".to_string()));
        assert!(origins.contains(&"https://app.example.com:443".to_string()));
        let own = allowed_origins(addr("127.0.0.5:7000"), &[]).expect("valid");
        assert!(own.contains(&"http://127.0.0.5:*".to_string()));
        assert!(allowed_hosts(addr("127.0.0.5:7000")).contains(&"127.0.0.5".to_string()));
        // Elsewhere only what was configured, and Host is left to the token.
        let open = allowed_origins(addr("0.0.0.0:7000"), &extra).expect("valid");
        assert_eq!(open, ["https://app.example.com:443"]);
        assert!(allowed_hosts(addr("0.0.0.0:7000")).is_empty());
    }

    #[test]
    fn configured_origins_must_be_origins() {
        for (given, kept) in [
            ("http://a.test", "http://a.test:80"),
            ("https://a.test", "https://a.test:443"),
            ("https://a.test:8443", "https://a.test:8443"),
            ("https://a.test:*", "https://a.test:*"),
            ("http://a/", "http://a:80"),
        ] {
            assert_eq!(check_origin(given).expect("an origin"), kept);
        }
        for bad in [
            "a.test",
            "ftp://a.test",
            "https://a.test/path",
            "*",
            "https://u@a.test",
            "https://a.test:443:*",
        ] {
            assert!(
                matches!(check_origin(bad), Err(EdgeError::BadOrigin(_))),
                "{bad}"
            );
        }
    }
}
