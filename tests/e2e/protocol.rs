//! Protocol hygiene of `butler mcp`: raw JSON-RPC lines written to the real binary's stdin,
//! every answer read back from its stdout.
//!
//! Whatever a client sends, a request gets an answer (so no client waits forever), an answer
//! to something whose id could not be read carries `"id": null`, the server keeps serving
//! after bad input, and stdout holds nothing but JSON-RPC messages.

// The test is a raw client: it starts `butler mcp` itself and writes bytes to its stdin.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::{Value, json};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");
/// Long enough for a loaded machine; an answer that never comes fails the test after this.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);
/// The documented limits (docs/hook.md is for the hook; these are in `transport.rs`).
const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
const MAX_DEPTH: usize = 64;

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    _home: tempfile::TempDir,
}

impl Server {
    fn start() -> Self {
        let home = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(BUTLER)
            .arg("mcp")
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("BUTLER_ISSUE_BACKEND", "local")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn butler mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            _home: home,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to butler mcp");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// The next line on stdout, which must be a JSON-RPC 2.0 message.
    fn next(&self, waiting_for: &str) -> Value {
        let line = match self.lines.recv_timeout(ANSWER_TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no answer within {ANSWER_TIMEOUT:?} to {waiting_for}")
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("butler mcp closed stdout instead of answering {waiting_for}")
            }
        };
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
        message
    }

    /// The answer to a request, which must be an error; returns `(code, id)` with the id as sent
    /// back (an error answer must carry an `id` member, `null` when the id was not readable).
    fn error(&self, waiting_for: &str) -> (i64, Value) {
        let message = self.next(waiting_for);
        let object = message.as_object().expect("an object");
        assert!(
            object.contains_key("id"),
            "an error answer without an `id` member: {message}"
        );
        let code = message["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error answer to {waiting_for}: {message}"));
        assert!(
            message["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "an error without a message: {message}"
        );
        (code, message["id"].clone())
    }

    fn initialize(&mut self) {
        self.send(&json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "protocol-test", "version": "0"}
            }
        }));
        let answer = self.next("initialize");
        assert_eq!(answer["id"], "init", "{answer}");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// The server still answers: a ping gets its empty result.
    fn assert_alive(&mut self, after: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": "alive", "method": "ping"}));
        let answer = self.next(&format!("a ping after {after}"));
        assert_eq!(answer["id"], "alive", "{answer}");
        assert!(answer["result"].is_object(), "{answer}");
    }

    /// Close stdin: the server must end by itself, successfully, with nothing more on stdout.
    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
        loop {
            match self.child.try_wait().expect("try_wait") {
                Some(status) => {
                    assert!(status.success(), "butler mcp ended with {status}");
                    break;
                }
                None if std::time::Instant::now() > deadline => {
                    let _ = self.child.kill();
                    panic!("butler mcp did not end after its stdin closed");
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let rest: Vec<String> = self.lines.try_iter().collect();
        assert!(rest.is_empty(), "unexpected output: {rest:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `[[[…]]]` nested `depth` levels deep (the outer brackets count as level 1).
fn nested_array(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn unparsable_input_gets_a_parse_error_with_a_null_id() {
    let mut server = Server::start();
    server.initialize();
    let inputs: [&[u8]; 5] = [
        b"this is not json\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n",
        b"\xff\xfe{\"jsonrpc\":\"2.0\"}\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",}\n",
    ];
    for input in inputs {
        server.send_raw(input);
        let shown = String::from_utf8_lossy(input);
        let (code, id) = server.error(&format!("unparsable {shown:?}"));
        assert_eq!(code, -32700, "{shown}");
        assert_eq!(id, Value::Null, "{shown}");
    }
    server.assert_alive("unparsable input");
    server.finish();
}

#[test]
fn unparsable_input_before_initialize_is_answered_too() {
    let mut server = Server::start();
    server.send_raw(b"{oops\n");
    let (code, id) = server.error("unparsable input before initialize");
    assert_eq!((code, id), (-32700, Value::Null));
    server.initialize();
    server.assert_alive("unparsable input before initialize");
    server.finish();
}

#[test]
fn json_that_is_not_a_request_gets_invalid_request() {
    let mut server = Server::start();
    server.initialize();
    let cases = [
        (json!({"foo": 1}), Value::Null),
        (json!({"jsonrpc": "2.0", "id": 5}), json!(5)),
        (
            json!({"jsonrpc": "1.0", "id": 6, "method": "ping"}),
            json!(6),
        ),
        (json!({"id": "seven", "method": "ping"}), json!("seven")),
        (json!({"jsonrpc": "2.0", "id": 8, "method": 5}), json!(8)),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
            Value::Null,
        ),
        (json!([]), Value::Null),
        (
            json!([{"jsonrpc": "2.0", "id": 9, "method": "ping"}]),
            Value::Null,
        ),
        (json!(42), Value::Null),
        (json!("a string"), Value::Null),
        (Value::Null, Value::Null),
    ];
    for (message, expected_id) in cases {
        server.send(&message);
        let (code, id) = server.error(&format!("{message}"));
        assert_eq!(code, -32600, "{message}");
        assert_eq!(id, expected_id, "{message}");
    }
    server.assert_alive("invalid requests");
    server.finish();
}

#[test]
fn malformed_tool_call_params_get_invalid_params() {
    let mut server = Server::start();
    server.initialize();
    let cases = [
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call"}),
        json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": 5}),
        json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": "work_observe"}),
        json!({"jsonrpc": "2.0", "id": 14, "method": "tools/call", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": {"name": 5}}),
        json!({"jsonrpc": "2.0", "id": 16, "method": "tools/call",
               "params": {"name": "work_observe", "arguments": "not an object"}}),
        json!({"jsonrpc": "2.0", "id": 17, "method": "tools/call",
               "params": {"name": "work_observe", "arguments": [1, 2]}}),
        json!({"jsonrpc": "2.0", "id": 18, "method": "tools/list", "params": 5}),
        json!({"jsonrpc": "2.0", "id": 19, "method": "initialize", "params": {"x": 1}}),
    ];
    for message in cases {
        server.send(&message);
        let (code, id) = server.error(&format!("{message}"));
        assert_eq!(code, -32602, "{message}");
        assert_eq!(id, message["id"], "{message}");
    }
    // An unknown method stays "method not found".
    server.send(&json!({"jsonrpc": "2.0", "id": 20, "method": "frobnicate", "params": {}}));
    let (code, id) = server.error("an unknown method");
    assert_eq!((code, id), (-32601, json!(20)));
    server.assert_alive("malformed params");
    server.finish();
}

#[test]
fn oversized_request_gets_an_error_naming_its_id() {
    let mut server = Server::start();
    server.initialize();
    let padding = "x".repeat(MAX_MESSAGE_BYTES + 1);
    let message = json!({
        "jsonrpc": "2.0", "id": 21, "method": "tools/call",
        "params": {"name": "work_record", "arguments": {"message": padding}}
    });
    server.send(&message);
    let (code, id) = server.error("an oversized request");
    assert_eq!((code, id), (-32600, json!(21)));
    // The id is read from the start of the line; when it is not there, the answer says null.
    let no_id = format!("{{\"params\":\"{padding}\"}}\n");
    server.send_raw(no_id.as_bytes());
    let (code, id) = server.error("an oversized message without id");
    assert_eq!((code, id), (-32600, Value::Null));
    // A line that never ends within the limit is refused as soon as the limit is passed, and the
    // rest of that line is skipped.
    let mut endless = br#"{"jsonrpc":"2.0","id":"long","method":"ping","params":{"p":""#.to_vec();
    endless.extend(std::iter::repeat_n(b'y', MAX_MESSAGE_BYTES * 2));
    endless.extend(b"\"}}\n");
    server.send_raw(&endless);
    let (code, id) = server.error("an endless line");
    assert_eq!((code, id), (-32600, json!("long")));
    server.assert_alive("oversized requests");
    server.finish();
}

#[test]
fn too_deep_request_gets_an_error_naming_its_id() {
    let mut server = Server::start();
    server.initialize();
    for depth in [MAX_DEPTH + 1, 200, 100_000] {
        // The params object and the arguments object are two levels, the message a third.
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{depth},\"method\":\"tools/call\",\"params\":\
             {{\"name\":\"work_observe\",\"arguments\":{{\"x\":{}}}}}}}\n",
            nested_array(depth)
        );
        server.send_raw(line.as_bytes());
        let (code, id) = server.error(&format!("a request {depth} levels deep"));
        assert_eq!((code, id), (-32600, json!(depth)), "depth {depth}");
    }
    // Within the limit, nesting is fine: a ping with deep but allowed metadata is answered.
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"deep-ok\",\"method\":\"ping\",\"params\":\
         {{\"_meta\":{{\"x\":{}}}}}}}\n",
        nested_array(MAX_DEPTH - 4)
    );
    server.send_raw(line.as_bytes());
    let answer = server.next("a ping within the depth limit");
    assert_eq!(answer["id"], "deep-ok", "{answer}");
    assert!(answer["result"].is_object(), "{answer}");
    server.assert_alive("too deep requests");
    server.finish();
}

#[test]
fn notifications_before_initialize_do_not_end_the_server() {
    let mut server = Server::start();
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1}}),
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "something/custom"}));
    server.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    server.initialize();
    server.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
    let answer = server.next("tools/list");
    assert_eq!(answer["id"], "list", "{answer}");
    assert!(
        answer["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{answer}"
    );
    server.finish();
}

#[test]
fn blank_lines_and_crlf_are_accepted() {
    let mut server = Server::start();
    server.send_raw(b"\n\r\n   \n\t\n");
    server.initialize();
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r\n");
    let answer = server.next("a ping ended by CRLF");
    assert_eq!(answer["id"], "crlf", "{answer}");
    server.finish();
}

/// `_meta` carrying what the 2026-07-28 revision asks of every request.
fn inline_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

#[test]
fn discovery_and_a_refused_early_request_leave_the_handshake_open() {
    let mut server = Server::start();
    server.send(
        &json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover",
                        "params": {"_meta": inline_meta()}}),
    );
    let answer = server.next("server/discover");
    assert_eq!(answer["id"], "d", "{answer}");
    // A request without the metadata is refused by rmcp, and the handshake stays open: a
    // notification after it must not end the server.
    server.send(&json!({"jsonrpc": "2.0", "id": "early", "method": "tools/list"}));
    let (_, id) = server.error("tools/list before initialize");
    assert_eq!(id, json!("early"));
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.initialize();
    server.assert_alive("discovery");
    server.finish();
}

#[test]
fn a_session_begun_without_initialize_takes_notifications() {
    let mut server = Server::start();
    server.send(
        &json!({"jsonrpc": "2.0", "id": "inline", "method": "tools/list",
                        "params": {"_meta": inline_meta()}}),
    );
    let answer = server.next("tools/list with inline metadata");
    assert_eq!(answer["id"], "inline", "{answer}");
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    server.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "gone"}}),
    );
    server.send(
        &json!({"jsonrpc": "2.0", "id": "again", "method": "tools/list",
                        "params": {"_meta": inline_meta()}}),
    );
    let answer = server.next("a second tools/list");
    assert_eq!(answer["id"], "again", "{answer}");
    server.finish();
}
