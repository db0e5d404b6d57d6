//! A Brain stand-in: an MCP client that starts `butler mcp` as a child process, or connects to
//! a running `butler serve --http`, and calls its tools. `butler demo`, `butler doctor` and the
//! end-to-end tests drive the real server through it.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use butler_worker::config::Secret;
use butler_worker::process::{self, ChildEnv, ChildSpec, Keep, Limits, Supervised, env};

use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, Tool};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// The client side: keeps every progress message the server sends.
#[derive(Clone, Default)]
pub struct ProgressLog {
    messages: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut log) = self.messages.lock() {
            log.push(params.message.unwrap_or_default());
        }
    }
}

/// What a tool call returned, as the Brain would read it.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The envelope (`structuredContent` on success, the text content on error).
    pub envelope: Value,
    pub is_error: bool,
    /// Whether the text content and the structured content carry the same JSON.
    pub consistent: bool,
}

impl Answer {
    pub fn status(&self) -> &str {
        self.envelope["status"].as_str().unwrap_or("")
    }
    pub fn error_code(&self) -> &str {
        self.envelope["error_code"].as_str().unwrap_or("")
    }
    pub fn data(&self) -> &Value {
        &self.envelope["data"]
    }
}

pub struct BrainClient {
    service: RunningService<RoleClient, ProgressLog>,
    progress: ProgressLog,
    /// The server this client started, if it started one.
    child: Option<ServerChild>,
    instructions: Option<String>,
}

/// A `butler mcp` this client started.
struct ServerChild {
    /// Stops the server (TERM to its group, grace, KILL); also when the client is dropped.
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
    ended: JoinHandle<Supervised>,
    pid: u32,
}

/// How long a closed server gets to exit by itself before it is stopped.
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// The end of the server's log, kept for a failing test's message.
const SHORT_LOG: Keep = Keep {
    head: 0,
    tail: 64 << 10,
};
/// The server's log for tests that read it: its start and its end.
const FULL_LOG: Keep = Keep {
    head: 4 << 20,
    tail: 4 << 20,
};

impl BrainClient {
    /// Starts `<butler_exe> mcp` in `cwd`; its environment is what its git may inherit
    /// ([`env::GIT_CHILD`]) plus `envs`. Only the end of the server's log (stderr) is kept.
    pub async fn spawn(
        butler_exe: &Path,
        cwd: &Path,
        envs: &[(String, String)],
    ) -> std::io::Result<Self> {
        Self::start(butler_exe.as_os_str(), &["mcp"], cwd, envs, SHORT_LOG).await
    }

    /// Like [`BrainClient::spawn`], keeping the server's whole log (up to a generous bound) for
    /// [`BrainClient::close_with_log`].
    pub async fn spawn_logged(
        butler_exe: &Path,
        cwd: &Path,
        envs: &[(String, String)],
    ) -> std::io::Result<Self> {
        Self::start(butler_exe.as_os_str(), &["mcp"], cwd, envs, FULL_LOG).await
    }

    /// Starts `program args…` as an MCP server in `cwd`, as a client configured with that
    /// command would, with `envs` added as in [`BrainClient::spawn`].
    pub async fn launch(
        program: &OsStr,
        args: &[String],
        cwd: &Path,
        envs: &[(String, String)],
    ) -> std::io::Result<Self> {
        Self::start(program, args, cwd, envs, SHORT_LOG).await
    }

    async fn start(
        program: &OsStr,
        args: &[impl AsRef<OsStr>],
        cwd: &Path,
        envs: &[(String, String)],
        log: Keep,
    ) -> std::io::Result<Self> {
        let mut vars = ChildEnv::new();
        vars.inherit_groups(env::inherited(), env::GIT_CHILD);
        for (k, v) in envs {
            vars.set(k, v);
        }
        let spec = ChildSpec::new(program, cwd, vars).args(args.iter().map(|a| a.as_ref()));
        let mut limits = Limits::new(Duration::MAX);
        limits.stderr = log;
        let talk = process::converse(spec, limits)?;
        let (pid, stop, ended) = (talk.pid, talk.cancel, talk.ended);
        // Also when this future is dropped half-way (a caller's timeout).
        let stop_on_drop = stop.clone().drop_guard();
        let progress = ProgressLog::default();
        let service = match progress.clone().serve((talk.stdout, talk.stdin)).await {
            Ok(service) => service,
            Err(err) => {
                drop(stop_on_drop);
                let _ = ended.await;
                return Err(std::io::Error::other(err.to_string()));
            }
        };
        let instructions = service
            .peer_info()
            .and_then(|info| info.instructions.clone());
        Ok(Self {
            service,
            progress,
            child: Some(ServerChild {
                stop,
                _stop_on_drop: stop_on_drop,
                ended,
                pid,
            }),
            instructions,
        })
    }

    /// Opens an MCP session with the streamable HTTP server at `url` (`http://host:port/mcp`),
    /// sending `token` as the bearer token when given. A session the server expired is opened
    /// anew by the transport, as a client should (the new session starts without a project).
    pub async fn connect_http(url: &str, token: Option<&Secret>) -> std::io::Result<Self> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token.expose().to_owned());
        }
        let client = butler_worker::http_client::default_client().map_err(std::io::Error::other)?;
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let progress = ProgressLog::default();
        let service = progress
            .clone()
            .serve(transport)
            .await
            .map_err(|err| std::io::Error::other(err.to_string()))?;
        let instructions = service
            .peer_info()
            .and_then(|info| info.instructions.clone());
        Ok(Self {
            service,
            progress,
            child: None,
            instructions,
        })
    }

    /// The server process id, when this client started the server (for tests that kill it).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|child| child.pid)
    }

    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    pub async fn tools(&self) -> Result<Vec<Tool>, rmcp::ServiceError> {
        self.service.list_all_tools().await
    }

    /// Calls `tool` with `args` (a JSON object).
    pub async fn call(&self, tool: &str, args: Value) -> Result<Answer, rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let result = self.service.call_tool(params).await?;
        let is_error = result.is_error.unwrap_or(false);
        let text: Option<Value> = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .and_then(|t| serde_json::from_str(&t.text).ok());
        let structured = result.structured_content.clone();
        let consistent = text.is_some() && text == structured;
        let envelope = if is_error { text } else { structured }.unwrap_or(Value::Null);
        Ok(Answer {
            envelope,
            is_error,
            consistent,
        })
    }

    /// Every progress message received so far, in order.
    pub fn progress(&self) -> Vec<String> {
        self.progress
            .messages
            .lock()
            .map(|log| log.clone())
            .unwrap_or_default()
    }

    /// Calls `tool` and cancels the call after `delay` (as a client does when its user
    /// interrupts); returns once the cancellation was sent.
    pub async fn call_then_cancel(
        &self,
        tool: &str,
        args: Value,
        delay: Duration,
    ) -> Result<(), rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let request = ClientRequest::CallToolRequest(Request::new(params));
        let handle = self
            .service
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await?;
        tokio::time::sleep(delay).await;
        handle.cancel(Some("the user interrupted".into())).await
    }

    /// Ends the connection: the server's input closes, and a server that does not exit by
    /// itself is stopped.
    pub async fn close(self) {
        self.close_with_log().await;
    }

    /// Ends the connection and returns what the server logged (its stderr; the middle of a very
    /// long log is left out; nothing for a server this client did not start).
    pub async fn close_with_log(self) -> String {
        let _ = self.service.cancel().await;
        let Some(child) = self.child else {
            return String::new();
        };
        let mut ended = child.ended;
        let done = match tokio::time::timeout(EXIT_WAIT, &mut ended).await {
            Ok(done) => done,
            Err(_) => {
                child.stop.cancel();
                ended.await
            }
        };
        done.map(|d| d.stderr.text()).unwrap_or_default()
    }
}
