//! Aider's plain output (it has no machine-readable one): what it prints of its own work is
//! read, the rest kept as plain output. `Applied edit to PATH` is a file edit; the usage line
//! after each model reply (`Tokens: 2.3k sent, 1.1k cache write, 4.0k cache hit, 150 received.`,
//! then `Cost: $0.01 message, $0.03 session.` on the same line or the next) is usage — the
//! token counts as aider rounds them (`sent` includes cache writes; cache hits are added to the
//! input and counted as cached), one reply a turn; `Running CMD` (a suggested shell
//! command, off under Butler's flags) is a shell call; its edit-format complaint and model
//! endpoint errors (`litellm.…`) are errors.

use butler_worker::contract::{AgentEvent, Cost, Usage};
use serde_json::json;

use super::{Parser, plain, tool_call};

#[derive(Default)]
pub(super) struct Aider {
    usage: Usage,
}

impl Aider {
    /// Takes the figures of a `Tokens: …` line; `false` when it is not one.
    fn tokens(&mut self, line: &str) -> bool {
        let Some(rest) = line.strip_prefix("Tokens: ") else {
            return false;
        };
        let (counts, cost) = match rest.split_once(" Cost: ") {
            Some((counts, cost)) => (counts, Some(cost)),
            None => (rest, None),
        };
        let mut reply = Usage {
            turns: Some(1),
            ..Usage::default()
        };
        for part in counts.trim_end_matches('.').split(", ") {
            let Some((count, what)) = part.split_once(' ') else {
                return false;
            };
            let Some(n) = count_of(count) else {
                return false;
            };
            match what {
                "sent" => reply.input_tokens = Some(reply.input_tokens.unwrap_or(0) + n),
                // Aider counts cache writes in `sent` already.
                "cache write" => {}
                "cache hit" => {
                    reply.cached_input_tokens = Some(n);
                    reply.input_tokens = Some(reply.input_tokens.unwrap_or(0) + n);
                }
                "received" => reply.output_tokens = Some(n),
                _ => return false,
            }
        }
        self.usage = self.usage.plus(reply);
        if let Some(cost) = cost {
            self.cost(cost);
        }
        true
    }

    /// Takes `$0.01 message, $0.03 session.`: the session's cost so far.
    fn cost(&mut self, text: &str) -> bool {
        let session = text
            .trim_end_matches('.')
            .split(", ")
            .find_map(|p| p.strip_suffix(" session"))
            .and_then(|v| v.strip_prefix('$'))
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite());
        match session {
            Some(cost) => {
                self.usage.cost_usd = Some(Cost(cost));
                true
            }
            None => false,
        }
    }
}

/// `950`, `2.3k`, `12k`, `1.2M` as aider writes token counts.
fn count_of(text: &str) -> Option<u64> {
    let (number, scale) = match text.as_bytes().last()? {
        b'k' => (&text[..text.len() - 1], 1e3),
        b'M' => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    let value = number
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)?;
    Some((value * scale).round() as u64)
}

impl Parser for Aider {
    fn line(&mut self, line: &str) -> Vec<AgentEvent> {
        let line = line.trim_end();
        if let Some(path) = line.strip_prefix("Applied edit to ") {
            return vec![AgentEvent::FileEdited {
                path: path.to_owned(),
            }];
        }
        if self.tokens(line) {
            return vec![AgentEvent::Usage(self.usage)];
        }
        if let Some(cost) = line.strip_prefix("Cost: ")
            && self.cost(cost)
        {
            return vec![AgentEvent::Usage(self.usage)];
        }
        if let Some(command) = line.strip_prefix("Running ") {
            return vec![tool_call("shell", &json!({ "command": command }))];
        }
        if line.starts_with("The LLM did not conform to the edit format")
            || line.starts_with("litellm.")
        {
            return vec![AgentEvent::error(line)];
        }
        plain(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Vec<AgentEvent> {
        let mut p = Aider::default();
        lines.iter().flat_map(|l| p.line(l)).collect()
    }

    #[test]
    fn edits_and_usage_are_read_and_the_rest_is_kept() {
        let events = parse(&[
            "Aider v0.86.2",
            "Model: openai/fake with diff edit format",
            "",
            "src/greet.py",
            "Applied edit to src/greet.py",
            "Tokens: 2.3k sent, 150 received. Cost: $0.0012 message, $0.0012 session.",
            "Tokens: 12k sent, 1.1k cache write, 4.0k cache hit, 1.2M received.",
            "Cost: $0.02 message, $0.0212 session.",
        ]);
        assert_eq!(
            events,
            vec![
                AgentEvent::output("Aider v0.86.2"),
                AgentEvent::output("Model: openai/fake with diff edit format"),
                AgentEvent::output("src/greet.py"),
                AgentEvent::FileEdited {
                    path: "src/greet.py".into()
                },
                AgentEvent::Usage(Usage {
                    input_tokens: Some(2_300),
                    output_tokens: Some(150),
                    cost_usd: Some(Cost(0.0012)),
                    turns: Some(1),
                    ..Usage::default()
                }),
                AgentEvent::Usage(Usage {
                    input_tokens: Some(2_300 + 12_000 + 4_000),
                    output_tokens: Some(150 + 1_200_000),
                    cached_input_tokens: Some(4_000),
                    cost_usd: Some(Cost(0.0012)),
                    turns: Some(2),
                    ..Usage::default()
                }),
                AgentEvent::Usage(Usage {
                    input_tokens: Some(2_300 + 12_000 + 4_000),
                    output_tokens: Some(150 + 1_200_000),
                    cached_input_tokens: Some(4_000),
                    cost_usd: Some(Cost(0.0212)),
                    turns: Some(2),
                    ..Usage::default()
                }),
            ]
        );
    }

    #[test]
    fn complaints_and_endpoint_errors_are_errors_and_lookalikes_are_output() {
        let events = parse(&[
            "The LLM did not conform to the edit format.",
            "litellm.APIConnectionError: OpenAIException - Connection error.",
            "Tokens: many sent",
            "Running pytest -q",
        ]);
        assert!(matches!(&events[0], AgentEvent::Error { .. }));
        assert!(matches!(&events[1], AgentEvent::Error { text } if text.starts_with("litellm.")));
        assert_eq!(events[2], AgentEvent::output("Tokens: many sent"));
        assert!(
            matches!(&events[3], AgentEvent::ToolCall { line, .. } if line == "shell: pytest -q")
        );
    }
}
