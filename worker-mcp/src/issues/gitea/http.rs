//! The HTTP layer of the Gitea client: one place that builds URLs, sends the token, applies
//! timeouts, retries idempotent reads, and turns every failure into an [`IssueError`] without
//! status codes, URLs, bodies or tokens.

use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue, USER_AGENT};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use crate::config::Secret;
use crate::issues::IssueError;

/// Timeouts and retry behaviour of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientOptions {
    /// Whole-request timeout (connect, send, read the body).
    pub timeout: Duration,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Extra attempts for idempotent reads (GET) after a timeout, a refused connection or a
    /// 5xx. Writes are never retried.
    pub read_retries: u32,
    /// Delay before the first retry; doubles each time.
    pub backoff: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            read_retries: 2,
            backoff: Duration::from_millis(200),
        }
    }
}

impl ClientOptions {
    /// Options with a given per-request timeout and the default retry policy.
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            timeout,
            connect_timeout: timeout.min(Duration::from_secs(5)),
            ..Self::default()
        }
    }
}

/// A successful response whose body was read.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, IssueError> {
        serde_json::from_slice(&self.body).map_err(|_| IssueError::Backend {
            context: "the issue tracker sent a response Butler cannot read".into(),
        })
    }

    pub fn header_u64(&self, name: &str) -> Option<u64> {
        self.headers.get(name)?.to_str().ok()?.trim().parse().ok()
    }

    /// Whether an RFC 8288 `Link` header names a `rel="next"` page.
    pub fn has_next_link(&self) -> bool {
        self.headers
            .get_all(reqwest::header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|part| part.contains("rel=\"next\"") || part.contains("rel=next"))
    }
}

/// A client bound to one server's API base (`<web root>/api/v1`).
pub(crate) struct Http {
    client: reqwest::Client,
    api_base: Url,
    auth: Option<HeaderValue>,
    opts: ClientOptions,
}

impl Http {
    pub fn new(
        web_root: &Url,
        token: Option<&Secret>,
        opts: ClientOptions,
    ) -> Result<Self, IssueError> {
        let setup_failed = || IssueError::Backend {
            context: "the HTTP client could not be set up".into(),
        };
        let mut api_base = web_root.clone();
        let root = web_root.path().trim_end_matches('/');
        api_base.set_path(&format!("{root}/api/v1"));
        api_base.set_query(None);
        api_base.set_fragment(None);
        api_base.set_username("").map_err(|()| setup_failed())?;
        api_base.set_password(None).map_err(|()| setup_failed())?;
        let auth = match token {
            Some(token) => {
                let mut value = HeaderValue::from_str(&format!("token {}", token.expose()))
                    .map_err(|_| IssueError::AuthFailed)?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let client = reqwest::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|_| setup_failed())?;
        Ok(Self {
            client,
            api_base,
            auth,
            opts,
        })
    }

    /// The API URL for path segments under `/api/v1` (each segment percent-encoded).
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.api_base.clone();
        url.path_segments_mut()
            .expect("an http(s) base URL can have path segments")
            .pop_if_empty()
            .extend(segments);
        url
    }

    /// GET with retries on transient failures; non-2xx statuses become errors.
    pub async fn get(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
        what: &str,
    ) -> Result<Reply, IssueError> {
        let mut url = self.url(segments);
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        let mut delay = self.opts.backoff;
        let mut attempt = 0;
        loop {
            let result = self.send(Method::GET, url.clone(), None).await;
            let transient = match &result {
                Ok(reply) => reply.status.is_server_error(),
                Err(e) => matches!(e, IssueError::Timeout | IssueError::Unreachable),
            };
            if !transient || attempt >= self.opts.read_retries {
                return check(result?, what);
            }
            attempt += 1;
            tracing::debug!(
                attempt,
                "retrying an issue-tracker read after a transient failure"
            );
            tokio::time::sleep(delay).await;
            delay = delay.saturating_mul(2);
        }
    }

    /// A write (POST/PATCH/DELETE), sent exactly once.
    pub async fn write(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<&impl Serialize>,
        what: &str,
    ) -> Result<Reply, IssueError> {
        let body = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(|_| IssueError::Backend {
                context: "the request could not be encoded".into(),
            })?),
            None => None,
        };
        check(self.send(method, self.url(segments), body).await?, what)
    }

    /// One attempt; transport failures are mapped, statuses are left to the caller.
    async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<Vec<u8>>,
    ) -> Result<Reply, IssueError> {
        let mut request = self
            .client
            .request(method, url)
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, concat!("butler/", env!("CARGO_PKG_VERSION")));
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        let response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(transport_error)?.to_vec();
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

/// Turns a non-success status into the matching error; `what` names the target for `not_found`.
fn check(reply: Reply, what: &str) -> Result<Reply, IssueError> {
    if reply.status.is_success() {
        return Ok(reply);
    }
    Err(status_error(reply.status, what))
}

/// The one mapping from HTTP status to [`IssueError`]; nothing of the response is kept.
pub(crate) fn status_error(status: StatusCode, what: &str) -> IssueError {
    let backend = |context: &str| IssueError::Backend {
        context: context.into(),
    };
    match status.as_u16() {
        401 | 403 => IssueError::AuthFailed,
        404 | 410 => IssueError::NotFound {
            what: what.to_string(),
        },
        409 | 412 => IssueError::Conflict,
        422 => backend("the issue tracker rejected the request as invalid"),
        423 => backend("the repository is archived on the issue tracker"),
        429 => backend("the issue tracker is rate-limiting requests; try again later"),
        300..=399 => backend("the issue tracker redirected the request; check the configured URL"),
        500..=599 => backend("the issue tracker failed to answer"),
        _ => backend("the issue tracker answered unexpectedly"),
    }
}

/// Maps a transport failure. `reqwest::Error`'s text carries the URL, so it is never shown.
fn transport_error(e: reqwest::Error) -> IssueError {
    if e.is_timeout() {
        IssueError::Timeout
    } else if e.is_connect() {
        IssueError::Unreachable
    } else if e.is_body() || e.is_decode() {
        IssueError::Backend {
            context: "the issue tracker's response broke off".into(),
        }
    } else {
        IssueError::Backend {
            context: "the request to the issue tracker failed".into(),
        }
    }
}
