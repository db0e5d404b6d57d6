//! `butler serve --http ADDR`: the Brain-facing server over MCP's streamable HTTP transport, for
//! several Brains at once.
//!
//! rmcp's [`StreamableHttpService`] speaks the transport and keeps one [`ButlerServer`] per MCP
//! session (`Mcp-Session-Id`): the factory below makes a fresh one for every `initialize`, so a
//! session's project and active issue are its own. Butler's edge sits in front of it on hyper's
//! HTTP/1 connections (one path, `/mcp`, needs no router): the bearer token ([`edge`],
//! [`token`]), the open connections and which gives way at the cap ([`connections`]), the request
//! read under a deadline and a size limit, the live sessions, their cap, their calls in flight
//! and their idle expiry ([`idle`]), and a shutdown that lets calls in flight finish. rmcp
//! checks `Host` and `Origin` against the lists [`edge`] builds.

mod connections;
mod edge;
mod idle;
mod token;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use butler_worker::config::{Environment, Secret};
use butler_worker::time::SharedClock;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use self::connections::{Busy, Conn, Connections};
pub use self::edge::EdgeError;
use self::edge::{Refusal, authorize};
use self::idle::{Call, Sessions};
pub use self::token::{
    MIN_TOKEN_LEN, ServerToken, TOKEN_ENV, TOKEN_FILE, TokenError, TokenOrigin, client_setup,
    client_token, default_token_file, server_token,
};
use crate::server::ButlerServer;

/// The one path the server answers on.
pub const MCP_PATH: &str = "/mcp";
/// The header naming a request's MCP session.
const SESSION_HEADER: &str = "mcp-session-id";
/// Default: a session with no call for this long is closed.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default: how long calls in flight may run on after SIGTERM/SIGINT.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Default: how long a client may take to send a request's headers, and then its body.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Default: connections open at once (at the cap an idle one makes room, see [`connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// Default: live MCP sessions at once.
pub const DEFAULT_MAX_SESSIONS: usize = 128;
/// Largest request body read: as large as a message over stdio may be.
const MAX_BODY: usize = crate::transport::MAX_MESSAGE_BYTES;
/// How long a refused connection gets to take its answer.
const REFUSAL_WAIT: Duration = Duration::from_secs(1);
/// After the calls ended: how long open connections get to close.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How the HTTP server listens and whom it serves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port, see [`HttpServer::local_addr`]).
    pub addr: SocketAddr,
    /// The bearer token every request must carry, loopback included.
    pub token: Secret,
    /// Browser origins allowed besides the loopback ones (`https://host[:port|:*]`).
    pub allowed_origins: Vec<String>,
    /// A session with no call in flight and none for this long is closed.
    pub idle_timeout: Duration,
    /// How long calls in flight may take to finish once shutdown begins.
    pub shutdown_grace: Duration,
    /// How long a client may take to send a request's headers, and then its body.
    pub read_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Live MCP sessions at once.
    pub max_sessions: usize,
}

impl HttpOptions {
    /// Listening on `addr`, asking every request for `token`, with the defaults: loopback
    /// origins only, 30 minutes idle, 30 seconds' grace, 30 seconds to send a request, 256
    /// connections and 128 sessions.
    pub fn new(addr: SocketAddr, token: Secret) -> Self {
        Self {
            addr,
            token,
            allowed_origins: Vec::new(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            read_timeout: DEFAULT_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

/// Why the HTTP server did not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The origin settings are refused.
    #[error(transparent)]
    Edge(#[from] EdgeError),
    /// The address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// A bound server, not yet serving.
pub struct HttpServer {
    listener: TcpListener,
    local: SocketAddr,
    /// Its address on the list of Butler's ports, which no agent reaches through the egress
    /// proxy, while it lives.
    _own: butler_worker::egress::Registration,
    options: HttpOptions,
    origins: Vec<String>,
    hosts: Vec<String>,
}

impl HttpServer {
    /// Checks the settings (well-formed origins) and binds.
    pub async fn bind(options: HttpOptions) -> Result<Self, HttpError> {
        let origins = edge::allowed_origins(options.addr, &options.allowed_origins)?;
        let hosts = edge::allowed_hosts(options.addr);
        let listener = TcpListener::bind(options.addr)
            .await
            .map_err(|source| HttpError::Bind {
                addr: options.addr,
                source,
            })?;
        let local = listener.local_addr().map_err(|source| HttpError::Bind {
            addr: options.addr,
            source,
        })?;
        Ok(Self {
            listener,
            _own: butler_worker::egress::OwnPorts::default().register(local),
            local,
            options,
            origins,
            hosts,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The URL clients connect to.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.local)
    }

    /// Serves until `stop` completes; then takes no new calls, lets the calls in flight finish
    /// (up to the grace period), closes every session and returns. Every time a session stamps
    /// comes from `clock`; `env` is Butler's environment, read once when the process started.
    pub async fn serve(
        self,
        clock: SharedClock,
        env: Arc<Environment>,
        stop: impl Future<Output = ()>,
    ) {
        // The registration lives until the server has stopped.
        let HttpServer {
            listener,
            options,
            origins,
            hosts,
            _own: _registered,
            ..
        } = self;
        // Ends every session and open stream at the very end.
        let sessions_end = CancellationToken::new();
        let mut manager = LocalSessionManager::default();
        // Idle sessions are Butler's to expire (see `idle`): rmcp's own timer would also end a
        // session in the middle of a long call.
        manager.session_config.keep_alive = None;
        let manager = Arc::new(manager);
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_cancellation_token(sessions_end.clone());
        config = if hosts.is_empty() {
            config.disable_allowed_hosts()
        } else {
            config.with_allowed_hosts(hosts)
        };
        // A fresh server, and so a fresh session state, for every MCP session.
        let mcp = StreamableHttpService::new(
            move || {
                Ok(ButlerServer::for_http_session(
                    clock.clone(),
                    Arc::clone(&env),
                ))
            },
            Arc::clone(&manager),
            config,
        );
        let closing = CancellationToken::new();
        let edge = Arc::new(Edge {
            mcp,
            sessions: Arc::new(Sessions::default()),
            token: options.token.clone(),
            closing: closing.clone(),
            read_timeout: options.read_timeout,
            max_sessions: options.max_sessions.max(1),
        });
        let connections = Connections::new(connections::fit_descriptors(options.max_connections));
        let reaper = tokio::spawn(expire_idle(
            Arc::clone(&edge.sessions),
            Arc::clone(&manager),
            options.idle_timeout,
            closing.clone(),
        ));
        let graceful = GracefulShutdown::new();
        let mut stop = pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _peer)) => {
                        let Some(admitted) = connections.admit() else {
                            tokio::spawn(refuse_connection(stream));
                            continue;
                        };
                        let edge = Arc::clone(&edge);
                        let conn = Arc::clone(admitted.conn());
                        let service = hyper::service::service_fn(move |request| {
                            Arc::clone(&edge).handle(request, Arc::clone(&conn))
                        });
                        let connection = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(options.read_timeout)
                            .serve_connection(TokioIo::new(stream), service);
                        let connection = graceful.watch(connection);
                        tokio::spawn(async move {
                            tokio::select! {
                                ended = connection => if let Err(e) = ended {
                                    tracing::debug!("connection ended: {e}");
                                },
                                () = admitted.evicted() => {
                                    tracing::debug!("an idle connection closed to make room");
                                }
                            }
                        });
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: wait a moment, keep serving.
                        tracing::warn!("accepting a connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                () = &mut stop => break,
            }
        }
        drop(listener);
        closing.cancel();
        let sessions = &edge.sessions;
        tracing::info!(
            calls = sessions.in_flight(),
            sessions = sessions.live(),
            connections = connections.open(),
            "shutting down: no new calls; waiting for the calls in flight"
        );
        let grace = options.shutdown_grace;
        if tokio::time::timeout(grace, sessions.all_calls_ended())
            .await
            .is_err()
        {
            tracing::warn!(
                calls = sessions.in_flight(),
                "calls still in flight after {grace:?}; they are ended"
            );
        }
        sessions_end.cancel();
        let _ = tokio::time::timeout(CLOSE_WAIT, graceful.shutdown()).await;
        let _ = reaper.await;
        tracing::info!("stopped");
    }
}

/// Completes on SIGTERM or SIGINT (Ctrl-C).
pub async fn termination_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(e) => {
            tracing::warn!("cannot watch SIGTERM ({e}); only SIGINT stops the server");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Answers a connection that cannot be admitted (every open one is busy) with 503, without
/// reading its request, and closes it.
async fn refuse_connection(mut stream: TcpStream) {
    let text = "Service Unavailable: too many connections, all busy; try again shortly";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{text}",
        text.len()
    );
    let _ = tokio::time::timeout(REFUSAL_WAIT, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        // What the client sent is read and dropped, so closing does not reset the connection
        // before the client reads the answer.
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// What every request passes before rmcp sees it.
struct Edge {
    mcp: StreamableHttpService<ButlerServer, LocalSessionManager>,
    sessions: Arc<Sessions>,
    token: Secret,
    /// Cancelled when shutdown begins: no new calls.
    closing: CancellationToken,
    /// How long a request's body may take to arrive.
    read_timeout: Duration,
    /// Live sessions at most.
    max_sessions: usize,
}

type Answer = Response<Tracked>;

impl Edge {
    async fn handle(
        self: Arc<Self>,
        mut request: Request<Incoming>,
        conn: Arc<Conn>,
    ) -> Result<Answer, Infallible> {
        if request.uri().path() != MCP_PATH {
            return Ok(plain(
                StatusCode::NOT_FOUND,
                "Not Found: Butler serves MCP at /mcp",
            ));
        }
        if let Err(Refusal::Unauthorized) = authorize(request.headers(), &self.token) {
            tracing::info!(method = %request.method(), "refused a request without the bearer token");
            let mut answer = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: bearer token required",
            );
            answer.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer realm=\"butler\""),
            );
            return Ok(answer);
        }
        conn.authorized();
        // Checked: nothing past the edge (rmcp, the tools' request context) needs the token.
        request.headers_mut().remove(http::header::AUTHORIZATION);
        if self.closing.is_cancelled() {
            return Ok(plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: the server is shutting down",
            ));
        }
        // The whole body, before anything counts as a call: one that never arrives holds up
        // nothing but its own connection, and only until the deadline.
        let (parts, body) = request.into_parts();
        let body = match read_body(body, &parts.headers, self.read_timeout).await {
            Ok(body) => body,
            Err(refused) => return Ok(refused),
        };
        let request = Request::from_parts(parts, Full::new(body));
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let method = request.method().clone();
        // A new session (`initialize`) needs a place among the live ones.
        let opening = match (&method, session.as_deref()) {
            (&Method::POST, None) => match self.sessions.try_open(self.max_sessions) {
                Some(opening) => Some(opening),
                None => {
                    tracing::warn!(max = self.max_sessions, "refused a session: too many live");
                    return Ok(too_busy(
                        "Service Unavailable: too many live sessions; close one (DELETE) or try \
                         again later",
                    ));
                }
            },
            _ => None,
        };
        let busy = conn.busy();
        let now = Instant::now();
        let call = match (&method, session.as_deref()) {
            (&Method::POST, id) => match self.sessions.begin(id, now) {
                Some(call) => Some(call),
                None => return Ok(session_not_found()),
            },
            (_, Some(id)) if !self.sessions.touch(id, now) => return Ok(session_not_found()),
            _ => None,
        };
        let answer = self.mcp.handle(request).await;
        match (&method, session.as_deref()) {
            (&Method::POST, None) => {
                let created = answer
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|v| v.to_str().ok());
                if let Some(id) = created {
                    self.sessions.register(id, Instant::now());
                    tracing::info!(session = short(id), "session opened");
                }
            }
            (&Method::DELETE, Some(id)) if answer.status().is_success() => {
                self.sessions.forget(id);
                tracing::info!(session = short(id), "session closed by the client");
            }
            _ => {}
        }
        drop(opening);
        Ok(answer.map(|body| Tracked {
            body,
            _call: call,
            _busy: Some(busy),
        }))
    }
}

/// A request's whole body, read within `within` and at most [`MAX_BODY`] bytes; else the
/// answer that refuses it (the connection is then closed).
async fn read_body(
    body: Incoming,
    headers: &http::HeaderMap,
    within: Duration,
) -> Result<Bytes, Answer> {
    let too_large = || {
        closing(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Content Too Large: a request body may be at most 4 MiB",
        ))
    };
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    let read = http_body_util::Limited::new(body, MAX_BODY).collect();
    match tokio::time::timeout(within, read).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => {
            tracing::debug!("a request body could not be read: {e}");
            Err(closing(plain(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read",
            )))
        }
        Err(_) => {
            tracing::info!("a request body did not arrive within {within:?}");
            Err(closing(plain(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the request body did not arrive within {}s",
                    within.as_secs()
                ),
            )))
        }
    }
}

/// `answer`, asking for the connection to be closed after it.
fn closing(mut answer: Answer) -> Answer {
    answer.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    answer
}

/// 503 with `text`, asking the client to try again in a second.
fn too_busy(text: &'static str) -> Answer {
    let mut answer = plain(StatusCode::SERVICE_UNAVAILABLE, text);
    answer.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    answer
}

/// Enough of a session id to follow it in the log.
fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// What the MCP specification asks for a session that is unknown or expired: 404, upon which
/// the client starts a new session.
fn session_not_found() -> Answer {
    plain(StatusCode::NOT_FOUND, "Not Found: Session not found")
}

fn plain(status: StatusCode, text: impl Into<Bytes>) -> Answer {
    let body = Full::new(text.into()).boxed();
    let mut answer = Response::new(Tracked {
        body,
        _call: None,
        _busy: None,
    });
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    answer
}

/// A response body that holds its call in flight, and its connection busy, until it is sent
/// (or the client is gone).
struct Tracked {
    body: BoxBody<Bytes, Infallible>,
    _call: Option<Call>,
    _busy: Option<Busy>,
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Closes the sessions that have been idle for `timeout` (checked a few times per timeout),
/// until shutdown begins.
async fn expire_idle(
    sessions: Arc<Sessions>,
    manager: Arc<LocalSessionManager>,
    timeout: Duration,
    closing: CancellationToken,
) {
    let every = (timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = closing.cancelled() => return,
        }
        for id in sessions.take_expired(Instant::now(), timeout) {
            if let Err(e) = manager.close_session(&id.as_str().into()).await {
                tracing::warn!(session = short(&id), "closing an idle session failed: {e}");
            }
            tracing::info!(
                session = short(&id),
                "session expired after {timeout:?} idle"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_servers_port_is_one_of_butlers_own_while_it_lives() {
        let own = butler_worker::egress::OwnPorts::default();
        let options = HttpOptions::new(
            "127.0.0.1:0".parse().expect("addr"),
            butler_worker::config::Secret::new("tok-test"),
        );
        let server = HttpServer::bind(options).await.expect("bound");
        let addr = server.local_addr();
        assert!(own.is_butler(addr), "no agent reaches it through the proxy");
        drop(server);
        assert!(!own.is_butler(addr));
    }
}
