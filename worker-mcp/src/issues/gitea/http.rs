//! The HTTP layer of the Gitea client: one place that builds URLs, sends the token, applies
//! timeouts, retries idempotent reads, reads answers up to a size limit, and turns every
//! failure into an [`IssueError`] without status codes, URLs, bodies or tokens.
//!
//! The token goes only to the origin the client was built for (redirects are not followed,
//! and a request to any other origin is refused before it leaves); which origins a client may
//! be built for is decided by the user's binding (see `issues::binding`).

use std::time::Duration;

use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_LENGTH, DATE, HeaderMap, HeaderValue, RETRY_AFTER, USER_AGENT,
};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use crate::config::Secret;
use crate::issues::IssueError;

/// The most of one answer that is read; a larger answer is refused and the rest is never
/// downloaded, so a hostile or broken server cannot fill Butler's memory.
pub(crate) const MAX_RESPONSE_BYTES: usize = 16 << 20;
/// The longest wait a `Retry-After` is reported with.
const MAX_RETRY_AFTER_SECS: u64 = 24 * 60 * 60;

/// Whether a request reads or changes something: a change that got no answer may have been
/// applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
}

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
    pub(crate) fn with_timeout(timeout: Duration) -> Self {
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
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, IssueError> {
        serde_json::from_slice(&self.body).map_err(|_| IssueError::Backend {
            context: "the issue tracker sent a response Butler cannot read".into(),
        })
    }

    pub(crate) fn header_u64(&self, name: &str) -> Option<u64> {
        self.headers.get(name)?.to_str().ok()?.trim().parse().ok()
    }

    /// Whether an RFC 8288 `Link` header names a `rel="next"` page.
    pub(crate) fn has_next_link(&self) -> bool {
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
    pub(super) fn new(
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
        let client = crate::http_client::build(
            reqwest::Client::builder()
                .timeout(opts.timeout)
                .connect_timeout(opts.connect_timeout)
                .redirect(reqwest::redirect::Policy::none()),
        )
        .map_err(|_| setup_failed())?;
        Ok(Self {
            client,
            api_base,
            auth,
            opts,
        })
    }

    /// The API URL for path segments under `/api/v1` (each segment percent-encoded).
    pub(super) fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.api_base.clone();
        url.path_segments_mut()
            .expect("an http(s) base URL can have path segments")
            .pop_if_empty()
            .extend(segments);
        url
    }

    /// GET with retries on transient failures; non-2xx statuses become errors.
    pub(super) async fn get(
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
            let result = self.send(Method::GET, url.clone(), None, Kind::Read).await;
            let transient = match &result {
                Ok(reply) => reply.status.is_server_error(),
                Err(e) => matches!(e, IssueError::ReadTimeout | IssueError::Unreachable),
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
    pub(crate) async fn write(
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
        let reply = self
            .send(method, self.url(segments), body, Kind::Write)
            .await?;
        check(reply, what)
    }

    /// One attempt; transport failures are mapped, statuses are left to the caller. The body
    /// of a success is read up to [`MAX_RESPONSE_BYTES`]; the body of a failure is not read.
    async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<Vec<u8>>,
        kind: Kind,
    ) -> Result<Reply, IssueError> {
        let mut request = self
            .client
            .request(method, url.clone())
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, concat!("butler/", env!("CARGO_PKG_VERSION")));
        if let Some(auth) = &self.auth {
            if url.origin() != self.api_base.origin() {
                return Err(IssueError::Backend {
                    context: "Butler refused to send the tracker token to another server".into(),
                });
            }
            request = request.header(AUTHORIZATION, auth.clone());
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| transport_error(&e, kind))?;
        let status = response.status();
        let headers = response.headers().clone();
        if !status.is_success() {
            return Ok(Reply {
                status,
                headers,
                body: Vec::new(),
            });
        }
        let body = read_capped(response, kind).await?;
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

/// Reads a body up to [`MAX_RESPONSE_BYTES`], refusing (and dropping the connection) past it.
async fn read_capped(mut response: reqwest::Response, kind: Kind) -> Result<Vec<u8>, IssueError> {
    let too_large = || match kind {
        // The change was applied (the status said so) but its answer cannot be read.
        Kind::Write => IssueError::WriteUnconfirmed,
        Kind::Read => IssueError::ResponseTooLarge {
            limit_bytes: MAX_RESPONSE_BYTES as u64,
        },
    };
    let announced = response
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
        return Err(too_large());
    }
    let mut body = Vec::with_capacity(announced.map_or(0, |n| n as usize));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(&e, kind))?
    {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            tracing::warn!(
                limit = MAX_RESPONSE_BYTES,
                "the issue tracker's answer is over the size limit; not read further"
            );
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Turns a non-success status into the matching error; `what` names the target for `not_found`.
fn check(reply: Reply, what: &str) -> Result<Reply, IssueError> {
    if reply.status.is_success() {
        return Ok(reply);
    }
    Err(status_error(reply.status, &reply.headers, what))
}

/// The one mapping from HTTP status to [`IssueError`]; nothing of the response is kept but
/// the wait a 429 asks for.
pub(crate) fn status_error(status: StatusCode, headers: &HeaderMap, what: &str) -> IssueError {
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
        429 => IssueError::RateLimited {
            retry_after_secs: retry_after(headers),
        },
        300..=399 => backend("the issue tracker redirected the request; check the configured URL"),
        500..=599 => backend("the issue tracker failed to answer"),
        _ => backend("the issue tracker answered unexpectedly"),
    }
}

/// `Retry-After` in seconds: given as seconds, or as an HTTP date (counted from the answer's
/// own `Date`, so the two clocks need not agree; from this machine's clock without one).
fn retry_after(headers: &HeaderMap) -> Option<u64> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs.min(MAX_RETRY_AFTER_SECS));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let now = headers
        .get(DATE)
        .and_then(|d| d.to_str().ok())
        .and_then(|d| chrono::DateTime::parse_from_rfc2822(d.trim()).ok())
        .map_or_else(chrono::Utc::now, |d| d.with_timezone(&chrono::Utc));
    let secs = (at.with_timezone(&chrono::Utc) - now).num_seconds().max(0);
    Some((secs as u64).min(MAX_RETRY_AFTER_SECS))
}

/// Maps a transport failure. `reqwest::Error`'s text carries the URL, so it is never shown.
/// A connection that never opened sent nothing; any other failure of a change leaves its
/// outcome unknown.
fn transport_error(e: &reqwest::Error, kind: Kind) -> IssueError {
    if e.is_connect() {
        return IssueError::Unreachable;
    }
    match kind {
        Kind::Write if !e.is_builder() => IssueError::WriteUnconfirmed,
        _ if e.is_timeout() => IssueError::ReadTimeout,
        _ if e.is_body() || e.is_decode() => IssueError::Backend {
            context: "the issue tracker's response broke off".into(),
        },
        _ => IssueError::Backend {
            context: "the request to the issue tracker failed".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).expect("header value"));
        }
        map
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        assert_eq!(retry_after(&headers(&[("retry-after", "120")])), Some(120));
        assert_eq!(
            retry_after(&headers(&[
                ("retry-after", "Wed, 21 Oct 2015 07:28:30 GMT"),
                ("date", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ])),
            Some(30)
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "99999999")])),
            Some(MAX_RETRY_AFTER_SECS)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(retry_after(&headers(&[])), None);
    }
}
