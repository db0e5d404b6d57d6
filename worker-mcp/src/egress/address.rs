//! Which addresses the egress proxy never connects to, whatever name led there: loopback,
//! link-local, unspecified, multicast and broadcast addresses, and the clouds' metadata
//! services. An IPv4 address written as IPv6 (`::ffff:127.0.0.1`, NAT64 `64:ff9b::…`) is judged
//! as the IPv4 address it carries.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

/// Why an address is refused (`None` from [`refused_class`]: an ordinary address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `0.0.0.0/8`, `::`: "this host" to most stacks.
    Unspecified,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `224.0.0.0/4`, `ff00::/8`, `255.255.255.255`.
    Multicast,
    /// A cloud's instance metadata service (`169.254.169.254`, `fd00:ec2::254`,
    /// `100.100.100.200`, …): the machine's own credentials.
    Metadata,
}

impl AddressClass {
    /// How the refusal names it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Loopback => "a loopback address (this machine)",
            Self::Unspecified => "an unspecified address (this machine)",
            Self::LinkLocal => "a link-local address",
            Self::Multicast => "a multicast or broadcast address",
            Self::Metadata => "a cloud metadata address",
        }
    }
}

/// Metadata services outside the link-local range (which is refused whole).
const METADATA_V4: &[Ipv4Addr] = &[
    // Alibaba Cloud.
    Ipv4Addr::new(100, 100, 100, 200),
    // Oracle Cloud's older one, and Azure's wire server.
    Ipv4Addr::new(192, 0, 0, 192),
    Ipv4Addr::new(168, 63, 129, 16),
];

/// AWS's IPv6 metadata service.
const METADATA_V6: &[Ipv6Addr] = &[Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)];

/// The class that makes `ip` refused, or `None` for an address the proxy may connect to.
pub fn refused_class(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => v4_class(v4),
            None => v6_class(v6),
        },
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<AddressClass> {
    if METADATA_V4.contains(&ip) || ip == Ipv4Addr::new(169, 254, 169, 254) {
        Some(AddressClass::Metadata)
    } else if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if ip.octets()[0] == 0 {
        Some(AddressClass::Unspecified)
    } else if ip.is_link_local() {
        Some(AddressClass::LinkLocal)
    } else if ip.is_multicast() || ip.is_broadcast() {
        Some(AddressClass::Multicast)
    } else {
        None
    }
}

fn v6_class(ip: Ipv6Addr) -> Option<AddressClass> {
    let first = ip.segments()[0];
    if METADATA_V6.contains(&ip) {
        Some(AddressClass::Metadata)
    } else if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if ip.is_unspecified() {
        Some(AddressClass::Unspecified)
    } else if first & 0xffc0 == 0xfe80 {
        Some(AddressClass::LinkLocal)
    } else if ip.is_multicast() {
        Some(AddressClass::Multicast)
    } else {
        None
    }
}

/// The IPv4 address an IPv6 one carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, deprecated but still routed by some stacks) and NAT64 (`64:ff9b::/96`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|x| *x == 0);
    let compatible = s[..6].iter().all(|x| *x == 0) && !ip.is_loopback() && !ip.is_unspecified();
    (nat64 || compatible).then_some(tail)
}

/// Whether `ip` is one of this machine's own addresses (loopback, unspecified, or assigned to
/// one of its interfaces: only those can be bound).
pub(crate) fn is_this_machine(ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    ip.is_loopback()
        || ip.is_unspecified()
        || matches!(ip, IpAddr::V4(v4) if v4.octets()[0] == 0)
        || std::net::UdpSocket::bind((ip, 0)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<AddressClass> {
        refused_class(text.parse().expect(text))
    }

    #[test]
    fn refused_classes_whatever_the_spelling() {
        use AddressClass::*;
        for (addr, want) in [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("64:ff9b::7f00:1", Some(Loopback)),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("::", Some(Unspecified)),
            ("169.254.1.1", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("224.0.0.1", Some(Multicast)),
            ("255.255.255.255", Some(Multicast)),
            ("ff02::1", Some(Multicast)),
            ("169.254.169.254", Some(Metadata)),
            ("::ffff:169.254.169.254", Some(Metadata)),
            ("fd00:ec2::254", Some(Metadata)),
            ("100.100.100.200", Some(Metadata)),
            ("93.184.215.14", None),
            ("10.0.0.5", None),
            ("192.168.1.10", None),
            ("2606:4700::6810:85e5", None),
            ("fd00:ec2::253", None),
        ] {
            assert_eq!(class(addr), want, "{addr}");
        }
    }

    #[test]
    fn this_machine_is_its_loopback_and_its_bindable_addresses() {
        assert!(is_this_machine("127.0.0.1".parse().expect("ip")));
        assert!(is_this_machine("127.0.0.2".parse().expect("ip")));
        assert!(is_this_machine("::ffff:127.0.0.1".parse().expect("ip")));
        assert!(is_this_machine("0.0.0.0".parse().expect("ip")));
        // TEST-NET-3 is never assigned.
        assert!(!is_this_machine("203.0.113.7".parse().expect("ip")));
    }
}
