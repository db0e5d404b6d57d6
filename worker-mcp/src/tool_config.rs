//! Files that configure tools or run code: the one list of them. A change an agent makes to one
//! of these steers what runs later — Butler's next session, the next agent, the user's shell,
//! git, CI, an editor, a build — so it is shown to the Brain under its own heading and lands
//! only once the Brain confirms the paths (`task_accept(task_id, confirm_paths)`). Agent
//! instructions and settings are put back after every attempt besides (an attempt does not
//! steer the next one), so they never land from a task.
//!
//! Matching is by path, with `/` separators, relative to the project root: a *name* matches
//! that file name in any directory, a *path* that path from the root, a *dir* everything under
//! that directory wherever it is, a *root dir* everything under it at the root. Listing a file
//! by mistake costs a confirmation; missing one would let it land unseen, so the list leans
//! wide (whole manifests, not only their `scripts`: a new dependency runs its install and build
//! scripts too). `.gitignore` is not on it: it runs nothing, and what it hides is never
//! recorded, so it cannot land.

use serde::{Deserialize, Serialize};

/// What a file configures, for the heading in the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolConfigKind {
    /// Butler's own configuration (`.butler/`).
    Butler,
    /// Agent instructions and settings (`CLAUDE.md`, `.claude/`, `.mcp.json`, …).
    Agent,
    /// Shell and environment hooks (`.envrc`, `mise.toml`, `flake.nix`, …).
    Environment,
    /// git's own configuration in the tree and its hook managers (`.gitattributes`,
    /// `.gitmodules`, `.pre-commit-config.yaml`, `.husky/`, …).
    Git,
    /// CI definitions (`.github/workflows/`, `.gitlab-ci.yml`, …).
    Ci,
    /// Editor tasks and settings (`.vscode/`, `.idea/`, …).
    Editor,
    /// Build tools and package manifests that run programs (`build.rs`, `Makefile`,
    /// `package.json`, `pyproject.toml`, `.cargo/`, …).
    Build,
}

impl ToolConfigKind {
    /// Whether files of this kind are put back after every attempt instead of landing.
    pub fn restored_after_attempt(self) -> bool {
        self == Self::Agent
    }
}

/// How an entry matches a path.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// This file name, in any directory.
    Name(&'static str),
    /// This path from the project root.
    Path(&'static str),
    /// Everything under a directory of this name, in any directory.
    Dir(&'static str),
    /// Everything under this directory path from the project root.
    RootDir(&'static str),
    /// File names ending so, in any directory.
    Suffix(&'static str),
}

use Rule::{Dir, Name, Path, RootDir, Suffix};
use ToolConfigKind::{Agent, Build, Butler, Ci, Editor, Environment, Git};

/// The list.
const LIST: &[(Rule, ToolConfigKind)] = &[
    (RootDir(".butler"), Butler),
    // Agents' instructions and settings.
    (Name("AGENTS.md"), Agent),
    (Name("AGENTS.override.md"), Agent),
    (Name("CLAUDE.md"), Agent),
    (Name("CLAUDE.local.md"), Agent),
    (Name("GEMINI.md"), Agent),
    (Name(".goosehints"), Agent),
    (Name(".aider.conf.yml"), Agent),
    (Name(".aider.env"), Agent),
    // Read by aider as its own settings (and by dotenv tools): put back like the agents' files.
    (Name(".env"), Agent),
    (Name(".aider.model.settings.yml"), Agent),
    (Name(".aider.model.metadata.json"), Agent),
    (Name(".cursorrules"), Agent),
    (Name(".windsurfrules"), Agent),
    (Name(".clinerules"), Agent),
    (Name(".mcp.json"), Agent),
    (Dir(".claude"), Agent),
    (Dir(".codex"), Agent),
    (Dir(".goose"), Agent),
    (Dir(".aider"), Agent),
    (Dir(".cursor"), Agent),
    (Dir(".gemini"), Agent),
    (Dir(".continue"), Agent),
    (Dir(".windsurf"), Agent),
    (Dir(".clinerules"), Agent),
    (Path(".github/copilot-instructions.md"), Agent),
    (RootDir(".github/instructions"), Agent),
    (RootDir(".github/prompts"), Agent),
    // Shell and environment hooks.
    (Name(".envrc"), Environment),
    (Name("mise.toml"), Environment),
    (Name(".mise.toml"), Environment),
    (Dir(".mise"), Environment),
    (Name(".tool-versions"), Environment),
    (Name("flake.nix"), Environment),
    (Name("shell.nix"), Environment),
    (Name("devbox.json"), Environment),
    (RootDir(".devcontainer"), Environment),
    (Name(".devcontainer.json"), Environment),
    // git's own, and its hook managers.
    (Name(".gitattributes"), Git),
    (Name(".gitmodules"), Git),
    (Name(".pre-commit-config.yaml"), Git),
    (Name(".pre-commit-hooks.yaml"), Git),
    (Dir(".husky"), Git),
    (Dir(".githooks"), Git),
    (Name("lefthook.yml"), Git),
    (Name(".lefthook.yml"), Git),
    (Name("lefthook.yaml"), Git),
    // CI.
    (RootDir(".github/workflows"), Ci),
    (RootDir(".github/actions"), Ci),
    (RootDir(".gitea/workflows"), Ci),
    (RootDir(".forgejo/workflows"), Ci),
    (Path(".gitlab-ci.yml"), Ci),
    (RootDir(".gitlab"), Ci),
    (RootDir(".circleci"), Ci),
    (RootDir(".buildkite"), Ci),
    (RootDir(".woodpecker"), Ci),
    (Path(".woodpecker.yml"), Ci),
    (Path(".drone.yml"), Ci),
    (Path(".travis.yml"), Ci),
    (Path("Jenkinsfile"), Ci),
    (Path("azure-pipelines.yml"), Ci),
    (Path("bitbucket-pipelines.yml"), Ci),
    (Path("appveyor.yml"), Ci),
    (Path(".appveyor.yml"), Ci),
    (RootDir(".ci"), Ci),
    // Editors.
    (Dir(".vscode"), Editor),
    (Dir(".idea"), Editor),
    (Dir(".zed"), Editor),
    (Dir(".helix"), Editor),
    (Name(".nvim.lua"), Editor),
    (Name(".nvimrc"), Editor),
    (Name(".exrc"), Editor),
    (Suffix(".code-workspace"), Editor),
    // Build tools and package manifests.
    (Name("build.rs"), Build),
    (Name("Cargo.toml"), Build),
    (Dir(".cargo"), Build),
    (Name("rust-toolchain"), Build),
    (Name("rust-toolchain.toml"), Build),
    (Name("Makefile"), Build),
    (Name("makefile"), Build),
    (Name("GNUmakefile"), Build),
    (Suffix(".mk"), Build),
    (Name("CMakeLists.txt"), Build),
    (Suffix(".cmake"), Build),
    (Name("meson.build"), Build),
    (Name("justfile"), Build),
    (Name("Justfile"), Build),
    (Name(".justfile"), Build),
    (Name("Taskfile.yml"), Build),
    (Name("Taskfile.yaml"), Build),
    (Name("Rakefile"), Build),
    (Name("Gemfile"), Build),
    (Name("package.json"), Build),
    (Name(".npmrc"), Build),
    (Name(".yarnrc"), Build),
    (Name(".yarnrc.yml"), Build),
    (Name("pnpm-workspace.yaml"), Build),
    (Name("setup.py"), Build),
    (Name("setup.cfg"), Build),
    (Name("pyproject.toml"), Build),
    (Name("conftest.py"), Build),
    (Name("tox.ini"), Build),
    (Name("noxfile.py"), Build),
    (Name("pytest.ini"), Build),
    (Name("go.mod"), Build),
    (Name("build.gradle"), Build),
    (Name("build.gradle.kts"), Build),
    (Name("settings.gradle"), Build),
    (Name("settings.gradle.kts"), Build),
    (Name("gradlew"), Build),
    (RootDir("gradle/wrapper"), Build),
    (Name("pom.xml"), Build),
    (Dir(".mvn"), Build),
    (Name("build.xml"), Build),
    (Name("BUILD"), Build),
    (Name("BUILD.bazel"), Build),
    (Name("WORKSPACE"), Build),
    (Name("WORKSPACE.bazel"), Build),
    (Name("MODULE.bazel"), Build),
    (Name(".bazelrc"), Build),
    (Name("Dockerfile"), Build),
    (Name("docker-compose.yml"), Build),
    (Name("docker-compose.yaml"), Build),
    (Name("compose.yaml"), Build),
    (Name("compose.yml"), Build),
];

impl Rule {
    fn matches(self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        match self {
            Name(n) => name == n,
            Path(p) => path == p,
            Suffix(s) => name.ends_with(s) && name.len() > s.len(),
            RootDir(d) => path.strip_prefix(d).is_some_and(|r| r.starts_with('/')),
            Dir(d) => path.split('/').rev().skip(1).any(|segment| segment == d),
        }
    }
}

/// What `path` (relative, `/`-separated) configures, if it is on the list.
pub fn classify(path: &str) -> Option<ToolConfigKind> {
    let path = path.trim_start_matches("./");
    LIST.iter()
        .find(|(rule, _)| rule.matches(path))
        .map(|(_, kind)| *kind)
}

/// One changed file on the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolConfigChange {
    pub path: String,
    pub kind: ToolConfigKind,
}

/// The changed `paths` on the list, in order.
pub fn tool_config_changes<'a>(
    paths: impl IntoIterator<Item = &'a String>,
) -> Vec<ToolConfigChange> {
    paths
        .into_iter()
        .filter_map(|path| {
            classify(path).map(|kind| ToolConfigChange {
                path: path.clone(),
                kind,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_found_where_its_tool_reads_it() {
        for (path, kind) in [
            (".butler/config.toml", Butler),
            ("CLAUDE.md", Agent),
            ("sub/AGENTS.md", Agent),
            (".claude/settings.json", Agent),
            ("pkg/.cursor/rules/x.mdc", Agent),
            (".mcp.json", Agent),
            (".github/copilot-instructions.md", Agent),
            (".envrc", Environment),
            ("app/.env", Agent),
            (".gitattributes", Git),
            ("vendor/.gitattributes", Git),
            (".gitmodules", Git),
            (".husky/pre-commit", Git),
            (".github/workflows/ci.yml", Ci),
            (".gitlab-ci.yml", Ci),
            (".ci/run.sh", Ci),
            (".vscode/tasks.json", Editor),
            ("proj.code-workspace", Editor),
            ("build.rs", Build),
            ("crates/x/build.rs", Build),
            ("crates/x/Cargo.toml", Build),
            (".cargo/config.toml", Build),
            ("Makefile", Build),
            ("web/package.json", Build),
            ("setup.py", Build),
            ("pyproject.toml", Build),
            ("tests/conftest.py", Build),
        ] {
            assert_eq!(classify(path), Some(kind), "{path}");
        }
    }

    #[test]
    fn ordinary_files_and_look_alikes_are_not_on_the_list() {
        for path in [
            "src/lib.rs",
            "README.md",
            ".gitignore",
            "docs/CLAUDE.md.txt",
            "src/build.rs.bak",
            ".github/ISSUE_TEMPLATE/bug.md",
            "sub/.gitlab-ci.yml",
            "src/ci/run.sh",
            "notes/.claude",
            ".mk",
            "src/.butler/config.toml",
        ] {
            assert_eq!(classify(path), None, "{path}");
        }
    }

    #[test]
    fn the_agent_kind_alone_is_put_back_after_an_attempt() {
        assert!(Agent.restored_after_attempt());
        for kind in [Butler, Environment, Git, Ci, Editor, Build] {
            assert!(!kind.restored_after_attempt(), "{kind:?}");
        }
    }
}
