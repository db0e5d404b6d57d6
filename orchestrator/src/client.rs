//! A Brain stand-in: an MCP client that starts `butler mcp` as a child process and calls its
//! tools. `butler demo` and the end-to-end tests drive the real server through it.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, Tool};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

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
    log: Arc<Mutex<String>>,
    drain: Option<tokio::task::JoinHandle<()>>,
    pid: Option<u32>,
    instructions: Option<String>,
}

impl BrainClient {
    /// Starts `<butler_exe> mcp` with `envs` added to its environment, in `cwd`; the server's
    /// log (stderr) is discarded.
    pub async fn spawn(
        butler_exe: &Path,
        cwd: &Path,
        envs: &[(String, String)],
    ) -> std::io::Result<Self> {
        Self::start(butler_exe, cwd, envs, false).await
    }

    /// Like [`BrainClient::spawn`], keeping the server's log for [`BrainClient::server_log`].
    pub async fn spawn_logged(
        butler_exe: &Path,
        cwd: &Path,
        envs: &[(String, String)],
    ) -> std::io::Result<Self> {
        Self::start(butler_exe, cwd, envs, true).await
    }

    async fn start(
        butler_exe: &Path,
        cwd: &Path,
        envs: &[(String, String)],
        keep_log: bool,
    ) -> std::io::Result<Self> {
        let mut cmd = tokio::process::Command::new(butler_exe);
        cmd.arg("mcp").current_dir(cwd);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let stderr = if keep_log {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let (transport, pipe) = TokioChildProcess::builder(cmd).stderr(stderr).spawn()?;
        let log = Arc::new(Mutex::new(String::new()));
        let drain = pipe.map(|mut pipe| {
            let sink = Arc::clone(&log);
            tokio::spawn(async move {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut text) = sink.lock() {
                        text.push_str(&String::from_utf8_lossy(&chunk[..n]));
                    }
                }
            })
        });
        let pid = transport.id();
        let progress = ProgressLog::default();
        let service = progress
            .clone()
            .serve(transport)
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let instructions = service
            .peer_info()
            .and_then(|info| info.instructions.clone());
        Ok(Self {
            service,
            progress,
            pid,
            instructions,
            log,
            drain,
        })
    }

    /// The server process id (for tests that kill it).
    pub fn pid(&self) -> Option<u32> {
        self.pid
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

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }

    /// Ends the connection and returns everything the server logged (with
    /// [`BrainClient::spawn_logged`]; empty otherwise).
    pub async fn close_with_log(self) -> String {
        let _ = self.service.cancel().await;
        if let Some(drain) = self.drain {
            let _ = tokio::time::timeout(Duration::from_secs(10), drain).await;
        }
        self.log.lock().map(|text| text.clone()).unwrap_or_default()
    }
}
