//! The environment of every child Butler starts, built on purpose: empty, then filled from
//! Butler's own environment through named allow-lists, then explicit values.
//!
//! This module is the one place that says what a child may inherit. The lists are groups of
//! names, exact (`PATH`) or a prefix (`LC_*`); each child kind composes the groups it needs:
//!
//! | child | inherits |
//! |---|---|
//! | git and the hooks it runs (the git worker, `butler demo`) | [`GIT_CHILD`] |
//! | `butler mcp` started by a client (`doctor`, the demo, tests) | [`GIT_CHILD`], since the server hands these to its git |
//! | a hook probed by `doctor` | [`BASE`] + [`HOME_DIRS`] |
//! | an agent | [`BASE`] (+ [`HOME_DIRS`] with the real home) + what its adapter names + the configured `env_allow` (the Maid's `env.rs`) |
//! | a verify command | [`BASE`] + [`HOME_DIRS`] + [`NETWORK`] + [`TOOLCHAINS`] + the configured `env_allow` |
//!
//! Whatever a list says, [`is_secret`] names are never inherited: Butler's own settings and
//! tokens (`BUTLER_*`), the tracker's token variables, and anything naming Gitea or Forgejo.
//! Values a caller sets explicitly ([`ChildEnv::set`]) are its deliberate choice (tests make
//! git hermetic that way).

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

/// Every child: where programs are, who the user is, locale, time zone, temporary directory.
pub const BASE: &[&str] = &["PATH", "USER", "LOGNAME", "LANG", "LC_*", "TZ", "TMPDIR"];

/// The user's home and XDG base directories: where git, ssh, gpg and toolchains find their
/// configuration, and `XDG_RUNTIME_DIR`, where ssh-agent, gpg-agent and D-Bus keep their sockets.
pub const HOME_DIRS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
];

/// Reaching the network the way the user does: proxies and certificate bundles.
pub const NETWORK: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
];

/// git as the user set it up: which configuration files it reads and configuration given in the
/// environment, the identity and dates of new commits, how it reaches remotes over ssh and
/// https, how it signs, and the credential helper's channel. Not passed: anything that points
/// git at another repository, index or object store (`GIT_DIR`, `GIT_WORK_TREE`,
/// `GIT_INDEX_FILE`, …), pathspec modes, external diff programs, and everything that could make
/// a child wait for a person (`GIT_ASKPASS`, `SSH_ASKPASS`, `DISPLAY`, editors, pagers).
pub(crate) const GIT_USER: &[&str] = &[
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_*",
    "GIT_CONFIG_VALUE_*",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "EMAIL",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "SSH_AUTH_SOCK",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GIT_PROXY_COMMAND",
    "GNUPGHOME",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// What the programs a repository's hooks and a project's test commands run need to find their
/// toolchain when it is not in the default place: Rust, Go, Node, Python, Java, Ruby, C.
/// (Registry tokens of these toolchains are not listed.)
pub const TOOLCHAINS: &[&str] = &[
    "SHELL",
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "RUSTC_WRAPPER",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "GOPROXY",
    "GOPRIVATE",
    "GOTOOLCHAIN",
    "NVM_DIR",
    "NVM_BIN",
    "NODE_PATH",
    "NODE_OPTIONS",
    "COREPACK_HOME",
    "PNPM_HOME",
    "VOLTA_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "PYTHONPATH",
    "UV_CACHE_DIR",
    "PRE_COMMIT_HOME",
    "JAVA_HOME",
    "GRADLE_USER_HOME",
    "M2_HOME",
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "RBENV_VERSION",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
];

/// What git (and every hook it runs) inherits: a person's git setup and the toolchains their
/// hooks call.
pub const GIT_CHILD: &[&[&str]] = &[BASE, HOME_DIRS, NETWORK, GIT_USER, TOOLCHAINS];

/// Used when Butler itself has no `PATH`.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Never inherited by any child: Butler's own settings and tokens, the tracker's token
/// variables (`BUTLER_GITEA_TOKEN`, `GITEA_TOKEN`: the configuration's test checks that every
/// one it reads is named here), and anything naming Gitea or Forgejo (their tokens under other
/// names).
pub fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("BUTLER_") || upper.contains("GITEA") || upper.contains("FORGEJO")
}

/// Butler's own environment, given once by the edge ([`set_inherited`]) or, in a program that
/// does not, read once on first use. Every child's environment is built from it.
pub fn inherited() -> &'static [(OsString, OsString)] {
    PARENT.get_or_init(|| std::env::vars_os().collect())
}

/// Gives the process environment the edge read (`main`), before any child is started; false
/// when it was already set or used.
pub fn set_inherited(vars: Vec<(OsString, OsString)>) -> bool {
    PARENT.set(vars).is_ok()
}

static PARENT: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();

/// Whether `name` is listed in `allow` (exact, or `PREFIX*`).
pub(crate) fn allowed(allow: &[&str], name: &str) -> bool {
    allow.iter().any(|pattern| match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *pattern,
    })
}

/// A child's whole environment (the child inherits nothing else). Built empty, then filled on
/// purpose; one value per name, the last write wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    vars: Vec<(OsString, OsString)>,
}

impl ChildEnv {
    /// No variables at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes from `parent` every variable `allow` lists, except secrets ([`is_secret`]).
    pub fn inherit(&mut self, parent: &[(OsString, OsString)], allow: &[&str]) -> &mut Self {
        for (name, value) in parent {
            let Some(text) = name.to_str() else { continue };
            if !is_secret(text) && allowed(allow, text) {
                self.put(name.clone(), value.clone());
            }
        }
        self
    }

    /// [`ChildEnv::inherit`] for each group in turn.
    pub fn inherit_groups(
        &mut self,
        parent: &[(OsString, OsString)],
        groups: &[&[&str]],
    ) -> &mut Self {
        for allow in groups {
            self.inherit(parent, allow);
        }
        self
    }

    /// Sets `name` to `value`: the caller's deliberate choice.
    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> &mut Self {
        self.put(name.into(), value.into());
        self
    }

    /// Sets `name` unless it already has a value.
    pub fn set_default(
        &mut self,
        name: impl Into<OsString>,
        value: impl Into<OsString>,
    ) -> &mut Self {
        let name = name.into();
        if self.get(&name).is_none() {
            self.put(name, value.into());
        }
        self
    }

    /// Removes `name`.
    pub fn remove(&mut self, name: impl AsRef<OsStr>) -> &mut Self {
        self.vars.retain(|(k, _)| k != name.as_ref());
        self
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: impl AsRef<OsStr>) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(k, _)| k == name.as_ref())
            .map(|(_, v)| v.as_os_str())
    }

    /// The variables, sorted by name.
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }

    fn put(&mut self, name: OsString, value: OsString) {
        match self.vars.binary_search_by(|(k, _)| k.cmp(&name)) {
            Ok(i) => self.vars[i].1 = value,
            Err(i) => self.vars.insert(i, (name, value)),
        }
    }
}

impl std::ops::Deref for ChildEnv {
    type Target = [(OsString, OsString)];

    fn deref(&self) -> &Self::Target {
        &self.vars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/opt/bin:/usr/bin"),
            ("HOME", "/home/me"),
            ("LC_ALL", "C.UTF-8"),
            ("BUTLER_GITEA_TOKEN", "secret1"),
            ("GITEA_TOKEN", "secret2"),
            ("BUTLER_LOG", "debug"),
            ("MY_FORGEJO_KEY", "secret3"),
            ("GIT_DIR", "/elsewhere/.git"),
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_CONFIG_KEY_0", "core.hooksPath"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("SSH_AUTH_SOCK", "/run/ssh"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    fn names(env: &ChildEnv) -> Vec<&str> {
        env.iter().filter_map(|(k, _)| k.to_str()).collect()
    }

    #[test]
    fn only_listed_names_are_inherited() {
        let mut env = ChildEnv::new();
        env.inherit(&parent(), BASE);
        assert_eq!(names(&env), ["LC_ALL", "PATH"]);
    }

    #[test]
    fn git_children_get_the_users_git_setup_but_not_another_repository() {
        let mut env = ChildEnv::new();
        env.inherit_groups(&parent(), GIT_CHILD);
        assert_eq!(
            names(&env),
            [
                "GIT_CONFIG_GLOBAL",
                "GIT_CONFIG_KEY_0",
                "HOME",
                "LC_ALL",
                "PATH",
                "SSH_AUTH_SOCK"
            ]
        );
    }

    #[test]
    fn secrets_are_never_inherited_even_when_listed() {
        let mut env = ChildEnv::new();
        env.inherit(&parent(), &["BUTLER_*", "GITEA_TOKEN", "MY_*", "*"]);
        for name in [
            "BUTLER_GITEA_TOKEN",
            "GITEA_TOKEN",
            "BUTLER_LOG",
            "MY_FORGEJO_KEY",
        ] {
            assert_eq!(env.get(name), None, "{name}");
        }
        assert!(
            env.iter()
                .all(|(_, v)| !v.to_string_lossy().contains("secret"))
        );
        assert_eq!(env.get("AWS_SECRET_ACCESS_KEY"), Some(OsStr::new("aws")));
    }

    #[test]
    fn butlers_own_variables_are_secrets_and_others_not() {
        assert!(is_secret("butler_anything"));
        assert!(!is_secret("PATH"));
    }

    #[test]
    fn explicit_values_win_and_defaults_do_not() {
        let mut env = ChildEnv::new();
        env.inherit(&parent(), BASE)
            .set("LC_ALL", "C")
            .set_default("PATH", DEFAULT_PATH)
            .set_default("TZ", "UTC")
            .remove("TZ");
        assert_eq!(env.get("LC_ALL"), Some(OsStr::new("C")));
        assert_eq!(env.get("PATH"), Some(OsStr::new("/opt/bin:/usr/bin")));
        assert_eq!(env.get("TZ"), None);
    }
}
