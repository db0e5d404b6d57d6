//! The stdio transport of `butler mcp`: one JSON-RPC message per line, checked before rmcp sees
//! it.
//!
//! rmcp's own line transport drops unparsable lines and lines over its size limit without a
//! word (so the client waits forever for an answer), answers other bad messages without an
//! `id` member, and hands a request for a known method with malformed params to the handler as
//! a custom request (answered `-32601`, method not found). Its server also ends when anything
//! but a request arrives before `initialize`. This transport reads each line itself and:
//!
//! - refuses a line longer than [`MAX_MESSAGE_BYTES`] (as soon as the limit is passed; the rest
//!   of the line is skipped) or nested deeper than [`MAX_DEPTH`] with `-32600` Invalid Request,
//!   naming the request's id when it can be read from the line's start;
//! - answers a line that is not JSON with `-32700` Parse error and `"id": null`;
//! - answers JSON that is not a JSON-RPC message with `-32600`, and a request for a method
//!   rmcp knows whose params do not fit that method with `-32602` Invalid params;
//! - gives every error answer an `id` member (`null` when the id could not be read), its own and
//!   rmcp's alike;
//! - drops notifications and responses that arrive before the session has begun, instead of
//!   passing them to rmcp's handshake, which would end the server;
//! - never answers a notification (JSON-RPC forbids it), however malformed.
//!
//! Everything else goes to rmcp unchanged. Output goes through one writer task, so answers
//! produced here and by rmcp never interleave within a line, and stdout carries nothing but
//! protocol messages.

use std::borrow::Cow;
use std::io;

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CancelTaskMethod, ClientJsonRpcMessage,
    ClientRequest, CompleteRequestMethod, ConstString, DiscoverRequestMethod,
    GetPromptRequestMethod, GetSkillRequestMethod, GetTaskMethod, InitializeRequestParams,
    InitializeResultMethod, JsonRpcMessage, ListPromptsRequestMethod,
    ListResourceTemplatesRequestMethod, ListResourcesRequestMethod, ListSkillsRequestMethod,
    ListToolsRequestMethod, PingRequestMethod, ReadResourceDirectoryRequestMethod,
    ReadResourceRequestMethod, RequestId, SetLevelRequestMethod, SubscribeRequestMethod,
    SubscriptionsListenRequestMethod, UnsubscribeRequestMethod, UpdateTaskMethod,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line accepted, in bytes (Butler's requests are small; a tool call's arguments
/// are bounded well below this).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// The deepest nesting of arrays and objects accepted (the message object itself is level 1).
pub const MAX_DEPTH: usize = 64;
/// An oversized line's id is looked for in this many bytes from its start.
const ID_SCAN_BYTES: usize = 64 * 1024;
/// Answers queued for the writer task before a sender waits.
const OUTBOX: usize = 64;
/// Detail from a params error shown to the client, at most this many characters.
const MAX_DETAIL_CHARS: usize = 200;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// Request methods rmcp's [`ClientRequest`] knows. A request naming one of these that rmcp
/// could not read has params that do not fit the method (rmcp would otherwise pass it on as a
/// custom request).
const KNOWN_METHODS: &[&str] = &[
    PingRequestMethod::VALUE,
    InitializeResultMethod::VALUE,
    DiscoverRequestMethod::VALUE,
    CompleteRequestMethod::VALUE,
    SetLevelRequestMethod::VALUE,
    GetPromptRequestMethod::VALUE,
    ListPromptsRequestMethod::VALUE,
    ListResourcesRequestMethod::VALUE,
    ListResourceTemplatesRequestMethod::VALUE,
    ReadResourceRequestMethod::VALUE,
    SubscriptionsListenRequestMethod::VALUE,
    SubscribeRequestMethod::VALUE,
    UnsubscribeRequestMethod::VALUE,
    CallToolRequestMethod::VALUE,
    ListToolsRequestMethod::VALUE,
    GetTaskMethod::VALUE,
    UpdateTaskMethod::VALUE,
    CancelTaskMethod::VALUE,
    ListSkillsRequestMethod::VALUE,
    GetSkillRequestMethod::VALUE,
    ReadResourceDirectoryRequestMethod::VALUE,
];

/// Where the session stands, as far as what may be handed to rmcp is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lifecycle {
    /// No session yet: rmcp's handshake accepts only requests.
    Waiting,
    /// A request that may begin the session was handed over; whether it did is known once rmcp
    /// asks for the next message (it answers a refused one first).
    Beginning { id: RequestId, refused: bool },
    /// The session runs: everything valid goes to rmcp.
    Running,
}

/// What one incoming line amounts to.
enum Inbound {
    /// A message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// An answer this transport gives itself (one line, newline included).
    Answer(Vec<u8>),
    /// Nothing to do (a blank line, a malformed notification).
    Nothing,
}

/// How a bounded line read ended.
enum LineRead {
    /// A whole line is in the buffer.
    Line,
    /// The line passed the size limit; its start is in the buffer, the rest is being skipped.
    Oversized,
    /// The peer closed its end.
    Eof,
}

/// The transport handed to rmcp; see the module documentation.
pub struct LineTransport<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Skipping the rest of a line that passed the size limit.
    skipping: bool,
    outbox: Option<mpsc::Sender<Vec<u8>>>,
    /// An answer produced while reading and not yet queued; kept here so that a `receive`
    /// cancelled while waiting for room in the queue does not lose it.
    pending: Option<Vec<u8>>,
    lifecycle: Lifecycle,
}

/// The task that writes every outgoing line; await it after the service ends so that nothing
/// queued is lost.
pub struct Output(JoinHandle<()>);

impl Output {
    /// Wait until every queued line is written (or writing failed).
    pub async fn finish(self) {
        // A panicked writer has nothing left to flush.
        let _ = self.0.await;
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> LineTransport<R> {
    /// A transport reading `read` and writing `write`, and the task doing the writing (spawned
    /// on the current tokio runtime).
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, write: W) -> (Self, Output) {
        let (tx, rx) = mpsc::channel(OUTBOX);
        let writer = tokio::spawn(write_lines(rx, write));
        let transport = Self {
            reader: BufReader::new(read),
            line: Vec::new(),
            skipping: false,
            outbox: Some(tx),
            pending: None,
            lifecycle: Lifecycle::Waiting,
        };
        (transport, Output(writer))
    }

    /// Read one line into `self.line` without letting it grow past [`MAX_MESSAGE_BYTES`].
    /// Cancellation-safe: bytes are consumed from the reader only as they are copied, with no
    /// await in between, so a cancelled read resumes where it stopped.
    async fn read_line(&mut self) -> io::Result<LineRead> {
        loop {
            let (consumed, outcome) = {
                let available = self.reader.fill_buf().await?;
                if available.is_empty() {
                    return Ok(LineRead::Eof);
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if self.skipping {
                    if newline.is_some() {
                        self.skipping = false;
                    }
                    (take, None)
                } else if self.line.len() + take > MAX_MESSAGE_BYTES {
                    let room = ID_SCAN_BYTES.saturating_sub(self.line.len()).min(take);
                    self.line.extend_from_slice(&available[..room]);
                    self.skipping = newline.is_none();
                    (take, Some(LineRead::Oversized))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| LineRead::Line))
                }
            };
            self.reader.consume(consumed);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// Whether `message` may go to rmcp now, updating the lifecycle.
    fn admit(&mut self, message: &ClientJsonRpcMessage) -> bool {
        if let Lifecycle::Beginning { refused, .. } = self.lifecycle {
            self.lifecycle = if refused {
                Lifecycle::Waiting
            } else {
                Lifecycle::Running
            };
        }
        if self.lifecycle == Lifecycle::Running {
            return true;
        }
        match message {
            JsonRpcMessage::Request(request) => {
                if !matches!(
                    request.request,
                    ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
                ) {
                    self.lifecycle = Lifecycle::Beginning {
                        id: request.id.clone(),
                        refused: false,
                    };
                }
                true
            }
            _ => {
                tracing::debug!("dropping a message that is not a request before the session");
                false
            }
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn name() -> Cow<'static, str> {
        "butler-line-transport".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let (JsonRpcMessage::Error(error), Lifecycle::Beginning { id, refused }) =
            (&item, &mut self.lifecycle)
            && error.id.as_ref() == Some(id)
        {
            *refused = true;
        }
        let line = encode(&item);
        let outbox = self.outbox.clone();
        async move {
            let line = line?;
            let outbox = outbox.ok_or_else(closed)?;
            outbox.send(line).await.map_err(|_| closed())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.pending.is_some() {
                let permit = self.outbox.as_ref()?.reserve().await.ok()?;
                if let Some(answer) = self.pending.take() {
                    permit.send(answer);
                }
            }
            let read = match self.read_line().await {
                Ok(read) => read,
                Err(e) => {
                    tracing::error!("reading stdin: {e}");
                    return None;
                }
            };
            let inbound = match read {
                LineRead::Eof => return None,
                LineRead::Oversized => Inbound::Answer(error_line(
                    INVALID_REQUEST,
                    &format!(
                        "Invalid Request: the message is longer than {MAX_MESSAGE_BYTES} bytes"
                    ),
                    top_level_id(&self.line),
                )),
                LineRead::Line => inspect(&self.line),
            };
            self.line.clear();
            match inbound {
                Inbound::Message(message) => {
                    if self.admit(&message) {
                        return Some(*message);
                    }
                }
                Inbound::Answer(answer) => self.pending = Some(answer),
                Inbound::Nothing => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.outbox = None;
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed")
}

/// One outgoing message as a line; an error answer always carries an `id` member.
fn encode(item: &TxJsonRpcMessage<RoleServer>) -> io::Result<Vec<u8>> {
    let mut line = match item {
        JsonRpcMessage::Error(_) => {
            let mut value = serde_json::to_value(item)?;
            if let Some(object) = value.as_object_mut() {
                object.entry("id").or_insert(Value::Null);
            }
            serde_json::to_vec(&value)?
        }
        _ => serde_json::to_vec(item)?,
    };
    line.push(b'\n');
    Ok(line)
}

async fn write_lines<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<Vec<u8>>, mut write: W) {
    while let Some(line) = rx.recv().await {
        let written = async {
            write.write_all(&line).await?;
            write.flush().await
        };
        if let Err(e) = written.await {
            tracing::error!("writing stdout: {e}");
            return;
        }
    }
}

/// Decide what one complete line (newline included) amounts to.
fn inspect(raw: &[u8]) -> Inbound {
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Inbound::Nothing;
    }
    if nesting_exceeds(line, MAX_DEPTH) {
        return Inbound::Answer(error_line(
            INVALID_REQUEST,
            &format!("Invalid Request: the message is nested deeper than {MAX_DEPTH} levels"),
            top_level_id(line),
        ));
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Inbound::Answer(error_line(
                PARSE_ERROR,
                &format!("Parse error: {}", bounded(&e.to_string())),
                Value::Null,
            ));
        }
    };
    let Some(object) = value.as_object() else {
        let what = if value.is_array() {
            "batches are not supported; send one message per line"
        } else {
            "a message must be a JSON object"
        };
        return Inbound::Answer(error_line(
            INVALID_REQUEST,
            &format!("Invalid Request: {what}"),
            Value::Null,
        ));
    };
    let id = object
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let is_notification =
        !object.contains_key("id") && object.get("method").is_some_and(Value::is_string);
    let known_method = object
        .get("method")
        .and_then(Value::as_str)
        .filter(|m| KNOWN_METHODS.contains(m));
    let invalid_params = |method: &str| {
        Inbound::Answer(error_line(
            INVALID_PARAMS,
            &invalid_params_message(method, object.get("params")),
            id.clone(),
        ))
    };
    match ClientJsonRpcMessage::deserialize(&value) {
        Ok(JsonRpcMessage::Request(request)) => match (&request.request, known_method) {
            // rmcp reads a known method whose params do not fit as a custom request.
            (ClientRequest::CustomRequest(_), Some(method)) => invalid_params(method),
            _ => Inbound::Message(Box::new(JsonRpcMessage::Request(request))),
        },
        Ok(message) => Inbound::Message(Box::new(message)),
        Err(e) if is_notification => {
            tracing::debug!("ignoring a malformed notification ({e})");
            Inbound::Nothing
        }
        // A request for a known method that reads once its params are left out: the params
        // are what is wrong.
        Err(_) if known_method.is_some() && without_params_reads(object) => {
            invalid_params(known_method.unwrap_or_default())
        }
        Err(e) => {
            let detail = match object.get("method").and_then(Value::as_str) {
                Some(method) => format!("`{}`: {}", bounded(method), bounded(&e.to_string())),
                None => bounded(&e.to_string()),
            };
            Inbound::Answer(error_line(
                INVALID_REQUEST,
                &format!("Invalid Request: {detail}"),
                id,
            ))
        }
    }
}

/// Whether the message reads as JSON-RPC once its `params` are taken out.
fn without_params_reads(object: &serde_json::Map<String, Value>) -> bool {
    if !object.contains_key("params") {
        return false;
    }
    let rest: serde_json::Map<String, Value> = object
        .iter()
        .filter(|(k, _)| k.as_str() != "params")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    ClientJsonRpcMessage::deserialize(&Value::Object(rest)).is_ok()
}

/// What is wrong with the params of `method`, as precisely as the method's params type says.
fn invalid_params_message(method: &str, params: Option<&Value>) -> String {
    let typed = |value: &Value| -> Option<String> {
        let error = match method {
            CallToolRequestMethod::VALUE => {
                serde_json::from_value::<CallToolRequestParams>(value.clone()).err()
            }
            InitializeResultMethod::VALUE => {
                serde_json::from_value::<InitializeRequestParams>(value.clone()).err()
            }
            _ => None,
        };
        error.map(|e| bounded(&e.to_string()))
    };
    match params {
        None => format!("Invalid params: `{method}` needs params"),
        Some(value) => match typed(value) {
            Some(detail) => format!("Invalid params for `{method}`: {detail}"),
            None => format!("Invalid params: they do not fit `{method}`"),
        },
    }
}

fn bounded(text: &str) -> String {
    if text.chars().count() <= MAX_DETAIL_CHARS {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_DETAIL_CHARS).collect();
    out.push('…');
    out
}

/// A JSON-RPC error answer as one line.
fn error_line(code: i64, message: &str, id: Value) -> Vec<u8> {
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// Whether arrays and objects in `json` nest deeper than `limit` (strings are skipped; the text
/// need not be valid JSON). Linear, no recursion.
fn nesting_exceeds(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The `id` member of the top-level object in `json`, read without parsing the whole text (it
/// may be cut short or nested too deeply for a parser): a string or a number, else null.
fn top_level_id(json: &[u8]) -> Value {
    let mut scan = Scan { text: json, at: 0 };
    scan.id().unwrap_or(Value::Null)
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn id(&mut self) -> Option<Value> {
        self.space();
        self.eat(b'{')?;
        loop {
            self.space();
            let key_start = self.at;
            self.string()?;
            let key = &self.text[key_start..self.at];
            self.space();
            self.eat(b':')?;
            self.space();
            let value_start = self.at;
            self.value()?;
            if key == b"\"id\"" {
                let value: Value = serde_json::from_slice(&self.text[value_start..self.at]).ok()?;
                return (value.is_string() || value.is_number()).then_some(value);
            }
            self.space();
            self.eat(b',')?;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// Skip a string, quotes included.
    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }

    /// Skip one value of any kind; nested values are skipped by counting brackets.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                (self.at < self.text.len()).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_the_start_of_a_line() {
        let id = |s: &str| top_level_id(s.as_bytes());
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#), json!(7));
        assert_eq!(
            id(r#"{"params":{"id":1,"a":[{"id":2}]},"id":"s"}"#),
            json!("s")
        );
        assert_eq!(id(r#"{"a":"quoted \" \\","id":-3.5}"#), json!(-3.5));
        assert_eq!(id(r#" { "id" : "x\u0041" } "#), json!("xA"));
        assert_eq!(id(r#"{"id":null}"#), Value::Null);
        assert_eq!(id(r#"{"id":{"a":1}}"#), Value::Null);
        assert_eq!(id(r#"{"params":"cut sho"#), Value::Null);
        assert_eq!(id(r#"{"id":"cut sho"#), Value::Null);
        assert_eq!(id(r#"{"id":12"#), Value::Null);
        assert_eq!(id(r#"[{"id":1}]"#), Value::Null);
        let deep = format!(r#"{{"p":{}{},"id":9}}"#, "[".repeat(5000), "]".repeat(5000));
        assert_eq!(id(&deep), json!(9));
    }

    #[test]
    fn nesting_is_counted_outside_strings() {
        assert!(!nesting_exceeds(br#"{"a":"[[[[[[[["}"#, 2));
        assert!(nesting_exceeds(br#"{"a":[[1]]}"#, 2));
        assert!(!nesting_exceeds(br#"{"a":[1],"b":{"c":2}}"#, 2));
        assert!(!nesting_exceeds(br#"{"a":"\"[[[["}"#, 1));
    }

    #[test]
    fn every_known_method_is_what_rmcp_reads_as_that_request() {
        // A well-formed ping and tools/list are read as themselves, not as custom requests.
        for (method, params) in [("ping", None), ("tools/list", Some(json!({})))] {
            let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": method});
            if let Some(p) = params {
                message["params"] = p;
            }
            let parsed: ClientJsonRpcMessage = serde_json::from_value(message).expect("parses");
            let JsonRpcMessage::Request(request) = parsed else {
                panic!("a request");
            };
            assert!(!matches!(request.request, ClientRequest::CustomRequest(_)));
            assert!(KNOWN_METHODS.contains(&method));
        }
    }

    /// The `const` a schema node stands for, following a `$ref` into `root`'s definitions.
    fn const_of<'a>(node: &'a Value, root: &'a Value) -> Option<&'a str> {
        if let Some(c) = node.get("const") {
            return c.as_str();
        }
        let name = node.get("$ref")?.as_str()?.rsplit('/').next()?;
        let defs = root.get("$defs").or_else(|| root.get("definitions"))?;
        const_of(defs.get(name)?, root)
    }

    /// Every `method` property's `const` under `node`.
    fn methods_in<'a>(node: &'a Value, root: &'a Value, out: &mut Vec<&'a str>) {
        match node {
            Value::Object(map) => {
                if let Some(method) = map.get("properties").and_then(|p| p.get("method"))
                    && let Some(name) = const_of(method, root)
                {
                    out.push(name);
                }
                map.values().for_each(|v| methods_in(v, root, out));
            }
            Value::Array(items) => items.iter().for_each(|v| methods_in(v, root, out)),
            _ => {}
        }
    }

    #[test]
    fn known_methods_are_all_of_rmcps_client_requests() {
        // `ClientRequest` is `#[non_exhaustive]`, so no match outside rmcp can list its
        // variants without a `_` arm; its JSON schema (rmcp derives it) does: each request's
        // `method` is a `const`, and a custom request's is any string.
        let schema = serde_json::to_value(schemars::schema_for!(ClientRequest)).expect("JSON");
        let mut found = Vec::new();
        methods_in(&schema, &schema, &mut found);
        let rmcps: std::collections::BTreeSet<&str> = found.into_iter().collect();
        let ours: std::collections::BTreeSet<&str> = KNOWN_METHODS.iter().copied().collect();
        assert_eq!(ours.len(), KNOWN_METHODS.len(), "each method once");
        assert_eq!(rmcps, ours);
    }

    #[test]
    fn malformed_params_of_a_known_method_are_invalid_params() {
        let line = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}
"#;
        let Inbound::Answer(answer) = inspect(line) else {
            panic!("answered here");
        };
        let answer: Value = serde_json::from_slice(&answer).expect("JSON");
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        assert_eq!(answer["id"], 4);
    }

    #[test]
    fn malformed_notifications_are_never_answered() {
        let line = br#"{"jsonrpc":"1.0","method":"notifications/cancelled","params":5}"#;
        assert!(matches!(inspect(line), Inbound::Nothing));
    }
}
