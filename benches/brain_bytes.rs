//! What the Brain reads: bytes and tokens (tiktoken `o200k_base` as a proxy) of `work_observe`
//! against `git status` + `git diff` + `git log -5` for a 20-file change, and of the whole
//! `tools/list`. `cargo bench --bench brain_bytes`.
#![allow(clippy::print_stdout)]

mod common;

use std::path::Path;

use butler_orchestrator::client::BrainClient;
use butler_testkit::World;
use serde_json::json;

use common::server_env;

fn main() {
    let world = World::new();
    let dir = world.init("p");
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
    let raw = [
        world.git(&dir, &["status"]),
        world.git(&dir, &["diff"]),
        world.git(&dir, &["log", "-5"]),
    ]
    .concat();

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let exe = Path::new(env!("CARGO_BIN_EXE_butler"));
    let brain = rt
        .block_on(BrainClient::spawn(exe, &dir, &server_env(&world)))
        .expect("server starts");
    let root = dir.to_string_lossy().into_owned();
    rt.block_on(brain.call("work_session_start", json!({"project_root": root})))
        .expect("start");
    let observed = rt
        .block_on(brain.call("work_observe", json!({})))
        .expect("observe");
    // Claude Code shows the model the structured content as compact JSON.
    let seen = serde_json::to_string(&observed.envelope).expect("json");
    let tools = rt.block_on(brain.tools()).expect("tools/list");
    let tools_json = serde_json::to_string(&tools).expect("json");

    let bpe = tiktoken_rs::o200k_base().expect("bundled o200k_base");
    let tokens = |s: &str| bpe.encode_with_special_tokens(s).len();
    let (ob, ot) = (seen.len(), tokens(&seen));
    let (rb, rt_) = (raw.len(), tokens(&raw));
    println!("20-file change, 200-file project:");
    println!("  git status + git diff + git log -5: {rb:6} bytes {rt_:6} tokens");
    println!(
        "  work_observe (structuredContent):   {ob:6} bytes {ot:6} tokens  = {:.1}% / {:.1}%",
        100.0 * ob as f64 / rb as f64,
        100.0 * ot as f64 / rt_ as f64
    );
    println!(
        "  tools/list ({} tools):              {:6} bytes {:6} tokens",
        tools.len(),
        tools_json.len(),
        tokens(&tools_json)
    );
}
