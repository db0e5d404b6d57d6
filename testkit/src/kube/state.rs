//! What the stand-in holds: its objects (Jobs and pods) with one resource-version counter, the
//! history of watch events, Secrets, pod logs, the test's knobs, and what clients sent.
//!
//! Every object write goes through [`Shared::write`], which stamps a fresh resourceVersion,
//! checks the object against the pinned subset (a problem is the stand-in's own bug: it
//! panics with the path), records the watch event and wakes every open stream.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::schema;
use super::{PodScript, RecordedRequest};

/// The two resources the stand-in keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// `jobs` in group `batch`, version `v1`.
    Jobs,
    /// `pods` in the core group.
    Pods,
}

impl Resource {
    /// The definition its objects are checked against.
    pub fn definition(self) -> &'static str {
        match self {
            Resource::Jobs => "io.k8s.api.batch.v1.Job",
            Resource::Pods => "io.k8s.api.core.v1.Pod",
        }
    }

    /// The definition of its list.
    pub fn list_definition(self) -> &'static str {
        match self {
            Resource::Jobs => "io.k8s.api.batch.v1.JobList",
            Resource::Pods => "io.k8s.api.core.v1.PodList",
        }
    }

    /// `jobs` / `pods`.
    pub fn plural(self) -> &'static str {
        match self {
            Resource::Jobs => "jobs",
            Resource::Pods => "pods",
        }
    }

    /// The API group (`batch`, or empty for the core group).
    pub fn group(self) -> &'static str {
        match self {
            Resource::Jobs => "batch",
            Resource::Pods => "",
        }
    }

    /// `jobs.batch` / `pods`: the resource as error messages name it.
    pub fn qualified(self) -> &'static str {
        match self {
            Resource::Jobs => "jobs.batch",
            Resource::Pods => "pods",
        }
    }

    /// `(apiVersion, kind)` of its objects.
    pub fn type_meta(self) -> (&'static str, &'static str) {
        match self {
            Resource::Jobs => ("batch/v1", "Job"),
            Resource::Pods => ("v1", "Pod"),
        }
    }

    /// `(apiVersion, kind)` of its lists.
    pub fn list_type_meta(self) -> (&'static str, &'static str) {
        match self {
            Resource::Jobs => ("batch/v1", "JobList"),
            Resource::Pods => ("v1", "PodList"),
        }
    }
}

/// A watch event kept in the history.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The resourceVersion the write produced.
    pub rv: u64,
    /// Which resource.
    pub resource: Resource,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// The object as written.
    pub object: Value,
}

/// One pod's log: lines (each with its newline) and when the kubelet saw them.
#[derive(Debug, Default)]
pub struct PodLog {
    /// The lines so far.
    pub lines: Vec<(SystemTime, Vec<u8>)>,
    /// Whether the container has stopped (no more lines will come).
    pub finished: bool,
}

/// The test's knobs, each spent by the next stream it applies to.
#[derive(Debug, Default)]
pub struct Knobs {
    /// Cut the next watch stream after this many events.
    pub cut_watch_after: Option<usize>,
    /// Answer the next watch with a 410 `Expired` ERROR event.
    pub expire_next_watch: bool,
    /// Cut the next log stream after this many bytes.
    pub cut_log_after: Option<usize>,
}

/// The test's choice of what each created pod does.
pub type PodScriptFn = dyn Fn(&Value) -> PodScript + Send + Sync;

/// How the stand-in asks a Job's controller to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Keep going.
    No,
    /// The Job is being deleted: kill the pod's process and end.
    Deleting,
}

/// A Job's controller task (the Job controller and the kubelet for its pods).
pub struct Controller {
    /// Tells it to stop.
    pub stop: watch::Sender<Stop>,
    /// The task, to await its end.
    pub task: Option<JoinHandle<()>>,
}

/// Everything under the one lock.
#[derive(Default)]
pub struct State {
    /// The last resourceVersion given out.
    pub rv: u64,
    /// Jobs by name.
    pub jobs: BTreeMap<String, Value>,
    /// Pods by name.
    pub pods: BTreeMap<String, Value>,
    /// Every write, oldest first.
    pub events: Vec<StoredEvent>,
    /// Secrets by name.
    pub secrets: BTreeMap<String, BTreeMap<String, String>>,
    /// `(verb, resource)` pairs RBAC refuses.
    pub forbidden: BTreeSet<(String, String)>,
    /// The test's knobs.
    pub knobs: Knobs,
    /// Job bodies as clients sent them.
    pub received_jobs: Vec<Value>,
    /// Every request, in order.
    pub requests: Vec<RecordedRequest>,
    /// What created pods do.
    pub pod_script: Option<Arc<PodScriptFn>>,
    /// Pod logs by pod name.
    pub logs: BTreeMap<String, PodLog>,
    /// Running Job controllers by Job name.
    pub controllers: BTreeMap<String, Controller>,
    /// The process groups of running containers.
    pub process_groups: BTreeSet<u32>,
}

impl State {
    /// The store of `resource`.
    pub fn store(&self, resource: Resource) -> &BTreeMap<String, Value> {
        match resource {
            Resource::Jobs => &self.jobs,
            Resource::Pods => &self.pods,
        }
    }

    fn store_mut(&mut self, resource: Resource) -> &mut BTreeMap<String, Value> {
        match resource {
            Resource::Jobs => &mut self.jobs,
            Resource::Pods => &mut self.pods,
        }
    }
}

/// The stand-in's state, shared by the server's connections and the controllers.
pub struct Shared {
    state: Mutex<State>,
    /// Bumped on every write and log line; open streams wait on it.
    pub changed: watch::Sender<u64>,
    /// The one namespace the stand-in serves.
    pub namespace: String,
}

impl Shared {
    /// An empty stand-in serving `namespace`.
    pub fn new(namespace: &str) -> Shared {
        Shared {
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(0),
            namespace: namespace.to_owned(),
        }
    }

    /// The state, locked (a panic elsewhere does not poison it for the rest of the test).
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes every open stream.
    pub fn notify(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// Writes `object` (`ADDED`, `MODIFIED` or `DELETED`) with a fresh resourceVersion under
    /// the held lock; returns the object as stored. The caller notifies after unlocking.
    pub fn write_locked(
        &self,
        state: &mut State,
        resource: Resource,
        kind: &'static str,
        mut object: Value,
    ) -> Value {
        state.rv += 1;
        object["metadata"]["resourceVersion"] = json!(state.rv.to_string());
        check_own(resource.definition(), &object);
        let name = object["metadata"]["name"]
            .as_str()
            .expect("stand-in objects have names")
            .to_owned();
        if kind == "DELETED" {
            state.store_mut(resource).remove(&name);
        } else {
            state.store_mut(resource).insert(name, object.clone());
        }
        let rv = state.rv;
        state.events.push(StoredEvent {
            rv,
            resource,
            kind,
            object: object.clone(),
        });
        object
    }

    /// Writes `object` as [`Shared::write_locked`] does, then wakes the streams.
    pub fn write(&self, resource: Resource, kind: &'static str, object: Value) -> Value {
        let stored = {
            let mut state = self.lock();
            self.write_locked(&mut state, resource, kind, object)
        };
        self.notify();
        stored
    }

    /// Applies `change` to the current object `name` and writes it as `MODIFIED`; `None`
    /// when the object is gone.
    pub fn modify(
        &self,
        resource: Resource,
        name: &str,
        change: impl FnOnce(&mut Value),
    ) -> Option<Value> {
        let stored = {
            let mut state = self.lock();
            let mut object = state.store(resource).get(name)?.clone();
            change(&mut object);
            self.write_locked(&mut state, resource, "MODIFIED", object)
        };
        self.notify();
        Some(stored)
    }

    /// Removes `name`, writing a `DELETED` event; `None` when it was already gone.
    pub fn remove(&self, resource: Resource, name: &str) -> Option<Value> {
        let stored = {
            let mut state = self.lock();
            let object = state.store(resource).get(name)?.clone();
            self.write_locked(&mut state, resource, "DELETED", object)
        };
        self.notify();
        Some(stored)
    }

    /// Appends one line (with its newline) to `pod`'s log.
    pub fn log_line(&self, pod: &str, line: Vec<u8>) {
        self.lock()
            .logs
            .entry(pod.to_owned())
            .or_default()
            .lines
            .push((SystemTime::now(), line));
        self.notify();
    }

    /// Marks `pod`'s log finished.
    pub fn log_finished(&self, pod: &str) {
        self.lock().logs.entry(pod.to_owned()).or_default().finished = true;
        self.notify();
    }
}

/// Checks an object the stand-in is about to answer with; a problem is the stand-in's own
/// bug, so it panics with every path.
pub fn check_own(definition: &str, object: &Value) {
    if let Err(problems) = schema::validate(definition, object) {
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        panic!(
            "the Kubernetes stand-in produced a {definition} outside the pinned subset: {}\n{}",
            listed.join("; "),
            serde_json::to_string_pretty(object).unwrap_or_default()
        );
    }
}
