//! The HTTP side: routes, RBAC, create/get/delete/list, and the answers' shapes. Watches and
//! logs stream from [`super::streams`]; Jobs run in [`super::kubelet`].

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;

use super::state::{Resource, Shared, Stop, check_own};
use super::status::{self, ApiError};
use super::{KubeStandIn, RecordedRequest, clock, kubelet, random_uid, streams};

/// The body every answer has: whole JSON, or a stream that may be cut.
pub type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// Accepts connections until the task is aborted.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let shared = Arc::clone(&shared);
                async move { Ok::<_, Infallible>(handle(shared, request).await) }
            });
            // A client going away mid-stream is not the stand-in's concern.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A JSON answer.
pub fn json_response(code: u16, value: &Value) -> Response<Body> {
    let body = serde_json::to_vec(value).expect("JSON values serialise");
    Response::builder()
        .status(StatusCode::from_u16(code).expect("a valid status code"))
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from(body))
                .map_err(|never| match never {})
                .boxed_unsync(),
        )
        .expect("a valid response")
}

/// An error answer: its `Status`, checked against the subset.
pub fn error_response(error: &ApiError) -> Response<Body> {
    check_own("io.k8s.apimachinery.pkg.apis.meta.v1.Status", &error.status);
    json_response(error.code, &error.status)
}

/// What a request addresses.
enum Route {
    Collection(Resource),
    Object(Resource, String),
    PodLog(String),
}

/// The namespace and route of `path`, when it is one the stand-in serves.
fn route(path: &str) -> Option<(String, Route)> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (resource, rest) = match parts.as_slice() {
        ["apis", "batch", "v1", "namespaces", ns, "jobs", rest @ ..] => {
            (Resource::Jobs, (ns, rest))
        }
        ["api", "v1", "namespaces", ns, "pods", rest @ ..] => (Resource::Pods, (ns, rest)),
        _ => return None,
    };
    let (namespace, rest) = rest;
    let route = match (resource, rest) {
        (_, []) => Route::Collection(resource),
        (_, [name]) => Route::Object(resource, (*name).to_owned()),
        (Resource::Pods, [name, "log"]) => Route::PodLog((*name).to_owned()),
        _ => return None,
    };
    Some(((*namespace).to_owned(), route))
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Response<Body> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    let bytes = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let body: Option<Value> = if bytes.is_empty() {
        None
    } else {
        serde_json::from_slice(&bytes).ok()
    };
    shared.lock().requests.push(RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        body: body.clone(),
    });
    let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let param = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    if method == Method::GET && path == "/version" {
        return json_response(200, &version());
    }
    let Some((namespace, route)) = route(&path) else {
        return error_response(&status::no_route());
    };
    let watching = matches!(param("watch"), Some("true" | "1"));
    let (verb, resource, subresource, name) = match (&method, &route) {
        (&Method::GET, Route::Collection(r)) if watching => ("watch", *r, None, None),
        (&Method::GET, Route::Collection(r)) => ("list", *r, None, None),
        (&Method::POST, Route::Collection(Resource::Jobs)) => {
            ("create", Resource::Jobs, None, None)
        }
        (&Method::GET, Route::Object(r, n)) => ("get", *r, None, Some(n.as_str())),
        (&Method::DELETE, Route::Object(Resource::Jobs, n)) => {
            ("delete", Resource::Jobs, None, Some(n.as_str()))
        }
        (&Method::GET, Route::PodLog(n)) => ("get", Resource::Pods, Some("log"), Some(n.as_str())),
        _ => return error_response(&status::method_not_allowed(method.as_str())),
    };
    let rbac_resource = match subresource {
        Some(sub) => format!("{}/{sub}", resource.plural()),
        None => resource.plural().to_owned(),
    };
    let refused = namespace != shared.namespace
        || shared
            .lock()
            .forbidden
            .contains(&(verb.to_owned(), rbac_resource));
    if refused {
        return error_response(&status::forbidden(
            KubeStandIn::USER,
            verb,
            resource,
            subresource,
            name,
            &namespace,
        ));
    }
    let result = match (verb, route) {
        ("watch", Route::Collection(r)) => Ok(streams::watch(shared, r, &params)),
        ("list", Route::Collection(r)) => list(&shared, r, &params),
        ("create", _) => create_job(&shared, body, &bytes),
        ("get", Route::Object(r, n)) => get(&shared, r, &n),
        ("delete", Route::Object(_, n)) => delete_job(&shared, &n, body, &bytes),
        ("get", Route::PodLog(n)) => streams::log(shared, &n, &params),
        _ => Err(status::no_route()),
    };
    result.unwrap_or_else(|error| error_response(&error))
}

/// `/version`: the release the pinned subset comes from (what `kubectl version` and
/// `Client::apiserver_version` read).
fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": "v1.33.0",
        // A stand-in has no build of its own to name.
        "gitCommit": "",
        "buildDate": "",
        "gitTreeState": "clean",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

fn get(shared: &Shared, resource: Resource, name: &str) -> Result<Response<Body>, ApiError> {
    let object = shared
        .lock()
        .store(resource)
        .get(name)
        .cloned()
        .ok_or_else(|| status::not_found(resource, name))?;
    Ok(json_response(200, &object))
}

/// A parsed `fieldSelector` / `labelSelector` pair, as the stand-in matches them.
pub struct Selectors {
    fields: Vec<Term>,
    labels: Vec<Term>,
}

enum Term {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Missing(String),
}

fn terms(text: Option<&str>) -> Vec<Term> {
    text.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            if let Some((k, v)) = t.split_once("!=") {
                Term::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                Term::Equals(k.trim().into(), v.trim().into())
            } else if let Some(k) = t.strip_prefix('!') {
                Term::Missing(k.trim().into())
            } else {
                Term::Exists(t.into())
            }
        })
        .collect()
}

impl Selectors {
    /// The selectors of a request's parameters.
    pub fn from_params(params: &[(String, String)]) -> Selectors {
        let get = |key: &str| {
            params
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        Selectors {
            fields: terms(get("fieldSelector")),
            labels: terms(get("labelSelector")),
        }
    }

    /// Whether `object` is selected.
    pub fn matches(&self, object: &Value) -> bool {
        let field = |key: &str| -> Option<String> {
            let mut at = object;
            for part in key.split('.') {
                at = at.get(part)?;
            }
            at.as_str().map(str::to_owned)
        };
        let label = |key: &str| -> Option<String> {
            object["metadata"]["labels"][key]
                .as_str()
                .map(str::to_owned)
        };
        let check = |terms: &[Term], lookup: &dyn Fn(&str) -> Option<String>| {
            terms.iter().all(|term| match term {
                Term::Equals(k, v) => lookup(k).as_deref() == Some(v.as_str()),
                Term::NotEquals(k, v) => lookup(k).as_deref() != Some(v.as_str()),
                Term::Exists(k) => lookup(k).is_some(),
                Term::Missing(k) => lookup(k).is_none(),
            })
        };
        check(&self.fields, &field) && check(&self.labels, &label)
    }
}

fn list(
    shared: &Shared,
    resource: Resource,
    params: &[(String, String)],
) -> Result<Response<Body>, ApiError> {
    let get = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let selectors = Selectors::from_params(params);
    let limit: Option<usize> = get("limit").and_then(|l| l.parse().ok()).filter(|l| *l > 0);
    // The continue token is opaque to clients: here, the last name already listed.
    let after = match get("continue") {
        Some(token) if !token.is_empty() => Some(
            token
                .strip_prefix("standin:")
                .ok_or_else(|| {
                    status::bad_request(
                        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
                            .to_owned(),
                    )
                })?
                .to_owned(),
        ),
        _ => None,
    };
    let state = shared.lock();
    let mut selected: Vec<&Value> = state
        .store(resource)
        .iter()
        .filter(|(name, _)| after.as_ref().is_none_or(|a| name.as_str() > a.as_str()))
        .map(|(_, object)| object)
        .filter(|object| selectors.matches(object))
        .collect();
    let mut metadata = json!({"resourceVersion": state.rv.to_string()});
    if let Some(limit) = limit
        && selected.len() > limit
    {
        let remaining = selected.len() - limit;
        selected.truncate(limit);
        let last = selected.last().and_then(|o| o["metadata"]["name"].as_str());
        metadata["continue"] = json!(format!("standin:{}", last.unwrap_or("")));
        metadata["remainingItemCount"] = json!(remaining);
    }
    // List items carry no apiVersion/kind, as the real server writes them.
    let items: Vec<Value> = selected
        .into_iter()
        .map(|object| {
            let mut item = object.clone();
            if let Some(map) = item.as_object_mut() {
                map.remove("apiVersion");
                map.remove("kind");
            }
            item
        })
        .collect();
    drop(state);
    let (api_version, kind) = resource.list_type_meta();
    let list = json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": metadata,
        "items": items,
    });
    check_own(resource.list_definition(), &list);
    Ok(json_response(200, &list))
}

/// The message strict decoding gives a Job body outside the schema (the problems sorted: the
/// same message whatever order the client's JSON object kept its keys in).
fn undecodable(problems: &[String]) -> ApiError {
    let mut sorted = problems.to_vec();
    sorted.sort();
    status::bad_request(format!(
        "Job in version \"v1\" cannot be handled as a Job: strict decoding error: {}",
        sorted.join(", ")
    ))
}

/// 422 `Invalid`, as validation words it.
fn invalid(name: &str, causes: &[(&str, String)]) -> ApiError {
    let messages: Vec<String> = causes.iter().map(|(_, m)| m.clone()).collect();
    let message = if messages.len() == 1 {
        format!("Job.batch \"{name}\" is invalid: {}", messages[0])
    } else {
        format!("Job.batch \"{name}\" is invalid: [{}]", messages.join(", "))
    };
    let causes: Vec<Value> = causes
        .iter()
        .map(|(field, m)| json!({"reason": "FieldValueRequired", "message": m, "field": field}))
        .collect();
    ApiError {
        code: 422,
        status: json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Invalid",
            "details": {"name": name, "group": "batch", "kind": "Job", "causes": causes},
            "code": 422,
        }),
    }
}

fn create_job(
    shared: &Arc<Shared>,
    body: Option<Value>,
    bytes: &[u8],
) -> Result<Response<Body>, ApiError> {
    let Some(mut job) = body else {
        return Err(status::bad_request(format!(
            "couldn't get version/kind; json parse error: {}",
            serde_json::from_slice::<Value>(bytes).err().map_or_else(
                || "unexpected end of JSON input".to_owned(),
                |e| e.to_string()
            )
        )));
    };
    shared.lock().received_jobs.push(job.clone());
    if let Err(problems) = super::schema::validate("io.k8s.api.batch.v1.Job", &job) {
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(undecodable(&listed));
    }
    let api_version = job["apiVersion"].as_str().unwrap_or("batch/v1").to_owned();
    if api_version != "batch/v1" {
        return Err(status::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version (batch/v1)"
        )));
    }
    let kind = job["kind"].as_str().unwrap_or("Job").to_owned();
    if kind != "Job" {
        return Err(status::bad_request(format!(
            "Job in version \"v1\" cannot be handled as a Job: the kind in the data ({kind}) does not match the expected kind (Job)"
        )));
    }
    if let Some(ns) = job["metadata"]["namespace"].as_str()
        && ns != shared.namespace
    {
        return Err(status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
                .to_owned(),
        ));
    }
    let name = match (
        job["metadata"]["name"].as_str(),
        job["metadata"]["generateName"].as_str(),
    ) {
        (Some(name), _) if !name.is_empty() => name.to_owned(),
        (_, Some(prefix)) if !prefix.is_empty() => format!("{prefix}{}", super::random_suffix(5)),
        _ => {
            return Err(invalid(
                "",
                &[(
                    "metadata.name",
                    "metadata.name: Required value: name or generateName is required".to_owned(),
                )],
            ));
        }
    };
    let restart = job["spec"]["template"]["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or("Always");
    if restart != "Never" && restart != "OnFailure" {
        let message = if job["spec"]["template"]["spec"]["restartPolicy"].is_null() {
            "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"".to_owned()
        } else {
            format!(
                "spec.template.spec.restartPolicy: Unsupported value: \"{restart}\": supported values: \"OnFailure\", \"Never\""
            )
        };
        return Err(invalid(
            &name,
            &[("spec.template.spec.restartPolicy", message)],
        ));
    }
    let mut state = shared.lock();
    if state.jobs.contains_key(&name) {
        drop(state);
        return Err(status::already_exists(Resource::Jobs, &name));
    }
    default_job(&mut job, &name, &shared.namespace);
    let stored = shared.write_locked(&mut state, Resource::Jobs, "ADDED", job);
    drop(state);
    shared.notify();
    kubelet::start(Arc::clone(shared), &name);
    Ok(json_response(201, &stored))
}

/// Fills what the API server's defaulting and the Job strategy fill on create.
fn default_job(job: &mut Value, name: &str, namespace: &str) {
    let uid = random_uid();
    job["apiVersion"] = json!("batch/v1");
    job["kind"] = json!("Job");
    let meta = &mut job["metadata"];
    meta["name"] = json!(name);
    meta["namespace"] = json!(namespace);
    meta["uid"] = json!(uid);
    meta["generation"] = json!(1);
    meta["creationTimestamp"] = json!(clock::now());
    let spec = &mut job["spec"];
    for (key, value) in [
        ("parallelism", json!(1)),
        ("completions", json!(1)),
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
        ("manualSelector", json!(false)),
    ] {
        if spec[key].is_null() {
            spec[key] = value;
        }
    }
    if spec["manualSelector"] == json!(false) {
        spec.as_object_mut().map(|s| s.remove("manualSelector"));
    }
    spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
    let template_labels = &mut spec["template"]["metadata"]["labels"];
    if !template_labels.is_object() {
        *template_labels = json!({});
    }
    for (key, value) in [
        ("batch.kubernetes.io/controller-uid", uid.as_str()),
        ("batch.kubernetes.io/job-name", name),
        ("controller-uid", uid.as_str()),
        ("job-name", name),
    ] {
        template_labels[key] = json!(value);
    }
    let template_labels = template_labels.clone();
    if job["metadata"]["labels"]
        .as_object()
        .is_none_or(Map::is_empty)
    {
        job["metadata"]["labels"] = template_labels;
    }
    let pod_spec = &mut job["spec"]["template"]["spec"];
    for (key, value) in [
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("securityContext", json!({})),
        ("terminationGracePeriodSeconds", json!(30)),
    ] {
        if pod_spec[key].is_null() {
            pod_spec[key] = value;
        }
    }
    if let Some(containers) = pod_spec["containers"].as_array_mut() {
        for container in containers {
            let image = container["image"].as_str().unwrap_or("");
            let pull = if image.ends_with(":latest")
                || !image.rsplit('/').next().unwrap_or("").contains(':')
            {
                "Always"
            } else {
                "IfNotPresent"
            };
            for (key, value) in [
                ("terminationMessagePath", json!("/dev/termination-log")),
                ("terminationMessagePolicy", json!("File")),
                ("imagePullPolicy", json!(pull)),
                ("resources", json!({})),
            ] {
                if container[key].is_null() {
                    container[key] = value;
                }
            }
        }
    }
    job["status"] = json!({});
}

fn delete_job(
    shared: &Arc<Shared>,
    name: &str,
    body: Option<Value>,
    bytes: &[u8],
) -> Result<Response<Body>, ApiError> {
    if body.is_none() && !bytes.is_empty() {
        return Err(status::bad_request(
            "couldn't get version/kind; json parse error: invalid character".to_owned(),
        ));
    }
    let options = body.unwrap_or_else(|| json!({}));
    if let Err(problems) = super::schema::validate(
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        &options,
    ) {
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(status::bad_request(format!(
            "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: strict decoding error: {}",
            listed.join(", ")
        )));
    }
    let job = shared
        .lock()
        .jobs
        .get(name)
        .cloned()
        .ok_or_else(|| status::not_found(Resource::Jobs, name))?;
    if !job["metadata"]["deletionTimestamp"].is_null() {
        return Ok(json_response(200, &job));
    }
    // The batch/v1 Job's default policy is Orphan, kept for compatibility.
    let policy = options["propagationPolicy"].as_str().unwrap_or("Orphan");
    let uid = job["metadata"]["uid"].as_str().unwrap_or("").to_owned();
    match policy {
        "Foreground" => {
            let marked = shared
                .modify(Resource::Jobs, name, |job| {
                    job["metadata"]["deletionTimestamp"] = json!(clock::now());
                    job["metadata"]["deletionGracePeriodSeconds"] = json!(0);
                    let finalizers = &mut job["metadata"]["finalizers"];
                    if !finalizers.is_array() {
                        *finalizers = json!([]);
                    }
                    if let Some(list) = finalizers.as_array_mut() {
                        list.push(json!("foregroundDeletion"));
                    }
                })
                .ok_or_else(|| status::not_found(Resource::Jobs, name))?;
            tokio::spawn(teardown(Arc::clone(shared), name.to_owned(), true));
            Ok(json_response(200, &marked))
        }
        "Background" => {
            shared.remove(Resource::Jobs, name);
            tokio::spawn(teardown(Arc::clone(shared), name.to_owned(), false));
            Ok(success(&status::deleted(Resource::Jobs, name, &uid)))
        }
        "Orphan" => {
            shared.remove(Resource::Jobs, name);
            let orphans: Vec<String> = owned_pods(shared, &uid);
            for pod in orphans {
                shared.modify(Resource::Pods, &pod, |pod| {
                    if let Some(meta) = pod["metadata"].as_object_mut() {
                        meta.remove("ownerReferences");
                    }
                });
            }
            Ok(success(&status::deleted(Resource::Jobs, name, &uid)))
        }
        other => Err(status::bad_request(format!(
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        ))),
    }
}

/// A `Success` status, checked against the subset.
fn success(status: &Value) -> Response<Body> {
    check_own("io.k8s.apimachinery.pkg.apis.meta.v1.Status", status);
    json_response(200, status)
}

/// The names of the pods owned by the Job with `uid`.
fn owned_pods(shared: &Shared, uid: &str) -> Vec<String> {
    shared
        .lock()
        .pods
        .values()
        .filter(|pod| {
            pod["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|owners| owners.iter().any(|o| o["uid"] == json!(uid)))
        })
        .filter_map(|pod| pod["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// The garbage collector's part of a Job's deletion: stop its controller (killing the pod's
/// process), delete its pods, then (foreground) the Job itself.
async fn teardown(shared: Arc<Shared>, name: String, foreground: bool) {
    let uid = shared
        .lock()
        .events
        .iter()
        .rev()
        .find(|e| e.resource == Resource::Jobs && e.object["metadata"]["name"] == json!(name))
        .and_then(|e| e.object["metadata"]["uid"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let controller = shared.lock().controllers.remove(&name);
    if let Some(controller) = controller {
        controller.stop.send_replace(Stop::Deleting);
        if let Some(task) = controller.task {
            let _ = task.await;
        }
    }
    for pod in owned_pods(&shared, &uid) {
        let unmarked = shared
            .lock()
            .pods
            .get(&pod)
            .is_some_and(|p| p["metadata"]["deletionTimestamp"].is_null());
        if unmarked {
            shared.modify(Resource::Pods, &pod, |p| {
                p["metadata"]["deletionTimestamp"] = json!(clock::now());
                p["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            });
        }
        shared.remove(Resource::Pods, &pod);
    }
    if foreground {
        // The garbage collector notices the dependents are gone on its next pass.
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        shared.modify(Resource::Jobs, &name, |job| {
            if let Some(finalizers) = job["metadata"]["finalizers"].as_array_mut() {
                finalizers.retain(|f| f != "foregroundDeletion");
            }
        });
        shared.remove(Resource::Jobs, &name);
    }
}
