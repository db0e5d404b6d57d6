//! `butler init` and `butler doctor` through the real binary, with and without the binary on
//! `PATH`: the settings say `butler` when `PATH` finds this very binary (so they can be committed
//! and shared), its absolute path otherwise, and `init` says which it chose and why.

// Test scaffolding runs the binary as a person would, with a `PATH` of its choosing.
#![allow(clippy::disallowed_methods)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{BUTLER, World};
use butler_orchestrator::install::find_on_path;
use serde_json::{Value, json};

/// The system directories every `PATH` here has (for `sh`); they hold no `butler`.
const SYSTEM: &str = "/usr/bin:/bin";

fn butler_dir() -> PathBuf {
    Path::new(BUTLER).parent().expect("a directory").to_owned()
}

fn path_with(first: &[&Path]) -> OsString {
    let mut dirs: Vec<PathBuf> = first.iter().map(|d| d.to_path_buf()).collect();
    dirs.extend(std::env::split_paths(SYSTEM));
    std::env::join_paths(dirs).expect("joins")
}

/// Runs `butler <args>` in the world's environment with `path` as `PATH`.
fn butler(w: &World, path: &OsString, args: &[&str]) -> Output {
    Command::new(BUTLER)
        .args(args)
        .env_clear()
        .envs(w.env.iter().map(|(k, v)| (k, v)))
        .env("PATH", path)
        .current_dir(&w.project)
        .output()
        .expect("butler runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

fn json_at(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("written")).expect("JSON")
}

fn server_command(w: &World) -> Value {
    json_at(&w.project.join(".mcp.json"))["mcpServers"]["butler"].clone()
}

fn hook_command(w: &World) -> String {
    json_at(&w.project.join(".claude/settings.json"))["hooks"]["PreToolUse"][0]["hooks"][0]
        ["command"]
        .as_str()
        .expect("a command")
        .to_owned()
}

fn project() -> World {
    let w = World::new();
    std::fs::create_dir_all(&w.project).expect("project dir");
    assert!(
        find_on_path("butler", Some(SYSTEM.as_ref())).is_none(),
        "this test needs {SYSTEM} to hold no `butler`"
    );
    w
}

fn assert_doctor_healthy(w: &World, path: &OsString) -> String {
    let out = butler(w, path, &["doctor"]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(!said.contains("FAIL") && !said.contains("warn"), "{said}");
    said
}

#[test]
fn with_this_binary_on_path_the_settings_say_butler_and_doctor_finds_it() {
    let w = project();
    let path = path_with(&[&butler_dir()]);
    let out = butler(&w, &path, &["init"]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(said.contains("`butler` on PATH is this binary"), "{said}");
    assert!(said.contains("can be committed and shared"), "{said}");
    assert_eq!(
        server_command(&w),
        json!({"command": "butler", "args": ["mcp"]})
    );
    // The hook-only binary sits beside `butler` in the build directory, so it is found too.
    let fast = butler_dir().join("butler-git-hook").is_file();
    let hook = if fast { "butler-git-hook" } else { "butler" };
    assert_eq!(hook_command(&w), format!("\"{hook}\" git-hook"));
    for file in [".mcp.json", ".claude/settings.json"] {
        let content = std::fs::read_to_string(w.project.join(file)).expect("read");
        assert!(
            !content.contains(&butler_dir().to_string_lossy().into_owned()),
            "{file} names no build directory: {content}"
        );
    }
    let said = assert_doctor_healthy(&w, &path);
    assert!(said.contains("(on PATH: "), "{said}");
    assert!(said.contains("answers `tools/list`"), "{said}");

    // A teammate without Butler on PATH is told so, not left with a silent hook.
    let out = butler(&w, &OsString::from(SYSTEM), &["doctor"]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("`butler` is not on PATH"), "{said}");
    assert!(said.contains("FAIL  mcp_answers"), "{said}");
}

#[test]
fn a_link_on_path_to_this_binary_counts_as_this_binary() {
    let w = project();
    let bin = w.path("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::os::unix::fs::symlink(BUTLER, bin.join("butler")).expect("link");
    let path = path_with(&[&bin]);
    let out = butler(&w, &path, &["init"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(server_command(&w)["command"], json!("butler"));
    // Only `butler` is on PATH here, so the hook runs it too.
    assert_eq!(hook_command(&w), "\"butler\" git-hook");
    assert_doctor_healthy(&w, &path);
}

#[test]
fn without_this_binary_on_path_the_settings_name_its_absolute_path() {
    let w = project();
    let path = OsString::from(SYSTEM);
    let out = butler(&w, &path, &["init"]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(said.contains("`butler` is not on PATH"), "{said}");
    assert!(said.contains("cargo install --locked --path ."), "{said}");
    let command = server_command(&w)["command"]
        .as_str()
        .expect("a command")
        .to_owned();
    assert!(Path::new(&command).is_absolute(), "{command}");
    assert_eq!(
        std::fs::canonicalize(&command).expect("exists"),
        std::fs::canonicalize(BUTLER).expect("exists")
    );
    assert!(hook_command(&w).starts_with(&format!("\"{}", butler_dir().display())));
    assert_doctor_healthy(&w, &path);

    // Installed later: running `init` again switches the settings to the name.
    let path = path_with(&[&butler_dir()]);
    let out = butler(&w, &path, &["init"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("updated"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(server_command(&w)["command"], json!("butler"));
}

#[test]
fn another_butler_first_on_path_is_not_mistaken_for_this_one() {
    let w = project();
    let other = w.path("other-bin");
    let impostor = other.join("butler");
    butler_testkit::write_executable(&impostor, "#!/bin/sh\nexit 0\n");
    let path = path_with(&[&other, &butler_dir()]);
    let out = butler(&w, &path, &["init"]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("not this binary"), "{said}");
    assert!(said.contains(&impostor.display().to_string()), "{said}");
    let command = server_command(&w)["command"]
        .as_str()
        .expect("a command")
        .to_owned();
    assert!(Path::new(&command).is_absolute(), "{command}");
}
