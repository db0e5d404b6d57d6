//! The user's trust in project files, as `direnv allow` keeps it: `butler trust` records the
//! SHA-256 of a project's `.butler/config.toml` under the file's path in
//! `$XDG_CONFIG_HOME/butler/trusted.json`; the file is trusted while its content hashes to the
//! recorded value, so any change (an agent's, a pull's) makes it untrusted again until the user
//! trusts it anew. The store lives in the user's configuration directory, never in a
//! repository, and only the `butler trust` command writes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{CONFIG_FILE, ConfigError};

/// The trust store's file name, inside the user's configuration directory.
pub(crate) const TRUST_FILE: &str = "trusted.json";

/// The trusted project files: path → `sha256:<hex>` of the content trusted.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrustStore {
    path: PathBuf,
    files: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    #[serde(default)]
    trusted: BTreeMap<String, String>,
}

impl TrustStore {
    /// Reads the store in `config_dir` (a missing file is an empty store).
    pub(crate) fn open(config_dir: &Path) -> Result<Self, ConfigError> {
        let path = config_dir.join(TRUST_FILE);
        let files = match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice::<StoreFile>(&bytes)
                    .map_err(|e| ConfigError::Parse {
                        path: path.clone(),
                        message: e.to_string(),
                    })?
                    .trusted
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Ok(Self { path, files })
    }

    /// Whether `file`'s `content` is exactly what the user trusted at that path.
    pub(crate) fn is_trusted(&self, file: &Path, content: &[u8]) -> bool {
        self.files
            .get(&key(file))
            .is_some_and(|recorded| *recorded == digest(content))
    }

    /// Trusts `content` at `file` (replacing what was trusted there); returns its digest.
    pub(crate) fn trust(&mut self, file: &Path, content: &[u8]) -> String {
        let digest = digest(content);
        self.files.insert(key(file), digest.clone());
        digest
    }

    /// Forgets `file`; whether it was trusted.
    pub(crate) fn revoke(&mut self, file: &Path) -> bool {
        self.files.remove(&key(file)).is_some()
    }

    /// Writes the store (a new file renamed over the old one, so a reader never sees half).
    pub(crate) fn save(&self) -> Result<(), ConfigError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let write_err = |source| ConfigError::Read {
            path: self.path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let body = serde_json::to_vec_pretty(&StoreFile {
            trusted: self.files.clone(),
        })
        .expect("a map of strings serialises");
        let temp = dir.join(format!(".{TRUST_FILE}.{}", std::process::id()));
        std::fs::write(&temp, body).map_err(write_err)?;
        std::fs::rename(&temp, &self.path).map_err(write_err)
    }
}

/// `sha256:<hex>` of `content`.
pub(crate) fn digest(content: &[u8]) -> String {
    let hash = Sha256::digest(content);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn key(file: &Path) -> String {
    file.to_string_lossy().into_owned()
}

/// Where the project file of `project_root` is recorded in the store: the project's resolved
/// path joined with `.butler/config.toml` (the same for `butler trust` and a session).
pub(crate) fn project_file(project_root: &Path) -> PathBuf {
    project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf())
        .join(CONFIG_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_file_stays_trusted_until_its_content_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = Path::new("/p/.butler/config.toml");
        let mut store = TrustStore::open(dir.path()).expect("empty store");
        assert!(!store.is_trusted(file, b"[agent]\nsandbox = \"off\"\n"));
        let digest = store.trust(file, b"[agent]\nsandbox = \"off\"\n");
        assert!(
            digest.starts_with("sha256:") && digest.len() == 7 + 64,
            "{digest}"
        );
        store.save().expect("saved");
        let store = TrustStore::open(dir.path()).expect("reads back");
        assert!(store.is_trusted(file, b"[agent]\nsandbox = \"off\"\n"));
        assert!(
            !store.is_trusted(file, b"[agent]\nsandbox = \"off\" \n"),
            "changed"
        );
        assert!(
            !store.is_trusted(
                Path::new("/q/.butler/config.toml"),
                b"[agent]\nsandbox = \"off\"\n"
            ),
            "the same content elsewhere is another file"
        );
        let mut store = store;
        assert!(store.revoke(file));
        assert!(!store.revoke(file));
        assert!(!store.is_trusted(file, b"[agent]\nsandbox = \"off\"\n"));
    }

    #[test]
    fn a_damaged_store_is_an_error_not_an_empty_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(TRUST_FILE), "{not json").expect("write");
        assert!(matches!(
            TrustStore::open(dir.path()),
            Err(ConfigError::Parse { .. })
        ));
    }

    #[test]
    fn the_digest_is_sha256() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
