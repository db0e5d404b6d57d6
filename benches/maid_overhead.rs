//! The ImplementMaid's own overhead per attempt on a large repository, against two plain-git
//! baselines measured in the same run:
//!
//! - **minimal**: `git worktree add` + `git add -A` + `git commit` — the least a person could do;
//! - **the Maid's git work**: every git command one Maid attempt runs (read from a
//!   `GIT_TRACE2_EVENT` trace of the Maid: the Brain's-tree checks, the worktree and its
//!   checkout, the baseline, detection, the record, the evidence's diffs), replayed with plain
//!   git in the same places and with the same hardening options. The Maid's figure over this
//!   one is what Butler adds beyond git: its ledger, its own bookkeeping, its processes.
//!
//! `cargo bench --bench benches -- maid_overhead` (env `BUTLER_BENCH_FILES`, default 100000;
//! `BUTLER_BENCH_RUNS`, default 9). The Maid's figure is a whole one-attempt task (precheck,
//! task creation in the ledger, worktree, baseline, detection and restoration, the Brain's-tree
//! check, scope check, the Maid's record, verification with no test commands, the evidence in
//! the ledger) with a no-op agent that writes one file, minus that agent's own run time
//! (measured separately). Each side gets a fresh worktree per run, and none is removed before
//! the last round: every worktree and task is retired at the end, untimed. Removing them as
//! the rounds went made every side pay for the one before: on an ext4 without a journal (this
//! machine's root file system) the inode allocator skips every inode freed in the last minute
//! (`recently_deleted` in `fs/ext4/ialloc.c`: 60% of a `read-tree`'s time in a `perf`
//! profile), so checking out 100,000 files right after
//! 100,000 were removed took 15–47 s instead of 8.6 s, by where the side's directory fell. Which
//! side runs first rotates from round to round, each side starts after the file system has
//! written out what the one before left (`sync`), and the generated repository has automatic
//! gc off, so no side pays for another's leftovers; the spread over the rounds is printed with
//! the medians.
#![allow(clippy::print_stdout)]
// The baseline of a benchmark is git spawned the plain way a person's shell does; Butler's
// own children go through `butler_worker::process`.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use butler_maid::agent::{AgentConfig, WorkerMcpCommand};
use butler_maid::contract::ImplementRequest;
use butler_maid::{AgentKind, MaidContext, Outcome};
use butler_orchestrator::implement::CancellationToken;
use butler_testkit::World;

use crate::common::{env_usize, generate, median, ms};

/// `git worktree add` + one file + `git add -A` + `git commit`, in a fresh worktree (left for
/// the end to retire).
fn plain_git(world: &World, dir: &Path, scratch: &Path, run: usize) -> Duration {
    let wt = scratch.join(format!("plain-{run}"));
    let wt_arg = wt.to_string_lossy().into_owned();
    let branch = format!("plain-{run}");
    let t = Instant::now();
    world.git(
        dir,
        &["worktree", "add", "-q", "-b", &branch, &wt_arg, "HEAD"],
    );
    let took_add = t.elapsed();
    std::fs::create_dir_all(wt.join("src")).expect("mkdir");
    std::fs::write(wt.join("src/bench.rs"), "pub fn bench() {}\n").expect("write");
    let t = Instant::now();
    world.git(&wt, &["add", "-A"]);
    world.git(&wt, &["commit", "-q", "-m", "bench"]);
    took_add + t.elapsed()
}

pub fn main() {
    let files = env_usize("BUTLER_BENCH_FILES", 100_000);
    let runs = env_usize("BUTLER_BENCH_RUNS", 9);
    let world = World::new();
    let t = Instant::now();
    let dir = generate(&world, files);
    println!(
        "generated {files} files in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // The no-op agent: writes one file in its working directory and exits.
    let agent = world.path("noop-agent");
    butler_testkit::write_executable(
        &agent,
        "#!/bin/sh\nmkdir -p src && echo 'pub fn bench() {}' > src/bench.rs\n",
    );
    let agent_runs: Vec<Duration> = (0..5)
        .map(|_| {
            let work = world.path("agent-probe");
            std::fs::create_dir_all(&work).expect("mkdir");
            let t = Instant::now();
            let status = Command::new(&agent)
                .current_dir(&work)
                .status()
                .expect("agent runs");
            assert!(status.success());
            t.elapsed()
        })
        .collect();
    let agent_time = median(agent_runs);

    let mut ctx = MaidContext::new(
        &dir,
        WorkerMcpCommand {
            program: "/bin/true".into(),
            args: vec!["worker-mcp".into()],
            env: vec![],
        },
    );
    ctx.agents.insert(
        AgentKind::Goose,
        AgentConfig {
            program: Some(agent.clone()),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            ..Default::default()
        },
    );
    ctx.git_env = world.env.clone();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let scratch = world.path("plain");
    std::fs::create_dir_all(&scratch).expect("mkdir");

    let mut plain = Vec::new();
    let mut replay = Vec::new();
    let mut maid = Vec::new();
    let mut tasks = Vec::new();
    let sides = [Side::Minimal, Side::Replay, Side::Maid];
    for run in 0..runs {
        // The side that runs first rotates: none always follows the same one.
        for k in 0..sides.len() {
            settle();
            match sides[(run + k) % sides.len()] {
                Side::Minimal => plain.push(plain_git(&world, &dir, &scratch, run)),
                Side::Replay => replay.push(maids_git_work(&world, &dir, &scratch, run)),
                Side::Maid => {
                    let request = ImplementRequest {
                        goal: "Add bench".into(),
                        target_paths: vec!["src/".into()],
                        ..Default::default()
                    };
                    let t = Instant::now();
                    let result = rt.block_on(async {
                        let contract = butler_maid::prepare_task(&ctx, request, "bench")
                            .await
                            .expect("prepared");
                        butler_maid::run_task(
                            ctx.clone(),
                            contract,
                            &|_| {},
                            CancellationToken::new(),
                        )
                        .await
                        .expect("runs")
                    });
                    let took = t.elapsed();
                    let evidence = result.implementation().expect("implementation evidence");
                    assert_eq!(evidence.outcome, Outcome::Succeeded, "{result:#?}");
                    assert_eq!(evidence.attempts.len(), 1);
                    maid.push(took.saturating_sub(agent_time));
                    tasks.push(result.task_id);
                }
            }
        }
    }
    // Retired only now (see the top): nothing of one side's removal falls on another.
    for task in tasks {
        let discarded = butler_maid::discard(&dir, task.as_str(), ctx.clock.clone());
        rt.block_on(discarded).expect("discard");
    }
    let scratch = scratch.canonicalize().expect("scratch");
    let worktrees = world.git(&dir, &["worktree", "list", "--porcelain"]);
    for path in worktrees
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
    {
        if Path::new(path).starts_with(&scratch) {
            world.git(&dir, &["worktree", "remove", "--force", path]);
        }
    }
    println!("runs: {runs}, files: {files} (median [min – max] over the runs)");
    println!(
        "plain git, minimal (worktree add + add -A + commit): {}",
        spread(&plain)
    );
    println!(
        "plain git, the Maid's git work replayed:            {}",
        spread(&replay)
    );
    println!(
        "Maid overhead per attempt:                          {}  (agent's own {:.1} ms taken out)",
        spread(&maid),
        ms(agent_time)
    );
    println!(
        "ratio Maid / minimal plain git:                     {}",
        ratios(&maid, &plain)
    );
    println!(
        "ratio Maid / the Maid's git work:                   {}",
        ratios(&maid, &replay)
    );
}

/// Waits until the file system has written out what the side before left (a worktree of
/// 100,000 files checked out or removed): without it, whichever side comes next pays for that
/// writeback (seen: the same `git worktree add` taking 3.6 s or 27 s by its place in the round).
fn settle() {
    let status = Command::new("sync").status().expect("sync runs");
    assert!(status.success(), "sync");
}

#[derive(Clone, Copy)]
enum Side {
    Minimal,
    Replay,
    Maid,
}

/// `median [min – max]` in milliseconds.
fn spread(v: &[Duration]) -> String {
    let mut sorted = v.to_vec();
    sorted.sort();
    format!(
        "{:8.1} ms [{:.1} – {:.1}]",
        ms(median(v.to_vec())),
        ms(sorted[0]),
        ms(sorted[sorted.len() - 1])
    )
}

/// The median of the per-run ratios `a[i] / b[i]`, with their range.
fn ratios(a: &[Duration], b: &[Duration]) -> String {
    let mut r: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    r.sort_by(f64::total_cmp);
    format!(
        "{:8.2}    [{:.2} – {:.2}]",
        r[r.len() / 2],
        r[0],
        r[r.len() - 1]
    )
}

/// Where a replayed command runs: the Brain's tree or the task's worktree.
#[derive(Clone, Copy)]
enum Place {
    Brain,
    Task,
}

/// The options every git Butler runs carries (`worker-mcp/src/git/hardened.rs`).
const HARDENING: &[&str] = &[
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "diff.ignoreSubmodules=all",
    "-c",
    "status.submoduleSummary=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "tag.gpgSign=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "protocol.ext.allow=never",
];

const STATUS: &[&str] = &[
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
];
const STATUS_NO_REFRESH: &[&str] = &[
    "--no-optional-locks",
    "-c",
    "diff.autoRefreshIndex=false",
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
];
const HEAD_COMMIT: &[&str] = &["rev-parse", "--verify", "-q", "HEAD^{commit}"];
const HEAD: &[&str] = &["rev-parse", "--verify", "-q", "HEAD"];
const SYMREF: &[&str] = &["symbolic-ref", "-q", "HEAD"];
const REFS: &[&str] = &["for-each-ref", "--format=%(refname) %(objectname)"];
const INDEX: &[&str] = &["ls-files", "-s"];
const TRACKED: &[&str] = &["ls-files", "-z"];

/// One Maid attempt's git commands, in its order (from a `GIT_TRACE2_EVENT` trace of the
/// Maid on this benchmark), with plain git: what the Maid would cost if Butler added nothing.
fn maids_git_work(world: &World, dir: &Path, scratch: &Path, run: usize) -> Duration {
    use Place::{Brain, Task};
    let wt = scratch.join(format!("replay-{run}"));
    let wt_arg = wt.to_string_lossy().into_owned();
    let branch = format!("replay-{run}");
    let base = world.git(dir, &["rev-parse", "HEAD"]).trim().to_owned();
    let git = |place: Place, args: &[&str]| {
        let cwd = match place {
            Brain => dir,
            Task => wt.as_path(),
        };
        let all: Vec<&str> = HARDENING.iter().chain(args).copied().collect();
        // The reads may answer "no" (exit 1); only a failed write is the benchmark's fault.
        world.git_output(cwd, &all)
    };
    let write = |place: Place, args: &[&str]| {
        let out = git(place, args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let before_agent = [(Brain, STATUS), (Brain, STATUS), (Brain, HEAD_COMMIT)];
    let baseline = [
        (Task, HEAD_COMMIT),
        (Task, REFS),
        (Task, INDEX),
        (Brain, SYMREF),
        (Brain, HEAD),
        (Brain, STATUS_NO_REFRESH),
        (Brain, TRACKED),
        (Task, SYMREF),
        (Task, HEAD),
        (Task, REFS),
        (Task, INDEX),
        (Task, STATUS),
    ];
    let after_agent = [
        (Brain, SYMREF),
        (Brain, HEAD),
        (Brain, STATUS_NO_REFRESH),
        (Brain, TRACKED),
        (Task, STATUS),
        (Task, STATUS),
        (Task, HEAD_COMMIT),
    ];
    let evidence = [
        (Task, HEAD_COMMIT),
        (Task, HEAD_COMMIT),
        (Task, STATUS),
        (Task, HEAD_COMMIT),
        (Task, REFS),
        (Task, INDEX),
        (Task, SYMREF),
        (Task, HEAD),
        (Task, REFS),
        (Task, INDEX),
        (Task, HEAD_COMMIT),
        (Task, STATUS),
    ];
    let t = Instant::now();
    for (place, args) in before_agent {
        git(place, args);
    }
    write(
        Brain,
        &[
            "worktree",
            "add",
            "-q",
            "--no-checkout",
            "-b",
            &branch,
            &wt_arg,
            &base,
        ],
    );
    write(Task, &["read-tree", "--reset", "-u", "HEAD"]);
    for (place, args) in baseline {
        git(place, args);
    }
    let took_before = t.elapsed();
    // The agent's part, not timed (the Maid's figure has the agent's own time taken out).
    std::fs::create_dir_all(wt.join("src")).expect("mkdir");
    std::fs::write(wt.join("src/bench.rs"), "pub fn bench() {}\n").expect("write");
    let t = Instant::now();
    for (place, args) in after_agent {
        git(place, args);
    }
    write(Task, &["add", "-A", "--", "src/bench.rs"]);
    write(
        Task,
        &[
            "commit",
            "-q",
            "--no-verify",
            "--cleanup=verbatim",
            "-m",
            "bench",
        ],
    );
    git(Task, HEAD_COMMIT);
    write(
        Task,
        &["diff", "--no-ext-diff", "--no-textconv", &base, "HEAD"],
    );
    for (place, args) in evidence {
        git(place, args);
    }
    let range = format!("{base}...refs/heads/{branch}");
    write(
        Brain,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            &range,
        ],
    );
    took_before + t.elapsed()
}
