//! `mcp_call`: a tool of another MCP server named in `[mcp_servers.<name>]`, reached with the
//! rmcp client over stdio. The server is started for the step under the supervisor (its own
//! process group, an environment built from the allow-lists plus the entry's `env_allow`,
//! never Butler's secrets), in the sandbox a `cmd` step gets (see [`super::confine`]), and
//! taken down when the step ends, is stopped, or is cancelled.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::confine::{Decision, StepDir, not_applied, tree_writable};
use super::exec::{OUTPUT_TAIL_BYTES, StepPlace};
use crate::config::McpServerConfig;
use crate::contract::procedure::McpCallStep;
use crate::contract::{Ending, StepEvidence, StepKind, StepOutcome};
use crate::process::{ChildEnv, ChildSpec, Keep, Limits, converse, env, tail_of};
use crate::sandbox::HelperRun;

/// How long a stopped server gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Runs an `mcp_call` step (numbered `step`).
pub(crate) async fn mcp_call(
    place: &StepPlace,
    servers: &BTreeMap<String, McpServerConfig>,
    step: u32,
    call: &McpCallStep,
    cancel: &CancellationToken,
) -> StepEvidence {
    let started = Instant::now();
    let mut e = StepEvidence {
        step,
        kind: StepKind::McpCall,
        what: call.shown(),
        outcome: StepOutcome::Failed,
        ending: None,
        output_tail: String::new(),
        duration_ms: 0,
        detail: None,
        leftovers: None,
        unconfined: None,
        changed: Vec::new(),
        undo: None,
    };
    let Some(server) = servers.get(&call.server) else {
        e.detail = Some(format!(
            "MCP server `{}` is not configured any more (the user's Butler configuration, or a \
             project file they trust)",
            call.server
        ));
        return e;
    };
    let limit = Duration::from_secs(call.timeout_s);
    let dir = match StepDir::new() {
        Ok(dir) => dir,
        Err(err) => {
            e.detail = Some(format!("the step's temp dir cannot be made: {err}"));
            return e;
        }
    };
    let mut writable = match tree_writable(&place.root, &[], &place.sandbox.extra_writable) {
        Ok(trees) => trees,
        Err(err) => {
            e.detail = Some(format!("what the server may write cannot be listed: {err}"));
            return e;
        }
    };
    writable.push(dir.tmp());
    let decision = place
        .sandbox
        .decide(place.helper.as_deref(), &dir, writable);
    if let Decision::Refused(why) = &decision {
        e.detail = Some(why.clone());
        return e;
    }
    let outcome = tokio::select! {
        r = tokio::time::timeout(limit, talk(place, server, call, &dir, &decision)) => match r {
            Ok(r) => r,
            Err(_) => Err(Stop::Ending(Ending::WallClockLimit { limit_s: call.timeout_s })),
        },
        () = cancel.cancelled() => Err(Stop::Ending(Ending::Cancelled)),
    };
    e.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    e.unconfined = match &decision {
        Decision::Confined { report, .. } => not_applied(report),
        Decision::Unconfined(why) => Some(why.clone()),
        Decision::Refused(why) => Some(why.clone()),
    };
    match outcome {
        Ok(answer) => {
            e.output_tail = tail_of(&answer.text, OUTPUT_TAIL_BYTES).to_owned();
            let contains = call
                .output_contains
                .as_deref()
                .is_none_or(|t| answer.text.contains(place.fill(t).as_str()));
            e.outcome = if !answer.is_error && contains {
                StepOutcome::Passed
            } else {
                e.detail = Some(if answer.is_error {
                    "the tool answered with an error".to_owned()
                } else {
                    "its answer does not contain what the step expects".to_owned()
                });
                StepOutcome::Failed
            };
        }
        Err(Stop::Ending(ending)) => {
            e.outcome = StepOutcome::Stopped;
            e.ending = Some(ending);
        }
        Err(Stop::Failed(why)) => e.detail = Some(why),
    }
    e
}

/// A tool's answer as text.
struct Answer {
    text: String,
    is_error: bool,
}

enum Stop {
    Ending(Ending),
    Failed(String),
}

/// Starts the server, calls the tool, and takes the server down again (also when this future
/// is dropped half-way: the supervisor's group guard ends the group).
async fn talk(
    place: &StepPlace,
    server: &McpServerConfig,
    call: &McpCallStep,
    dir: &StepDir,
    decision: &Decision,
) -> Result<Answer, Stop> {
    let mut vars = ChildEnv::new();
    let parent = env::inherited();
    vars.inherit_groups(parent, &[env::BASE, env::HOME_DIRS, env::NETWORK]);
    let allow: Vec<&str> = server.env_allow.iter().map(String::as_str).collect();
    vars.inherit(parent, &allow);
    vars.set_default("PATH", env::DEFAULT_PATH);
    vars.set("TMPDIR", dir.tmp());
    let spec = ChildSpec::new(&server.command, &place.root, vars).args(&server.args);
    // Under the reaper: what the server starts, `setsid` or not, is taken down with it (not
    // listed: its workers are not left behind when it is stopped at the step's end).
    let policy = match decision {
        Decision::Confined { policy, report } => Some((policy.as_path(), report.as_path())),
        _ => None,
    };
    let spec = match &place.helper {
        Some(helper) => HelperRun {
            policy,
            leftovers: None,
            syscalls: None,
            grace: GRACE,
        }
        .wrap(helper, spec),
        None => spec,
    };
    let mut limits = Limits::new(Duration::MAX);
    limits.grace = GRACE;
    limits.stderr = Keep {
        head: 0,
        tail: 16 * 1024,
    };
    let conversation = converse(spec, limits)
        .map_err(|e| Stop::Failed(format!("the MCP server could not be started: {e}")))?;
    let stop = conversation.cancel.clone();
    let _stop_on_drop = stop.clone().drop_guard();
    let ended = conversation.ended;
    let result = async {
        let client = ()
            .serve((conversation.stdout, conversation.stdin))
            .await
            .map_err(|e| Stop::Failed(format!("the MCP server did not start a session: {e}")))?;
        let arguments = fill_params(place, &call.params);
        let params = CallToolRequestParams::new(call.tool.clone()).with_arguments(arguments);
        let answer = client
            .call_tool(params)
            .await
            .map_err(|e| Stop::Failed(format!("the call failed: {e}")))?;
        let _ = client.cancel().await;
        let mut text: Vec<String> = answer
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        if text.is_empty()
            && let Some(structured) = &answer.structured_content
        {
            text.push(structured.to_string());
        }
        Ok(Answer {
            text: text.join("\n"),
            is_error: answer.is_error.unwrap_or(false),
        })
    }
    .await;
    stop.cancel();
    let done = ended.await.ok();
    match (result, done) {
        (Err(Stop::Failed(why)), Some(done)) => {
            let log = done.stderr.tail_text(1024);
            if log.trim().is_empty() {
                Err(Stop::Failed(why))
            } else {
                Err(Stop::Failed(format!("{why}; its log ends: {}", log.trim())))
            }
        }
        (result, _) => result,
    }
}

/// The step's parameters with `{target.NAME}` filled into every text value.
fn fill_params(place: &StepPlace, params: &Map<String, Value>) -> Map<String, Value> {
    fn fill(place: &StepPlace, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(place.fill(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| fill(place, i)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), fill(place, v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    params
        .iter()
        .map(|(k, v)| (k.clone(), fill(place, v)))
        .collect()
}
