//! The one way Butler builds an HTTP client (`clippy.toml` forbids reqwest's others): TLS is
//! rustls with the `ring` provider, which reqwest (built without a provider of its own) expects
//! to be installed as the process default before any client is built, or it panics. `main`
//! installs it first thing too, for the clients libraries build themselves (rmcp's
//! `StreamableHttpClientTransport::from_config`); Butler hands rmcp its own client instead.

use std::sync::Once;

/// Builds `builder` after making sure the process has its TLS provider.
pub fn build(builder: reqwest::ClientBuilder) -> reqwest::Result<reqwest::Client> {
    install_tls_provider();
    #[allow(clippy::disallowed_methods)]
    builder.build()
}

/// A client with reqwest's defaults.
pub fn default_client() -> reqwest::Result<reqwest::Client> {
    build(reqwest::Client::builder())
}

/// Installs `ring` as the process's rustls provider, once; a provider someone installed
/// earlier is kept.
pub fn install_tls_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_build_with_the_process_provider() {
        assert!(default_client().is_ok());
        assert!(build(reqwest::Client::builder().https_only(true)).is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
