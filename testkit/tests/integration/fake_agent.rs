//! The fake agent binary on its own: found where Cargo built it, one script line per attempt,
//! and a clear failure without a script. (How the Maid drives it as each agent is tested in
//! `maid/tests/integration/fake_agent.rs`.) This test also makes `cargo test --workspace` build
//! the binary for every other package's tests.
#![allow(
    clippy::disallowed_methods,
    reason = "the test starts the binary under test"
)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use butler_testkit::fake_agent::{SCRIPT_VAR, attempt, write_script};
use butler_testkit::{World, fake_agent};

fn play(dir: &Path, script: &Path) -> Output {
    Command::new(fake_agent())
        .current_dir(dir)
        .env_clear()
        .env(SCRIPT_VAR, script)
        .stdin(Stdio::null())
        .output()
        .expect("the fake agent starts")
}

#[test]
fn the_kit_finds_the_agent_cargo_built_for_these_tests() {
    let built = Path::new(env!("CARGO_BIN_EXE_fake-agent"));
    assert_eq!(
        fake_agent().canonicalize().expect("found"),
        built.canonicalize().expect("built")
    );
}

#[test]
fn each_run_plays_the_next_attempt_and_the_last_one_repeats() {
    let w = World::new();
    let script = write_script(
        w.dir(),
        &[
            attempt(&[r#"{"do":"write","path":"one.txt","text":"1"}"#]),
            attempt(&[
                r#"{"do":"append","path":"two.txt","text":"2"}"#,
                r#"{"do":"print","text":"done"}"#,
                r#"{"do":"exit","code":3}"#,
            ]),
        ],
    );
    let first = play(w.dir(), &script);
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(w.path("one.txt")).expect("one"),
        "1"
    );
    assert!(!w.path("two.txt").exists());
    for _ in 0..2 {
        let later = play(w.dir(), &script);
        assert_eq!(later.status.code(), Some(3));
        assert_eq!(String::from_utf8_lossy(&later.stdout), "done");
    }
    assert_eq!(
        std::fs::read_to_string(w.path("two.txt")).expect("two"),
        "22"
    );
    let counter = std::fs::read_to_string(w.path("script.jsonl.attempt")).expect("counter");
    assert_eq!(counter, "3");
}

#[test]
fn without_a_script_it_fails_saying_so() {
    let out = Command::new(fake_agent())
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .expect("the fake agent starts");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("FAKE_AGENT_SCRIPT is not set"), "{stderr}");
}
