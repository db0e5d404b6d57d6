//! The hermetic repository world: a temp dir holding a hermetic `HOME`, a project, a bare shared
//! destination and any other repository a test makes, and git run the way a user would, but
//! with nothing of the machine's configuration and with fixed identities and dates.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};

use tempfile::TempDir;

/// The date of the world's first moment (2026-06-12T03:22:47Z); [`World::commit`] moves the
/// world's clock a minute on before each commit.
pub const BASE_DATE: i64 = 1_781_234_567;
/// The time zone of the world's commits.
const ZONE: &str = "+0900";
/// The identity of the world's user (author and committer).
pub const AUTHOR_NAME: &str = "Ada Author";
pub const AUTHOR_EMAIL: &str = "ada@example.com";

/// A scratch world in a temp dir, deleted when dropped.
pub struct World {
    pub tmp: TempDir,
    /// `<tmp>/project`: the user's project (made by [`World::unborn`] and the constructors
    /// built on it, or by `init("project")`).
    pub project: PathBuf,
    /// `<tmp>/shared.git`: the shared destination (made by [`World::published`]).
    pub shared: PathBuf,
    /// The environment of every git the world runs, and what a test passes on to the programs
    /// it starts: git's global and system configuration shut out, `HOME` and `XDG_CONFIG_HOME`
    /// inside the world, the user's identity, `LC_ALL=C`. Dates are added per command.
    pub env: Vec<(String, String)>,
    /// The temp dir, its symbolic links resolved.
    base: PathBuf,
    /// Seconds after [`BASE_DATE`] of the world's next commit.
    clock: AtomicI64,
}

impl World {
    /// An empty world: a hermetic `HOME` and nothing else.
    pub fn new() -> World {
        let tmp = tempfile::Builder::new()
            .prefix("butler-test-")
            .tempdir()
            .expect("a temp dir for the world");
        let root = tmp.path().canonicalize().expect("the temp dir resolves");
        let home = root.join("home");
        std::fs::create_dir_all(home.join(".config")).expect("the world's HOME");
        let mut env: Vec<(String, String)> = vec![
            ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("HOME".into(), display(&home)),
            ("XDG_CONFIG_HOME".into(), display(&home.join(".config"))),
            ("LC_ALL".into(), "C".into()),
        ];
        for (key, value) in [
            ("GIT_AUTHOR_NAME", AUTHOR_NAME),
            ("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL),
            ("GIT_COMMITTER_NAME", AUTHOR_NAME),
            ("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL),
        ] {
            env.push((key.into(), value.into()));
        }
        World {
            project: root.join("project"),
            shared: root.join("shared.git"),
            tmp,
            base: root,
            env,
            clock: AtomicI64::new(0),
        }
    }

    /// The same world without a git identity: no `GIT_AUTHOR_*` / `GIT_COMMITTER_*`, `EMAIL`
    /// empty (git then refuses to commit where `user.useConfigOnly` is set).
    pub fn without_identity(mut self) -> World {
        self.env = self.env_without_identity();
        self
    }

    /// [`World::env`] without the identity (see [`World::without_identity`]).
    pub fn env_without_identity(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .env
            .iter()
            .filter(|(k, _)| !k.starts_with("GIT_AUTHOR_") && !k.starts_with("GIT_COMMITTER_"))
            .cloned()
            .collect();
        env.push(("EMAIL".into(), String::new()));
        env
    }

    /// A project initialised on `main`, without commits.
    pub fn unborn() -> World {
        let w = World::new();
        w.init("project");
        w
    }

    /// A project whose one commit ("Initial commit") holds `files` (path, content); no shared
    /// destination.
    pub fn committed(files: &[(&str, &str)]) -> World {
        let w = World::unborn();
        for (path, content) in files {
            w.write(path, content);
        }
        w.commit(&w.project, "Initial commit");
        w
    }

    /// A project with one commit (`README.md`) and no shared destination.
    pub fn local_only() -> World {
        World::committed(&[("README.md", "# project\n")])
    }

    /// A project with one commit published to the shared destination (`origin`, `main`
    /// tracking `origin/main`).
    pub fn published() -> World {
        let w = World::local_only();
        w.bare("shared.git");
        w.git(
            &w.project,
            &["remote", "add", "origin", &display(&w.shared)],
        );
        w.git(&w.project, &["push", "-q", "-u", "origin", "main"]);
        w
    }

    /// The world's temp dir (its symbolic links resolved).
    pub fn dir(&self) -> &Path {
        &self.base
    }

    /// `name` inside the world.
    pub fn path(&self, name: &str) -> PathBuf {
        self.base.join(name)
    }

    /// The world's `HOME`.
    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// The project's path as text (what a Brain passes as `project_root`).
    pub fn root(&self) -> String {
        display(&self.project)
    }

    /// Writes the user's own Butler configuration (`$XDG_CONFIG_HOME/butler/config.toml` of the
    /// world's `HOME`): where settings of what runs and where it may reach come from.
    pub fn user_config(&self, content: &str) {
        write_file(&self.home().join(".config/butler/config.toml"), content);
    }

    /// Writes `content` to `rel` inside the project, making its directories.
    pub fn write(&self, rel: &str, content: &str) {
        write_file(&self.project.join(rel), content);
    }

    /// A repository named `name` in the world, initialised on `main`.
    pub fn init(&self, name: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::create_dir_all(&path).expect("the repository's directory");
        self.git(&path, &["init", "-q", "-b", "main"]);
        path
    }

    /// A bare repository named `name` in the world, its default branch `main`.
    pub fn bare(&self, name: &str) -> PathBuf {
        let path = self.path(name);
        self.git(self.dir(), &["init", "-q", "--bare", "-b", "main", name]);
        path
    }

    /// Another clone of the shared destination (`<tmp>/other`), for moving it on behind the
    /// project's back.
    pub fn other_clone(&self) -> PathBuf {
        let other = self.path("other");
        self.git(
            self.dir(),
            &["clone", "-q", &display(&self.shared), &display(&other)],
        );
        other
    }

    /// Moves the clock a minute on, stages everything in `repo` and commits it with `message`
    /// (an empty commit if nothing changed); returns the new commit's sha.
    pub fn commit(&self, repo: &Path, message: &str) -> String {
        self.clock.fetch_add(60, Ordering::SeqCst);
        self.git(repo, &["add", "-A"]);
        self.git(repo, &["commit", "-q", "--allow-empty", "-m", message]);
        self.git(repo, &["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Runs git in `dir` as the world's user; panics unless it succeeds; returns its stdout.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_output(dir, args);
        assert!(
            out.status.success(),
            "git {args:?} in {}: {}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs git in `dir` as the world's user, whatever it answers.
    pub fn git_output(&self, dir: &Path, args: &[&str]) -> Output {
        self.git_command(dir, args)
            .output()
            .expect("git runs (is it installed?)")
    }

    /// The git command [`World::git`] runs: the world's environment only (plus `PATH`) and the
    /// world's current date as author and committer date.
    pub fn git_command(&self, dir: &Path, args: &[&str]) -> Command {
        let date = format!("{} {ZONE}", BASE_DATE + self.clock.load(Ordering::SeqCst));
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date);
        cmd
    }
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

/// Writes `content` to `path`, making its directories.
pub fn write_file(path: &Path, content: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("the file's directory");
    }
    std::fs::write(path, content).expect("the file is written");
}

/// Writes an executable file (mode 755) holding `content`, making its directories, so that it
/// can be run at once even while other test threads start processes.
///
/// A file this process held open for writing would be inherited by a child that another thread
/// is starting at that moment, and until that child execs, running the file fails with "Text
/// file busy" (`ETXTBSY`). So the file is written by a `sh` of its own: once that has exited, no
/// process holds the file open for writing.
pub fn write_executable(path: &Path, content: impl AsRef<[u8]>) {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("the executable's directory");
    }
    let mut sh = Command::new("/bin/sh")
        .args(["-c", "cat >\"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("sh starts");
    // When sh could not write, its own status says why; a broken pipe would only echo that.
    let sent = sh
        .stdin
        .take()
        .expect("sh's stdin")
        .write_all(content.as_ref());
    let status = sh.wait().expect("sh ends");
    assert!(
        status.success(),
        "writing {} failed: {status}",
        path.display()
    );
    sent.expect("the executable's content reaches sh");
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_executable_runs_at_once_while_other_threads_start_processes() {
        // Four threads write and at once run a fresh program while two more keep starting
        // processes. Written with `std::fs::write`, about one run in 200 failed here with "Text
        // file busy".
        let rounds = 100;
        let dir = tempfile::tempdir().expect("tempdir");
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let _ = Command::new("/bin/true").status();
                    }
                });
            }
            let writers: Vec<_> = (0..4)
                .map(|t| {
                    let dir = dir.path();
                    scope.spawn(move || {
                        let mut failures = Vec::new();
                        for round in 0..rounds {
                            let path = dir.join(format!("program-{t}-{round}"));
                            write_executable(&path, "#!/bin/sh\nexit 0\n");
                            if let Err(e) = Command::new(&path).status() {
                                failures.push(e.to_string());
                            }
                        }
                        failures
                    })
                })
                .collect();
            let failures: Vec<String> = writers
                .into_iter()
                .flat_map(|w| {
                    w.join()
                        .unwrap_or_else(|_| vec!["a writer panicked".to_owned()])
                })
                .collect();
            stop.store(true, Ordering::Relaxed);
            assert!(failures.is_empty(), "{failures:?}");
        });
    }
}
