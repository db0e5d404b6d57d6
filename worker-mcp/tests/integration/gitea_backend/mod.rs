//! The test kit's Gitea mock, and the worker's Gitea backend pointed at it.
#![allow(dead_code)]

use std::time::Duration;

pub use butler_testkit::gitea::*;
use butler_worker::config::Secret;
use butler_worker::issues::gitea::{ClientOptions, GiteaBackend, GiteaTarget, ServerKind};

/// The backend under test, talking to a [`GiteaMock`].
pub trait MockBackend {
    /// Fast options so failure scenarios finish quickly.
    fn options() -> ClientOptions {
        ClientOptions {
            timeout: Duration::from_millis(800),
            connect_timeout: Duration::from_millis(500),
            read_retries: 2,
            backoff: Duration::from_millis(10),
        }
    }

    /// A Gitea backend on the mock, with the kit's token.
    fn backend(&self) -> GiteaBackend {
        self.backend_of(ServerKind::Gitea)
    }

    /// A backend of `kind` on the mock.
    fn backend_of(&self, kind: ServerKind) -> GiteaBackend;
}

impl MockBackend for GiteaMock {
    fn backend_of(&self, kind: ServerKind) -> GiteaBackend {
        let target = GiteaTarget {
            web_root: self.web_root(),
            owner: OWNER.into(),
            repo: REPO.into(),
        };
        GiteaBackend::new(target, &Secret::new(TOKEN), kind, Self::options())
            .expect("backend builds")
    }
}
