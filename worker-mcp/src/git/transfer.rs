//! Moving one ref between this repository and another one named by a remote or a URL: what a
//! task run elsewhere needs (its base sent to a private ref, its line fetched back). Never
//! forced, no terminal, a time limit; credentials, when given, travel in the git child's
//! environment only (an `Authorization` header), never on a command line, in a URL or in an
//! error.

use std::time::Duration;

use base64::Engine;

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use crate::config::Secret;

const TRANSFER_TIMEOUT: Duration = Duration::from_secs(300);

/// How to reach the other repository.
#[derive(Debug, Clone, Default)]
pub struct Transport {
    /// HTTP basic credentials (a username and a token); `None`: the user's own transport and
    /// credential helpers.
    pub basic: Option<(String, Secret)>,
}

impl Transport {
    fn apply(&self, mut command: GitCommand) -> GitCommand {
        if let Some((user, token)) = &self.basic {
            let pair = format!("{user}:{}", token.expose());
            let header = format!(
                "Authorization: Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            );
            command = command
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env("GIT_CONFIG_VALUE_0", header);
        }
        command
    }
}

/// A ref name Butler may send or fetch: full, plain, nothing git would read as an option.
fn check_ref(name: &str) -> Result<(), GitError> {
    let plain = name.starts_with("refs/")
        && !name.contains("..")
        && !name.ends_with('/')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/-_.".contains(&b));
    if plain {
        Ok(())
    } else {
        Err(GitError::failed(
            "transfer",
            format!("not a plain ref name: {name:?}"),
        ))
    }
}

fn check_destination(dest: &str) -> Result<(), GitError> {
    if dest.is_empty() || dest.starts_with('-') {
        return Err(GitError::failed("transfer", "invalid destination"));
    }
    Ok(())
}

impl GitRepo {
    /// Creates `dst_ref` at `dest` (a remote or a URL) pointing at commit `sha`: a ref that
    /// already exists there is never moved (`Rejected`).
    pub fn push_commit(
        &self,
        dest: &str,
        sha: &str,
        dst_ref: &str,
        transport: &Transport,
    ) -> Result<(), GitError> {
        check_ref(dst_ref)?;
        let create_only = format!("--force-with-lease={dst_ref}:");
        self.push_spec(
            dest,
            &[&create_only, &format!("{sha}:{dst_ref}")],
            transport,
        )
    }

    /// Deletes `dst_ref` at `dest`.
    pub fn delete_remote_ref(
        &self,
        dest: &str,
        dst_ref: &str,
        transport: &Transport,
    ) -> Result<(), GitError> {
        check_ref(dst_ref)?;
        self.push_spec(dest, &[&format!(":{dst_ref}")], transport)
    }

    fn push_spec(&self, dest: &str, spec: &[&str], transport: &Transport) -> Result<(), GitError> {
        check_destination(dest)?;
        let (options, refspec) = spec.split_at(spec.len() - 1);
        let push = GitCommand::new(self, "push")
            .args(["push", "--porcelain", "--no-verify"])
            .args(options)
            .args(["--", dest])
            .args(refspec)
            .timeout(TRANSFER_TIMEOUT);
        let out = transport.apply(push).run()?;
        if out.status.success() {
            return Ok(());
        }
        Err(super::publish::classify(
            &out,
            &String::from_utf8_lossy(&out.stdout),
        ))
    }

    /// Fetches `src_ref` from `dest` into `dst_ref` (overwriting it) and returns the commit.
    pub fn fetch_ref(
        &self,
        dest: &str,
        src_ref: &str,
        dst_ref: &str,
        transport: &Transport,
    ) -> Result<String, GitError> {
        check_ref(src_ref)?;
        check_ref(dst_ref)?;
        check_destination(dest)?;
        let fetch = GitCommand::new(self, "fetch")
            .args(["fetch", "--no-tags", "--no-write-fetch-head", "--", dest])
            .arg(format!("+{src_ref}:{dst_ref}"))
            .timeout(TRANSFER_TIMEOUT);
        let out = transport.apply(fetch).run()?;
        if !out.status.success() {
            return Err(super::publish::classify(&out, ""));
        }
        let repo = self.open()?;
        repo.refname_to_id(dst_ref)
            .map(|oid| oid.to_string())
            .map_err(|e| {
                GitError::failed(
                    "fetch",
                    format!("{dst_ref} after the fetch: {}", e.message()),
                )
            })
    }
}

impl GitRepo {
    /// Points local ref `name` at commit `sha`, creating or moving it; `None` deletes it.
    pub fn set_local_ref(&self, name: &str, sha: Option<&str>) -> Result<(), GitError> {
        check_ref(name)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_full_ref_names_pass() {
        for good in [
            "refs/heads/butler/base/butler-bcdf-t3",
            "refs/heads/butler/task-t1",
        ] {
            assert!(check_ref(good).is_ok(), "{good}");
        }
        for bad in [
            "HEAD",
            "refs/heads/a..b",
            "refs/heads/x:refs/heads/y",
            "+refs/heads/x",
            "refs/heads/",
            "refs/heads/a b",
            "--upload-pack=x",
        ] {
            assert!(check_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_commit_goes_to_a_private_ref_and_comes_back_and_the_ref_goes_away() {
        let (w, repo) = super::super::test_repo::committed();
        let bare = w.bare("dest.git");
        let dest = bare.to_string_lossy().into_owned();
        let head = w
            .git(repo.workdir(), &["rev-parse", "HEAD"])
            .trim()
            .to_owned();
        let none = Transport::default();
        let base = "refs/heads/butler/base/job-1";
        repo.push_commit(&dest, &head, base, &none).expect("pushed");
        assert_eq!(w.git(&bare, &["rev-parse", base]).trim(), head);
        // Created, never moved: the same ref is refused even for a descendant.
        w.write("repo/b.txt", "two\n");
        let next = w.commit(repo.workdir(), "second");
        let refused = repo.push_commit(&dest, &next, base, &none);
        assert!(matches!(refused, Err(GitError::Rejected)), "{refused:?}");
        let back = "refs/heads/butler/task-t1";
        assert_eq!(
            repo.fetch_ref(&dest, base, back, &none).expect("fetched"),
            head
        );
        repo.delete_remote_ref(&dest, base, &none).expect("deleted");
        assert!(
            w.git_output(&bare, &["rev-parse", "--verify", "-q", base])
                .stdout
                .is_empty()
        );
        assert!(repo.fetch_ref(&dest, base, back, &none).is_err());
        assert!(
            repo.push_commit("--upload-pack=x", &head, base, &none)
                .is_err()
        );
    }
}
