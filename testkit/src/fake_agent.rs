//! Where tests find the scripted fake agent (`src/bin/fake-agent.rs`, a binary of this
//! package), and how they write its script.
//!
//! Cargo builds a package's binaries whenever that package's integration tests are built, so
//! `cargo test --workspace` puts `fake-agent` beside every test executable
//! (`<target>/<profile>/fake-agent`) before any test runs. [`fake_agent()`] looks there and
//! fails with what to run when the binary is missing or was built from an older source; no test
//! builds anything itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The variable naming the script the fake agent plays (pass it through to the agent).
pub const SCRIPT_VAR: &str = "FAKE_AGENT_SCRIPT";

/// The argument on which the fake agent prints the fingerprint of the source it was built from.
pub const FINGERPRINT_ARG: &str = "--testkit-fingerprint";

/// The fake agent's source, as this build of the kit knows it.
const SOURCE: &str = include_str!("bin/fake-agent.rs");

/// The path of the fake agent built from this kit's source. Panics, saying what to run, when it
/// is missing or stale.
pub fn fake_agent() -> PathBuf {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match FOUND.get_or_init(locate) {
        Ok(path) => path.clone(),
        Err(why) => panic!("{why}"),
    }
}

/// One attempt's line of a script: a JSON array of the actions (`{"do": …}` objects).
pub fn attempt(actions: &[&str]) -> String {
    format!("[{}]", actions.join(","))
}

/// Writes a script of `attempts` (one line each, see [`attempt`]) to `<dir>/script.jsonl`.
pub fn write_script(dir: &Path, attempts: &[String]) -> PathBuf {
    let script = dir.join("script.jsonl");
    std::fs::write(&script, attempts.join("\n")).expect("the fake agent's script is written");
    script
}

/// A short fingerprint of a source text (FNV-1a, 64 bits, in hex).
pub fn fingerprint(source: &str) -> String {
    let hash = source.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// Cargo puts a test executable in `<target>/<profile>/deps` and the package binaries one level
/// up.
fn locate() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("locating this test: {e}"))?;
    let mut dir = exe.parent().ok_or("this test has no directory")?;
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir = dir.parent().ok_or("`deps` has no parent")?;
    }
    locate_in(dir)
}

fn locate_in(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join("fake-agent");
    let rebuild = "`cargo test --workspace` builds it with the tests; to run one package's \
                   tests alone, first run `cargo build -p butler-testkit --bin fake-agent`";
    if !path.is_file() {
        return Err(format!(
            "the fake agent is not built at {}: {rebuild}",
            path.display()
        ));
    }
    let out = Command::new(&path)
        .arg(FINGERPRINT_ARG)
        .env_clear()
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("the fake agent at {} does not start: {e}", path.display()))?;
    let built_from = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if built_from != fingerprint(SOURCE) {
        return Err(format!(
            "the fake agent at {} was built from another testkit/src/bin/fake-agent.rs than \
             this test: {rebuild}",
            path.display()
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(dir: &Path, body: &str) {
        crate::write_executable(&dir.join("fake-agent"), format!("#!/bin/sh\n{body}\n"));
    }

    #[test]
    fn a_missing_agent_is_named_with_the_command_that_builds_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let why = locate_in(dir.path()).expect_err("nothing there");
        assert!(why.contains("is not built at"), "{why}");
        assert!(
            why.contains("cargo build -p butler-testkit --bin fake-agent"),
            "{why}"
        );
    }

    #[test]
    fn an_agent_built_from_another_source_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        program(dir.path(), "echo 0123456789abcdef");
        let why = locate_in(dir.path()).expect_err("stale");
        assert!(why.contains("built from another"), "{why}");
        // An old build that knows no fingerprint waits for a prompt on stdin: it gets none.
        program(dir.path(), "cat >/dev/null; exit 2");
        let why = locate_in(dir.path()).expect_err("stale");
        assert!(why.contains("built from another"), "{why}");
    }

    #[test]
    fn an_agent_built_from_this_source_is_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        program(dir.path(), &format!("echo {}", fingerprint(SOURCE)));
        assert_eq!(locate_in(dir.path()), Ok(dir.path().join("fake-agent")));
    }

    #[test]
    fn fingerprints_differ_with_the_source() {
        assert_eq!(fingerprint(""), "cbf29ce484222325");
        assert_ne!(fingerprint("a"), fingerprint("b"));
    }
}
