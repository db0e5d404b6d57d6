//! The egress proxy's overhead on a 1 MB download: the same `GET` from a local HTTP server
//! (hyper, serving 1 MB from memory) made directly, through the task's proxy as a plain
//! absolute-URI request, and through a `CONNECT` tunnel, each on a fresh connection as an
//! agent's call would be, interleaved in the same run so machine noise hits them alike. The
//! proxy is the one the Maid runs (`butler_worker::egress::EgressProxy`), admitting the
//! server as a configured endpoint.
//!
//! `cargo bench --bench benches -- egress_proxy` (env `BUTLER_BENCH_RUNS`, default 200).
#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use butler_worker::egress::{AllowList, EgressProxy, Endpoint, OwnPorts, ProxySettings};
use butler_worker::time::SystemClock;

use crate::common::{env_usize, median, ms};

const SIZE: usize = 1024 * 1024;

/// A hyper server answering every request with the same 1 MB.
async fn server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("listen");
    let addr = listener.local_addr().expect("addr");
    let body = Bytes::from(vec![b'x'; SIZE]);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let body = body.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |_req| {
                    let body = body.clone();
                    async move { Ok::<_, Infallible>(hyper::Response::new(Full::new(body))) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// `GET uri` on `stream` (already at the server, or at the proxy for an absolute URI); the
/// body's length.
async fn get<S>(stream: S, uri: &str, host: SocketAddr) -> usize
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let req = Request::get(uri)
        .header("host", host.to_string())
        .body(Empty::<Bytes>::new())
        .expect("request");
    let response = sender.send_request(req).await.expect("response");
    assert_eq!(response.status(), 200);
    response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .len()
}

async fn direct(server: SocketAddr) -> Duration {
    let t = Instant::now();
    let stream = TcpStream::connect(server).await.expect("connect");
    assert_eq!(get(stream, "/1mb", server).await, SIZE);
    t.elapsed()
}

async fn plain(proxy: SocketAddr, server: SocketAddr) -> Duration {
    let t = Instant::now();
    let stream = TcpStream::connect(proxy).await.expect("connect");
    assert_eq!(
        get(stream, &format!("http://{server}/1mb"), server).await,
        SIZE
    );
    t.elapsed()
}

async fn tunnel(proxy: SocketAddr, server: SocketAddr) -> Duration {
    let t = Instant::now();
    let stream = TcpStream::connect(proxy).await.expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn.with_upgrades());
    let req = Request::connect(server.to_string())
        .body(Empty::<Bytes>::new())
        .expect("request");
    let response = sender.send_request(req).await.expect("response");
    assert_eq!(response.status(), 200);
    let upgraded = hyper::upgrade::on(response).await.expect("tunnel");
    assert_eq!(get(TokioIo::new(upgraded), "/1mb", server).await, SIZE);
    t.elapsed()
}

pub fn main() {
    let runs = env_usize("BUTLER_BENCH_RUNS", 200);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let server = server().await;
        let mut allow = AllowList::default();
        allow.add_endpoint(Endpoint {
            host: server.ip().to_string(),
            port: server.port(),
            configured: true,
        });
        let mut settings = ProxySettings::new(allow);
        settings.own_ports = OwnPorts::new();
        let proxy = EgressProxy::start(settings, SystemClock::shared()).expect("proxy");
        let at = proxy.addr();
        for _ in 0..5 {
            direct(server).await;
            plain(at, server).await;
            tunnel(at, server).await;
        }
        let (mut d, mut p, mut t) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            d.push(direct(server).await);
            p.push(plain(at, server).await);
            t.push(tunnel(at, server).await);
        }
        proxy.settle(Duration::from_secs(5)).await;
        let log = proxy.log().take();
        assert_eq!(log.total, 2 * (runs + 5), "every proxied call is logged");
        assert_eq!(log.refused, 0);
        let (d, p, t) = (median(d), median(p), median(t));
        println!("1 MB download from a local HTTP server, median of {runs} fresh connections:");
        println!("  direct:                        {:>7.3} ms", ms(d));
        println!(
            "  through the proxy (plain GET): {:>7.3} ms ({:.2}x)",
            ms(p),
            p.as_secs_f64() / d.as_secs_f64()
        );
        println!(
            "  through a CONNECT tunnel:      {:>7.3} ms ({:.2}x)",
            ms(t),
            t.as_secs_f64() / d.as_secs_f64()
        );
    });
}
