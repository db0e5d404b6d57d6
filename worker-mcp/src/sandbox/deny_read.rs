//! What no confined command may read: the user's credential stores, password stores and
//! keyrings, browser profiles ([`STORES`], one table), Butler's own configuration, data and state
//! directories, and `[agent] deny_read` from the configuration. [`deny_list`] turns them into
//! the paths of one user's home that exist; the helper leaves them (and their link targets)
//! out of the rules it builds (see `carve`).

use std::path::{Path, PathBuf};

/// Where a store's path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The user's `HOME`.
    Home,
    /// `$XDG_CONFIG_HOME` and `~/.config` (both, when they differ).
    Config,
    /// `$XDG_DATA_HOME` and `~/.local/share` (both, when they differ).
    Data,
}

/// One credential store: a path under a base; a last component ending in `*` matches every
/// entry of its directory that starts with what comes before.
#[derive(Debug, Clone, Copy)]
pub struct Store {
    pub base: Base,
    pub path: &'static str,
}

const fn home(path: &'static str) -> Store {
    Store {
        base: Base::Home,
        path,
    }
}

const fn config(path: &'static str) -> Store {
    Store {
        base: Base::Config,
        path,
    }
}

const fn data(path: &'static str) -> Store {
    Store {
        base: Base::Data,
        path,
    }
}

/// The credential stores of a user's home no agent or verify command may read or write.
pub const STORES: &[Store] = &[
    // Keys and cloud, cluster and registry credentials.
    home(".ssh"),
    home(".gnupg"),
    home(".aws"),
    home(".azure"),
    config("gcloud"),
    home(".kube"),
    home(".docker/config.json"),
    config("containers/auth.json"),
    // Git hosts, package registries.
    home(".netrc"),
    home(".git-credentials"),
    config("git/credentials"),
    home(".gitcookies"),
    config("gh"),
    config("hub"),
    home(".npmrc"),
    home(".pypirc"),
    home(".cargo/credentials*"),
    home(".terraform.d/credentials.tfrc.json"),
    // Password stores and keyrings.
    home(".password-store"),
    data("keyrings"),
    data("kwalletd"),
    config("1Password"),
    config("Bitwarden"),
    config("keepassxc"),
    home(".pki"),
    // Browser profiles.
    home(".mozilla"),
    home(".thunderbird"),
    config("google-chrome"),
    config("chromium"),
    config("BraveSoftware"),
    config("microsoft-edge"),
    config("vivaldi"),
    config("opera"),
];

/// The directories a deny list is built in: the user's `HOME` and XDG directories, as Butler
/// sees them (its own environment, not the agent's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserDirs {
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, when set to an absolute path.
    pub config: Option<PathBuf>,
    /// `XDG_DATA_HOME`, when set to an absolute path.
    pub data: Option<PathBuf>,
    /// `XDG_STATE_HOME`, when set to an absolute path.
    pub state: Option<PathBuf>,
}

impl UserDirs {
    /// From the variables of an environment (`lookup("HOME")`, …); relative or blank values
    /// are ignored, as the XDG specification says.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<PathBuf>) -> Self {
        let abs = |name: &str| lookup(name).filter(|p| p.is_absolute());
        Self {
            home: abs("HOME"),
            config: abs("XDG_CONFIG_HOME"),
            data: abs("XDG_DATA_HOME"),
            state: abs("XDG_STATE_HOME"),
        }
    }

    /// The directories of `base`: the XDG one and the default under `HOME` (one when equal).
    fn bases(&self, base: Base) -> Vec<PathBuf> {
        let (xdg, default) = match base {
            Base::Home => return self.home.iter().cloned().collect(),
            Base::Config => (&self.config, ".config"),
            Base::Data => (&self.data, ".local/share"),
        };
        let mut dirs: Vec<PathBuf> = xdg.iter().cloned().collect();
        if let Some(home) = &self.home {
            let d = home.join(default);
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        dirs
    }

    /// Butler's own directories: its configuration (`$XDG_CONFIG_HOME/butler`: the HTTP token,
    /// the trust store, the user's settings), data (`$XDG_DATA_HOME/butler`: other tasks'
    /// worktrees and agents' homes) and state (`$XDG_STATE_HOME/butler`), each also under its
    /// default in `HOME` when the XDG variable points elsewhere.
    pub(crate) fn butler_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.bases(Base::Config);
        dirs.extend(self.bases(Base::Data));
        dirs.extend(self.state.iter().cloned());
        if let Some(home) = &self.home {
            let state = home.join(".local/state");
            if self.state.as_ref() != Some(&state) {
                dirs.push(state);
            }
        }
        dirs.into_iter().map(|d| d.join("butler")).collect()
    }
}

/// One path left out of what confined commands may read, named for the evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// `~/.ssh`, `~/.config/butler`, or a configured entry as written.
    pub name: String,
    pub path: PathBuf,
}

/// Why a `deny_read` entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{entry}` is neither an absolute path nor one starting with `~/`")]
pub struct BadEntry {
    pub entry: String,
}

/// Checks configured `deny_read` entries (absolute, or `~/…`), before any task starts.
pub fn check_entries(entries: &[String]) -> Result<(), BadEntry> {
    match entries
        .iter()
        .find(|e| !(e.starts_with("~/") || Path::new(e.as_str()).is_absolute()))
    {
        Some(entry) => Err(BadEntry {
            entry: entry.chars().take(80).collect(),
        }),
        None => Ok(()),
    }
}

/// The paths of [`STORES`], Butler's directories and the configured `entries` (absolute or
/// `~/…`; a last component ending in `*` is a prefix) that exist now — a link counts, whatever
/// it points to — in a stable order without repeats. Nothing under `HOME` is denied without a
/// `HOME`.
pub fn deny_list(dirs: &UserDirs, entries: &[String]) -> Vec<Denied> {
    let mut out: Vec<Denied> = Vec::new();
    let home = dirs.home.as_deref();
    let name_of = |path: &Path| match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    };
    let mut add = |name: String, path: PathBuf| {
        if !out.iter().any(|d| d.path == path) {
            out.push(Denied { name, path });
        }
    };
    for store in STORES {
        for base in dirs.bases(store.base) {
            for path in expand(&base.join(store.path)) {
                add(name_of(&path), path);
            }
        }
    }
    for dir in dirs.butler_dirs() {
        for path in expand(&dir) {
            add(name_of(&path), path);
        }
    }
    for entry in entries {
        let path = match (entry.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            (Some(_), None) => continue,
            (None, _) if Path::new(entry).is_absolute() => PathBuf::from(entry),
            (None, _) => continue,
        };
        for path in expand(&path) {
            add(entry.clone(), path);
        }
    }
    out
}

/// `path` when it exists (a dangling link counts), or the entries of its directory its last
/// component's `prefix*` matches, sorted.
fn expand(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return exists(path)
            .then(|| path.to_path_buf())
            .into_iter()
            .collect();
    };
    let Some(prefix) = name.strip_suffix('*') else {
        return exists(path)
            .then(|| path.to_path_buf())
            .into_iter()
            .collect();
    };
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stores_that_exist_are_denied_by_name_with_globs_expanded() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let xdg = tmp.path().join("xdg-config");
        for dir in [
            ".ssh",
            ".cargo",
            ".config/gh",
            ".local/share/butler/worktrees",
        ] {
            std::fs::create_dir_all(home.join(dir)).expect("mkdir");
        }
        std::fs::create_dir_all(xdg.join("butler")).expect("mkdir");
        std::fs::create_dir_all(xdg.join("hub")).expect("mkdir");
        for file in [
            ".cargo/credentials",
            ".cargo/credentials.toml",
            ".cargo/config.toml",
            ".netrc",
        ] {
            std::fs::write(home.join(file), "secret").expect("write");
        }
        std::os::unix::fs::symlink("/nowhere", home.join(".git-credentials")).expect("link");
        std::fs::write(tmp.path().join("vault"), "x").expect("write");
        let dirs = UserDirs {
            home: Some(home.clone()),
            config: Some(xdg.clone()),
            ..UserDirs::default()
        };
        let entries = vec![
            "~/.cargo/config.toml".to_owned(),
            tmp.path().join("vault").display().to_string(),
            "~/missing".to_owned(),
        ];
        let list = deny_list(&dirs, &entries);
        let names: Vec<&str> = list.iter().map(|d| d.name.as_str()).collect();
        let vault = tmp.path().join("vault").display().to_string();
        assert_eq!(
            names,
            [
                "~/.ssh",
                "~/.netrc",
                "~/.git-credentials",
                "~/.config/gh",
                xdg.join("hub").to_str().expect("utf-8"),
                "~/.cargo/credentials",
                "~/.cargo/credentials.toml",
                xdg.join("butler").to_str().expect("utf-8"),
                "~/.local/share/butler",
                "~/.cargo/config.toml",
                &vault,
            ]
        );
        assert_eq!(list[0].path, home.join(".ssh"));
        assert!(
            deny_list(&UserDirs::default(), &entries).len() == 1,
            "no HOME"
        );
    }

    #[test]
    fn configured_entries_are_absolute_or_under_home() {
        let ok = vec!["~/.vault".to_owned(), "/srv/secrets".to_owned()];
        assert_eq!(check_entries(&ok), Ok(()));
        for bad in ["secrets", "~user/x", "./x", ""] {
            let err = check_entries(&[bad.to_owned()]).expect_err(bad);
            assert!(err.to_string().contains("neither an absolute"), "{err}");
        }
    }

    #[test]
    fn butler_dirs_follow_xdg_and_home() {
        let dirs = UserDirs::from_lookup(|name| match name {
            "HOME" => Some("/h".into()),
            "XDG_CONFIG_HOME" => Some("/c".into()),
            "XDG_STATE_HOME" => Some("rel".into()),
            _ => None,
        });
        assert_eq!(
            dirs.butler_dirs(),
            [
                "/c/butler",
                "/h/.config/butler",
                "/h/.local/share/butler",
                "/h/.local/state/butler"
            ]
            .map(PathBuf::from)
        );
    }
}
