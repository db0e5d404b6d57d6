//! codex `exec --json` (0.171.0): one JSON object a line: `thread.started`,
//! `turn.started`, `item.started` / `item.updated` / `item.completed` with an `item` whose
//! `type` is `command_execution` (`command`, `exit_code`, `status`), `file_change` (`changes`:
//! `path`, `kind`), `mcp_tool_call` (`server`, `tool`, `arguments`, `status`), `agent_message`
//! (`text`), `reasoning`, `web_search`, `todo_list` or `error` (`message`); `turn.completed`
//! with `usage`, `turn.failed` with `error.message`, and top-level `error` lines (reconnects).
//! A call codex rejects before it runs has no line at all (it is only on stderr).

use std::collections::HashSet;

use butler_worker::contract::{AgentEvent, Usage};
use serde_json::{Value, json};

use super::{Parser, plain, tool_call};

#[derive(Default)]
pub(super) struct Codex {
    /// Items whose call was already reported (started before they completed).
    called: HashSet<String>,
    /// The run's usage so far (one `turn.completed` a turn).
    usage: Usage,
}

impl Codex {
    fn item(&mut self, item: &Value, done: bool, out: &mut Vec<AgentEvent>) {
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        let id = text("id").to_owned();
        let first_sight = id.is_empty() || self.called.insert(id);
        let failed = text("status") == "failed";
        match text("type") {
            "command_execution" => {
                if first_sight {
                    out.push(tool_call("shell", &json!({"command": text("command")})));
                }
                if done {
                    let code = item
                        .get("exit_code")
                        .and_then(Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok());
                    out.push(AgentEvent::command(text("command"), code, failed));
                }
            }
            "file_change" if done => {
                if failed {
                    out.push(AgentEvent::error("a patch was not applied"));
                }
                let changes = item.get("changes").and_then(Value::as_array);
                for change in changes.into_iter().flatten().filter(|_| !failed) {
                    if let Some(path) = change.get("path").and_then(Value::as_str) {
                        out.push(AgentEvent::FileEdited {
                            path: path.to_owned(),
                        });
                    }
                }
            }
            "mcp_tool_call" => {
                let tool = format!("{}/{}", text("server"), text("tool"));
                if first_sight {
                    let args = item.get("arguments").cloned().unwrap_or(Value::Null);
                    out.push(tool_call(&tool, &args));
                }
                if done && failed {
                    let why = item
                        .get("error")
                        .and_then(|e| e.get("message").or(Some(e)))
                        .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
                        .unwrap_or_default();
                    out.push(AgentEvent::error(&format!("{tool} failed: {why}")));
                }
            }
            "web_search" if first_sight => {
                out.push(tool_call("web_search", &json!({"query": text("query")})));
            }
            "agent_message" if done => out.push(AgentEvent::message(text("text"))),
            "error" if done => out.push(AgentEvent::error(text("message"))),
            _ => {}
        }
    }

    fn turn_completed(&mut self, usage: Option<&Value>, out: &mut Vec<AgentEvent>) {
        let n = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64);
        let output = [n("output_tokens"), n("reasoning_output_tokens")]
            .into_iter()
            .flatten()
            .reduce(|a, b| a + b);
        self.usage = self.usage.plus(Usage {
            input_tokens: n("input_tokens"),
            output_tokens: output,
            cached_input_tokens: n("cached_input_tokens"),
            turns: Some(1),
            ..Usage::default()
        });
        out.push(AgentEvent::Usage(self.usage));
    }
}

impl Parser for Codex {
    fn line(&mut self, line: &str) -> Vec<AgentEvent> {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return plain(line);
        };
        let mut out = Vec::new();
        let message = |v: &Value| {
            v.get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        match value.get("type").and_then(Value::as_str) {
            Some("thread.started" | "turn.started") => {}
            Some(kind @ ("item.started" | "item.updated" | "item.completed")) => {
                if let Some(item) = value.get("item") {
                    self.item(item, kind == "item.completed", &mut out);
                }
            }
            Some("turn.completed") => self.turn_completed(value.get("usage"), &mut out),
            Some("turn.failed") => {
                let why = value.get("error").map(message).unwrap_or_default();
                out.push(AgentEvent::error(&why));
            }
            Some("error") => out.push(AgentEvent::error(&message(&value))),
            _ => return plain(line),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `--json` stdout of a codex 0.171.0 run against a scripted model (an edit, a shell
    /// command, a message), in the shapes codex writes.
    const RUN: &[&str] = &[
        r#"{"type":"thread.started","thread_id":"01a23138-0000"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.started","item":{"id":"item_0","type":"file_change","changes":[{"path":"/wt/README.md","kind":"update"},{"path":"/wt/hello.txt","kind":"add"}],"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[{"path":"/wt/README.md","kind":"update"},{"path":"/wt/hello.txt","kind":"add"}],"status":"completed"}}"#,
        r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo via-shell > shell.txt; git status'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo via-shell > shell.txt; git status'","aggregated_output":"Hello from apply_patch\n M README.md\n","exit_code":0,"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done: edited files."}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":21654,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":0}}"#,
    ];

    fn parse(lines: &[&str]) -> Vec<AgentEvent> {
        let mut p = Codex::default();
        lines.iter().flat_map(|l| p.line(l)).collect()
    }

    #[test]
    fn the_observed_run_reads_as_edits_a_command_a_message_and_usage() {
        let lines: Vec<String> = parse(RUN).iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "edited /wt/README.md",
                "edited /wt/hello.txt",
                "tool shell: /bin/bash -lc 'echo via-shell > shell.txt; git status'",
                "ran `/bin/bash -lc 'echo via-shell > shell.txt; git status'`: exit 0",
                "said: Done: edited files.",
                "usage: 21.7k tokens in, 30 out, 0 cached, 1 turn(s)",
            ]
        );
    }

    #[test]
    fn failures_codex_reports_are_errors() {
        let events = parse(&[
            // An unknown model slug.
            r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata"}}"#,
            // An MCP call that needs approval under `approval: never`.
            r#"{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"butler","tool":"work_note","arguments":{"text":"x"},"status":"failed","error":{"message":"MCP tool call requires approval, but approval policy is never"}}}"#,
            // The model endpoint failing.
            r#"{"type":"error","message":"Reconnecting... 1/5 (We're currently experiencing high demand, which may cause temporary errors.)"}"#,
            r#"{"type":"turn.failed","error":{"message":"stream disconnected before completion: stream closed before response.completed"}}"#,
            // A failed command, its exit code kept.
            r#"{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"git commit -m x","aggregated_output":"fatal: Unable to create '/r/.git/index.lock': Read-only file system","exit_code":128,"status":"failed"}}"#,
        ]);
        let lines: Vec<String> = events.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "error: Model metadata for `fake-model` not found. Defaulting to fallback metadata",
                "tool butler/work_note: {\"text\":\"x\"}",
                "error: butler/work_note failed: MCP tool call requires approval, but approval policy is never",
                "error: Reconnecting... 1/5 (We're currently experiencing high demand, which may cause temporary errors.)",
                "error: stream disconnected before completion: stream closed before response.completed",
                "tool shell: git commit -m x",
                "ran `git commit -m x`: exit 128",
            ]
        );
    }

    #[test]
    fn usage_adds_up_over_turns_and_plain_stdout_is_kept() {
        let turn = r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10,"reasoning_output_tokens":5}}"#;
        let events = parse(&[turn, turn, "Done."]);
        assert_eq!(
            events[1],
            AgentEvent::Usage(Usage {
                input_tokens: Some(200),
                output_tokens: Some(30),
                cached_input_tokens: Some(80),
                turns: Some(2),
                ..Usage::default()
            })
        );
        assert_eq!(events[2], AgentEvent::output("Done."));
    }
}
