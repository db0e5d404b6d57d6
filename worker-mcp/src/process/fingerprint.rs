//! A cheap fingerprint of a directory tree (paths, sizes, modification times), used to tell
//! whether a quiet child is still changing files.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Entries looked at, at most; a tree larger than this is fingerprinted by its first part.
const MAX_ENTRIES: usize = 200_000;

/// Fingerprint of `dir` (0 when there is nothing to watch). Runs on the blocking pool.
pub(super) async fn of(dir: Option<PathBuf>) -> u64 {
    let Some(dir) = dir else { return 0 };
    crate::offload::blocking(move || of_tree(&dir))
        .await
        .unwrap_or(0)
}

/// Order-independent: each entry's hash is added, so `read_dir` order does not matter.
pub(crate) fn of_tree(root: &Path) -> u64 {
    let mut sum = 0u64;
    let mut seen = 0usize;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return sum;
            }
            if entry.file_name() == ".git" {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let mut h = DefaultHasher::new();
            entry.path().hash(&mut h);
            meta.len().hash(&mut h);
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
            mtime.map(|d| d.as_nanos()).hash(&mut h);
            sum = sum.wrapping_add(h.finish());
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_when_a_file_is_added_or_rewritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        let a = of_tree(dir.path());
        assert_eq!(a, of_tree(dir.path()), "stable while nothing changes");
        std::fs::write(dir.path().join("src/x.rs"), "fn x() {}").expect("write");
        let b = of_tree(dir.path());
        assert_ne!(a, b);
        std::fs::write(dir.path().join("src/x.rs"), "fn x() { 1 }").expect("write");
        assert_ne!(b, of_tree(dir.path()));
    }

    #[test]
    fn ignores_the_git_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".git")).expect("mkdir");
        let a = of_tree(dir.path());
        std::fs::write(dir.path().join(".git/index"), "x").expect("write");
        assert_eq!(a, of_tree(dir.path()));
    }
}
