//! `Status` objects as the API server answers errors with them: the real reasons, codes and
//! message wording.

use serde_json::{Value, json};

use super::state::Resource;

/// An error answer: the HTTP code and its `Status` body.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status code (also `status.code`).
    pub code: u16,
    /// The `Status` object.
    pub status: Value,
}

fn failure(code: u16, reason: &str, message: String, details: Option<Value>) -> ApiError {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if let Some(details) = details {
        status["details"] = details;
    }
    ApiError { code, status }
}

fn details(resource: Resource, name: Option<&str>) -> Value {
    let mut details = json!({"kind": resource.plural()});
    if let Some(name) = name {
        details["name"] = json!(name);
    }
    if !resource.group().is_empty() {
        details["group"] = json!(resource.group());
    }
    details
}

/// 404 `NotFound`: `jobs.batch "x" not found`.
pub fn not_found(resource: Resource, name: &str) -> ApiError {
    failure(
        404,
        "NotFound",
        format!("{} \"{name}\" not found", resource.qualified()),
        Some(details(resource, Some(name))),
    )
}

/// 409 `AlreadyExists`: `jobs.batch "x" already exists`.
pub fn already_exists(resource: Resource, name: &str) -> ApiError {
    failure(
        409,
        "AlreadyExists",
        format!("{} \"{name}\" already exists", resource.qualified()),
        Some(details(resource, Some(name))),
    )
}

/// 403 `Forbidden` as RBAC words it: `jobs.batch is forbidden: User "…" cannot create
/// resource "jobs" in API group "batch" in the namespace "butler"`. `subresource` is `log`
/// for `pods/log`.
pub fn forbidden(
    user: &str,
    verb: &str,
    resource: Resource,
    subresource: Option<&str>,
    name: Option<&str>,
    namespace: &str,
) -> ApiError {
    let subject = match name {
        Some(name) => format!("{} \"{name}\"", resource.qualified()),
        None => resource.qualified().to_owned(),
    };
    let full = match subresource {
        Some(sub) => format!("{}/{sub}", resource.plural()),
        None => resource.plural().to_owned(),
    };
    failure(
        403,
        "Forbidden",
        format!(
            "{subject} is forbidden: User \"{user}\" cannot {verb} resource \"{full}\" in API group \"{}\" in the namespace \"{namespace}\"",
            resource.group()
        ),
        Some(details(resource, name)),
    )
}

/// 400 `BadRequest` with `message`.
pub fn bad_request(message: String) -> ApiError {
    failure(400, "BadRequest", message, None)
}

/// 410 `Expired`, as a watch's ERROR event carries it: `too old resource version: 5 (9)`.
pub fn expired(requested: &str, oldest: u64) -> ApiError {
    failure(
        410,
        "Expired",
        format!("too old resource version: {requested} ({oldest})"),
        None,
    )
}

/// 404 for a path the stand-in does not serve (the real server's answer to an unknown route).
pub fn no_route() -> ApiError {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource".to_owned(),
        Some(json!({})),
    )
}

/// 405 for a verb the stand-in does not serve on a known path.
pub fn method_not_allowed(method: &str) -> ApiError {
    failure(
        405,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource ({method})"),
        Some(json!({})),
    )
}

/// The `Success` status a delete answers with when the object is gone at once.
pub fn deleted(resource: Resource, name: &str, uid: &str) -> Value {
    let mut details = details(resource, Some(name));
    details["uid"] = json!(uid);
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}
