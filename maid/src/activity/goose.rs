//! goose `run --output-format stream-json`: one JSON object a line, tagged by `type`:
//! `message` (a conversation message: `role`, `id`, `content` parts `text`, `toolRequest`
//! `{id, toolCall: {status, value: {name, arguments}}}`, `toolResponse` `{id, toolResult:
//! {status, value: {content, isError}}}`), `notification` (an extension's log), `error`, and
//! `complete` (`total_tokens`). Streamed text comes as several messages with one id (goose
//! 1.43 splits a reply so): their parts are joined into one message event.

use std::collections::HashMap;

use butler_worker::contract::{AgentEvent, Usage};
use serde_json::Value;

use super::{Parser, content_text, plain, tool_call};

#[derive(Default)]
pub(super) struct Goose {
    /// The assistant text being streamed, and its message id.
    text: Option<(Option<String>, String)>,
    /// Tool requests waiting for their response, by id: the tool and its arguments.
    pending: HashMap<String, (String, Value)>,
}

impl Goose {
    fn flush(&mut self, out: &mut Vec<AgentEvent>) {
        if let Some((_, text)) = self.text.take()
            && !text.trim().is_empty()
        {
            out.push(AgentEvent::message(&text));
        }
    }

    fn message(&mut self, message: &Value, out: &mut Vec<AgentEvent>) {
        let assistant = message.get("role").and_then(Value::as_str) == Some("assistant");
        let id = message.get("id").and_then(Value::as_str).map(str::to_owned);
        let parts = message.get("content").and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            match part.get("type").and_then(Value::as_str) {
                Some("text") if assistant => {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                    match &mut self.text {
                        Some((held, joined)) if *held == id && id.is_some() => {
                            joined.push_str(text);
                        }
                        _ => {
                            self.flush(out);
                            self.text = Some((id.clone(), text.to_owned()));
                        }
                    }
                }
                Some("toolRequest") => {
                    self.flush(out);
                    self.request(part, out);
                }
                Some("toolResponse") => {
                    self.flush(out);
                    self.response(part, out);
                }
                _ => {}
            }
        }
    }

    fn request(&mut self, part: &Value, out: &mut Vec<AgentEvent>) {
        let call = part.get("toolCall");
        let ok = call.and_then(|c| c.get("status")).and_then(Value::as_str) == Some("success");
        let value = call.and_then(|c| c.get("value"));
        let name = value.and_then(|v| v.get("name")).and_then(Value::as_str);
        match (ok, name) {
            (true, Some(name)) => {
                let args = value
                    .and_then(|v| v.get("arguments"))
                    .cloned()
                    .unwrap_or(Value::Null);
                out.push(tool_call(name, &args));
                if let Some(id) = part.get("id").and_then(Value::as_str) {
                    self.pending.insert(id.to_owned(), (name.to_owned(), args));
                }
            }
            _ => {
                let why = call
                    .and_then(|c| c.get("error"))
                    .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
                    .unwrap_or_else(|| "a tool request goose could not read".to_owned());
                out.push(AgentEvent::error(&format!("tool request failed: {why}")));
            }
        }
    }

    fn response(&mut self, part: &Value, out: &mut Vec<AgentEvent>) {
        let Some((tool, args)) = part
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| self.pending.remove(id))
        else {
            return;
        };
        let result = part.get("toolResult");
        let value = result.and_then(|r| r.get("value"));
        let failed = result.and_then(|r| r.get("status")).and_then(Value::as_str)
            != Some("success")
            || value
                .and_then(|v| v.get("isError"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
        // Older goose gives the content list itself as the value.
        let text = value
            .map(|v| content_text(v.get("content").unwrap_or(v)))
            .unwrap_or_default();
        let base = tool.rsplit("__").next().unwrap_or(&tool);
        let arg = |key: &str| args.get(key).and_then(Value::as_str);
        match base {
            "shell" => {
                let command = arg("command").unwrap_or_default();
                out.push(AgentEvent::command(command, None, failed));
            }
            "write" | "edit" | "text_editor" if !failed && edits(base, arg("command")) => {
                if let Some(path) = arg("path") {
                    out.push(AgentEvent::FileEdited {
                        path: path.to_owned(),
                    });
                }
            }
            _ if failed => out.push(AgentEvent::error(&format!("{tool} failed: {text}"))),
            _ => {}
        }
    }
}

/// Whether a call of goose's editing tools changes a file (`text_editor` also views).
fn edits(tool: &str, command: Option<&str>) -> bool {
    tool != "text_editor"
        || matches!(
            command,
            Some("write" | "str_replace" | "insert" | "undo_edit" | "create")
        )
}

impl Parser for Goose {
    fn line(&mut self, line: &str) -> Vec<AgentEvent> {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return plain(line);
        };
        let mut out = Vec::new();
        match value.get("type").and_then(Value::as_str) {
            Some("message") => {
                if let Some(message) = value.get("message") {
                    self.message(message, &mut out);
                }
            }
            Some("notification" | "model_change") => {}
            Some("error") => {
                self.flush(&mut out);
                let error = value.get("error").and_then(Value::as_str).unwrap_or(line);
                out.push(AgentEvent::error(error));
            }
            Some("complete") => {
                self.flush(&mut out);
                let n = |key: &str| value.get(key).and_then(Value::as_u64);
                let usage = Usage {
                    input_tokens: n("input_tokens"),
                    output_tokens: n("output_tokens"),
                    total_tokens: n("total_tokens"),
                    ..Usage::default()
                };
                if !usage.is_empty() {
                    out.push(AgentEvent::Usage(usage));
                }
            }
            _ => return plain(line),
        }
        out
    }

    fn end(&mut self) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        self.flush(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines in the shapes goose 1.x writes with `--output-format stream-json` (from its
    /// public message format, with one reply streamed as several messages of one id).
    const RUN: &[&str] = &[
        r#"{"type":"message","message":{"id":"m1","role":"assistant","created":1,"content":[{"type":"text","text":"Let me "}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":"m1","role":"assistant","created":1,"content":[{"type":"text","text":"look."}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":"m2","role":"assistant","created":2,"content":[{"type":"toolRequest","id":"call_1","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"ls src"}}}}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":null,"role":"user","created":3,"content":[{"type":"toolResponse","id":"call_1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"lib.rs"}],"isError":false}}}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":"m3","role":"assistant","created":4,"content":[{"type":"toolRequest","id":"call_2","toolCall":{"status":"success","value":{"name":"write","arguments":{"path":"src/greet.rs","content":"pub fn greet() {}\n"}}}}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":null,"role":"user","created":5,"content":[{"type":"toolResponse","id":"call_2","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"wrote"}],"isError":false}}}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"notification","extension_id":"developer","log":{"message":"ok"}}"#,
        r#"{"type":"message","message":{"id":"m4","role":"assistant","created":6,"content":[{"type":"toolRequest","id":"call_3","toolCall":{"status":"success","value":{"name":"shell","arguments":{"command":"cargo test"}}}}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":null,"role":"user","created":7,"content":[{"type":"toolResponse","id":"call_3","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"error[E0425]"}],"isError":true}}}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"message","message":{"id":"m5","role":"assistant","created":8,"content":[{"type":"text","text":"Done."}],"metadata":{"userVisible":true,"agentVisible":true}}}"#,
        r#"{"type":"complete","total_tokens":1234}"#,
    ];

    fn parse(lines: &[&str]) -> Vec<AgentEvent> {
        let mut p = Goose::default();
        let mut out: Vec<AgentEvent> = lines.iter().flat_map(|l| p.line(l)).collect();
        out.extend(p.end());
        out
    }

    #[test]
    fn a_run_reads_as_calls_commands_edits_messages_and_usage() {
        let events = parse(RUN);
        let lines: Vec<String> = events.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "said: Let me look.",
                "tool shell: ls src",
                "ran `ls src`: ok",
                "tool write: src/greet.rs",
                "edited src/greet.rs",
                "tool shell: cargo test",
                "ran `cargo test`: failed",
                "said: Done.",
                "usage: 1.2k tokens",
            ]
        );
    }

    #[test]
    fn errors_and_unknown_lines_are_kept() {
        let events = parse(&[
            r#"{"type":"error","error":"Request failed: 500"}"#,
            "goose is starting…",
            r#"{"type":"something_new","x":1}"#,
            r#"{"type":"message","message":{"id":"m","role":"assistant","content":[{"type":"toolRequest","id":"c","toolCall":{"status":"error","error":"bad json"}}]}}"#,
        ]);
        assert_eq!(
            events,
            vec![
                AgentEvent::error("Request failed: 500"),
                AgentEvent::output("goose is starting…"),
                AgentEvent::output(r#"{"type":"something_new","x":1}"#),
                AgentEvent::error("tool request failed: bad json"),
            ]
        );
    }

    #[test]
    fn a_failed_tool_other_than_the_shell_is_an_error_and_viewing_is_no_edit() {
        let events = parse(&[
            r#"{"type":"message","message":{"id":"a","role":"assistant","content":[{"type":"toolRequest","id":"1","toolCall":{"status":"success","value":{"name":"developer__text_editor","arguments":{"command":"view","path":"a.rs"}}}}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"type":"toolResponse","id":"1","toolResult":{"status":"success","value":[{"type":"text","text":"..."}]}}]}}"#,
            r#"{"type":"message","message":{"id":"b","role":"assistant","content":[{"type":"toolRequest","id":"2","toolCall":{"status":"success","value":{"name":"butler__leave_note","arguments":{"text":"hi"}}}}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"type":"toolResponse","id":"2","toolResult":{"status":"error","error":"no"}}]}}"#,
        ]);
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(
            matches!(&events[2], AgentEvent::Error { text } if text.starts_with("butler__leave_note failed"))
        );
    }
}
