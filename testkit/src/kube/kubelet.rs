//! The controllers and the kubelet, emulated: a created Job gets its pod (as the Job
//! controller makes it), the test's [`PodScript`] says what the pod does, and every step is
//! written as the real components write it (pod phase, conditions and container states; the
//! Job's counters, times and conditions), each a `MODIFIED` event with a fresh
//! resourceVersion. `activeDeadlineSeconds` is enforced for real.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;
use tokio::time::Instant;

use super::state::{Controller, Resource, Shared, Stop};
use super::{PodScript, clock, random_suffix, random_u64, random_uid};

/// The pause between two steps a real cluster takes some time over (scheduling, pulling).
const STEP: Duration = Duration::from_millis(30);
/// The node every scheduled pod lands on.
const NODE: &str = "standin-node";
/// What an unschedulable pod's condition says.
const UNSCHEDULABLE: &str = "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
/// What an eviction says.
const EVICTED: &str = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. Container task was using 3984Mi, request is 0, has larger consumption of memory. ";

/// How a pod's run ended, for the Job controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PodEnd {
    Succeeded,
    Failed,
    /// The Job's `activeDeadlineSeconds` passed; the pod was killed.
    Deadline,
    /// The Job is being deleted; the pod was killed.
    Stopped,
}

/// Starts the controller of the Job `name` (just created).
pub fn start(shared: Arc<Shared>, name: &str) {
    let (stop, stopped) = watch::channel(Stop::No);
    let task = tokio::spawn(run_job(Arc::clone(&shared), name.to_owned(), stopped));
    shared.lock().controllers.insert(
        name.to_owned(),
        Controller {
            stop,
            task: Some(task),
        },
    );
}

fn job_condition(kind: &str, reason: &str, message: &str) -> Value {
    let now = clock::now();
    json!({
        "type": kind, "status": "True", "reason": reason, "message": message,
        "lastProbeTime": now, "lastTransitionTime": now,
    })
}

fn push_condition(object: &mut Value, condition: Value) {
    let conditions = &mut object["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    if let Some(list) = conditions.as_array_mut() {
        list.push(condition);
    }
}

/// The Job controller for one Job: a pod at a time until one succeeds, the failures pass
/// `backoffLimit`, the deadline passes or the Job is deleted.
/// The Job controller for one Job: a pod at a time until one succeeds, the failures pass
/// `backoffLimit`, the deadline passes or the Job is deleted; then the TTL controller's part
/// (`ttlSecondsAfterFinished`: the finished Job and its pods deleted, in the background).
async fn run_job(shared: Arc<Shared>, name: String, mut stop: watch::Receiver<Stop>) {
    if !run_job_to_end(&shared, &name, &mut stop).await {
        return;
    }
    let ttl = shared
        .lock()
        .jobs
        .get(&name)
        .and_then(|job| job["spec"]["ttlSecondsAfterFinished"].as_u64());
    let Some(ttl) = ttl else {
        return;
    };
    let expiry = Some(Instant::now() + Duration::from_secs(ttl));
    if interrupted(expiry, &mut stop).await == PodEnd::Stopped {
        return;
    }
    let Some(job) = shared.remove(Resource::Jobs, &name) else {
        return;
    };
    let uid = job["metadata"]["uid"].clone();
    let owned: Vec<String> = shared
        .lock()
        .pods
        .values()
        .filter(|pod| pod["metadata"]["ownerReferences"][0]["uid"] == uid)
        .filter_map(|pod| pod["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    for pod in owned {
        mark_deleting(&shared, &pod);
        shared.remove(Resource::Pods, &pod);
    }
}

async fn run_job_to_end(
    shared: &Arc<Shared>,
    name: &str,
    stop: &mut watch::Receiver<Stop>,
) -> bool {
    tokio::time::sleep(STEP).await;
    let Some(job) = shared.lock().jobs.get(name).cloned() else {
        return false;
    };
    let deadline = job["spec"]["activeDeadlineSeconds"]
        .as_u64()
        .map(|s| Instant::now() + Duration::from_secs(s));
    let backoff_limit = job["spec"]["backoffLimit"].as_u64().unwrap_or(6);
    let start_time = clock::now();
    let mut failed = 0u64;
    loop {
        if *stop.borrow() != Stop::No {
            return false;
        }
        let pod = create_pod(shared, &job);
        let pod_name = pod["metadata"]["name"].as_str().unwrap_or("").to_owned();
        shared.modify(Resource::Jobs, name, |job| {
            let status = &mut job["status"];
            status["startTime"] = json!(start_time);
            status["active"] = json!(1);
            status["ready"] = json!(0);
            status["terminating"] = json!(0);
            status["uncountedTerminatedPods"] = json!({});
        });
        let script = shared
            .lock()
            .pod_script
            .clone()
            .map_or(PodScript::Hang, |choose| choose(&pod));
        let end = run_pod(shared, name, &pod_name, script, deadline, stop).await;
        match end {
            PodEnd::Succeeded => {
                let message = "Reached expected number of succeeded pods";
                shared.modify(Resource::Jobs, name, |job| {
                    job["status"]["active"] = json!(0);
                    job["status"]["ready"] = json!(0);
                    job["status"]["succeeded"] = json!(1);
                    push_condition(
                        job,
                        job_condition("SuccessCriteriaMet", "CompletionsReached", message),
                    );
                });
                tokio::time::sleep(STEP).await;
                shared.modify(Resource::Jobs, name, |job| {
                    job["status"]["completionTime"] = json!(clock::now());
                    push_condition(
                        job,
                        job_condition("Complete", "CompletionsReached", message),
                    );
                });
                return true;
            }
            PodEnd::Failed => {
                failed += 1;
                if failed > backoff_limit {
                    fail_job(
                        shared,
                        name,
                        failed,
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit",
                    );
                    return true;
                }
                shared.modify(Resource::Jobs, name, |job| {
                    job["status"]["active"] = json!(0);
                    job["status"]["ready"] = json!(0);
                    job["status"]["failed"] = json!(failed);
                });
            }
            PodEnd::Deadline => {
                shared.modify(Resource::Jobs, name, |job| {
                    push_condition(
                        job,
                        job_condition(
                            "FailureTarget",
                            "DeadlineExceeded",
                            "Job was active longer than specified deadline",
                        ),
                    );
                });
                shared.remove(Resource::Pods, &pod_name);
                shared.modify(Resource::Jobs, name, |job| {
                    job["status"]["active"] = json!(0);
                    job["status"]["ready"] = json!(0);
                    job["status"]["failed"] = json!(failed + 1);
                    push_condition(
                        job,
                        job_condition(
                            "Failed",
                            "DeadlineExceeded",
                            "Job was active longer than specified deadline",
                        ),
                    );
                });
                return true;
            }
            PodEnd::Stopped => {
                shared.modify(Resource::Jobs, name, |job| {
                    job["status"]["active"] = json!(0);
                    job["status"]["ready"] = json!(0);
                    job["status"]["terminating"] = json!(1);
                });
                return false;
            }
        }
    }
}

/// The Job failed for good: `FailureTarget`, then `Failed`, with `reason` and `message`.
fn fail_job(shared: &Shared, name: &str, failed: u64, reason: &str, message: &str) {
    shared.modify(Resource::Jobs, name, |job| {
        job["status"]["active"] = json!(0);
        job["status"]["ready"] = json!(0);
        job["status"]["failed"] = json!(failed);
        push_condition(job, job_condition("FailureTarget", reason, message));
    });
    shared.modify(Resource::Jobs, name, |job| {
        push_condition(job, job_condition("Failed", reason, message));
    });
}

/// The Job controller's pod: `<job>-<5 random>`, the template's labels and spec, owned by
/// the Job.
fn create_pod(shared: &Shared, job: &Value) -> Value {
    let job_name = job["metadata"]["name"].as_str().unwrap_or("");
    let template = &job["spec"]["template"];
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("{job_name}-{}", random_suffix(5)),
            "generateName": format!("{job_name}-"),
            "namespace": shared.namespace,
            "uid": random_uid(),
            "creationTimestamp": clock::now(),
            "labels": labels,
            "annotations": template["metadata"]["annotations"].clone(),
            "ownerReferences": [{
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": job_name,
                "uid": job["metadata"]["uid"],
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": template["spec"],
        "status": {"phase": "Pending", "qosClass": qos_class(&template["spec"])},
    });
    let mut pod = pod;
    // What admission adds to every pod: the service account, priority, default tolerations.
    let spec = &mut pod["spec"];
    if spec["serviceAccountName"].is_null() {
        spec["serviceAccountName"] = json!("default");
    }
    spec["serviceAccount"] = spec["serviceAccountName"].clone();
    for (key, value) in [
        ("priority", json!(0)),
        ("enableServiceLinks", json!(true)),
        ("preemptionPolicy", json!("PreemptLowerPriority")),
        (
            "tolerations",
            json!([
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ]),
        ),
    ] {
        if spec[key].is_null() {
            spec[key] = value;
        }
    }
    if pod["metadata"]["annotations"].is_null()
        && let Some(meta) = pod["metadata"].as_object_mut()
    {
        meta.remove("annotations");
    }
    shared.write(Resource::Pods, "ADDED", pod)
}

/// `Guaranteed` when every container's requests equal its limits (cpu and memory),
/// `BestEffort` when none has any, else `Burstable`.
fn qos_class(spec: &Value) -> &'static str {
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let empty = |v: &Value| v.as_object().is_none_or(|m| m.is_empty());
    if containers
        .iter()
        .all(|c| empty(&c["resources"]["requests"]) && empty(&c["resources"]["limits"]))
    {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let limits = &c["resources"]["limits"];
        ["cpu", "memory"].iter().all(|k| !limits[*k].is_null())
            && (c["resources"]["requests"].is_null()
                || ["cpu", "memory"]
                    .iter()
                    .all(|k| c["resources"]["requests"][*k] == limits[*k]))
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn pod_condition(kind: &str, status: bool, reason: Option<&str>, message: Option<&str>) -> Value {
    let mut condition = json!({
        "type": kind,
        "status": if status { "True" } else { "False" },
        "lastProbeTime": null,
        "lastTransitionTime": clock::now(),
    });
    if let Some(reason) = reason {
        condition["reason"] = json!(reason);
    }
    if let Some(message) = message {
        condition["message"] = json!(message);
    }
    condition
}

/// Sets (or replaces) the condition of `condition["type"]`.
fn set_pod_condition(pod: &mut Value, condition: Value) {
    let conditions = &mut pod["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    if let Some(list) = conditions.as_array_mut() {
        list.retain(|c| c["type"] != condition["type"]);
        list.push(condition);
    }
}

/// The pod's one container (the design's `task`).
fn container_of(pod: &Value) -> Value {
    pod["spec"]["containers"][0].clone()
}

fn container_status(container: &Value, state: Value, ready: bool, id: Option<&str>) -> Value {
    let image = container["image"].as_str().unwrap_or("");
    let mut status = json!({
        "name": container["name"],
        "image": image,
        "imageID": if id.is_some() { format!("{image}@sha256:{}", hex64()) } else { String::new() },
        "ready": ready,
        "restartCount": 0,
        "started": ready,
        "state": state,
        "lastState": {},
    });
    if let Some(id) = id {
        status["containerID"] = json!(id);
    }
    status
}

fn hex64() -> String {
    (0..4).map(|_| format!("{:016x}", random_u64())).collect()
}

/// Everything a pod's status says about a container that has stopped.
struct Terminated {
    exit_code: i64,
    reason: &'static str,
    message: Option<String>,
    started_at: String,
}

/// Writes the container's end: terminated state, phase, Ready/ContainersReady False.
fn write_terminated(
    shared: &Shared,
    pod_name: &str,
    container: &Value,
    id: &str,
    end: &Terminated,
) {
    let succeeded = end.exit_code == 0;
    shared.modify(Resource::Pods, pod_name, |pod| {
        let mut terminated = json!({
            "exitCode": end.exit_code,
            "reason": end.reason,
            "startedAt": end.started_at,
            "finishedAt": clock::now(),
            "containerID": id,
        });
        if let Some(message) = &end.message {
            terminated["message"] = json!(message);
        }
        let reason = if succeeded {
            "PodCompleted"
        } else {
            "PodFailed"
        };
        pod["status"]["phase"] = json!(if succeeded { "Succeeded" } else { "Failed" });
        pod["status"]["containerStatuses"] = json!([container_status(
            container,
            json!({"terminated": terminated}),
            false,
            Some(id)
        )]);
        set_pod_condition(
            pod,
            pod_condition("PodReadyToStartContainers", false, None, None),
        );
        set_pod_condition(pod, pod_condition("Ready", false, Some(reason), None));
        set_pod_condition(
            pod,
            pod_condition("ContainersReady", false, Some(reason), None),
        );
    });
}

/// Waits for the deadline or the stop signal.
async fn interrupted(deadline: Option<Instant>, stop: &mut watch::Receiver<Stop>) -> PodEnd {
    let until_deadline = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    let until_stop = async {
        // A closed channel means the stand-in is gone: stop.
        let _ = stop.wait_for(|s| *s != Stop::No).await;
    };
    tokio::select! {
        () = until_deadline => PodEnd::Deadline,
        () = until_stop => PodEnd::Stopped,
    }
}

/// The pod is being deleted (by the Job controller or the garbage collector).
fn mark_deleting(shared: &Shared, pod_name: &str) {
    shared.modify(Resource::Pods, pod_name, |pod| {
        pod["metadata"]["deletionTimestamp"] = json!(clock::now());
        pod["metadata"]["deletionGracePeriodSeconds"] = json!(30);
    });
}

/// Runs one pod through `script`; its status written at each step.
async fn run_pod(
    shared: &Arc<Shared>,
    job_name: &str,
    pod_name: &str,
    script: PodScript,
    deadline: Option<Instant>,
    stop: &mut watch::Receiver<Stop>,
) -> PodEnd {
    let Some(pod) = shared.lock().pods.get(pod_name).cloned() else {
        return PodEnd::Failed;
    };
    let container = container_of(&pod);
    let image = container["image"].as_str().unwrap_or("").to_owned();
    tokio::time::sleep(STEP).await;

    // The scheduler.
    if script == PodScript::Unschedulable {
        shared.modify(Resource::Pods, pod_name, |pod| {
            set_pod_condition(
                pod,
                pod_condition(
                    "PodScheduled",
                    false,
                    Some("Unschedulable"),
                    Some(UNSCHEDULABLE),
                ),
            );
        });
        let end = interrupted(deadline, stop).await;
        mark_deleting(shared, pod_name);
        return end;
    }
    shared.modify(Resource::Pods, pod_name, |pod| {
        pod["spec"]["nodeName"] = json!(NODE);
        set_pod_condition(pod, pod_condition("PodScheduled", true, None, None));
    });
    tokio::time::sleep(STEP).await;

    // The kubelet takes the pod.
    let not_ready = format!(
        "containers with unready status: [{}]",
        container["name"].as_str().unwrap_or("")
    );
    shared.modify(Resource::Pods, pod_name, |pod| {
        let status = &mut pod["status"];
        status["hostIP"] = json!("10.89.0.2");
        status["hostIPs"] = json!([{"ip": "10.89.0.2"}]);
        status["startTime"] = json!(clock::now());
        status["containerStatuses"] = json!([container_status(
            &container,
            json!({"waiting": {"reason": "ContainerCreating"}}),
            false,
            None
        )]);
        set_pod_condition(
            pod,
            pod_condition("PodReadyToStartContainers", false, None, None),
        );
        set_pod_condition(pod, pod_condition("Initialized", true, None, None));
        set_pod_condition(
            pod,
            pod_condition("Ready", false, Some("ContainersNotReady"), Some(&not_ready)),
        );
        set_pod_condition(
            pod,
            pod_condition(
                "ContainersReady",
                false,
                Some("ContainersNotReady"),
                Some(&not_ready),
            ),
        );
    });
    tokio::time::sleep(STEP).await;

    let waiting = |reason: &str, message: &str| {
        shared.modify(Resource::Pods, pod_name, |pod| {
            pod["status"]["containerStatuses"] = json!([container_status(
                &container,
                json!({"waiting": {"reason": reason, "message": message}}),
                false,
                None
            )]);
            set_pod_condition(
                pod,
                pod_condition("PodReadyToStartContainers", true, None, None),
            );
        });
    };
    let running = |id: &str| {
        let started_at = clock::now();
        shared.modify(Resource::Pods, pod_name, |pod| {
            pod["status"]["phase"] = json!("Running");
            pod["status"]["podIP"] = json!("10.244.0.17");
            pod["status"]["podIPs"] = json!([{"ip": "10.244.0.17"}]);
            pod["status"]["containerStatuses"] = json!([container_status(
                &container,
                json!({"running": {"startedAt": started_at}}),
                true,
                Some(id)
            )]);
            set_pod_condition(
                pod,
                pod_condition("PodReadyToStartContainers", true, None, None),
            );
            set_pod_condition(pod, pod_condition("Ready", true, None, None));
            set_pod_condition(pod, pod_condition("ContainersReady", true, None, None));
        });
        shared.modify(Resource::Jobs, job_name, |job| {
            job["status"]["ready"] = json!(1);
        });
        started_at
    };
    let id = format!("containerd://{}", hex64());

    match script {
        PodScript::Unschedulable => unreachable!("handled at scheduling"),
        PodScript::ImagePullBackOff => {
            waiting(
                "ErrImagePull",
                &format!(
                    "rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
                ),
            );
            tokio::time::sleep(STEP).await;
            waiting(
                "ImagePullBackOff",
                &format!("Back-off pulling image \"{image}\""),
            );
            let end = interrupted(deadline, stop).await;
            mark_deleting(shared, pod_name);
            shared.log_finished(pod_name);
            end
        }
        PodScript::Hang => {
            let started_at = running(&id);
            let end = interrupted(deadline, stop).await;
            mark_deleting(shared, pod_name);
            write_terminated(
                shared,
                pod_name,
                &container,
                &id,
                &Terminated {
                    exit_code: 137,
                    reason: "Error",
                    message: None,
                    started_at,
                },
            );
            shared.log_finished(pod_name);
            end
        }
        PodScript::OomKilled => {
            let started_at = running(&id);
            tokio::time::sleep(STEP).await;
            write_terminated(
                shared,
                pod_name,
                &container,
                &id,
                &Terminated {
                    exit_code: 137,
                    reason: "OOMKilled",
                    message: None,
                    started_at,
                },
            );
            shared.log_finished(pod_name);
            PodEnd::Failed
        }
        PodScript::Evicted => {
            let started_at = running(&id);
            tokio::time::sleep(STEP).await;
            write_terminated(
                shared,
                pod_name,
                &container,
                &id,
                &Terminated {
                    exit_code: 137,
                    reason: "Error",
                    message: None,
                    started_at,
                },
            );
            shared.modify(Resource::Pods, pod_name, |pod| {
                pod["status"]["reason"] = json!("Evicted");
                pod["status"]["message"] = json!(EVICTED);
                set_pod_condition(
                    pod,
                    pod_condition(
                        "DisruptionTarget",
                        true,
                        Some("TerminationByKubelet"),
                        Some(EVICTED),
                    ),
                );
            });
            shared.log_finished(pod_name);
            PodEnd::Failed
        }
        PodScript::NodeLost => {
            running(&id);
            tokio::time::sleep(STEP).await;
            shared.modify(Resource::Pods, pod_name, |pod| {
                pod["status"]["phase"] = json!("Failed");
                set_pod_condition(
                    pod,
                    pod_condition(
                        "DisruptionTarget",
                        true,
                        Some("DeletionByPodGC"),
                        Some("PodGC: node no longer exists"),
                    ),
                );
                pod["status"]["containerStatuses"] = json!([container_status(
                    &container,
                    json!({"terminated": {
                        "exitCode": 137,
                        "reason": "ContainerStatusUnknown",
                        "message": "The container could not be located when the pod was terminated",
                        "startedAt": null,
                        "finishedAt": null,
                    }}),
                    false,
                    None
                )]);
                set_pod_condition(pod, pod_condition("Ready", false, Some("PodFailed"), None));
                set_pod_condition(
                    pod,
                    pod_condition("ContainersReady", false, Some("PodFailed"), None),
                );
            });
            mark_deleting(shared, pod_name);
            shared.remove(Resource::Pods, pod_name);
            shared.log_finished(pod_name);
            PodEnd::Failed
        }
        PodScript::Run { program, args, env } => {
            let secrets = shared.lock().secrets.clone();
            let prepared = match prepare(&pod, &container, &secrets, &program, &args, &env) {
                Ok(prepared) => prepared,
                Err(Unready::Config(message)) => {
                    waiting("CreateContainerConfigError", &message);
                    let end = interrupted(deadline, stop).await;
                    mark_deleting(shared, pod_name);
                    shared.log_finished(pod_name);
                    return end;
                }
                Err(Unready::Mount) => {
                    // A Secret volume that cannot be mounted keeps the pod creating.
                    let end = interrupted(deadline, stop).await;
                    mark_deleting(shared, pod_name);
                    shared.log_finished(pod_name);
                    return end;
                }
            };
            run_process(
                shared, pod_name, &container, &id, prepared, deadline, stop, running,
            )
            .await
        }
    }
}

/// Why a container cannot start.
enum Unready {
    /// `CreateContainerConfigError` with the kubelet's message.
    Config(String),
    /// A volume cannot be mounted (the pod stays `ContainerCreating`).
    Mount,
}

/// A container ready to run: its command line, environment, directories.
struct Prepared {
    argv: Vec<String>,
    program: PathBuf,
    env: Vec<(String, String)>,
    working_dir: PathBuf,
    termination_log: PathBuf,
    fallback_to_logs: bool,
    /// `terminationGracePeriodSeconds`: how long SIGTERM has before SIGKILL.
    grace: Duration,
    /// The volumes' and scratch dirs, removed when the pod ends.
    _dirs: Vec<TempDir>,
}

fn prepare(
    pod: &Value,
    container: &Value,
    secrets: &BTreeMap<String, BTreeMap<String, String>>,
    program: &Path,
    args: &[String],
    image_env: &BTreeMap<String, String>,
) -> Result<Prepared, Unready> {
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
    let mut dirs = Vec::new();
    let scratch = TempDir::with_prefix("kube-standin-pod-").map_err(|_| Unready::Mount)?;
    let mut volumes: BTreeMap<String, PathBuf> = BTreeMap::new();
    for volume in pod["spec"]["volumes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let name = volume["name"].as_str().unwrap_or("").to_owned();
        let dir = scratch.path().join("volumes").join(&name);
        std::fs::create_dir_all(&dir).map_err(|_| Unready::Mount)?;
        if let Some(secret) = volume["secret"].as_object() {
            let secret_name = secret
                .get("secretName")
                .and_then(Value::as_str)
                .unwrap_or("");
            let optional = secret
                .get("optional")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match secrets.get(secret_name) {
                Some(data) => {
                    for (key, value) in data {
                        std::fs::write(dir.join(key), value).map_err(|_| Unready::Mount)?;
                    }
                }
                None if optional => {}
                None => return Err(Unready::Mount),
            }
        }
        volumes.insert(name, dir);
    }
    // Mount paths, longest first so the most specific wins.
    let mut mounts: Vec<(String, PathBuf)> = container["volumeMounts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|m| {
            let path = m["mountPath"].as_str()?.trim_end_matches('/').to_owned();
            let dir = volumes.get(m["name"].as_str()?)?.clone();
            Some((path, dir))
        })
        .collect();
    mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let map_path = |value: &str| -> Option<PathBuf> {
        mounts.iter().find_map(|(path, dir)| {
            if value == path || value == format!("{path}/") {
                Some(dir.clone())
            } else {
                value
                    .strip_prefix(&format!("{path}/"))
                    .map(|rest| dir.join(rest))
            }
        })
    };
    let mut env: Vec<(String, String)> = Vec::new();
    if !image_env.contains_key("PATH") {
        env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    }
    env.extend(image_env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.push(("HOSTNAME".into(), pod_name.to_owned()));
    for source in container["envFrom"].as_array().cloned().unwrap_or_default() {
        let prefix = source["prefix"].as_str().unwrap_or("");
        if let Some(secret_ref) = source["secretRef"].as_object() {
            let name = secret_ref.get("name").and_then(Value::as_str).unwrap_or("");
            let optional = secret_ref
                .get("optional")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match secrets.get(name) {
                Some(data) => env.extend(
                    data.iter()
                        .map(|(k, v)| (format!("{prefix}{k}"), v.clone())),
                ),
                None if optional => {}
                None => return Err(Unready::Config(format!("secret \"{name}\" not found"))),
            }
        }
    }
    for var in container["env"].as_array().cloned().unwrap_or_default() {
        let name = var["name"].as_str().unwrap_or("").to_owned();
        let value = if let Some(value) = var["value"].as_str() {
            value.to_owned()
        } else if let Some(selector) = var["valueFrom"]["secretKeyRef"].as_object() {
            let secret = selector.get("name").and_then(Value::as_str).unwrap_or("");
            let key = selector.get("key").and_then(Value::as_str).unwrap_or("");
            let optional = selector
                .get("optional")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match secrets.get(secret).map(|data| data.get(key)) {
                Some(Some(value)) => value.clone(),
                _ if optional => continue,
                Some(None) => {
                    return Err(Unready::Config(format!(
                        "couldn't find key {key} in Secret {namespace}/{secret}"
                    )));
                }
                None => return Err(Unready::Config(format!("secret \"{secret}\" not found"))),
            }
        } else if let Some(path) = var["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            match path {
                "metadata.name" => pod_name.to_owned(),
                "metadata.namespace" => namespace.to_owned(),
                "spec.nodeName" => NODE.to_owned(),
                _ => String::new(),
            }
        } else {
            String::new()
        };
        let value = map_path(&value).map_or(value, |p| p.to_string_lossy().into_owned());
        env.push((name, value));
    }
    let termination_log = scratch.path().join("termination-log");
    std::fs::write(&termination_log, b"").map_err(|_| Unready::Mount)?;
    env.push((
        "BUTLER_TERMINATION_LOG".into(),
        termination_log.to_string_lossy().into_owned(),
    ));
    let working_dir = match container["workingDir"].as_str() {
        Some(dir) => match map_path(dir) {
            Some(mapped) => mapped,
            None => {
                // The image's own directory: an empty one stands for it.
                let own = scratch.path().join("workdir");
                std::fs::create_dir_all(&own).map_err(|_| Unready::Mount)?;
                own
            }
        },
        None => scratch.path().to_owned(),
    };
    let command: Vec<String> = container["command"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|w| w.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let container_args: Vec<String> = container["args"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|w| w.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut argv: Vec<String> = args.to_vec();
    argv.extend(command.iter().skip(1).cloned());
    argv.extend(container_args);
    let fallback_to_logs =
        container["terminationMessagePolicy"].as_str() == Some("FallbackToLogsOnError");
    dirs.push(scratch);
    Ok(Prepared {
        argv,
        program: program.to_owned(),
        env,
        working_dir,
        termination_log,
        fallback_to_logs,
        grace: Duration::from_secs(
            pod["spec"]["terminationGracePeriodSeconds"]
                .as_u64()
                .unwrap_or(30),
        ),
        _dirs: dirs,
    })
}

/// Sends `signal` to every process of the group `group` (the container's processes).
async fn signal_group(group: u32, signal: &str) {
    let _ = tokio::process::Command::new("kill")
        .args(["-s", signal, "--", &format!("-{group}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
}

/// Kills what is left of the containers' process groups (the stand-in is going away).
pub fn kill_groups(groups: impl IntoIterator<Item = u32>) {
    for group in groups {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{group}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Copies one output pipe into the pod's log, line by line.
async fn pump(shared: Arc<Shared>, pod: String, pipe: impl AsyncRead + Unpin) {
    let mut reader = BufReader::new(pipe);
    loop {
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => shared.log_line(&pod, line),
        }
    }
}

/// What the kubelet reads back as the termination message.
fn termination_message(
    shared: &Shared,
    pod_name: &str,
    prepared: &Prepared,
    exit_code: i64,
) -> Option<String> {
    let mut written = std::fs::read(&prepared.termination_log).unwrap_or_default();
    written.truncate(4096);
    if !written.is_empty() {
        return Some(String::from_utf8_lossy(&written).into_owned());
    }
    if exit_code == 0 || !prepared.fallback_to_logs {
        return None;
    }
    let state = shared.lock();
    let lines = &state.logs.get(pod_name)?.lines;
    let tail: Vec<u8> = lines[lines.len().saturating_sub(80)..]
        .iter()
        .flat_map(|(_, line)| line.iter().copied())
        .collect();
    let tail = &tail[tail.len().saturating_sub(2048)..];
    (!tail.is_empty()).then(|| String::from_utf8_lossy(tail).into_owned())
}

#[allow(
    clippy::too_many_arguments,
    reason = "one pod's whole run, written where it is used"
)]
async fn run_process(
    shared: &Arc<Shared>,
    pod_name: &str,
    container: &Value,
    id: &str,
    prepared: Prepared,
    deadline: Option<Instant>,
    stop: &mut watch::Receiver<Stop>,
    running: impl Fn(&str) -> String,
) -> PodEnd {
    let mut command = tokio::process::Command::new(&prepared.program);
    command
        .args(&prepared.argv)
        .env_clear()
        .envs(prepared.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&prepared.working_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The container's processes are one group, killed together as a container is.
        .process_group(0)
        .kill_on_drop(true);
    let started_at = clock::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            let message = format!(
                "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"{}\": {error}: unknown",
                prepared.program.display()
            );
            write_terminated(
                shared,
                pod_name,
                container,
                id,
                &Terminated {
                    exit_code: 128,
                    reason: "StartError",
                    message: Some(message),
                    started_at,
                },
            );
            shared.log_finished(pod_name);
            return PodEnd::Failed;
        }
    };
    let stdout = child
        .stdout
        .take()
        .map(|out| tokio::spawn(pump(Arc::clone(shared), pod_name.to_owned(), out)));
    let stderr = child
        .stderr
        .take()
        .map(|err| tokio::spawn(pump(Arc::clone(shared), pod_name.to_owned(), err)));
    let group = child.id();
    if let Some(group) = group {
        shared.lock().process_groups.insert(group);
    }
    let started_at = running(id);
    let (status, end) = tokio::select! {
        status = child.wait() => (status.ok(), None),
        end = interrupted(deadline, stop) => {
            // As the kubelet stops a container: SIGTERM, the grace period, then SIGKILL.
            mark_deleting(shared, pod_name);
            let grace = prepared.grace;
            if let Some(group) = group {
                signal_group(group, "TERM").await;
            }
            let status = match tokio::time::timeout(grace, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    let _ = child.start_kill();
                    child.wait().await.ok()
                }
            };
            (status, Some(end))
        }
    };
    // What the main process leaves behind goes with the container.
    if let Some(group) = group {
        signal_group(group, "KILL").await;
        shared.lock().process_groups.remove(&group);
    }
    for pump in [stdout, stderr].into_iter().flatten() {
        let _ = pump.await;
    }
    let exit_code = status.map_or(137, |status| {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .map_or_else(|| 128 + i64::from(status.signal().unwrap_or(9)), i64::from)
    });
    let message = termination_message(shared, pod_name, &prepared, exit_code);
    write_terminated(
        shared,
        pod_name,
        container,
        id,
        &Terminated {
            exit_code,
            reason: if exit_code == 0 { "Completed" } else { "Error" },
            message,
            started_at,
        },
    );
    shared.log_finished(pod_name);
    match end {
        Some(end) => end,
        None if exit_code == 0 => PodEnd::Succeeded,
        None => PodEnd::Failed,
    }
}
