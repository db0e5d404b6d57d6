//! The Brain-facing MCP server: the `work_*` and `issue_*` tools.
//!
//! Each tool is a thin wrapper: parse the arguments, call one domain function, wrap the result
//! in the envelope. Descriptions say what a tool means to the Brain, never how it works.

use std::sync::Arc;

use butler_worker::ops::Progress;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, Implementation, JsonObject, ProgressNotificationParam, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::Mutex;

use crate::args::{self, *};
use crate::auto_finish;
use crate::catalogue::{self, Key, Lang, fill, text};
use crate::delegate::{self, args::*};
use crate::envelope::{Reply, into_call_result};
use crate::error::{ToolError, WorkError};
use crate::implement::{self, RunImplementArgs, TaskAcceptArgs, TaskIdArgs};
use crate::instructions;
use crate::issue_ops;
use crate::session::{Project, blocking, open_project};
use crate::tool::Tool;
use crate::work::{diff, finish, history, line, observe, oplog, publish, record, vcs};
use butler_worker::config::Environment;
use butler_worker::issues::IssueState;
use butler_worker::time::{SharedClock, SystemClock};

/// The input schema of a tool, trimmed of what the Brain does not need: every listed byte
/// costs tokens in every conversation. Optional parameters are those not `required`, so
/// `null` alternatives go; unknown arguments are still refused (`deny_unknown_fields`).
fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = (*rmcp::handler::server::common::schema_for_type::<T>()).clone();
    schema.remove("$schema");
    for value in schema.values_mut() {
        simplify(value);
    }
    schema.remove("title");
    schema.remove("additionalProperties");
    // The tool's own description says what the arguments are for.
    schema.remove("description");
    if let Some(serde_json::Value::Object(defs)) = schema.get_mut("$defs") {
        for def in defs.values_mut() {
            if let serde_json::Value::Object(d) = def {
                d.remove("description");
            }
        }
    }
    Arc::new(schema)
}

fn simplify(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for key in [
                "title",
                "format",
                "minimum",
                "maximum",
                "additionalProperties",
            ] {
                map.remove(key);
            }
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get("type") {
                let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if non_null.len() == 1 {
                    map.insert("type".into(), non_null[0].clone());
                }
            }
            // An optional argument's fixed set of values lists the values only.
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let non_null: Vec<Value> = any
                    .iter()
                    .filter(|v| v.get("type") != Some(&Value::from("null")))
                    .cloned()
                    .collect();
                if non_null.len() == 1 {
                    map.remove("anyOf");
                    if let Value::Object(inner) = &non_null[0] {
                        for (k, v) in inner {
                            map.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            map.values_mut().for_each(simplify);
        }
        Value::Array(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

/// One MCP connection's (stdio) or MCP session's (HTTP) server; its session lives here.
#[derive(Clone)]
pub struct ButlerServer {
    project: Arc<Mutex<Option<Arc<Project>>>>,
    /// The language of this session's texts (see `catalogue`): the project's setting where
    /// the server started, then `work_session_start`'s choice.
    lang: Arc<std::sync::Mutex<Lang>>,
    /// Where the session's times come from (the system clock, or `BUTLER_NOW`'s frozen one).
    clock: SharedClock,
    /// Which protocol revisions this server speaks.
    revisions: Revisions,
    /// Butler's environment, read once when the process started.
    env: Arc<Environment>,
    tool_router: ToolRouter<Self>,
}

/// The MCP revisions a server speaks, decided by where its session lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Revisions {
    /// Every known one: over stdio the connection is the session, whatever the revision.
    All,
    /// Those with an `initialize` handshake: over HTTP the session is the `Mcp-Session-Id` it
    /// opens; the later revisions have none, and each of their calls would meet a fresh server
    /// that knows no project.
    WithHandshake,
}

impl Default for ButlerServer {
    fn default() -> Self {
        Self::new(SystemClock::shared(), Arc::new(Environment::default()))
    }
}

type Outcome = Result<Reply, WorkError>;

/// Whom the operation log says the Brain's tools ran for.
const BRAIN: &str = "brain session";

fn finish_call(tool: Tool, outcome: Outcome) -> CallToolResult {
    into_call_result(outcome.map_err(|e| ToolError::from_work(e, tool)))
}

/// Progress of a call as MCP progress notifications, when the client asked for them. MCP
/// progress must increase: a report that would go back is sent just above the last one.
fn progress_of(ctx: &RequestContext<RoleServer>) -> Progress {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, f64)>();
    if let Some(token) = ctx.meta.get_progress_token() {
        let peer = ctx.peer.clone();
        tokio::spawn(async move {
            let mut last = None;
            while let Some((message, fraction)) = rx.recv().await {
                let Some(fraction) = rising(&mut last, fraction) else {
                    continue;
                };
                let note = ProgressNotificationParam::new(token.clone(), fraction)
                    .with_total(1.0)
                    .with_message(message);
                let _ = peer.notify_progress(note).await;
            }
        });
    }
    Arc::new(move |message: String, fraction: f64| {
        let _ = tx.send((message, fraction));
    })
}

/// The fraction to send after `last` (of a total of 1.0), if any: `fraction` when it is higher
/// (at most 1.0), else a ten-thousandth of the way from `last` to 1.0 — still rising, never past
/// the total, and tens of thousands of such reports before two steps can no longer be told apart.
/// Once 1.0 was sent, or when nothing is left between `last` and 1.0 to step to, a report is not
/// sent at all (its message would be news, but MCP progress may not repeat itself).
fn rising(last: &mut Option<f64>, fraction: f64) -> Option<f64> {
    const STEP: f64 = 1e-4;
    let fraction = if fraction.is_nan() {
        0.0
    } else {
        fraction.clamp(0.0, 1.0)
    };
    let sent = match *last {
        Some(before) if fraction <= before => before + (1.0 - before) * STEP,
        _ => fraction,
    };
    if last.is_some_and(|before| sent <= before) {
        return None;
    }
    *last = Some(sent);
    Some(sent)
}

impl ButlerServer {
    pub fn new(clock: SharedClock, env: Arc<Environment>) -> Self {
        Self {
            project: Arc::new(Mutex::new(None)),
            lang: Arc::new(std::sync::Mutex::new(
                std::env::current_dir()
                    .map(|dir| Lang::configured(&dir))
                    .unwrap_or_default(),
            )),
            clock,
            revisions: Revisions::All,
            env,
            tool_router: Self::router(),
        }
    }

    /// A server for one MCP session over streamable HTTP (see [`Revisions::WithHandshake`]).
    pub fn for_http_session(clock: SharedClock, env: Arc<Environment>) -> Self {
        Self {
            revisions: Revisions::WithHandshake,
            ..Self::new(clock, env)
        }
    }

    /// rmcp's router for the methods below, each tool annotated as [`Tool`] says.
    fn router() -> ToolRouter<Self> {
        let mut router = Self::tool_router();
        for route in router.map.values_mut() {
            let tool = Tool::named(&route.attr.name);
            route.attr.annotations = tool.map(Tool::annotations);
            route.attr.meta = tool.and_then(Tool::meta);
        }
        router
    }

    /// One tool call: reads the arguments as `A`, runs `body` with them and maps its failure
    /// for `tool`.
    async fn run<A, F, Fut>(&self, tool: Tool, raw: JsonObject, body: F) -> CallToolResult
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: FnOnce(A) -> Fut,
        Fut: Future<Output = Outcome>,
    {
        let outcome = match args::parse(raw) {
            Ok(a) => body(a).await,
            Err(e) => Err(e),
        };
        finish_call(tool, outcome)
    }

    /// [`Self::run`] with the session's project (no session: `WorkError::NoSession`).
    async fn call<A, F, Fut>(&self, tool: Tool, raw: JsonObject, body: F) -> CallToolResult
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: FnOnce(A, Arc<Project>) -> Fut,
        Fut: Future<Output = Outcome>,
    {
        self.run(tool, raw, |a| async move {
            body(a, self.project().await?).await
        })
        .await
    }

    async fn project(&self) -> Result<Arc<Project>, WorkError> {
        self.project
            .lock()
            .await
            .clone()
            .ok_or(WorkError::NoSession)
    }

    fn lang(&self) -> Lang {
        self.lang.lock().map(|l| *l).unwrap_or_default()
    }
}

/// Every tool method has one shape: `self.call(Tool::…, raw, |args, project| async move { … })`
/// reads the arguments, opens the session's project and maps a failure for that tool
/// ([`Self::run`] when the project is not needed first). The name, the annotations and the
/// git equivalents come from [`Tool`]; the doc comment is the description, the arguments type
/// the schema.
#[tool_router]
impl ButlerServer {
    /// Starts the session for a project; call it first.
    #[tool(input_schema = schema::<SessionStartArgs>())]
    async fn work_session_start(&self, raw: JsonObject) -> CallToolResult {
        // Not `run`: from the arguments on, the answer is in the session's own language.
        let a: SessionStartArgs = match args::parse(raw) {
            Ok(a) => a,
            Err(e) => return finish_call(Tool::WorkSessionStart, Err(e)),
        };
        let root = std::path::Path::new(a.project_root.trim());
        let lang = a.language.unwrap_or_else(|| {
            Lang::from_sources(root, |name| self.env.get(name).map(str::to_owned))
        });
        if let Ok(mut session) = self.lang.lock() {
            *session = lang;
        }
        let outcome = async {
            let (project, reply) =
                open_project(&a.project_root, self.clock.clone(), self.env.clone()).await?;
            *self.project.lock().await = Some(project);
            Ok(reply)
        };
        catalogue::scope(lang, async {
            finish_call(Tool::WorkSessionStart, outcome.await)
        })
        .await
    }

    /// Sets the issue the work is for (work_record links it by default).
    #[tool(input_schema = schema::<WorkStartArgs>())]
    async fn work_start(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::WorkStart,
            raw,
            |a: WorkStartArgs, project| async move {
                let issue = a
                    .issue_id
                    .map(|n| crate::work::issue_number(n, "issue_id"))
                    .transpose()?;
                crate::work::start::start(&project, issue).await
            },
        )
        .await
    }

    /// Where the work stands and what to do next. Replaces git status.
    #[tool(input_schema = schema::<NoArgs>())]
    async fn work_observe(&self, raw: JsonObject) -> CallToolResult {
        self.run(Tool::WorkObserve, raw, |_: NoArgs| async move {
            match self.project.lock().await.clone() {
                Some(project) => Ok(observe::observe(&project).await),
                None => Ok(observe::uninitialized()),
            }
        })
        .await
    }

    /// Saves all work as one permanent record (no message: proposes one). Replaces git add and commit.
    #[tool(input_schema = schema::<RecordArgs>())]
    async fn work_record(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::WorkRecord, raw, |a: RecordArgs, project| async move {
            let req = record::RecordRequest {
                message: match a.message.as_deref() {
                    Some(text) => record::Message::Given(record::validate_message(text)?),
                    None => record::Message::Missing,
                },
                issue_ids: a
                    .issue_ids
                    .as_deref()
                    .map(record::validate_issue_ids)
                    .transpose()?,
                allow_sensitive: a.allow_sensitive.unwrap_or_default(),
            };
            let op = async {
                let done = blocking(&project, move |p| record::record(p, req)).await?;
                Ok(Reply::new(done.summary(), done))
            };
            oplog::logged(
                &project,
                Tool::WorkRecord,
                text(Key::OpWhatRecord).into(),
                BRAIN.into(),
                op,
            )
            .await
        })
        .await
    }

    /// Shares recorded work upstream. Replaces git push.
    #[tool(input_schema = schema::<PublishArgs>())]
    async fn work_publish(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::WorkPublish,
            raw,
            |a: PublishArgs, project| async move {
                let allow = a.allow_sensitive.unwrap_or_default();
                let done = blocking(&project, move |p| publish::publish(p, &allow)).await?;
                let summary = if done.published_records == 0 {
                    catalogue::text(Key::NothingPublished).to_string()
                } else {
                    catalogue::fill(
                        Key::Published,
                        &[
                            ("n", &done.published_records),
                            ("destination", &done.destination),
                        ],
                    )
                };
                Ok(Reply::new(summary, done))
            },
        )
        .await
    }

    /// The closing checklist: proposes what is left; auto=true does it (record, publish, issue comment; close=true closes).
    #[tool(input_schema = schema::<FinishArgs>())]
    async fn work_finish(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::WorkFinish, raw, |a: FinishArgs, project| async move {
            if a.auto == Some(true) {
                let req = auto_finish::AutoFinish {
                    message: a
                        .message
                        .as_deref()
                        .map(record::validate_message)
                        .transpose()?,
                    comment: a.comment,
                    close: a.close == Some(true),
                };
                let op = auto_finish::auto_finish(&project, req);
                let what = text(Key::OpWhatFinish).to_owned();
                return oplog::logged(&project, Tool::WorkFinish, what, BRAIN.into(), op).await;
            }
            if a.message.is_some() || a.comment.is_some() || a.close.is_some() {
                return Err(WorkError::InvalidArgument {
                    field: "auto",
                    reason: catalogue::text(Key::FinishOptionsNeedAuto).into(),
                });
            }
            let (summary, plan) = blocking(&project, finish::finish).await?;
            Ok(Reply::new(summary, plan))
        })
        .await
    }

    /// Starts a line of work here (or at from) and switches to it; unrecorded work comes along. Replaces git switch -c.
    #[tool(input_schema = schema::<NewLineArgs>())]
    async fn work_new_line(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::WorkNewLine,
            raw,
            |a: NewLineArgs, project| async move {
                let what = fill(
                    Key::OpWhatNewLine,
                    &[("name", &a.name.as_deref().unwrap_or(""))],
                );
                let op = line::new_line(&project, a.name, a.from);
                oplog::logged(&project, Tool::WorkNewLine, what, BRAIN.into(), op).await
            },
        )
        .await
    }

    /// Switches to another line of work. Replaces git switch.
    #[tool(input_schema = schema::<LineNameArgs>())]
    async fn work_switch_line(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::WorkSwitchLine,
            raw,
            |a: LineNameArgs, project| async move {
                let what = fill(Key::OpWhatSwitchLine, &[("name", &a.name)]);
                let op = line::switch_line(&project, &a.name);
                oplog::logged(&project, Tool::WorkSwitchLine, what, BRAIN.into(), op).await
            },
        )
        .await
    }

    /// Brings a line's records into this one; no name: this line into the one it came from. Replaces git merge.
    #[tool(input_schema = schema::<MergeLineArgs>())]
    async fn work_merge_line(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::WorkMergeLine,
            raw,
            |a: MergeLineArgs, project| async move {
                let what = match &a.name {
                    Some(name) => fill(Key::OpWhatMergeLine, &[("name", name)]),
                    None => text(Key::OpWhatMergeBack).to_owned(),
                };
                let op = line::merge_line(&project, a.name);
                oplog::logged(&project, Tool::WorkMergeLine, what, BRAIN.into(), op).await
            },
        )
        .await
    }

    /// The changes, only when needed: per-file overview, level="full" for the patch, record_id for one record. Replaces git diff and show.
    #[tool(input_schema = schema::<DiffArgs>())]
    async fn work_diff(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::WorkDiff, raw, |a: DiffArgs, project| async move {
            let req = diff::DiffRequest {
                path: a.path,
                level: a.level.unwrap_or_default(),
                record_id: a.record_id,
            };
            let (summary, view) = blocking(&project, move |p| diff::diff(p, req)).await?;
            Ok(Reply::new(summary, view))
        })
        .await
    }

    /// Past records, newest first, optionally only those touching a path. Replaces git log.
    #[tool(input_schema = schema::<HistoryArgs>())]
    async fn work_history(&self, raw: JsonObject) -> CallToolResult {
        // `n` is checked before the session is.
        self.run(Tool::WorkHistory, raw, |a: HistoryArgs| async move {
            let n = history::validate_n(a.n)?;
            let project = self.project().await?;
            let (summary, records) =
                blocking(&project, move |p| history::history(p, n, a.path.as_deref())).await?;
            Ok(Reply::new(summary, json!({"records": records})))
        })
        .await
    }

    /// Version-control operations with no proper tool (branch, stash, fetch, …). Discarding work needs the user's approval.
    #[tool(input_schema = schema::<VcsArgs>())]
    async fn work_vcs(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::WorkVcs, raw, |a: VcsArgs, project| async move {
            let what = format!("git {}", a.args.join(" "));
            let op = async {
                let (summary, out) =
                    blocking(&project, move |p| vcs::vcs(p, a.args, a.approval)).await?;
                Ok(Reply::new(summary, out))
            };
            oplog::logged(&project, Tool::WorkVcs, what, BRAIN.into(), op).await
        })
        .await
    }

    /// Operations that changed the project (files, index, references), newest first; each can be undone with work_undo.
    #[tool(input_schema = schema::<OplogArgs>())]
    async fn work_oplog(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::WorkOplog, raw, |a: OplogArgs, project| async move {
            blocking(&project, move |p| oplog::oplog(p, a.n)).await
        })
        .await
    }

    /// Restores files, index and references to before an operation (default: the newest); refuses if later work would be lost. Undoable.
    #[tool(input_schema = schema::<UndoArgs>())]
    async fn work_undo(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::WorkUndo, raw, |a: UndoArgs, project| async move {
            blocking(&project, move |p| oplog::undo(p, a.operation, BRAIN)).await
        })
        .await
    }

    /// Delegates an implementation to a supervised agent; returns the evidence. Then task_accept or task_discard.
    #[tool(input_schema = schema::<RunImplementArgs>())]
    async fn run_implement(
        &self,
        raw: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(
            Tool::RunImplement,
            raw,
            |a: RunImplementArgs, project| async move {
                let progress = progress_of(&ctx);
                let report = move |message: String, fraction: f64| progress(message, fraction);
                implement::run_implement(&project, a, report, ctx.ct.clone()).await
            },
        )
        .await
    }

    /// Brings a finished task's records into the current line of work (its tool_config needs confirm_paths).
    #[tool(input_schema = schema::<TaskAcceptArgs>())]
    async fn task_accept(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::TaskAccept,
            raw,
            |a: TaskAcceptArgs, project| async move {
                let confirmed = a.confirm_paths.unwrap_or_default();
                let by = format!("task {}", a.task_id);
                let op = implement::task_accept(&project, &a.task_id, &confirmed);
                let what = text(Key::OpWhatAccept).into();
                oplog::logged(&project, Tool::TaskAccept, what, by, op).await
            },
        )
        .await
    }

    /// Drops a task; its work is kept aside, never deleted.
    #[tool(input_schema = schema::<TaskIdArgs>())]
    async fn task_discard(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::TaskDiscard,
            raw,
            |a: TaskIdArgs, project| async move {
                let by = format!("task {}", a.task_id);
                let op = implement::task_discard(&project, &a.task_id);
                let what = text(Key::OpWhatDiscard).into();
                oplog::logged(&project, Tool::TaskDiscard, what, by, op).await
            },
        )
        .await
    }

    /// Reads an issue; comments only when asked (last_n_comments).
    #[tool(input_schema = schema::<IssueReadArgs>())]
    async fn issue_read(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueRead,
            raw,
            |a: IssueReadArgs, project| async move {
                issue_ops::read(&project, a.issue_id, a.last_n_comments).await
            },
        )
        .await
    }

    /// Opens a new issue. The body states why it is open, the next action and the blockers.
    #[tool(input_schema = schema::<IssueCreateArgs>())]
    async fn issue_create(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueCreate,
            raw,
            |a: IssueCreateArgs, project| async move {
                let req = issue_ops::CreateRequest {
                    title: a.title,
                    body: a.body,
                    labels: a.label_names.unwrap_or_default(),
                    current_state: a.current_state,
                    next_action: a.next_action,
                    blockers: a.blockers,
                };
                issue_ops::create(&project, req).await
            },
        )
        .await
    }

    /// Adds a comment to an issue.
    #[tool(input_schema = schema::<IssueCommentArgs>())]
    async fn issue_comment(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueComment,
            raw,
            |a: IssueCommentArgs, project| async move {
                issue_ops::comment(&project, a.issue_id, &a.body).await
            },
        )
        .await
    }

    /// Deletes a mistaken or duplicate comment from an issue.
    #[tool(input_schema = schema::<IssueDeleteCommentArgs>())]
    async fn issue_delete_comment(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueDeleteComment,
            raw,
            |a: IssueDeleteCommentArgs, project| async move {
                issue_ops::delete_comment(&project, a.issue_id, a.comment_id, a.reason).await
            },
        )
        .await
    }

    /// Renames an issue.
    #[tool(input_schema = schema::<IssueTitleArgs>())]
    async fn issue_update_title(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueUpdateTitle,
            raw,
            |a: IssueTitleArgs, project| async move {
                issue_ops::update_title(&project, a.issue_id, &a.title).await
            },
        )
        .await
    }

    /// Rewrites an issue's body (same three sections as issue_create).
    #[tool(input_schema = schema::<IssueBodyArgs>())]
    async fn issue_update_body(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueUpdateBody,
            raw,
            |a: IssueBodyArgs, project| async move {
                issue_ops::update_body(&project, a.issue_id, &a.body).await
            },
        )
        .await
    }

    /// Reopens a closed issue.
    #[tool(input_schema = schema::<IssueIdArgs>())]
    async fn issue_reopen(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueReopen,
            raw,
            |a: IssueIdArgs, project| async move {
                issue_ops::set_state(&project, a.issue_id, IssueState::Open).await
            },
        )
        .await
    }

    /// Closes an issue (work_finish proposes when).
    #[tool(input_schema = schema::<IssueIdArgs>())]
    async fn issue_close(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueClose,
            raw,
            |a: IssueIdArgs, project| async move {
                issue_ops::set_state(&project, a.issue_id, IssueState::Closed).await
            },
        )
        .await
    }

    /// Lists issues, a page at a time.
    #[tool(input_schema = schema::<IssueListArgs>())]
    async fn issue_list(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::IssueList,
            raw,
            |a: IssueListArgs, project| async move {
                let state = a.state.unwrap_or_default();
                issue_ops::list(&project, state, a.label.as_deref(), a.page).await
            },
        )
        .await
    }

    /// Delegates an operation (commit, push, logs, deploy, checks…) as a Task Contract; runs it to the end and returns the Result Contract with evidence.
    #[tool(input_schema = schema::<delegate::args::SubmitTaskArgs>())]
    async fn submit_task(
        &self,
        raw: JsonObject,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        self.call(
            Tool::SubmitTask,
            raw,
            |a: SubmitTaskArgs, project| async move {
                delegate::submit_task(&project, a, progress_of(&ctx), ctx.ct.clone()).await
            },
        )
        .await
    }

    /// Relays the user's decision on a need_approval task: approve runs it on, deny ends it.
    #[tool(input_schema = schema::<delegate::args::ApproveArgs>())]
    async fn approve(&self, raw: JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
        self.call(Tool::Approve, raw, |a: ApproveArgs, project| async move {
            delegate::approve(&project, a, progress_of(&ctx), ctx.ct.clone()).await
        })
        .await
    }

    /// Teaches the procedure for a need_input task (or an intent and target) as typed steps; the task then runs.
    #[tool(input_schema = schema::<delegate::args::TeachArgs>())]
    async fn teach(&self, raw: JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
        self.call(Tool::Teach, raw, |a: TeachArgs, project| async move {
            delegate::teach(&project, a, progress_of(&ctx), ctx.ct.clone()).await
        })
        .await
    }

    /// Stops a delegated task; its running step ends and its evidence says where.
    #[tool(input_schema = schema::<delegate::args::DelegatedTaskArgs>())]
    async fn cancel_task(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::CancelTask,
            raw,
            |a: DelegatedTaskArgs, project| async move {
                delegate::cancel_task(&project, &a.task_id).await
            },
        )
        .await
    }

    /// A delegated task's state and result, e.g. after a restart. Never poll: submit_task answers when done.
    #[tool(input_schema = schema::<delegate::args::DelegatedTaskArgs>())]
    async fn get_status(&self, raw: JsonObject) -> CallToolResult {
        self.call(
            Tool::GetStatus,
            raw,
            |a: DelegatedTaskArgs, project| async move {
                delegate::get_status(&project, &a.task_id).await
            },
        )
        .await
    }

    /// What Butler runs without teaching: capabilities and taught procedures.
    #[tool(input_schema = schema::<NoArgs>())]
    async fn list_skills(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::ListSkills, raw, |_: NoArgs, project| async move {
            delegate::list_skills(&project).await
        })
        .await
    }

    /// The contract one skill needs (target, approval, an example); "butler" for the common one.
    #[tool(input_schema = schema::<delegate::args::SkillArgs>())]
    async fn get_skill_usage(&self, raw: JsonObject) -> CallToolResult {
        self.call(Tool::GetSkillUsage, raw, |a: SkillArgs, project| async move {
            delegate::get_skill_usage(&project, &a.name).await
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ButlerServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("butler", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions::instructions(self.lang()))
    }

    /// Every call runs in its session's language (`catalogue`).
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        catalogue::scope(self.lang(), self.tool_router.call(call)).await
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(match self.revisions {
            Revisions::All => ProtocolVersion::KNOWN_VERSIONS,
            Revisions::WithHandshake => {
                ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE)
            }
        })
    }
}

/// Serves the Brain-facing server on stdin/stdout until the client disconnects; every time it
/// stamps comes from `clock`.
pub async fn serve_stdio(clock: SharedClock, env: Arc<Environment>) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    // Every line is checked by Butler's transport before rmcp sees it (see `transport`).
    let (stdin, stdout) = rmcp::transport::stdio();
    let (transport, output) = crate::transport::LineTransport::new(stdin, stdout);
    let served = ButlerServer::new(clock, env).serve(transport).await;
    let result = match served {
        Ok(service) => service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| std::io::Error::other(e.to_string())),
        // The client went away before starting a session: nothing failed.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    };
    // Whatever was queued reaches stdout before the process ends (bounded: a client that
    // stopped reading must not keep the server alive).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), output.finish()).await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_enum_and_rmcps_router_list_the_same_tools() {
        let listed = ButlerServer::router().list_all();
        let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
        let ours: Vec<&str> = Tool::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names, ours);
        for tool in &listed {
            let annotations = Tool::named(&tool.name).map(Tool::annotations);
            assert_eq!(tool.annotations, annotations, "{}", tool.name);
        }
    }

    #[test]
    fn progress_never_goes_back_nor_past_the_total() {
        let mut last = None;
        let sent: Vec<f64> = [0.2, 0.5, 0.3, 0.5, 0.9, 1.0, 0.4, 1.0, 7.0, f64::NAN]
            .into_iter()
            .filter_map(|f| rising(&mut last, f))
            .collect();
        assert_eq!(&sent[..2], &[0.2, 0.5]);
        assert!(sent.windows(2).all(|w| w[1] > w[0]), "{sent:?}");
        assert!(sent.iter().all(|f| (0.0..=1.0).contains(f)), "{sent:?}");
        assert_eq!(sent[4], 0.9);
        assert_eq!(sent.last(), Some(&1.0), "{sent:?}");
        assert_eq!(sent.len(), 6, "after 1.0 nothing more: {sent:?}");
        // Reports that do not rise keep rising below the total, barely: a long run of them (a
        // chatty agent's activity lines) is all sent and leaves room for what comes after.
        let mut last = Some(0.5);
        let sent: Vec<f64> = (0..5_000).filter_map(|_| rising(&mut last, 0.1)).collect();
        assert_eq!(sent.len(), 5_000);
        assert!(sent.windows(2).all(|w| w[1] > w[0]));
        assert!(
            sent.iter().all(|f| *f > 0.5 && *f < 0.9),
            "{:?}",
            sent.last()
        );
        assert_eq!(rising(&mut last, 0.95), Some(0.95));
        // Near the total, they still never reach it.
        let mut last = Some(0.999_999);
        let sent: Vec<f64> = (0..5_000).filter_map(|_| rising(&mut last, 0.5)).collect();
        assert!(sent.windows(2).all(|w| w[1] > w[0]));
        assert!(sent.iter().all(|f| *f < 1.0), "{:?}", sent.last());
    }

    /// Each method maps its failures as its own tool (the hint names the tool to call again).
    #[tokio::test]
    async fn each_method_answers_as_its_tool() {
        let server = ButlerServer::default();
        for tool in Tool::ALL {
            let raw = json!({"not_an_argument": 1})
                .as_object()
                .cloned()
                .unwrap_or_default();
            let answer = match tool {
                Tool::WorkSessionStart => server.work_session_start(raw).await,
                Tool::WorkStart => server.work_start(raw).await,
                Tool::WorkObserve => server.work_observe(raw).await,
                Tool::WorkRecord => server.work_record(raw).await,
                Tool::WorkPublish => server.work_publish(raw).await,
                Tool::WorkFinish => server.work_finish(raw).await,
                Tool::WorkNewLine => server.work_new_line(raw).await,
                Tool::WorkSwitchLine => server.work_switch_line(raw).await,
                Tool::WorkMergeLine => server.work_merge_line(raw).await,
                Tool::WorkDiff => server.work_diff(raw).await,
                Tool::WorkHistory => server.work_history(raw).await,
                Tool::WorkVcs => server.work_vcs(raw).await,
                Tool::WorkOplog => server.work_oplog(raw).await,
                Tool::WorkUndo => server.work_undo(raw).await,
                Tool::TaskAccept => server.task_accept(raw).await,
                Tool::TaskDiscard => server.task_discard(raw).await,
                Tool::IssueRead => server.issue_read(raw).await,
                Tool::IssueCreate => server.issue_create(raw).await,
                Tool::IssueComment => server.issue_comment(raw).await,
                Tool::IssueDeleteComment => server.issue_delete_comment(raw).await,
                Tool::IssueUpdateTitle => server.issue_update_title(raw).await,
                Tool::IssueUpdateBody => server.issue_update_body(raw).await,
                Tool::IssueReopen => server.issue_reopen(raw).await,
                Tool::IssueClose => server.issue_close(raw).await,
                Tool::IssueList => server.issue_list(raw).await,
                Tool::CancelTask => server.cancel_task(raw).await,
                Tool::GetStatus => server.get_status(raw).await,
                Tool::ListSkills => server.list_skills(raw).await,
                Tool::GetSkillUsage => server.get_skill_usage(raw).await,
                // These take the request's context (for progress and cancellation).
                Tool::RunImplement | Tool::SubmitTask | Tool::Approve | Tool::Teach => continue,
            };
            let hint = answer
                .structured_content
                .as_ref()
                .and_then(|v| v["hint"].as_str().map(str::to_owned))
                .unwrap_or_default();
            let own = format!("call {tool} again");
            assert!(hint.contains(&own), "{tool}: {hint}");
        }
    }
}
