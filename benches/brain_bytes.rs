//! What the Brain reads in one whole job, counted the way Claude Code shows it to the model
//! (the instructions and the tool names up front, a tool's schema once it is loaded through
//! tool search, `structuredContent` on success and the text on error): bytes, bytes/4 (a rough token count) and tiktoken
//! `o200k_base` tokens. `cargo bench --bench brain_bytes`.
//!
//! The job: resume after compaction, see the state, save it, share it, on a 200-file project
//! with a 20-file change. Through Butler:
//! - (a) the server instructions and the deferred tool list (tool search on: names only, one a
//!   line, `mcp__butler__` prefix);
//! - (b) the loaded schemas (name, description, input schema as compact JSON) of the tools the
//!   job calls: `work_session_start`, `work_observe`, `work_record`, `work_publish`;
//! - (c) each call: the tool name and its input JSON, and the answer the model sees (the compact
//!   `structuredContent` on success, the text on error): `work_session_start`, `work_observe`,
//!   `work_record(message)`, `work_publish`, `work_observe`.
//!
//! The raw-git baseline in the same run, on an identical project: the command line and the
//! output (stdout and stderr, as the shell tool shows both) of `git status`, `git diff`,
//! `git log --oneline -5`, `git commit -am …`, `git push`, `git status`.
//!
//! `BUTLER_LANG=ja` measures the Japanese texts; `BRAIN_BYTES_SHOW=1` prints what is counted.
#![allow(clippy::print_stdout)]
// The baseline is git as a person's shell runs it.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::{Path, PathBuf};

use butler_orchestrator::client::BrainClient;
use butler_testkit::World;
use serde_json::{Value, json};

use common::server_env;

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

fn raw_git(world: &World, dir: &Path) -> Vec<Part> {
    let commands: [&[&str]; 6] = [
        &["status"],
        &["diff"],
        &["log", "--oneline", "-5"],
        &["commit", "-am", MESSAGE],
        &["push"],
        &["status"],
    ];
    commands
        .iter()
        .map(|args| {
            let out = world.git_output(dir, args);
            assert!(out.status.success(), "git {args:?}");
            let line = format!("git {}", args.join(" "));
            let label = if args[0] == "commit" {
                "git commit -am …".to_string()
            } else {
                line.clone()
            };
            let input = json!({"command": line}).to_string();
            let text = format!(
                "Bash{input}{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            Part { label, text }
        })
        .collect()
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
    let names: String = tools
        .iter()
        .map(|t| format!("mcp__butler__{}\n", t.name))
        .collect();
    let mut parts = vec![
        Part {
            label: "instructions".into(),
            text: brain.instructions().unwrap_or_default().to_string(),
        },
        Part {
            label: format!("deferred names ({} tools)", tools.len()),
            text: names,
        },
    ];
    for name in LOADED {
        let tool = tools.iter().find(|t| t.name == name).expect("a job tool");
        let loaded = json!({
            "name": format!("mcp__butler__{name}"),
            "description": tool.description,
            "input_schema": tool.input_schema,
        });
        parts.push(Part {
            label: format!("schema {name}"),
            text: loaded.to_string(),
        });
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
        parts.push(Part {
            label: format!("call {tool}"),
            text: format!("mcp__butler__{tool}{input}{seen}"),
        });
    }
    parts
}

fn main() {
    let world = World::new();
    let raw_dir = project(&world, "raw");
    let butler_dir = project(&world, "butler");
    let raw = raw_git(&world, &raw_dir);
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
    println!("One job (resume, see, save, share), 200-file project, 20-file change:");
    let g = table("raw git", &raw);
    let b = table("Butler", &ours);
    println!(
        "Butler / raw git: {:.1}% of bytes, {:.1}% of o200k tokens (target: at most 25%)",
        100.0 * b.0 as f64 / g.0 as f64,
        100.0 * b.2 as f64 / g.2 as f64
    );
}
