//! Claude Code `-p --output-format stream-json --verbose`: one JSON object a line, tagged by
//! `type`: `system` (`init`: tools, MCP servers), `assistant` (a model message: `text` and
//! `tool_use` `{id, name, input}` parts), `user` (`tool_result` `{tool_use_id, content,
//! is_error}` parts, a hook's refusal among them), and `result` (the run's end: `num_turns`,
//! `total_cost_usd`, `usage`, `is_error`).

use std::collections::HashMap;

use butler_worker::contract::{AgentEvent, Cost, Usage};
use serde_json::Value;

use super::{Parser, content_text, plain, tool_call};

#[derive(Default)]
pub(super) struct Claude {
    /// Tool uses waiting for their result, by id: the tool and its input.
    pending: HashMap<String, (String, Value)>,
}

impl Claude {
    fn assistant(&mut self, message: &Value, out: &mut Vec<AgentEvent>) {
        for part in parts(message) {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                    if !text.trim().is_empty() {
                        out.push(AgentEvent::message(text));
                    }
                }
                Some("tool_use") => {
                    let name = part.get("name").and_then(Value::as_str).unwrap_or("tool");
                    let input = part.get("input").cloned().unwrap_or(Value::Null);
                    out.push(tool_call(name, &input));
                    if let Some(id) = part.get("id").and_then(Value::as_str) {
                        self.pending.insert(id.to_owned(), (name.to_owned(), input));
                    }
                }
                _ => {}
            }
        }
    }

    fn results(&mut self, message: &Value, out: &mut Vec<AgentEvent>) {
        for part in parts(message) {
            if part.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let Some((tool, input)) = part
                .get("tool_use_id")
                .and_then(Value::as_str)
                .and_then(|id| self.pending.remove(id))
            else {
                continue;
            };
            let failed = part
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let arg = |key: &str| input.get(key).and_then(Value::as_str);
            match tool.as_str() {
                "Bash" => {
                    out.push(AgentEvent::command(
                        arg("command").unwrap_or_default(),
                        None,
                        failed,
                    ));
                }
                "Edit" | "Write" | "MultiEdit" | "NotebookEdit" if !failed => {
                    if let Some(path) = arg("file_path").or_else(|| arg("notebook_path")) {
                        out.push(AgentEvent::FileEdited {
                            path: path.to_owned(),
                        });
                    }
                }
                _ if failed => {
                    let text = part.get("content").map(content_text).unwrap_or_default();
                    out.push(AgentEvent::error(&format!("{tool} failed: {text}")));
                }
                _ => {}
            }
        }
    }
}

fn parts(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The run's figures from its `result` line: all input tokens (fresh, cache writes, cache
/// reads), the cache reads apart, output tokens, cost and turns.
fn usage(result: &Value) -> Usage {
    let usage = result.get("usage");
    let n = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64);
    let input = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .into_iter()
    .filter_map(n)
    .reduce(|a, b| a + b);
    Usage {
        input_tokens: input,
        output_tokens: n("output_tokens"),
        cached_input_tokens: n("cache_read_input_tokens"),
        total_tokens: None,
        cost_usd: result
            .get("total_cost_usd")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite())
            .map(Cost),
        turns: result
            .get("num_turns")
            .and_then(Value::as_u64)
            .and_then(|t| u32::try_from(t).ok()),
    }
}

impl Parser for Claude {
    fn line(&mut self, line: &str) -> Vec<AgentEvent> {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return plain(line);
        };
        let mut out = Vec::new();
        let message = value.get("message").unwrap_or(&Value::Null);
        match value.get("type").and_then(Value::as_str) {
            Some("system" | "stream_event" | "rate_limit_event") => {}
            Some("assistant") => self.assistant(message, &mut out),
            Some("user") => self.results(message, &mut out),
            Some("result") => {
                let usage = usage(&value);
                if !usage.is_empty() {
                    out.push(AgentEvent::Usage(usage));
                }
                if value.get("is_error").and_then(Value::as_bool) == Some(true) {
                    let why = value
                        .get("result")
                        .and_then(Value::as_str)
                        .or_else(|| value.get("subtype").and_then(Value::as_str))
                        .unwrap_or("the run ended with an error");
                    out.push(AgentEvent::error(why));
                }
            }
            _ => return plain(line),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run in the shapes Claude Code 2.x writes in print mode with `stream-json --verbose`;
    /// the refused command is a hook's deny as the model sees it (the hook's reason as the
    /// tool result's error text).
    const RUN: &[&str] = &[
        r#"{"type":"system","subtype":"init","cwd":"/wt","session_id":"s1","tools":["Bash","Edit","Write"],"mcp_servers":[{"name":"butler","status":"connected"}],"model":"claude-sonnet","permissionMode":"dontAsk"}"#,
        r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"I will add the greeting."}],"usage":{"input_tokens":3,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/wt/src/greet.rs","content":"pub fn greet() {}\n"}}]},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"File created successfully at: /wt/src/greet.rs"}]},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"git commit -am wip","description":"Commit"}}]},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"PreToolUse:Bash hook error: use the Maid","is_error":true,"tool_use_id":"toolu_2"}]},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"assistant","message":{"id":"msg_3","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"mcp__butler__leave_note","input":{"text":"done"}}]},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"noted"}],"tool_use_id":"toolu_3"}]},"parent_tool_use_id":null,"session_id":"s1"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":5120,"num_turns":4,"result":"Done.","session_id":"s1","total_cost_usd":0.0123,"usage":{"input_tokens":20,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":50}}"#,
    ];

    fn parse(lines: &[&str]) -> Vec<AgentEvent> {
        let mut p = Claude::default();
        lines.iter().flat_map(|l| p.line(l)).collect()
    }

    #[test]
    fn a_run_reads_as_calls_edits_refused_commands_and_usage() {
        let events = parse(RUN);
        let lines: Vec<String> = events.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "said: I will add the greeting.",
                "tool Write: /wt/src/greet.rs",
                "edited /wt/src/greet.rs",
                "tool Bash: git commit -am wip",
                "ran `git commit -am wip`: failed",
                "tool mcp__butler__leave_note: {\"text\":\"done\"}",
                "usage: 2.1k tokens in, 50 out, 2.0k cached, $0.0123, 4 turn(s)",
            ]
        );
        assert_eq!(
            events.last(),
            Some(&AgentEvent::Usage(Usage {
                input_tokens: Some(2120),
                output_tokens: Some(50),
                cached_input_tokens: Some(2000),
                total_tokens: None,
                cost_usd: Some(Cost(0.0123)),
                turns: Some(4),
            }))
        );
    }

    #[test]
    fn a_run_that_failed_says_why_and_other_lines_are_kept() {
        let events = parse(&[
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":9}"#,
            "Warning: something on stdout",
        ]);
        assert_eq!(
            events,
            vec![
                AgentEvent::Usage(Usage {
                    turns: Some(9),
                    ..Usage::default()
                }),
                AgentEvent::error("error_max_turns"),
                AgentEvent::output("Warning: something on stdout"),
            ]
        );
    }
}
