//! `butler git-hook` per call, as a ratio to spawning `git --version` in the same run.
//!
//! `cargo bench --bench benches -- hook_vs_git` (env `BUTLER_BENCH_ROUNDS`, default 3). For every command
//! of the hook corpus (`orchestrator/tests/hook_corpus.txt`) it spawns `butler git-hook` with
//! the PreToolUse JSON on stdin and, interleaved, `git --version`, and prints the median wall
//! time per call of each and their ratio (target: at most 1.5). The hook runs before every
//! shell command the Brain issues, so its floor is a process start, like git's.
#![allow(clippy::print_stdout)]
// The baseline of a benchmark is git spawned the plain way a person's shell does; Butler's
// own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{env_usize, median};

const BUTLER: &str = env!("CARGO_BIN_EXE_butler");
/// The hook-only binary `butler init` installs when it sits beside `butler`.
const FAST_HOOK: &str = env!("CARGO_BIN_EXE_butler-git-hook");
const CORPUS: &str = include_str!("../orchestrator/tests/hook_corpus.txt");

fn corpus() -> Vec<String> {
    CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(_, command)| command.replace('⏎', "\n"))
        .collect()
}

fn hook_input(command: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": "bench",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "bench"},
        "tool_use_id": "toolu_bench",
    })
    .to_string()
    .into_bytes()
}

fn time_hook(program: &str, input: &[u8]) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(program)
        .arg("git-hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn butler git-hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write hook input");
    let out = child.wait_with_output().expect("hook finishes");
    let elapsed = started.elapsed();
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "hook failed: {:?}",
        out.status
    );
    elapsed
}

fn time_git() -> Duration {
    let started = Instant::now();
    let out = Command::new("git")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .expect("spawn git --version");
    let elapsed = started.elapsed();
    assert!(out.status.success());
    elapsed
}

pub fn main() {
    let rounds = env_usize("BUTLER_BENCH_ROUNDS", 3);
    let commands = corpus();
    let inputs: Vec<Vec<u8>> = commands.iter().map(|c| hook_input(c)).collect();
    // Warm the page cache for both binaries.
    for _ in 0..5 {
        time_hook(BUTLER, &inputs[0]);
        time_hook(FAST_HOOK, &inputs[0]);
        time_git();
    }
    let budget = Instant::now() + Duration::from_secs(50);
    let (mut hook, mut fast, mut git) = (Vec::new(), Vec::new(), Vec::new());
    let mut slowest = (Duration::ZERO, 0usize);
    'rounds: for _ in 0..rounds {
        for (i, input) in inputs.iter().enumerate() {
            if Instant::now() > budget {
                break 'rounds;
            }
            let h = time_hook(BUTLER, input);
            if h > slowest.0 {
                slowest = (h, i);
            }
            hook.push(h);
            fast.push(time_hook(FAST_HOOK, input));
            git.push(time_git());
        }
    }
    let calls = hook.len();
    let (hook_median, fast_median, git_median) = (median(hook), median(fast), median(git));
    let ratio = hook_median.as_secs_f64() / git_median.as_secs_f64();
    let fast_ratio = fast_median.as_secs_f64() / git_median.as_secs_f64();
    println!(
        "hook_vs_git: {} corpus commands, {calls} calls each",
        commands.len()
    );
    println!(
        "  butler git-hook  median {:>8.3} ms",
        hook_median.as_secs_f64() * 1e3
    );
    println!(
        "  butler-git-hook  median {:>8.3} ms",
        fast_median.as_secs_f64() * 1e3
    );
    println!(
        "  git --version    median {:>8.3} ms",
        git_median.as_secs_f64() * 1e3
    );
    println!("  ratio butler git-hook  {ratio:.2}");
    println!("  ratio butler-git-hook  {fast_ratio:.2} (installed by butler init; target <= 1.5)");
    println!(
        "  slowest hook call {:.3} ms: {:?}",
        slowest.0.as_secs_f64() * 1e3,
        commands[slowest.1].chars().take(80).collect::<String>()
    );
}
