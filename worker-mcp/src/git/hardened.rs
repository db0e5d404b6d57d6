//! The one place that builds git for trees an agent may have written: the ImplementMaid's task
//! worktrees (inspection after an attempt, restores, setting aside, recording, verification's
//! clean-up, retiring) and the Maid's own work in the Brain's tree (its baseline, accepting,
//! merging). Whatever the agent, or code a verify command ran, left in the tree decides nothing
//! git runs:
//!
//! - **No discovery.** `GIT_DIR`, `GIT_COMMON_DIR` and `GIT_WORK_TREE` name the git directories
//!   and the working tree Butler recorded when it created the worktree, so the worktree's `.git`
//!   pointer file (which the agent can rewrite) is never read.
//! - **Only the repository's own configuration.** System and global configuration, and
//!   configuration given in the environment, are not read (`GIT_CONFIG_NOSYSTEM`,
//!   `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_COUNT=0`); the repository's `config` lives in
//!   the git directory, which the sandbox keeps read-only, and the per-worktree
//!   `config.worktree` is read only when that `config` enables `extensions.worktreeConfig`
//!   (checked: `-c extensions.worktreeConfig=false` does not switch it off, so the Maid's
//!   baseline restores both files before its git runs). Filters, diff and merge drivers and
//!   `textconv` are defined only in configuration: a `.gitattributes` in the tree can name only
//!   drivers the repository's owner configured, and `core.attributesFile` and the system
//!   attributes are off.
//! - **No programs of the repository's.** `core.fsmonitor` off, hooks looked up in
//!   `/dev/null` (so none exist, `--no-verify` or not), no external diff or `textconv` (the
//!   Maid's diffs pass `--no-ext-diff --no-textconv`; an empty `diff.external` would not turn it
//!   off, git would try to run ""), no signing, no automatic `gc` or maintenance (which would detach and outlive the call), the
//!   `ext::` transport refused.
//! - **Never into a nested repository.** Submodules are ignored by status and diff
//!   (`diff.ignoreSubmodules=all`, which checked status too: without it `git status` runs git
//!   inside a populated submodule, with that repository's configuration), never recursed into
//!   (`submodule.recurse=false`), never summarised; a nested repository the agent created is
//!   reported by [`super::TaskGit::tree_status`] and never added (it would become a gitlink).
//!
//! The Maid's identity ([`MAID_NAME`], [`MAID_EMAIL`]) is set for its commits.

use super::GitRepo;
use super::command::GitCommand;

/// The identity of the Maid's own records.
pub const MAID_NAME: &str = "Butler Maid";
/// The e-mail of the Maid's own records.
pub const MAID_EMAIL: &str = "maid@butler.invalid";

/// Settings given on the command line, after (and so over) the repository's configuration.
const SETTINGS: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.attributesFile=/dev/null",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "submodule.recurse=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "protocol.ext.allow=never",
];

/// Hardened git in `repo`'s working tree (see the module).
pub(super) fn command(repo: &GitRepo, op: &'static str) -> GitCommand {
    let mut cmd = GitCommand::new(repo, op);
    for setting in SETTINGS {
        cmd = cmd.args(["-c", setting]);
    }
    cmd.env("GIT_DIR", repo.git_dir())
        .env("GIT_COMMON_DIR", repo.common_dir())
        .env("GIT_WORK_TREE", repo.workdir())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_COUNT", "0")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", MAID_NAME)
        .env("GIT_AUTHOR_EMAIL", MAID_EMAIL)
        .env("GIT_COMMITTER_NAME", MAID_NAME)
        .env("GIT_COMMITTER_EMAIL", MAID_EMAIL)
}

#[cfg(test)]
mod tests {
    use crate::git::test_repo::markers_in;

    use butler_testkit::World;

    use super::*;

    /// A repository whose own configuration names programs that leave a marker, a worktree
    /// of it, and the marker directory.
    fn world() -> (World, GitRepo, std::path::PathBuf) {
        let w = World::committed(&[("a.txt", "a\n")]);
        let markers = w.path("markers");
        std::fs::create_dir_all(&markers).expect("mkdir");
        let main = GitRepo::discover(&w.project)
            .expect("repo")
            .with_command_env(w.env.clone());
        (w, main, markers)
    }

    #[test]
    fn git_reads_no_config_from_the_environment_nor_the_users_and_runs_no_hook() {
        let (w, main, markers) = world();
        let global = w.path("global.gitconfig");
        let fsmonitor = |name: &str| format!("touch {}/{name}; false", markers.display());
        std::fs::write(
            &global,
            format!("[core]\n\tfsmonitor = {}\n", fsmonitor("global")),
        )
        .expect("write");
        // The user's environment names a global file and configuration of its own; the
        // repository's configuration names fsmonitor too, and its hooks exist.
        let main = main.with_command_env([
            ("GIT_CONFIG_GLOBAL".to_owned(), global.display().to_string()),
            ("GIT_CONFIG_COUNT".to_owned(), "1".to_owned()),
            ("GIT_CONFIG_KEY_0".to_owned(), "core.fsmonitor".to_owned()),
            ("GIT_CONFIG_VALUE_0".to_owned(), fsmonitor("environment")),
        ]);
        w.git(
            &w.project,
            &["config", "core.fsmonitor", &fsmonitor("repository")],
        );
        let hooks = main.common_dir().join("hooks");
        std::fs::create_dir_all(&hooks).expect("mkdir");
        for hook in ["post-index-change", "pre-commit", "post-commit"] {
            let path = hooks.join(hook);
            butler_testkit::write_executable(
                &path,
                format!("#!/bin/sh\ntouch {}/{hook}\n", markers.display()),
            );
        }
        // Unhardened, the same git runs them all (the test's own check that they can run).
        std::fs::write(w.project.join("a.txt"), "b\n").expect("write");
        GitCommand::new(&main, "status")
            .args(["status", "--porcelain"])
            .run_ok()
            .expect("status");
        // The environment's setting is the last one read; status refreshes the index.
        assert_eq!(markers_in(&markers), ["environment", "post-index-change"]);
        for name in markers_in(&markers) {
            std::fs::remove_file(markers.join(name)).expect("rm");
        }
        command(&main, "add")
            .args(["add", "a.txt"])
            .run_ok()
            .expect("add");
        command(&main, "commit")
            .args(["commit", "-q", "-m", "x"])
            .run_ok()
            .expect("commit");
        assert!(
            markers_in(&markers).is_empty(),
            "{:?}",
            markers_in(&markers)
        );
    }
}
