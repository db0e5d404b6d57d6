//! What the proxy answers when it refuses: a short plain text the agent's model can read —
//! which host, why, and what setting would allow it.

use std::net::SocketAddr;

use super::hosts::normalize_host;
use super::log::Refused;

/// The refusal's text (one line).
pub(crate) fn refusal_text(
    host: &str,
    port: u16,
    refused: &Refused,
    address: Option<SocketAddr>,
    max_connections: usize,
) -> String {
    let target = if host.contains(':') && normalize_host(host).is_some() {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let addr = address.map_or_else(|| "it".to_owned(), |a| a.ip().to_string());
    let why = match refused {
        Refused::NotAllowed => format!(
            "the host is not on the allow-list. Agents reach their model endpoint and the hosts \
             the user lists in `[agent] network_allow` of Butler's configuration (e.g. \
             `network_allow = [\"{host}\"]`); ask the user if the task needs it"
        ),
        Refused::Address { class } => format!(
            "{host} resolves to {addr}, {}; the proxy never connects there except to the exact \
             host and port of a model endpoint the user configured",
            class.describe()
        ),
        Refused::ButlerPort => format!(
            "{} is one of Butler's own ports, which agents never reach",
            address.map_or_else(|| target.clone(), |a| a.to_string())
        ),
        Refused::Unresolved => format!("the name {host} does not resolve"),
        Refused::Unreachable => format!("connecting to {addr} failed"),
        Refused::Busy => format!(
            "too many connections at once (at most {max_connections}); retry when some have ended"
        ),
        Refused::BadRequest => {
            return "Butler's egress proxy takes `CONNECT host:port` and absolute `http://` \
                    URLs only.\n"
                .to_owned();
        }
    };
    format!("Butler's egress proxy refused {target}: {why}.\n")
}

#[cfg(test)]
mod tests {
    use super::super::address::AddressClass;
    use super::*;

    #[test]
    fn refusals_name_the_host_the_reason_and_the_setting() {
        let text = refusal_text("evil.example", 443, &Refused::NotAllowed, None, 64);
        assert_eq!(
            text,
            "Butler's egress proxy refused evil.example:443: the host is not on the allow-list. \
             Agents reach their model endpoint and the hosts the user lists in `[agent] \
             network_allow` of Butler's configuration (e.g. `network_allow = \
             [\"evil.example\"]`); ask the user if the task needs it.\n"
        );
        let addr = Some("127.0.0.1:8080".parse().expect("addr"));
        let text = refusal_text(
            "localhost",
            8080,
            &Refused::Address {
                class: AddressClass::Loopback,
            },
            addr,
            64,
        );
        assert_eq!(
            text,
            "Butler's egress proxy refused localhost:8080: localhost resolves to 127.0.0.1, a \
             loopback address (this machine); the proxy never connects there except to the \
             exact host and port of a model endpoint the user configured.\n"
        );
        let text = refusal_text(
            "::1",
            9,
            &Refused::ButlerPort,
            Some("[::1]:9".parse().expect("a")),
            64,
        );
        assert_eq!(
            text,
            "Butler's egress proxy refused [::1]:9: [::1]:9 is one of Butler's own ports, which \
             agents never reach.\n"
        );
        assert!(refusal_text("h", 1, &Refused::Busy, None, 7).contains("at most 7"));
        assert!(refusal_text("h", 1, &Refused::BadRequest, None, 7).contains("CONNECT"));
    }
}
