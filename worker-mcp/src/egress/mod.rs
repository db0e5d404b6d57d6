//! The task's egress proxy: every TCP connection of a confined agent (and of its verify
//! commands) goes through a proxy Butler runs for the task on `127.0.0.1`, which Landlock lets
//! them reach and nothing else (see [`crate::sandbox::Network::Proxy`]). It admits hosts by
//! name — the agent's model endpoints and `[agent] network_allow` — resolves them itself, never
//! connects to this machine, the link or a metadata service unless the user configured that
//! exact endpoint, never to Butler's own ports, answers a refusal with a text the agent's model
//! can read, and keeps an account of every connection for the evidence.
//!
//! - [`hosts`]: the allow-list (host patterns, endpoints).
//! - [`address`]: the address classes refused whatever the name.
//! - [`own_ports`]: Butler's own listening addresses.
//! - [`server`]: the proxy on hyper ([`EgressProxy`]).
//! - [`log`]: the connection log, and [`refusal`]: what a refusal says.

pub(crate) mod address;
pub(crate) mod hosts;
pub mod log;
pub(crate) mod own_ports;
pub(crate) mod refusal;
pub(crate) mod server;

pub use address::{AddressClass, refused_class};
pub use hosts::{Admission, AllowList, Endpoint, HostPattern};
pub use log::{Connection, ConnectionLog, Connections, MAX_LOGGED, Method, Refused, Verdict};
pub use own_ports::{OwnPorts, Registration};
pub use server::{EgressProxy, ProxySettings};

/// The variables that point programs at a proxy, set to the task's proxy in the environment of
/// its agent and verify commands (both spellings: curl reads only the lower-case
/// `http_proxy`, most others either).
pub const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
];

/// The variables that exempt hosts from the proxy, removed: nothing bypasses it.
pub const NO_PROXY_VARS: &[&str] = &["NO_PROXY", "no_proxy"];
