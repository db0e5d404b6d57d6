//! Lines moved between a repository and a destination named by a remote, a URL or a path, for
//! a task that runs away from the project (in a Kubernetes pod): on the user's side its base
//! sent to a private ref and its line fetched back; in the pod the base fetched into a fresh
//! repository and the task line pushed to a ref of its own. Never forced.
//!
//! On the user's side git uses the user's own transport and credential helpers
//! ([`Access::User`]). In a pod, the destination's credentials, when it needs any,
//! are two files (`username`, `token`) that
//! git itself reads through a credential helper at the moment it asks ([`FileCredentials`]): the
//! token is never on a command line, in an environment or in Butler's output. No hook runs
//! while a line moves (`core.hooksPath=/dev/null`): nothing planted in the repository runs
//! where the credentials can be read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::GitRepo;
use super::command::GitCommand;
use super::error::{GitError, redact_credentials};

const TRANSFER_TIMEOUT: Duration = Duration::from_secs(300);

/// A directory holding the destination's credentials: `username` and `token` (a Kubernetes
/// Secret mounted as files). Git reads them when the destination asks for credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCredentials {
    dir: PathBuf,
}

impl FileCredentials {
    /// The credentials in `dir` (the files are read by git when needed, not now).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory holding `username` and `token`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The token as the files hold it (trailing line ends removed), for removing it from text
    /// before showing that text; `None` when it cannot be read.
    pub fn token(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("token")).ok()?;
        let token = text.trim_end_matches(['\n', '\r']);
        (!token.is_empty()).then(|| token.to_owned())
    }

    /// git's `credential.helper` value: a shell function that answers `get` with the two files'
    /// contents (and ignores `store` and `erase`).
    fn helper(&self) -> String {
        let dir = quoted(&self.dir.to_string_lossy());
        format!(
            "!f() {{ test \"$1\" = get || exit 0; u=$(cat {dir}/username) && \
             t=$(cat {dir}/token) || exit 1; printf 'username=%s\\npassword=%s\\n' \"$u\" \"$t\"; }}; f"
        )
    }
}

/// `text` as one shell word (a path with a NUL byte cannot be one: never a directory name).
fn quoted(text: &str) -> String {
    shlex::try_quote(text).map_or_else(|_| "''".to_owned(), |q| q.into_owned())
}

/// `url` as it may be shown: the user-info of http(s) URLs and other URLs' passwords removed.
pub fn shown_destination(url: &str) -> String {
    redact_credentials(url)
}

/// Whose credentials a transfer uses.
#[derive(Debug, Clone, Copy)]
pub enum Access<'a> {
    /// The user's own transport and credential helpers (Butler on the user's machine).
    User,
    /// These files only, or none: every helper configured anywhere is cleared (a pod).
    Only(Option<&'a FileCredentials>),
}

/// A git command that moves a line: no hooks, the credentials `access` allows, the transfer's
/// time limit.
fn transfer(repo: &GitRepo, op: &'static str, access: Access<'_>) -> GitCommand {
    let mut cmd = GitCommand::new(repo, op).args(["-c", "core.hooksPath=/dev/null"]);
    if let Access::Only(credentials) = access {
        // An empty value clears the helpers configured anywhere before.
        cmd = cmd.args(["-c", "credential.helper="]);
        if let Some(credentials) = credentials {
            cmd = cmd
                .arg("-c")
                .arg(format!("credential.helper={}", credentials.helper()));
        }
    }
    cmd.timeout(TRANSFER_TIMEOUT)
}

fn check_argument(op: &'static str, what: &str, value: &str) -> Result<(), GitError> {
    if value.is_empty() || value.starts_with('-') || value.chars().any(char::is_control) {
        return Err(GitError::failed(op, format!("invalid {what}")));
    }
    Ok(())
}

impl GitRepo {
    /// Creates an empty repository in `dir` (made when missing; initial line `main`) and
    /// opens it. An existing repository there is refused.
    pub fn init_fresh(dir: &Path) -> Result<GitRepo, GitError> {
        std::fs::create_dir_all(dir).map_err(|e| GitError::io("init", e))?;
        if dir.join(".git").exists() {
            return Err(GitError::failed(
                "init",
                format!("{} holds a repository already", dir.display()),
            ));
        }
        let mut options = git2::RepositoryInitOptions::new();
        options.initial_head("main").no_reinit(true);
        git2::Repository::init_opts(dir, &options)?;
        GitRepo::discover(dir)
    }

    /// Fetches `remote_ref` (a full ref name) from `url` into the new local line `line`;
    /// returns the commit fetched, or `None` when the destination has no such ref. An existing
    /// local line is never moved (git refuses).
    pub fn fetch_line(
        &self,
        url: &str,
        remote_ref: &str,
        line: &str,
        access: Access<'_>,
    ) -> Result<Option<String>, GitError> {
        check_argument("fetch", "destination", url)?;
        check_argument("fetch", "ref", remote_ref)?;
        check_argument("fetch", "line", line)?;
        let out = transfer(self, "fetch", access)
            .args([
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "--quiet",
                "--",
            ])
            .arg(url)
            .arg(format!("{remote_ref}:refs/heads/{line}"))
            .run()?;
        if !out.status.success() {
            let lower = out.stderr_tail.to_ascii_lowercase();
            if lower.contains("couldn't find remote ref") {
                return Ok(None);
            }
            tracing::warn!(detail = %out.detail(), "fetching failed");
            return Err(
                classify_fetch(&lower).unwrap_or_else(|| GitError::failed("fetch", out.detail()))
            );
        }
        self.line_tip(line)
    }

    /// Pushes the local line `line` to `remote_ref` (a full ref name) at `url`, never forced:
    /// a ref there that is not an ancestor is `Rejected`; a hook or rule of the destination
    /// that refuses is `HookRejected` with what it said (credentials removed).
    pub fn push_line(
        &self,
        url: &str,
        line: &str,
        remote_ref: &str,
        access: Access<'_>,
    ) -> Result<(), GitError> {
        check_argument("push", "line", line)?;
        self.push_spec(url, &[&format!("refs/heads/{line}:{remote_ref}")], access)
    }

    /// Creates `remote_ref` at `url` pointing at commit `sha`: a ref that already exists there
    /// is never moved (`Rejected`), not even to a descendant.
    pub fn push_commit(
        &self,
        url: &str,
        sha: &str,
        remote_ref: &str,
        access: Access<'_>,
    ) -> Result<(), GitError> {
        check_argument("push", "commit", sha)?;
        let create_only = format!("--force-with-lease={remote_ref}:");
        self.push_spec(url, &[&create_only, &format!("{sha}:{remote_ref}")], access)
    }

    /// Deletes `remote_ref` at `url`.
    pub fn delete_remote_ref(
        &self,
        url: &str,
        remote_ref: &str,
        access: Access<'_>,
    ) -> Result<(), GitError> {
        self.push_spec(url, &[&format!(":{remote_ref}")], access)
    }

    /// `git push` of `spec` (options, then the refspec last) to `url`.
    fn push_spec(&self, url: &str, spec: &[&str], access: Access<'_>) -> Result<(), GitError> {
        check_argument("push", "destination", url)?;
        let (options, refspec) = spec.split_at(spec.len() - 1);
        for word in refspec {
            check_argument("push", "ref", word)?;
        }
        let out = transfer(self, "push", access)
            .args(["push", "--porcelain", "--no-verify"])
            .args(options)
            .arg("--")
            .arg(url)
            .args(refspec)
            .run()?;
        if out.status.success() {
            return Ok(());
        }
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        Err(super::publish::classify(&out, &stdout))
    }

    /// Points local ref `name` (a full ref name) at commit `sha`, creating or moving it; `None`
    /// deletes it.
    pub fn set_local_ref(&self, name: &str, sha: Option<&str>) -> Result<(), GitError> {
        check_argument("update-ref", "ref", name)?;
        let repo = self.open()?;
        let failed =
            |e: git2::Error| GitError::failed("update-ref", format!("{name}: {}", e.message()));
        match sha {
            Some(sha) => {
                let oid = git2::Oid::from_str(sha).map_err(failed)?;
                repo.reference(name, oid, true, "butler: task line")
                    .map_err(failed)?;
            }
            None => match repo.find_reference(name) {
                Ok(mut r) => r.delete().map_err(failed)?,
                Err(e) if e.code() == git2::ErrorCode::NotFound => {}
                Err(e) => return Err(failed(e)),
            },
        }
        Ok(())
    }
}

/// A failed fetch's cause, read from git's (lower-cased) message.
fn classify_fetch(lower: &str) -> Option<GitError> {
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    if has(&[
        "authentication failed",
        "could not read username",
        "could not read password",
        "invalid username or password",
        "returned error: 401",
        "returned error: 403",
        "permission denied",
    ]) {
        Some(GitError::AuthFailed)
    } else if has(&[
        "could not resolve host",
        "connection refused",
        "connection timed out",
        "network is unreachable",
        "no route to host",
        "does not appear to be a git repository",
        "repository not found",
        "returned error: 404",
        "could not read from remote repository",
        "unable to access",
        "failed to connect",
    ]) {
        Some(GitError::Unreachable)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use butler_testkit::World;

    use super::*;

    /// A bare destination holding one commit at `refs/heads/butler/base/j`; its sha.
    fn destination(w: &World) -> String {
        let shared = w.bare("shared.git");
        let src = w.init("src");
        std::fs::write(src.join("a.txt"), "a\n").expect("write");
        let sha = w.commit(&src, "base");
        w.git(
            &src,
            &[
                "push",
                "-q",
                &shared.display().to_string(),
                "HEAD:refs/heads/butler/base/j",
            ],
        );
        sha
    }

    fn fresh(w: &World) -> GitRepo {
        GitRepo::init_fresh(&w.path("work/repo"))
            .expect("a fresh repository")
            .with_command_env(w.env.clone())
    }

    #[test]
    fn a_line_is_fetched_and_pushed_back_never_forced() {
        let w = World::new();
        let base = destination(&w);
        let url = w.shared.display().to_string();
        let repo = fresh(&w);
        let fetched = repo
            .fetch_line(
                &url,
                "refs/heads/butler/base/j",
                "butler/base/j",
                Access::Only(None),
            )
            .expect("fetched");
        assert_eq!(fetched.as_deref(), Some(base.as_str()));
        assert_eq!(
            repo.fetch_line(&url, "refs/heads/butler/base/none", "x", Access::Only(None))
                .expect("answered"),
            None
        );
        repo.push_line(
            &url,
            "butler/base/j",
            "refs/heads/butler/tasks/j",
            Access::Only(None),
        )
        .expect("pushed");
        let there = w.git(&w.shared, &["rev-parse", "refs/heads/butler/tasks/j"]);
        assert_eq!(there.trim(), base);
        // Another history at the same ref is not overwritten.
        let other = w.init("other");
        let other_sha = w.commit(&other, "unrelated");
        w.git(
            &other,
            &[
                "push",
                "-q",
                &url,
                &format!("{other_sha}:refs/heads/butler/tasks/k"),
            ],
        );
        let refused = repo.push_line(
            &url,
            "butler/base/j",
            "refs/heads/butler/tasks/k",
            Access::Only(None),
        );
        assert!(matches!(refused, Err(GitError::Rejected)), "{refused:?}");
    }

    #[test]
    fn an_existing_repository_is_not_taken_for_a_fresh_one() {
        let w = World::new();
        let path = w.init("project");
        assert!(GitRepo::init_fresh(&path).is_err());
    }

    #[test]
    fn the_helper_answers_get_from_the_files_and_quotes_the_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let creds_dir = dir.path().join("it's here");
        std::fs::create_dir_all(&creds_dir).expect("dir");
        std::fs::write(creds_dir.join("username"), "bot\n").expect("write");
        std::fs::write(creds_dir.join("token"), "s3cr%et\n").expect("write");
        let creds = FileCredentials::new(&creds_dir);
        assert_eq!(creds.token().as_deref(), Some("s3cr%et"));
        let helper = creds.helper();
        assert!(!helper.contains("s3cr"), "{helper}");
        // git runs `sh -c '<helper without !> "$@"' <helper> get`.
        let script = format!("{} \"$@\"", &helper[1..]);
        #[allow(clippy::disallowed_methods)]
        let out = std::process::Command::new("sh")
            .args(["-c", &script, "helper", "get"])
            .output()
            .expect("sh runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "username=bot\npassword=s3cr%et\n"
        );
        #[allow(clippy::disallowed_methods)]
        let out = std::process::Command::new("sh")
            .args(["-c", &script, "helper", "store"])
            .output()
            .expect("sh runs");
        assert!(out.status.success() && out.stdout.is_empty());
    }

    #[test]
    fn git_asks_the_files_for_the_credentials_and_no_other_helper() {
        let w = World::new();
        let repo = fresh(&w);
        let dir = w.path("creds");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("username"), "bot\n").expect("write");
        std::fs::write(dir.join("token"), "tok-1\n").expect("write");
        let creds = FileCredentials::new(&dir);
        // A helper configured before (here: the repository's) is not asked.
        w.git(
            repo.workdir(),
            &[
                "config",
                "credential.helper",
                "!f() { echo username=other; echo password=from-elsewhere; }; f",
            ],
        );
        let ask = |creds: Option<&FileCredentials>| {
            let out = transfer(&repo, "credential", Access::Only(creds))
                .args(["credential", "fill"])
                .stdin(b"protocol=https\nhost=git.example.com\n\n".to_vec())
                .run()
                .expect("git runs");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let filled = ask(Some(&creds));
        assert!(filled.contains("username=bot\n"), "{filled}");
        assert!(filled.contains("password=tok-1\n"), "{filled}");
        assert!(!ask(None).contains("from-elsewhere"));
    }

    #[test]
    fn destinations_are_shown_without_credentials() {
        assert_eq!(
            shown_destination("https://bot:tok@host/o/r.git"),
            "https://host/o/r.git"
        );
    }

    #[test]
    fn a_commit_goes_to_a_private_ref_once_and_the_ref_goes_away() {
        let w = World::new();
        let base = destination(&w);
        let url = w.shared.display().to_string();
        let repo = fresh(&w);
        repo.fetch_line(&url, "refs/heads/butler/base/j", "b", Access::User)
            .expect("fetched");
        let private = "refs/heads/butler/base/job-1";
        repo.push_commit(&url, &base, private, Access::User)
            .expect("pushed");
        assert_eq!(w.git(&w.shared, &["rev-parse", private]).trim(), base);
        // Created, never moved: the same ref is refused even for a descendant.
        std::fs::write(repo.workdir().join("b.txt"), "b\n").expect("write");
        w.git(repo.workdir(), &["checkout", "-q", "b"]);
        let next = w.commit(repo.workdir(), "next");
        let refused = repo.push_commit(&url, &next, private, Access::User);
        assert!(matches!(refused, Err(GitError::Rejected)), "{refused:?}");
        repo.delete_remote_ref(&url, private, Access::User)
            .expect("deleted");
        let gone = w.git_output(&w.shared, &["rev-parse", "--verify", "-q", private]);
        assert!(gone.stdout.is_empty());
        assert!(
            repo.push_commit("--upload-pack=x", &base, private, Access::User)
                .is_err()
        );
        repo.set_local_ref("refs/heads/kept", Some(&next))
            .expect("set");
        assert_eq!(w.git(repo.workdir(), &["rev-parse", "kept"]).trim(), next);
        repo.set_local_ref("refs/heads/kept", None)
            .expect("deleted");
        repo.set_local_ref("refs/heads/kept", None)
            .expect("deleting twice is fine");
    }
}
