//! What a task's Job and pod say about where the task is: started, still pending and why, or
//! ended and how. Pure reading of the objects the watches deliver.

use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use super::failure::ClusterFailure;
use super::job::CONTAINER;

/// The Job's own verdict, once it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobVerdict {
    Complete,
    /// `Failed` with the controller's reason and message.
    Failed {
        reason: String,
        message: String,
    },
}

/// The Job's verdict from its conditions.
pub(crate) fn job_verdict(job: &Job) -> Option<JobVerdict> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .filter(|c| c.status == "True")
        .find_map(|c| match c.type_.as_str() {
            "Complete" => Some(JobVerdict::Complete),
            "Failed" => Some(JobVerdict::Failed {
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
            }),
            _ => None,
        })
}

/// How the task's container ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Terminated {
    pub exit_code: i32,
    pub reason: String,
    /// The termination message (the file the pod wrote, or the log's tail).
    pub message: Option<String>,
}

/// Where the pod is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PodState {
    /// Not started: why, as the scheduler or the kubelet said it (`None`: nothing said yet).
    Waiting(Option<(String, String)>),
    Running,
    Ended(Terminated),
    /// Ended by the node or the kubelet: the failure it means.
    Lost(ClusterFailure),
}

/// The pod's state from its status.
pub(crate) fn pod_state(pod: &Pod) -> PodState {
    let Some(status) = pod.status.as_ref() else {
        return PodState::Waiting(None);
    };
    if status.reason.as_deref() == Some("Evicted") {
        return PodState::Lost(ClusterFailure::Evicted {
            message: status.message.clone().unwrap_or_default(),
        });
    }
    let conditions = status.conditions.as_deref().unwrap_or_default();
    if let Some(c) = conditions
        .iter()
        .find(|c| c.type_ == "DisruptionTarget" && c.status == "True")
        && status.phase.as_deref() != Some("Succeeded")
    {
        let reason = c.reason.clone().unwrap_or_default();
        let message = c.message.clone().unwrap_or_default();
        // The node went away (the taint manager or the pod GC deleted the pod); anything else
        // (preemption, a drain's eviction, the kubelet's own) ended a pod on a live node.
        return PodState::Lost(match reason.as_str() {
            "DeletionByTaintManager" | "DeletionByPodGC" => {
                ClusterFailure::NodeLost { reason, message }
            }
            _ => ClusterFailure::Evicted {
                message: format!("{reason}: {message}"),
            },
        });
    }
    let container = status
        .container_statuses
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.name == CONTAINER);
    if let Some(state) = container.and_then(|c| c.state.as_ref()) {
        if let Some(t) = &state.terminated {
            if t.reason.as_deref() == Some("OOMKilled") {
                return PodState::Lost(ClusterFailure::OomKilled);
            }
            return PodState::Ended(Terminated {
                exit_code: t.exit_code,
                reason: t.reason.clone().unwrap_or_default(),
                message: t.message.clone().filter(|m| !m.is_empty()),
            });
        }
        if state.running.is_some() {
            return PodState::Running;
        }
        if let Some(w) = &state.waiting
            && let Some(reason) = &w.reason
        {
            return PodState::Waiting(Some((
                reason.clone(),
                w.message.clone().unwrap_or_default(),
            )));
        }
    }
    if let Some(c) = conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False")
    {
        return PodState::Waiting(Some((
            c.reason
                .clone()
                .unwrap_or_else(|| "Unschedulable".to_owned()),
            c.message.clone().unwrap_or_default(),
        )));
    }
    match status.phase.as_deref() {
        // Ended without a container status (deleted before it started).
        Some("Failed") => PodState::Lost(ClusterFailure::NotStarted {
            reason: status.reason.clone().unwrap_or_else(|| "Failed".to_owned()),
            message: status.message.clone().unwrap_or_default(),
        }),
        _ => PodState::Waiting(None),
    }
}

/// The failure a pod that never started means, once it waited too long.
pub(crate) fn not_started(why: Option<&(String, String)>) -> ClusterFailure {
    let Some((reason, message)) = why else {
        return ClusterFailure::NotStarted {
            reason: "NoPod".to_owned(),
            message: "no pod of the Job started (see the namespace's events)".to_owned(),
        };
    };
    let (reason, message) = (reason.clone(), message.clone());
    match reason.as_str() {
        "ErrImagePull" | "ImagePullBackOff" | "InvalidImageName" | "ErrImageNeverPull" => {
            ClusterFailure::ImageNotPullable { reason, message }
        }
        "Unschedulable" => ClusterFailure::Unschedulable { message },
        _ => ClusterFailure::NotStarted { reason, message },
    }
}

/// A waiting reason no amount of waiting fixes (a malformed image name, a pull the pod's policy
/// forbids, a Secret or key the pod names that does not exist): the task fails at once.
pub(crate) fn hopeless(reason: &str) -> bool {
    matches!(
        reason,
        "InvalidImageName" | "ErrImageNeverPull" | "CreateContainerConfigError"
    )
}

/// How long a pod may stay unstarted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingClock {
    pub since: Instant,
    pub limit: Duration,
}

impl PendingClock {
    pub(crate) fn expired(&self, now: Instant) -> bool {
        now.duration_since(self.since) >= self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "status": status})).expect("pod")
    }

    #[test]
    fn each_way_a_pod_ends_is_read() {
        let ended = pod(
            json!({"phase": "Succeeded", "containerStatuses": [{"name": "task",
            "image": "i", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": "m"}}}]}),
        );
        assert_eq!(
            pod_state(&ended),
            PodState::Ended(Terminated {
                exit_code: 0,
                reason: "Completed".into(),
                message: Some("m".into())
            })
        );
        let oom = pod(
            json!({"phase": "Failed", "containerStatuses": [{"name": "task",
            "image": "i", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}),
        );
        assert_eq!(pod_state(&oom), PodState::Lost(ClusterFailure::OomKilled));
        let evicted = pod(json!({"phase": "Failed", "reason": "Evicted", "message": "low"}));
        assert!(matches!(
            pod_state(&evicted),
            PodState::Lost(ClusterFailure::Evicted { .. })
        ));
        let lost = pod(
            json!({"phase": "Failed", "conditions": [{"type": "DisruptionTarget",
            "status": "True", "reason": "DeletionByPodGC", "message": "PodGC: node no longer exists"}]}),
        );
        assert!(matches!(
            pod_state(&lost),
            PodState::Lost(ClusterFailure::NodeLost { .. })
        ));
        let pulling = pod(
            json!({"phase": "Pending", "containerStatuses": [{"name": "task",
            "image": "i", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off"}}}]}),
        );
        let PodState::Waiting(why) = pod_state(&pulling) else {
            panic!("waiting")
        };
        assert!(matches!(
            not_started(why.as_ref()),
            ClusterFailure::ImageNotPullable { .. }
        ));
        let unschedulable = pod(
            json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}]}),
        );
        let PodState::Waiting(why) = pod_state(&unschedulable) else {
            panic!("waiting")
        };
        assert!(matches!(
            not_started(why.as_ref()),
            ClusterFailure::Unschedulable { .. }
        ));
    }
}
