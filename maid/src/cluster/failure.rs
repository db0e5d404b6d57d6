//! Every way a task's Job can fail to hand back a result, with the cluster's own reason.

use serde::Serialize;

/// Why a task's Job ended without a result (the cluster's words in `message`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClusterFailure {
    /// No configuration, or the API server cannot be reached.
    #[error("the Kubernetes cluster cannot be reached: {message}")]
    Unreachable { message: String },
    /// Butler's identity lacks a permission (RBAC).
    #[error(
        "the cluster refused `{verb}` on `{resource}` in namespace `{namespace}`: grant it to Butler's identity ({message})"
    )]
    Forbidden {
        verb: String,
        resource: String,
        namespace: String,
        message: String,
    },
    /// The task's image could not be pulled.
    #[error("the task's image cannot be pulled ({reason}): {message}")]
    ImageNotPullable { reason: String, message: String },
    /// No node can take the task's pod.
    #[error("the task's pod cannot be scheduled: {message}")]
    Unschedulable { message: String },
    /// The pod's container could not be created (a missing Secret, …).
    #[error("the task's pod could not start ({reason}): {message}")]
    NotStarted { reason: String, message: String },
    /// The container went over its memory limit.
    #[error("the task's container was killed for using more memory than its limit (OOMKilled)")]
    OomKilled,
    /// The kubelet evicted the pod.
    #[error("the task's pod was evicted: {message}")]
    Evicted { message: String },
    /// The Job ran past `activeDeadlineSeconds`.
    #[error("the task's Job ran past its deadline of {seconds} s: {message}")]
    DeadlineExceeded { seconds: u64, message: String },
    /// The pod's node went away.
    #[error("the task's node was lost ({reason}): {message}")]
    NodeLost { reason: String, message: String },
    /// Someone else deleted the Job while it ran.
    #[error("the task's Job was deleted by someone else before it ended")]
    JobDeleted,
    /// The container ended without a result line (neither in its termination message nor
    /// in its log).
    #[error("the task's pod ended ({reason}, exit code {exit_code}) without handing back a result")]
    NoResult { reason: String, exit_code: i32 },
    /// The API server answered an error the runner has no name for.
    #[error("the Kubernetes API answered {code} {reason} on {action}: {message}")]
    Api {
        action: String,
        code: u16,
        reason: String,
        message: String,
    },
}

impl ClusterFailure {
    /// Whether the pod ended (the Job's controller fails the Job; it is kept for its TTL, its
    /// log readable with `kubectl logs`) rather than a Job that may still be waiting or running
    /// (which Butler deletes when it gives up on it).
    pub(crate) fn pod_ended(&self) -> bool {
        matches!(
            self,
            ClusterFailure::OomKilled
                | ClusterFailure::Evicted { .. }
                | ClusterFailure::DeadlineExceeded { .. }
                | ClusterFailure::NodeLost { .. }
                | ClusterFailure::NoResult { .. }
                | ClusterFailure::JobDeleted
        )
    }

    /// The failure a refused API call means: RBAC refusals name the missing permission.
    pub(crate) fn of_api(error: kube::Error, verb: &str, resource: &str, namespace: &str) -> Self {
        match error {
            kube::Error::Api(status) if status.code == 403 => ClusterFailure::Forbidden {
                verb: verb.to_owned(),
                resource: resource.to_owned(),
                namespace: namespace.to_owned(),
                message: status.message.clone(),
            },
            kube::Error::Api(status) if status.code == 401 => ClusterFailure::Unreachable {
                message: format!("{verb} {resource}: 401 Unauthorized: {}", status.message),
            },
            kube::Error::Api(status) => ClusterFailure::Api {
                action: format!("{verb} {resource}"),
                code: status.code,
                reason: status.reason.clone(),
                message: status.message.clone(),
            },
            other => ClusterFailure::Unreachable {
                message: format!("{verb} {resource}: {other}"),
            },
        }
    }

    /// The failure of a watch that kube-runtime's watcher does not get past by itself (it
    /// re-lists after `410 Gone` and resumes cut streams on its own).
    pub(crate) fn of_watch(
        error: &kube::runtime::watcher::Error,
        resource: &str,
        ns: &str,
    ) -> Option<Self> {
        use kube::runtime::watcher::Error as W;
        let (verb, status) = match error {
            W::InitialListFailed(kube::Error::Api(s)) => ("list", s),
            W::WatchStartFailed(kube::Error::Api(s)) => ("watch", s),
            W::WatchError(s) => ("watch", s),
            W::WatchFailed(kube::Error::Api(s)) => ("watch", s),
            _ => return None,
        };
        (status.code == 403).then(|| ClusterFailure::Forbidden {
            verb: verb.to_owned(),
            resource: resource.to_owned(),
            namespace: ns.to_owned(),
            message: status.message.clone(),
        })
    }
}
