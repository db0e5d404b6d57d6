//! Butler's own listening addresses (its HTTP server's, every egress proxy's), which no agent
//! reaches through the proxy whatever name or address of this machine it uses. One list per
//! process ([`OwnPorts::default`]); tests make their own.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use super::address::is_this_machine;

/// The addresses Butler listens on.
#[derive(Debug, Clone)]
pub struct OwnPorts {
    inner: Arc<Mutex<Vec<SocketAddr>>>,
}

impl Default for OwnPorts {
    /// The process's own.
    fn default() -> Self {
        static PROCESS: OnceLock<OwnPorts> = OnceLock::new();
        PROCESS.get_or_init(OwnPorts::new).clone()
    }
}

impl OwnPorts {
    /// A list of its own (tests).
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Adds `addr` until the registration is dropped.
    pub fn register(&self, addr: SocketAddr) -> Registration {
        self.lock().push(addr);
        Registration {
            ports: self.clone(),
            addr,
        }
    }

    /// Whether `dest` is one of Butler's listening ports on this machine (any of its
    /// addresses: a server on `0.0.0.0` answers on all of them, and one on `127.0.0.1` on
    /// the loopback network).
    pub fn is_butler(&self, dest: SocketAddr) -> bool {
        let same_port = self.lock().iter().any(|own| own.port() == dest.port());
        same_port && is_this_machine(dest.ip())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SocketAddr>> {
        self.inner
            .lock()
            .expect("the own ports lock is never poisoned")
    }
}

/// Keeps an address on the list while it lives.
#[derive(Debug)]
pub struct Registration {
    ports: OwnPorts,
    addr: SocketAddr,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut list = self.ports.lock();
        if let Some(i) = list.iter().position(|a| *a == self.addr) {
            list.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn butlers_ports_on_any_address_of_this_machine_while_registered() {
        let ports = OwnPorts::new();
        let addr: SocketAddr = "127.0.0.1:4567".parse().expect("addr");
        let registration = ports.register(addr);
        for dest in [
            "127.0.0.1:4567",
            "127.0.0.2:4567",
            "[::1]:4567",
            "0.0.0.0:4567",
        ] {
            assert!(ports.is_butler(dest.parse().expect("addr")), "{dest}");
        }
        assert!(!ports.is_butler("127.0.0.1:4568".parse().expect("addr")));
        assert!(!ports.is_butler("203.0.113.7:4567".parse().expect("addr")));
        drop(registration);
        assert!(!ports.is_butler(addr));
    }
}
