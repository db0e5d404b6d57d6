//! `butler trust [PROJECT] [--revoke]`: the user's word that a project's `.butler/config.toml`
//! may decide what runs and where it may reach (see `butler_worker::config::trust`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use butler_worker::config::{CONFIG_FILE, Environment, revoke_project, trust_project};
use butler_worker::git::GitRepo;

/// Trusts (or, with `revoke`, forgets) the project's file; returns what to print.
pub fn run(project: &Path, revoke: bool, env: &Environment) -> anyhow::Result<String> {
    let root = project_root(project);
    if revoke {
        let file = root.join(CONFIG_FILE);
        return Ok(if revoke_project(&root, env)? {
            format!(
                "{} is no longer trusted: its settings of what runs are ignored.\n",
                file.display()
            )
        } else {
            format!("{} was not trusted.\n", file.display())
        });
    }
    let trusted = trust_project(&root, env).context("trusting the project's configuration")?;
    let settings = if trusted.guard_settings.is_empty() {
        "none".to_owned()
    } else {
        trusted.guard_settings.join(", ")
    };
    Ok(format!(
        "Trusted {} ({}).\nSettings of what runs and where it may reach that now apply: \
         {settings}.\nAny change to the file makes it untrusted again.\n",
        trusted.file.display(),
        trusted.digest
    ))
}

/// The project a path names: the work tree of the repository it is in (the path given to
/// `work_session_start`), its file `.butler/config.toml` naming its project too.
fn project_root(path: &Path) -> PathBuf {
    let named_file = path.is_file() && path.ends_with(CONFIG_FILE);
    let dir = match path.ancestors().nth(2) {
        Some(root) if named_file => root.to_path_buf(),
        _ => path.to_path_buf(),
    };
    match GitRepo::discover(&dir) {
        Ok(repo) => repo.workdir().to_path_buf(),
        Err(_) => dir,
    }
}
