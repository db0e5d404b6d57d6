//! The two answers that stay open: a watch (chunked `{"type":…,"object":…}` lines until
//! `timeoutSeconds` or a cut) and a pod's log (chunked text, held open while the container
//! runs when `follow=true`).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::SinkExt;
use futures::channel::mpsc;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::clock;
use super::server::{Body, Selectors};
use super::state::{Resource, Shared, check_own};
use super::status::{self, ApiError};

type Chunk = Result<Frame<Bytes>, std::io::Error>;

/// The real server's default watch length is 30–60 minutes; the stand-in takes the short end.
const DEFAULT_WATCH_SECONDS: u64 = 1800;

fn streaming(content_type: &str, rx: mpsc::Receiver<Chunk>) -> Response<Body> {
    Response::builder()
        .status(200)
        .header("content-type", content_type)
        .body(StreamBody::new(rx).boxed_unsync())
        .expect("a valid response")
}

fn cut() -> Chunk {
    Err(std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "the stand-in cut the stream",
    ))
}

/// One watch event line, checked against the subset.
fn event_line(kind: &str, object: &Value, definition: &str) -> Bytes {
    let event = json!({"type": kind, "object": object});
    check_own("io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", &event);
    check_own(definition, object);
    let mut line = serde_json::to_vec(&event).expect("JSON values serialise");
    line.push(b'\n');
    Bytes::from(line)
}

/// A watch on `resource`, as kube-runtime's watcher and `Api::watch` make them.
pub fn watch(
    shared: Arc<Shared>,
    resource: Resource,
    params: &[(String, String)],
) -> Response<Body> {
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let selectors = Selectors::from_params(params);
    let timeout = get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(DEFAULT_WATCH_SECONDS);
    let bookmarks = get("allowWatchBookmarks").as_deref() == Some("true");
    let initial_events = get("sendInitialEvents").as_deref() == Some("true");
    let requested = get("resourceVersion").unwrap_or_default();
    let (expire, cut_after) = {
        let mut state = shared.lock();
        let expire = std::mem::take(&mut state.knobs.expire_next_watch);
        // An expired watch ends at once: a cut waits for the next one.
        let cut = if expire {
            None
        } else {
            state.knobs.cut_watch_after.take()
        };
        (expire, cut)
    };
    let (mut tx, rx) = mpsc::channel::<Chunk>(16);
    let (api_version, kind) = resource.type_meta();
    let bookmark = move |rv: u64, initial_end: bool| {
        let mut object = json!({
            "kind": kind,
            "apiVersion": api_version,
            "metadata": {"resourceVersion": rv.to_string()},
        });
        if initial_end {
            object["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        event_line("BOOKMARK", &object, resource.definition())
    };
    tokio::spawn(async move {
        if expire {
            let oldest = shared.lock().rv;
            let expired = status::expired(&requested, oldest);
            let line = event_line(
                "ERROR",
                &expired.status,
                "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            );
            let _ = tx.send(Ok(Frame::data(line))).await;
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(timeout);
        let mut changed = shared.changed.subscribe();
        changed.borrow_and_update();
        let mut sent = 0usize;
        let synthetic = requested.is_empty() || requested == "0" || initial_events;
        let mut from = if synthetic {
            let (objects, rv) = {
                let state = shared.lock();
                let objects: Vec<Value> = state
                    .store(resource)
                    .values()
                    .filter(|o| selectors.matches(o))
                    .cloned()
                    .collect();
                (objects, state.rv)
            };
            for object in objects {
                if cut_after.is_some_and(|n| sent >= n) {
                    let _ = tx.send(cut()).await;
                    return;
                }
                let line = event_line("ADDED", &object, resource.definition());
                if tx.send(Ok(Frame::data(line))).await.is_err() {
                    return;
                }
                sent += 1;
            }
            if initial_events
                && bookmarks
                && tx.send(Ok(Frame::data(bookmark(rv, true)))).await.is_err()
            {
                return;
            }
            rv
        } else {
            requested.parse::<u64>().unwrap_or(0)
        };
        loop {
            changed.borrow_and_update();
            let (events, latest) = {
                let state = shared.lock();
                let events: Vec<(&'static str, Value)> = state
                    .events
                    .iter()
                    .filter(|e| {
                        e.rv > from && e.resource == resource && selectors.matches(&e.object)
                    })
                    .map(|e| (e.kind, e.object.clone()))
                    .collect();
                (events, state.rv)
            };
            from = latest;
            for (kind, object) in events {
                if cut_after.is_some_and(|n| sent >= n) {
                    let _ = tx.send(cut()).await;
                    return;
                }
                let line = event_line(kind, &object, resource.definition());
                if tx.send(Ok(Frame::data(line))).await.is_err() {
                    return;
                }
                sent += 1;
            }
            tokio::select! {
                _ = changed.changed() => {}
                () = tokio::time::sleep_until(deadline) => {
                    if bookmarks {
                        let _ = tx.send(Ok(Frame::data(bookmark(from, false)))).await;
                    }
                    return;
                }
            }
        }
    });
    streaming("application/json", rx)
}

/// `GET pods/{name}/log`, as the API server proxies it to the kubelet.
pub fn log(
    shared: Arc<Shared>,
    pod_name: &str,
    params: &[(String, String)],
) -> Result<Response<Body>, ApiError> {
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let pod = shared
        .lock()
        .pods
        .get(pod_name)
        .cloned()
        .ok_or_else(|| status::not_found(Resource::Pods, pod_name))?;
    let names: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let container = match get("container").filter(|c| !c.is_empty()) {
        Some(container) => container,
        None if names.len() == 1 => names[0].clone(),
        None => {
            return Err(status::bad_request(format!(
                "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                names.join(" ")
            )));
        }
    };
    if !names.contains(&container) {
        return Err(status::bad_request(format!(
            "container {container} is not valid for pod {pod_name}"
        )));
    }
    let state = pod["status"]["containerStatuses"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == json!(container)))
        .map(|c| c["state"].clone());
    let (tx, rx) = mpsc::channel::<Chunk>(16);
    match state {
        None if pod["spec"]["nodeName"].is_null() => {
            // Not scheduled: the API server has no kubelet to ask and answers empty.
            drop(tx);
            return Ok(streaming("text/plain", rx));
        }
        None => {
            return Err(status::bad_request(format!(
                "container \"{container}\" in pod \"{pod_name}\" is not available"
            )));
        }
        Some(state) if !state["waiting"].is_null() => {
            let reason = state["waiting"]["reason"].as_str().unwrap_or("");
            let why = match reason {
                "ErrImagePull" => "image can't be pulled".to_owned(),
                "ImagePullBackOff" => "trying and failing to pull image".to_owned(),
                other => other.to_owned(),
            };
            return Err(status::bad_request(format!(
                "container \"{container}\" in pod \"{pod_name}\" is waiting to start: {why}"
            )));
        }
        Some(_) => {}
    }
    let follow = matches!(get("follow").as_deref(), Some("true" | "1"));
    let timestamps = matches!(get("timestamps").as_deref(), Some("true" | "1"));
    let since = match get("sinceTime") {
        Some(text) => Some(clock::parse(&text).ok_or_else(|| {
            status::bad_request(format!(
                "parsing time \"{text}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse"
            ))
        })?),
        None => get("sinceSeconds")
            .and_then(|s| s.parse::<u64>().ok())
            .map(|s| std::time::SystemTime::now() - Duration::from_secs(s)),
    };
    let tail: Option<usize> = get("tailLines").and_then(|t| t.parse().ok());
    let mut limit: Option<usize> = get("limitBytes").and_then(|l| l.parse().ok());
    let cut_after = shared.lock().knobs.cut_log_after.take();
    let pod_name = pod_name.to_owned();
    tokio::spawn(async move {
        let mut tx = tx;
        let mut changed = shared.changed.subscribe();
        let mut next = 0usize;
        let mut sent = 0usize;
        let mut first = true;
        loop {
            changed.borrow_and_update();
            let (lines, finished) = {
                let state = shared.lock();
                match state.logs.get(&pod_name) {
                    Some(log) => (
                        log.lines.get(next..).unwrap_or_default().to_vec(),
                        log.finished,
                    ),
                    None => (Vec::new(), false),
                }
            };
            next += lines.len();
            let mut lines: Vec<_> = lines
                .into_iter()
                .filter(|(at, _)| since.is_none_or(|s| *at >= s))
                .collect();
            if first {
                first = false;
                if let Some(tail) = tail {
                    let skip = lines.len().saturating_sub(tail);
                    lines.drain(..skip);
                }
            }
            for (at, line) in lines {
                let mut chunk = Vec::new();
                if timestamps {
                    chunk.extend_from_slice(clock::rfc3339_nanos(at).as_bytes());
                    chunk.push(b' ');
                }
                chunk.extend_from_slice(&line);
                let mut end = false;
                if let Some(left) = limit.as_mut() {
                    if chunk.len() >= *left {
                        chunk.truncate(*left);
                        end = true;
                    }
                    *left -= chunk.len();
                }
                if let Some(n) = cut_after
                    && sent + chunk.len() >= n
                {
                    chunk.truncate(n - sent);
                    if !chunk.is_empty() {
                        let _ = tx.send(Ok(Frame::data(Bytes::from(chunk)))).await;
                    }
                    let _ = tx.send(cut()).await;
                    return;
                }
                sent += chunk.len();
                if tx.send(Ok(Frame::data(Bytes::from(chunk)))).await.is_err() || end {
                    return;
                }
            }
            if finished || !follow {
                return;
            }
            if changed.changed().await.is_err() {
                return;
            }
        }
    });
    Ok(streaming("text/plain", rx))
}
