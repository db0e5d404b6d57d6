//! The secret scan `work_record` runs before saving, on a large change, as a ratio to `git diff
//! HEAD` (git reading the same change) measured in the same run; and, with
//! `BUTLER_SCAN_TREE=<repository>`, a false-positive audit: every file of that repository's
//! HEAD is scanned as if it were about to be recorded for the first time, and every finding
//! is printed (path, rule, line — never the text).
//!
//! `cargo bench --bench benches -- secret_scan` (env `BUTLER_BENCH_FILES`, default 2000 changed files;
//! `BUTLER_BENCH_RUNS`, default 11).
#![allow(clippy::print_stdout)]
// The false-positive audit unpacks a tree with `tar`, as a person would.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use butler_worker::git::GitRepo;
use butler_worker::secrets::{KnownSecrets, scan_unrecorded};

use crate::common::{env_usize, median, ms};
use butler_testkit::World;

/// A line of ordinary source, varied by `i`.
fn source_line(i: usize) -> String {
    match i % 6 {
        0 => format!("    let value_{i} = compute(input, {i});"),
        1 => format!("    // keeps the result of step {i} for the caller"),
        2 => format!("    config.timeout_secs = {};", i % 300),
        3 => format!("    \"name_{i}\": \"widget-{}\",", i * 7),
        4 => format!("    if token_count > {i} {{ return Err(Error::TooLong); }}"),
        _ => format!("    assert_eq!(parse(\"{i}\"), Ok({i}));"),
    }
}

fn text(lines: usize, seed: usize) -> String {
    (0..lines).map(|i| source_line(i + seed) + "\n").collect()
}

/// A repository with `files * 2` committed files, then a change of `files` files: half of them
/// tracked files gaining 20 lines, a quarter new files staged by the user, a quarter new
/// untracked files.
fn generate_change(w: &World, files: usize) -> PathBuf {
    let dir = &w.init("change");
    for i in 0..files * 2 {
        let sub = dir.join(format!("src/m{:02}", i / 200));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(sub.join(format!("f{i:05}.rs")), text(40, i)).expect("write");
    }
    w.commit(dir, "base");
    for i in 0..files / 2 {
        let path = dir.join(format!("src/m{:02}/f{i:05}.rs", i / 200));
        let mut body = std::fs::read_to_string(&path).expect("read");
        body.push_str(&text(20, i + 1000));
        std::fs::write(&path, body).expect("modify");
    }
    let new_dir = dir.join("src/new");
    std::fs::create_dir_all(&new_dir).expect("mkdir");
    for i in 0..files / 2 {
        std::fs::write(new_dir.join(format!("n{i:05}.rs")), text(200, i)).expect("new");
        if i == files / 4 {
            w.git(dir, &["add", "-A"]);
        }
    }
    w.git(dir, &["status", "--porcelain"]);
    dir.clone()
}

fn bench_change(files: usize, runs: usize) {
    let w = World::new();
    let dir = generate_change(&w, files);
    let repo = GitRepo::discover(&dir)
        .expect("repo")
        .with_command_env(w.env.clone());
    let known = KnownSecrets::default();
    let (mut git_t, mut status_t, mut scan_t) = (Vec::new(), Vec::new(), Vec::new());
    let mut scanned = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let out = w.git_output(&dir, &["diff", "HEAD"]);
        assert!(out.status.success());
        git_t.push(t.elapsed());

        let t = Instant::now();
        let status = repo.status().expect("status");
        status_t.push(t.elapsed());
        let scan = scan_unrecorded(&repo, &status, &known).expect("scan");
        scan_t.push(t.elapsed());
        assert!(scan.findings.is_empty(), "{:?}", scan.findings);
        scanned = scan.files;
    }
    // The rules alone, over the same files held in memory.
    let texts: Vec<String> = repo
        .status()
        .expect("status")
        .entries
        .iter()
        .flat_map(|e| {
            let p = dir.join(e.path.as_path());
            if p.is_dir() {
                std::fs::read_dir(&p)
                    .expect("dir")
                    .map(|f| std::fs::read_to_string(f.expect("entry").path()).expect("read"))
                    .collect()
            } else {
                vec![std::fs::read_to_string(p).expect("read")]
            }
        })
        .collect();
    let mut rules_t = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let hits: usize = texts
            .iter()
            .map(|t| butler_worker::secrets::scan_text(t, &known).len())
            .sum();
        rules_t.push(t.elapsed());
        assert_eq!(hits, 0);
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let (g, st, s) = (median(git_t), median(status_t), median(scan_t));
    let r = median(rules_t);
    println!(
        "  rules alone over the {} files ({:.1} MB, whole files) {:8.1} ms",
        texts.len(),
        bytes as f64 / 1e6,
        ms(r)
    );
    println!("secret scan of a {files}-file change ({scanned} files read), median of {runs}:");
    println!("  git diff HEAD                 {:8.1} ms", ms(g));
    println!("  status alone                  {:8.1} ms", ms(st));
    println!(
        "  status + scan (work_record)   {:8.1} ms   ratio {:.2}",
        ms(s),
        ms(s) / ms(g)
    );
}

/// Scans every file of `source`'s HEAD as new work and prints what was found.
fn audit_tree(source: &Path) {
    let w = World::new();
    let dir = w.path("tree");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let archive = w.path("tree.tar");
    w.git(
        source,
        &[
            "archive",
            "--format=tar",
            "-o",
            &archive.to_string_lossy(),
            "HEAD",
        ],
    );
    let status = Command::new("tar")
        .arg("-xf")
        .arg(&archive)
        .current_dir(&dir)
        .status()
        .expect("tar");
    assert!(status.success());
    w.git(&dir, &["init", "-q", "-b", "main"]);
    let repo = GitRepo::discover(&dir)
        .expect("repo")
        .with_command_env(w.env.clone());
    let t = Instant::now();
    let status = repo.status().expect("status");
    let scan = scan_unrecorded(&repo, &status, &KnownSecrets::default()).expect("scan");
    let elapsed = t.elapsed();
    println!(
        "audit of {}: {} files in {:.1} ms, {} finding(s), {} file(s) read in part",
        source.display(),
        scan.files,
        ms(elapsed),
        scan.findings.len(),
        scan.partly_read.len()
    );
    for f in &scan.findings {
        println!("  {}:{} {}", f.path, f.line.unwrap_or(0), f.rule);
    }
}

pub fn main() {
    if let Ok(tree) = std::env::var("BUTLER_SCAN_TREE") {
        for source in tree.split(':').filter(|s| !s.is_empty()) {
            audit_tree(Path::new(source));
        }
        return;
    }
    bench_change(
        env_usize("BUTLER_BENCH_FILES", 2000),
        env_usize("BUTLER_BENCH_RUNS", 11),
    );
}
