//! Who may talk to the HTTP server, decided at its edge: pure functions over the bind address,
//! the token and origins, and a request's headers.
//!
//! - The bearer token is required on every request, loopback included (see [`super::token`]),
//!   and compared in constant time.
//! - Browser origins (MCP's DNS-rebinding rule: a present `Origin` that is not allowed is
//!   refused with 403): the loopback origins for a loopback bind, plus the configured ones.
//! - `Host`: checked against the loopback names for a loopback bind (a rebinding page reaches
//!   the server under its own host name); on other binds the token is the guard.

use std::net::SocketAddr;

use butler_worker::config::Secret;
use http::HeaderMap;
use subtle::ConstantTimeEq;

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// An allowed origin that is not `scheme://host[:port]`.
    #[error("`{0}` is not an origin: write `http://host`, `https://host:8443` or `https://host:*`")]
    BadOrigin(String),
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

/// Whether a request's headers carry the token.
pub fn authorize(headers: &HeaderMap, token: &Secret) -> Result<(), Refusal> {
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
    fn only_the_exact_bearer_token_is_authorized() {
        let token = Secret::new(TOKEN);
        let ok = format!("Bearer {TOKEN}");
        assert_eq!(authorize(&headers(&[&ok]), &token), Ok(()));
        let lower = format!("bearer   {TOKEN}");
        assert_eq!(authorize(&headers(&[&lower]), &token), Ok(()));
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
                authorize(&headers(&refused), &token),
                Err(Refusal::Unauthorized),
                "{refused:?}"
            );
        }
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
