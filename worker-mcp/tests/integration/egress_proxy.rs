//! The egress proxy through real sockets on loopback: a tunnel to a configured endpoint carries
//! and counts bytes; names off the allow-list, names that resolve to loopback, Butler's own
//! ports, a full house and idle tunnels are refused or closed, each with its reason in the log;
//! plain HTTP is forwarded in origin form without the proxy's headers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use butler_worker::egress::{
    AddressClass, AllowList, Connection, EgressProxy, Endpoint, HostPattern, Method, OwnPorts,
    ProxySettings, Refused, Verdict,
};
use butler_worker::time::{FixedClock, Timestamp};

fn clock() -> butler_worker::time::SharedClock {
    FixedClock::shared(Timestamp::parse("2026-04-15T10:20:00+09:00").expect("ts"))
}

/// A server that echoes what it reads, on loopback.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 || stream.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// A stand-in web server: answers each request with `hello` and keeps the request's head.
fn web_server() -> (SocketAddr, std::sync::mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let _ = tx.send(head);
            let mut stream = stream;
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello",
            );
        }
    });
    (addr, rx)
}

fn settings(endpoints: &[SocketAddr], hosts: &[&str]) -> ProxySettings {
    let mut allow = AllowList::default();
    for e in endpoints {
        allow.add_endpoint(Endpoint {
            host: e.ip().to_string(),
            port: e.port(),
            configured: true,
        });
    }
    allow.hosts = hosts
        .iter()
        .map(|h| HostPattern::parse(h).expect("pattern"))
        .collect();
    let mut s = ProxySettings::new(allow);
    s.own_ports = OwnPorts::new();
    s
}

/// Sends `CONNECT target`; the status line and the rest of the answer's head and body read so
/// far, and the stream (positioned after the head).
fn connect(proxy: SocketAddr, target: &str) -> (String, String, TcpStream) {
    let mut stream = TcpStream::connect(proxy).expect("proxy");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        stream,
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    )
    .expect("write");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.lines().next().unwrap_or("").to_owned();
    let mut body = String::new();
    if !status.contains(" 200 ") {
        let _ = stream.read_to_string(&mut body);
    }
    (status, body, stream)
}

/// Waits until the log holds `n` connections, and takes them.
async fn logged(proxy: &EgressProxy, n: usize) -> Vec<Connection> {
    let mut all = Vec::new();
    for _ in 0..200 {
        all.extend(proxy.log().take().listed);
        if all.len() >= n {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("only {} connections logged: {all:#?}", all.len());
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.expect("joined")
}

#[tokio::test]
async fn a_tunnel_to_a_configured_loopback_endpoint_carries_and_counts_bytes() {
    let echo = echo_server();
    let proxy = EgressProxy::start(settings(&[echo], &[]), clock()).expect("proxy");
    let addr = proxy.addr();
    let (status, echoed) = blocking(move || {
        let (status, _, mut s) = connect(addr, &echo.to_string());
        s.write_all(b"ping-12345").expect("write");
        let mut buf = [0u8; 10];
        s.read_exact(&mut buf).expect("echo");
        (status, buf.to_vec())
    })
    .await;
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(echoed, b"ping-12345");
    let log = logged(&proxy, 1).await;
    let c = &log[0];
    assert_eq!(c.method, Method::Connect);
    assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", echo.port()));
    assert_eq!(c.address.as_deref(), Some(echo.to_string().as_str()));
    assert_eq!(c.verdict, Verdict::Admitted);
    assert_eq!((c.sent, c.received), (10, 10));
    assert_eq!(c.started.to_string(), "2026-04-15T10:20:00+09:00");
}

#[tokio::test]
async fn names_off_the_list_are_refused_with_a_reason_the_model_can_read() {
    let echo = echo_server();
    let proxy = EgressProxy::start(settings(&[echo], &["pypi.org"]), clock()).expect("proxy");
    let addr = proxy.addr();
    let other_port = format!("127.0.0.1:{}", echo.port() ^ 1);
    let answers = blocking(move || {
        [
            connect(addr, "evil.example:443"),
            connect(addr, "files.pypi.org:443"),
            connect(addr, &other_port),
        ]
        .map(|(status, body, _)| (status, body))
    })
    .await;
    for (status, body) in &answers {
        assert!(status.contains(" 403 "), "{status}");
        assert!(body.contains("not on the allow-list"), "{body}");
        assert!(body.contains("network_allow"), "{body}");
    }
    assert!(
        answers[0]
            .1
            .starts_with("Butler's egress proxy refused evil.example:443: ")
    );
    let log = logged(&proxy, 3).await;
    assert!(
        log.iter()
            .all(|c| c.verdict == Verdict::Refused(Refused::NotAllowed) && c.address.is_none()),
        "{log:#?}"
    );
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_unless_it_is_the_configured_endpoint() {
    let echo = echo_server();
    // `localhost` is allowed by name (any port), but it resolves to this machine.
    let proxy = EgressProxy::start(settings(&[], &["localhost"]), clock()).expect("proxy");
    let addr = proxy.addr();
    let target = format!("localhost:{}", echo.port());
    let (status, body, _) = blocking(move || connect(addr, &target)).await;
    assert!(status.contains(" 403 "), "{status}");
    assert!(body.contains("resolves to"), "{body}");
    assert!(body.contains("loopback"), "{body}");
    let log = logged(&proxy, 1).await;
    assert_eq!(
        log[0].verdict,
        Verdict::Refused(Refused::Address {
            class: AddressClass::Loopback
        })
    );
    assert!(log[0].address.is_some(), "the address it resolved to");

    // The same name and port, configured as the model's endpoint, is admitted.
    let mut s = settings(&[], &[]);
    s.allow.add_endpoint(Endpoint {
        host: "localhost".into(),
        port: echo.port(),
        configured: true,
    });
    let proxy = EgressProxy::start(s, clock()).expect("proxy");
    let addr = proxy.addr();
    let target = format!("localhost:{}", echo.port());
    let (status, _, _) = blocking(move || connect(addr, &target)).await;
    assert!(status.contains(" 200 "), "{status}");
}

#[tokio::test]
async fn butlers_own_ports_are_refused_even_as_a_configured_endpoint() {
    let butler_http = TcpListener::bind("127.0.0.1:0").expect("listen");
    let http_addr = butler_http.local_addr().expect("addr");
    let own = OwnPorts::new();
    let _registered = own.register(http_addr);
    let mut s = settings(&[http_addr], &["localhost"]);
    s.own_ports = own.clone();
    let proxy = EgressProxy::start(s, clock()).expect("proxy");
    let addr = proxy.addr();
    let proxy_self = format!("localhost:{}", addr.port());
    let answers = blocking(move || {
        [
            connect(addr, &http_addr.to_string()),
            connect(addr, &proxy_self),
        ]
        .map(|(status, body, _)| (status, body))
    })
    .await;
    for (status, body) in &answers {
        assert!(status.contains(" 403 "), "{status}");
        assert!(body.contains("one of Butler's own ports"), "{body}");
    }
    let log = logged(&proxy, 2).await;
    assert!(
        log.iter()
            .all(|c| c.verdict == Verdict::Refused(Refused::ButlerPort)),
        "{log:#?}"
    );
    // The proxy's own address leaves the list with it.
    drop(proxy);
    assert!(!own.is_butler(addr));
}

#[tokio::test]
async fn plain_http_is_forwarded_in_origin_form_without_the_proxys_headers() {
    let (web, heads) = web_server();
    let proxy = EgressProxy::start(settings(&[web], &[]), clock()).expect("proxy");
    let client = butler_worker::http_client::build(
        reqwest::Client::builder().proxy(reqwest::Proxy::http(proxy.url()).expect("proxy url")),
    )
    .expect("client");
    let response = client
        .get(format!("http://{web}/v1/models?x=1"))
        .header("proxy-authorization", "Basic c2VjcmV0")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.expect("body"), "hello");
    let head = heads.recv_timeout(Duration::from_secs(5)).expect("request");
    assert!(
        head.starts_with("GET /v1/models?x=1 HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("host: {web}\r\n")),
        "{head}"
    );
    assert!(!head.to_ascii_lowercase().contains("proxy-"), "{head}");
    let log = logged(&proxy, 1).await;
    let c = &log[0];
    assert_eq!(c.method, Method::Http);
    assert_eq!(c.verdict, Verdict::Admitted);
    assert!(c.sent >= head.len() as u64, "{c:?}");
    assert!(c.received > 5, "{c:?}");

    // Not a proxy request.
    let answer = butler_worker::http_client::default_client()
        .expect("client")
        .get(format!("{}/v1/models", proxy.url()))
        .send()
        .await
        .expect("sent");
    assert_eq!(answer.status(), 400);
    assert!(answer.text().await.expect("text").contains("CONNECT"));
}

#[tokio::test]
async fn more_connections_than_allowed_are_refused_and_idle_tunnels_closed() {
    let echo = echo_server();
    let mut s = settings(&[echo], &[]);
    s.max_connections = 1;
    s.idle_timeout = Duration::from_millis(400);
    let proxy = EgressProxy::start(s, clock()).expect("proxy");
    let addr = proxy.addr();
    let (first, second, closed) = blocking(move || {
        let (first, _, mut tunnel) = connect(addr, &echo.to_string());
        let (second, body, _) = connect(addr, &echo.to_string());
        // Quiet for longer than the idle timeout: the proxy closes the tunnel.
        let mut buf = [0u8; 1];
        let closed = matches!(tunnel.read(&mut buf), Ok(0));
        (first, (second, body), closed)
    })
    .await;
    assert!(first.contains(" 200 "), "{first}");
    assert!(second.0.contains(" 503 "), "{second:?}");
    assert!(second.1.contains("at most 1"), "{second:?}");
    assert!(closed, "an idle tunnel is closed");
    let log = logged(&proxy, 2).await;
    assert!(
        log.iter()
            .any(|c| c.verdict == Verdict::Refused(Refused::Busy)),
        "{log:#?}"
    );
    assert!(
        log.iter().any(|c| c.verdict == Verdict::Admitted),
        "{log:#?}"
    );
}
