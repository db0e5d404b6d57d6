//! What the Brain reads in one whole job, counted the way Claude Code sends it to the model
//! (`benches/live/brain_live.py` measures the same job through the real Claude Code): bytes,
//! bytes/4 (a rough token count) and tiktoken `o200k_base` tokens. `cargo bench --bench benches -- brain_bytes`.
//!
//! The job: resume after compaction, see the state, save it, share it, see it again, on a
//! 200-file project with a 20-file change. Each part is counted as the request carries it:
//! compact JSON with strings as they are (not escaped), the same measure as the live script.
//! Through Butler:
//! - (a) the first request: the server instructions under Claude Code's heading, and the
//!   deferred tool list (tool search on: names only, one a line, `mcp__butler__` prefix) of the
//!   tools not marked `anthropic/alwaysLoad`;
//! - (b) the schemas of the tools the job calls, as entries of the request's tool list (name,
//!   description, input schema, `defer_loading` for a tool loaded through tool search):
//!   `work_session_start`, `work_observe`, `work_record`, `work_publish`;
//! - (c) the tool-search exchange that loads those of them that are deferred: the model's
//!   `ToolSearch` call (`select:` their names) and the `tool_reference` blocks it gets back;
//! - (d) each call as two messages: the model's `tool_use` block (id, prefixed name, input) and
//!   the `tool_result` with the compact `structuredContent` on success, the text on error:
//!   `work_session_start`, `work_observe`, `work_record(message)`, `work_publish`, `work_observe`.
//!
//! The raw-git baseline in the same run, on an identical project, does the same job: `git
//! status`, `git log --oneline -5`, `git commit -am …`, `git push`, `git status`, each a `Bash`
//! `tool_use` and its `tool_result` (stdout and stderr, as the shell tool shows both). Butler's
//! job reads no diff, so neither does this one (`git diff` alone is about 29 KB here). A second
//! raw-git baseline reads the diff before committing, as Claude Code's older commit procedure
//! told the model to and as the rounds before this one measured; both ratios are printed.
//!
//! `BUTLER_LANG=ja` measures the Japanese texts; `BRAIN_BYTES_SHOW=1` prints what is counted.
#![allow(clippy::print_stdout)]
// The baseline is git as a person's shell runs it.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use butler_orchestrator::client::BrainClient;
use butler_testkit::World;
use serde_json::{Value, json};

use crate::common::server_env;

/// The tools the job calls, whose schemas tool search loads.
const LOADED: [&str; 4] = [
    "work_session_start",
    "work_observe",
    "work_record",
    "work_publish",
];
const MESSAGE: &str = "Refine the step functions and add `added` to twenty modules";

/// A 200-file project published to its own shared destination, with a 20-file change.
fn project(world: &World, name: &str) -> PathBuf {
    let dir = world.init(name);
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    for i in 0..200 {
        let body: String = (0..40)
            .map(|l| format!("fn f{i}_{l}() -> u32 {{ {l} }}\n"))
            .collect();
        std::fs::write(dir.join(format!("src/m{i:03}.rs")), body).expect("write");
    }
    for k in 0..6 {
        world.commit(&dir, &format!("Step {k}: refine modules"));
    }
    let shared = world.bare(&format!("{name}-shared.git"));
    world.git(
        &dir,
        &["remote", "add", "origin", &shared.to_string_lossy()],
    );
    world.git(&dir, &["push", "-q", "-u", "origin", "main"]);
    // A typical 20-file change: per file, three lines edited and a 12-line function added.
    for i in 0..20 {
        let p = dir.join(format!("src/m{:03}.rs", i * 3));
        let mut text = std::fs::read_to_string(&p).expect("read");
        for l in [3, 17, 29] {
            text = text.replacen(&format!("{{ {l} }}"), &format!("{{ {l} + 1 }}"), 1);
        }
        text.push_str("\npub fn added(values: &[u32]) -> u32 {\n");
        for k in 0..10 {
            text.push_str(&format!("    let _step{k} = values.len() as u32 + {k};\n"));
        }
        text.push_str("}\n");
        std::fs::write(p, text).expect("modify");
    }
    dir
}

/// One counted part of the job: a label and the text the model reads for it.
struct Part {
    label: String,
    text: String,
}

/// The raw-git job; `with_diff`: reading `git diff` before committing.
fn raw_git(world: &World, dir: &Path, with_diff: bool) -> Vec<Part> {
    let commit = format!("commit -am '{MESSAGE}'");
    let mut commands = vec!["status"];
    if with_diff {
        commands.push("diff");
    }
    commands.extend(["log --oneline -5", commit.as_str(), "push", "status"]);
    commands
        .iter()
        .enumerate()
        .map(|(n, args)| {
            let argv: Vec<&str> = match args.strip_prefix("commit -am ") {
                Some(_) => vec!["commit", "-am", MESSAGE],
                None => args.split(' ').collect(),
            };
            let out = world.git_output(dir, &argv);
            assert!(out.status.success(), "git {args}");
            let line = format!("git {args}");
            let label = if argv[0] == "commit" {
                "git commit -am …".to_string()
            } else {
                line.clone()
            };
            // The shell tool shows stdout, then stderr, each without its last newline.
            let shown: Vec<String> = [&out.stdout, &out.stderr]
                .iter()
                .map(|o| String::from_utf8_lossy(o).trim_end().to_string())
                .filter(|o| !o.is_empty())
                .collect();
            let result = json!({
                "tool_use_id": tool_use_id(n),
                "type": "tool_result",
                "content": shown.join("\n"),
                "is_error": false,
            });
            Part {
                label,
                text: exchange("Bash", n, &json!({"command": line}), result),
            }
        })
        .collect()
}

/// A tool-use id as long as Claude Code's (`toolu_01` and 22 characters).
fn tool_use_id(n: usize) -> String {
    format!("toolu_01{n:022}")
}

/// One call as the next request carries it: the model's `tool_use` block and the user
/// message with its result.
fn exchange(name: &str, n: usize, input: &Value, result: Value) -> String {
    let calls = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_use_id(n), "name": name, "input": input},
    ]});
    let answers = json!({"role": "user", "content": [result]});
    format!("{},{},", shown(&calls), shown(&answers))
}

/// Compact JSON with strings as they are: what the model reads, without the escaping of the
/// request's transport (the live script counts the same way).
fn shown(value: &Value) -> String {
    let mut out = String::new();
    write_shown(value, &mut out);
    out
}

fn write_shown(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_shown(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(key);
                out.push_str("\":");
                write_shown(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Whether Claude Code lists the tool whole from the start (`_meta` `anthropic/alwaysLoad`)
/// instead of deferring it behind tool search.
fn always_loaded(tool: &rmcp::model::Tool) -> bool {
    tool.meta
        .as_ref()
        .and_then(|m| m.0.get("anthropic/alwaysLoad"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn butler(world: &World, dir: &Path) -> Vec<Part> {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let exe = Path::new(env!("CARGO_BIN_EXE_butler"));
    let mut env = server_env(world);
    if let Ok(lang) = std::env::var("BUTLER_LANG") {
        env.push(("BUTLER_LANG".into(), lang));
    }
    let brain = rt
        .block_on(BrainClient::spawn(exe, dir, &env))
        .expect("server starts");
    let tools = rt.block_on(brain.tools()).expect("tools/list");
    let deferred: Vec<&rmcp::model::Tool> = tools.iter().filter(|t| !always_loaded(t)).collect();
    let names: String = deferred
        .iter()
        .map(|t| format!("mcp__butler__{}\n", t.name))
        .collect();
    let mut parts = vec![
        Part {
            label: "instructions".into(),
            text: format!(
                "\n\n# MCP Server Instructions\n\nThe following MCP servers have provided \
                 instructions for how to use their tools and resources:\n\n## butler\n{}",
                brain.instructions().unwrap_or_default()
            ),
        },
        Part {
            label: format!(
                "deferred names ({} of {} tools)",
                deferred.len(),
                tools.len()
            ),
            text: names,
        },
    ];
    let mut searched = Vec::new();
    for name in LOADED {
        let tool = tools.iter().find(|t| t.name == name).expect("a job tool");
        let mut listed = json!({
            "name": format!("mcp__butler__{name}"),
            "description": tool.description,
            "input_schema": tool.input_schema,
        });
        if !always_loaded(tool) {
            listed["defer_loading"] = json!(true);
            searched.push(format!("mcp__butler__{name}"));
        }
        parts.push(Part {
            label: format!("schema {name}"),
            text: format!("{},", shown(&listed)),
        });
    }
    let mut n = 0;
    if !searched.is_empty() {
        let references: Vec<Value> = searched
            .iter()
            .map(|name| json!({"type": "tool_reference", "tool_name": name}))
            .collect();
        let input = json!({"query": format!("select:{}", searched.join(",")), "max_results": searched.len()});
        let result =
            json!({"type": "tool_result", "tool_use_id": tool_use_id(n), "content": references});
        let mut text = exchange("ToolSearch", n, &input, result);
        text.push_str(&shown(&json!({"type": "text", "text": "Tool loaded."})));
        parts.push(Part {
            label: "tool search".into(),
            text,
        });
        n += 1;
    }
    let root = dir.to_string_lossy().into_owned();
    let calls = [
        ("work_session_start", json!({"project_root": root})),
        ("work_observe", json!({})),
        ("work_record", json!({"message": MESSAGE})),
        ("work_publish", json!({})),
        ("work_observe", json!({})),
    ];
    for (tool, input) in calls {
        let answer = rt
            .block_on(brain.call(tool, input.clone()))
            .expect("the call is answered");
        // Claude Code shows the structured content as compact JSON on success and the text on
        // error; the client's envelope is the one the model would read in either case.
        let seen: Value = answer.envelope;
        let result = json!({
            "tool_use_id": tool_use_id(n),
            "type": "tool_result",
            "content": seen.to_string(),
        });
        parts.push(Part {
            label: format!("call {tool}"),
            text: exchange(&format!("mcp__butler__{tool}"), n, &input, result),
        });
        n += 1;
    }
    parts
}

pub fn main() {
    let world = World::new();
    let raw_dir = project(&world, "raw");
    let butler_dir = project(&world, "butler");
    let raw = raw_git(&world, &raw_dir, false);
    let raw_diff = raw_git(&world, &project(&world, "raw-diff"), true);
    let ours = butler(&world, &butler_dir);

    let bpe = tiktoken_rs::o200k_base().expect("bundled o200k_base");
    let count = |s: &str| {
        (
            s.len(),
            s.len() / 4,
            bpe.encode_with_special_tokens(s).len(),
        )
    };
    let table = |title: &str, parts: &[Part]| -> (usize, usize, usize) {
        println!("{title}");
        println!(
            "  {:<36} {:>7} {:>7} {:>7}",
            "", "bytes", "bytes/4", "o200k"
        );
        let mut total = (0, 0, 0);
        let show = std::env::var_os("BRAIN_BYTES_SHOW").is_some();
        for p in parts {
            if show {
                println!("---- {}\n{}", p.label, p.text);
            }
            let (b, q, t) = count(&p.text);
            println!("  {:<36} {b:>7} {q:>7} {t:>7}", p.label);
            total = (total.0 + b, total.1 + q, total.2 + t);
        }
        println!(
            "  {:<36} {:>7} {:>7} {:>7}",
            "total", total.0, total.1, total.2
        );
        total
    };
    println!("One job (resume, see, save, share, see), 200-file project, 20-file change:");
    let g = table("raw git", &raw);
    let gd = table("raw git reading the diff before committing", &raw_diff);
    let b = table("Butler", &ours);
    for (against, r) in [("raw git", g), ("raw git reading the diff", gd)] {
        println!(
            "Butler / {against}: {:.1}% of bytes, {:.1}% of o200k tokens",
            100.0 * b.0 as f64 / r.0 as f64,
            100.0 * b.2 as f64 / r.2 as f64
        );
    }
}
