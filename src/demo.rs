//! `butler demo`: a scratch project driven through a real MCP session (this binary's own
//! `butler mcp`, over stdio), printing every call and what the Brain sees. It needs nothing but
//! git: the issue tracker is the embedded store and the shared destination a local repository.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use butler_orchestrator::client::BrainClient;
use butler_worker::process::{ChildEnv, ChildSpec, Limits, env, run_blocking};
use serde_json::{Value, json};

pub async fn run(keep: bool) -> anyhow::Result<()> {
    let scratch = tempfile::Builder::new().prefix("butler-demo-").tempdir()?;
    let shared = scratch.path().join("shared.git");
    let project = scratch.path().join("project");
    setup(&shared, &project)?;

    let exe = std::env::current_exe().context("locating the butler binary")?;
    let brain = BrainClient::spawn(&exe, &project, &[]).await?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "Butler demo: a Brain's session on a scratch project at {}\n",
        project.display()
    )?;
    if let Some(text) = brain.instructions() {
        writeln!(
            out,
            "Server instructions ({} bytes) start: {:?}…\n",
            text.len(),
            &text[..60]
        )?;
    }
    let root = project.to_string_lossy().to_string();
    let steps: Vec<(&str, Value)> = vec![
        ("work_observe", json!({})),
        ("work_session_start", json!({"project_root": root})),
        ("work_observe", json!({})),
        (
            "issue_create",
            json!({"title": "Greet the user", "current_state": "The program prints nothing.",
                   "next_action": "Print a greeting.", "blockers": "None."}),
        ),
        ("work_start", json!({"issue_id": 1})),
        ("work_diff", json!({})),
        ("work_record", json!({"message": "Print a greeting"})),
        ("work_observe", json!({})),
        ("work_publish", json!({})),
        ("work_observe", json!({})),
        ("work_finish", json!({})),
        (
            "issue_comment",
            json!({"issue_id": 1, "body": "Done: the program greets the user."}),
        ),
        ("issue_close", json!({"issue_id": 1})),
        ("work_history", json!({"n": 3})),
    ];
    for (tool, args) in steps {
        let answer = brain.call(tool, args.clone()).await?;
        writeln!(out, "→ {tool}({args})")?;
        writeln!(out, "{}\n", serde_json::to_string_pretty(&answer.envelope)?)?;
        if answer.is_error {
            bail!("{tool} failed in the demo");
        }
    }
    brain.close().await;
    if keep {
        let kept = scratch.keep();
        writeln!(out, "Scratch project kept at {}", kept.display())?;
    }
    Ok(())
}

/// A project with a shared destination and some unrecorded work. (Scaffolding only: this is the
/// user's side of the world, so it calls git directly.)
fn setup(shared: &Path, project: &Path) -> anyhow::Result<()> {
    git(
        None,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &shared.to_string_lossy(),
        ],
    )?;
    git(
        None,
        &["init", "-q", "-b", "main", &project.to_string_lossy()],
    )?;
    git(Some(project), &["config", "user.name", "Demo User"])?;
    git(
        Some(project),
        &["config", "user.email", "demo@example.invalid"],
    )?;
    git(
        Some(project),
        &["remote", "add", "origin", &shared.to_string_lossy()],
    )?;
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::write(project.join("README.md"), "# Demo\n")?;
    std::fs::write(
        project.join("src/main.rs"),
        "fn main() {\n    println!(\"Hello!\");\n}\n",
    )?;
    Ok(())
}

/// Runs git with the environment the git worker gives it (a person's git setup, none of
/// Butler's settings or secrets).
fn git(cwd: Option<&Path>, args: &[&str]) -> anyhow::Result<()> {
    let mut vars = ChildEnv::new();
    vars.inherit_groups(env::inherited(), env::GIT_CHILD)
        .set_default("PATH", env::DEFAULT_PATH);
    let dir = cwd.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let spec = ChildSpec::new("git", dir, vars).args(args);
    let done = run_blocking(spec, Limits::new(Duration::from_secs(60)));
    if !done.ending.success() {
        bail!(
            "git {} failed ({}): {}",
            args.join(" "),
            done.ending,
            done.stderr.tail_text(2048).trim_end()
        );
    }
    Ok(())
}
