//! The Job a task runs as: named and labelled for its project and task, its pod hardened
//! (non-root, read-only root filesystem with `emptyDir` for work, home and temp, no privilege
//! escalation, no capabilities, `RuntimeDefault` seccomp, no service-account token), retries
//! left to the Maid (`backoffLimit: 0`).

use butler_worker::config::RunnerConfig;
use k8s_openapi::api::batch::v1::Job;
use serde_json::{Value, json};

/// The pod's work directory (its `workingDir`), home and temp directory, each an `emptyDir`.
pub(crate) const WORK_DIR: &str = "/work";
pub(crate) const HOME_DIR: &str = "/home/butler";
pub(crate) const TMP_DIR: &str = "/tmp";
/// Where the push Secret is mounted.
pub(crate) const PUSH_CREDENTIALS_DIR: &str = "/var/run/butler/push";
/// The task's container.
pub(crate) const CONTAINER: &str = "task";
/// A finished Job is kept this long unless `[runner] ttl_seconds_after_finished` says.
pub(crate) const DEFAULT_TTL_S: u32 = 3600;
/// Time beyond the attempts' own limits for fetching, verifying and pushing.
pub(crate) const DEADLINE_MARGIN_S: u64 = 600;

/// What one task's Job needs besides the runner's settings.
#[derive(Debug, Clone)]
pub(crate) struct JobRequest {
    /// The Job's name (see [`job_name`]).
    pub name: String,
    /// `app.kubernetes.io/managed-by`, `butler.dev/project`, `butler.dev/task`, `butler.dev/clone`.
    pub labels: Vec<(String, String)>,
    /// The task's own variables (`BUTLER_TASK_*`).
    pub env: Vec<(String, String)>,
    /// `activeDeadlineSeconds`.
    pub deadline_s: u64,
}

/// `butler-<clone mark>-<task id>`: unique per clone and task, a DNS-1123 label.
pub(crate) fn job_name(clone_mark: &str, task_id: &str) -> String {
    label_value(&format!("butler-{clone_mark}-{task_id}"))
}

/// `s` as a label value: lower-case letters, digits and `-`, at most 63 bytes, starting and
/// ending with an alphanumeric.
pub(crate) fn label_value(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-') => c,
            _ => '-',
        })
        .collect();
    let trimmed: String = mapped.trim_matches('-').chars().take(63).collect();
    let trimmed = trimmed.trim_end_matches('-').to_owned();
    if trimmed.is_empty() {
        "x".to_owned()
    } else {
        trimmed
    }
}

/// The Job object for `request` under `config`, in `namespace`.
pub(crate) fn job_object(request: &JobRequest, config: &RunnerConfig, namespace: &str) -> Job {
    let labels: serde_json::Map<String, Value> = request
        .labels
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let mut env = vec![
        json!({"name": "HOME", "value": HOME_DIR}),
        json!({"name": "TMPDIR", "value": TMP_DIR}),
    ];
    // Confined where the node's kernel allows it, unless the user's `[runner] env` says.
    if !config.env.contains_key("BUTLER_SANDBOX") {
        env.push(json!({"name": "BUTLER_SANDBOX", "value": "auto"}));
    }
    env.extend(
        request
            .env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value})),
    );
    let mut mounts = vec![
        json!({"name": "work", "mountPath": WORK_DIR}),
        json!({"name": "home", "mountPath": HOME_DIR}),
        json!({"name": "tmp", "mountPath": TMP_DIR}),
    ];
    let mut volumes = vec![
        json!({"name": "work", "emptyDir": {}}),
        json!({"name": "home", "emptyDir": {}}),
        json!({"name": "tmp", "emptyDir": {}}),
    ];
    if let Some(secret) = &config.push_secret {
        env.push(json!({"name": "BUTLER_PUSH_CREDENTIALS", "value": PUSH_CREDENTIALS_DIR}));
        mounts.push(json!({"name": "push", "mountPath": PUSH_CREDENTIALS_DIR, "readOnly": true}));
        volumes
            .push(json!({"name": "push", "secret": {"secretName": secret, "defaultMode": 0o400}}));
    }
    env.extend(
        config
            .env
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value})),
    );
    let mut container = json!({
        "name": CONTAINER,
        "image": config.image.clone().unwrap_or_default(),
        "imagePullPolicy": "IfNotPresent",
        "command": ["butler", "task", "run"],
        "workingDir": WORK_DIR,
        "env": env,
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "readOnlyRootFilesystem": true,
            "runAsNonRoot": true,
            "capabilities": {"drop": ["ALL"]},
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": mounts,
    });
    if let Some(secret) = &config.model_secret {
        container["envFrom"] = json!([{"secretRef": {"name": secret}}]);
    }
    let mut quantities = serde_json::Map::new();
    if let Some(cpu) = &config.cpu {
        quantities.insert("cpu".to_owned(), json!(cpu));
    }
    if let Some(memory) = &config.memory {
        quantities.insert("memory".to_owned(), json!(memory));
    }
    if !quantities.is_empty() {
        container["resources"] = json!({"requests": quantities, "limits": quantities});
    }
    let mut pod = json!({
        "restartPolicy": "Never",
        "automountServiceAccountToken": false,
        "enableServiceLinks": false,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": 1000,
            "runAsGroup": 1000,
            "fsGroup": 1000,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": volumes,
    });
    if let Some(account) = &config.service_account {
        pod["serviceAccountName"] = json!(account);
    }
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": request.name, "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": request.deadline_s,
            "ttlSecondsAfterFinished": config.ttl_seconds_after_finished.unwrap_or(DEFAULT_TTL_S),
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    });
    serde_json::from_value(job).expect("the Job built here has the Job's shape")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_label_values_are_dns_labels() {
        assert_eq!(job_name("bcdf", "t3"), "butler-bcdf-t3");
        assert_eq!(label_value("My Project_2"), "my-project-2");
        assert_eq!(label_value("--"), "x");
        assert_eq!(label_value(&"a".repeat(80)).len(), 63);
    }

    #[test]
    fn the_pod_is_hardened_and_gets_its_secrets_by_reference_only() {
        let config = RunnerConfig {
            image: Some("r/b:1".to_owned()),
            model_secret: Some("model".to_owned()),
            push_secret: Some("push".to_owned()),
            cpu: Some("2".to_owned()),
            ..RunnerConfig::default()
        };
        let request = JobRequest {
            name: "butler-bcdf-t3".to_owned(),
            labels: vec![("butler.dev/task".to_owned(), "t3".to_owned())],
            env: vec![("BUTLER_TASK_BASE".to_owned(), "ab".repeat(20))],
            deadline_s: 1200,
        };
        let job = serde_json::to_value(job_object(&request, &config, "ns")).expect("json");
        let spec = &job["spec"];
        assert_eq!(spec["backoffLimit"], 0);
        assert_eq!(spec["activeDeadlineSeconds"], 1200);
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["automountServiceAccountToken"], false);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        let c = &pod["containers"][0];
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
        assert_eq!(c["envFrom"][0]["secretRef"]["name"], "model");
        assert_eq!(c["resources"]["limits"]["cpu"], "2");
        let text = job.to_string();
        assert!(text.contains("\"secretName\":\"push\""), "{text}");
        assert!(
            !text.contains("token"),
            "no secret value is in the Job: {text}"
        );
    }
}
