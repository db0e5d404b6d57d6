//! Working-tree status through `git status --porcelain=v2 -z` (fastest on big trees, and when
//! no other Butler is busy with the tree it saves the refreshed index, so the next call is
//! cheap; see `lock.rs`).

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::path::RepoPath;

/// Bound on status / file-list output; beyond it the call fails rather than lie.
const MAX_LIST_OUTPUT: usize = 64 << 20;

/// How one path differs from the last record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Modified,
    Added,
    Deleted,
    /// File ↔ symlink ↔ submodule.
    TypeChanged,
    /// Not tracked and not ignored (untracked directories come as one `dir/` entry).
    Untracked,
    /// Unresolved merge conflict.
    Conflicted,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StatusEntry {
    pub path: RepoPath,
    pub change: Change,
}

/// Every unrecorded change of the working tree (index and files together, against HEAD).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkTreeStatus {
    /// Changed paths in git's order (conflicted ones included).
    pub entries: Vec<StatusEntry>,
    /// Paths with unresolved conflicts.
    pub conflicted: Vec<RepoPath>,
}

impl WorkTreeStatus {
    /// No unrecorded change at all.
    pub fn is_clean(&self) -> bool {
        self.entries.is_empty()
    }
}

impl GitRepo {
    /// Unrecorded changes: staged and unstaged changes against HEAD, untracked files
    /// (untracked directories as one `dir/` entry), conflicts. Ignored files are left out.
    /// An unborn HEAD works (everything present is added or untracked).
    pub fn status(&self) -> Result<WorkTreeStatus, GitError> {
        let refresh = self.refresh();
        let out = refresh
            .apply(GitCommand::new(self, "status"))
            .args([
                "status",
                "--porcelain=v2",
                "-z",
                "--untracked-files=normal",
                "--no-renames",
                "--ignored=no",
            ])
            .max_stdout(MAX_LIST_OUTPUT)
            .run_ok()?;
        if out.truncated() {
            return Err(GitError::failed("status", "output over the bound"));
        }
        parse_porcelain_v2(&out.stdout)
    }

    /// Every untracked, non-ignored file (each file, not directories): what recording would
    /// newly add.
    pub fn untracked_files(&self) -> Result<Vec<RepoPath>, GitError> {
        let out = GitCommand::new(self, "ls-files")
            .args(["ls-files", "-z", "--others", "--exclude-standard"])
            .max_stdout(MAX_LIST_OUTPUT)
            .run_ok()?;
        if out.truncated() {
            return Err(GitError::failed("ls-files", "output over the bound"));
        }
        Ok(split_nul(&out.stdout).map(RepoPath::from_bytes).collect())
    }
}

/// Splits NUL-terminated records, skipping empty ones.
pub(crate) fn split_nul(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|&b| b == 0).filter(|s| !s.is_empty())
}

fn parse_porcelain_v2(stdout: &[u8]) -> Result<WorkTreeStatus, GitError> {
    let mut status = WorkTreeStatus::default();
    let mut records = stdout.split(|&b| b == 0);
    while let Some(record) = records.next() {
        let Some((&kind, rest)) = record.split_first() else {
            continue;
        };
        let (path, change) = match kind {
            b'1' => {
                let (fields, path) = fields_then_path(rest, 7)?;
                match ordinary_change(fields[0]) {
                    Some(change) => (path, change),
                    None => continue,
                }
            }
            b'2' => {
                // Renamed or copied (not produced with --no-renames, handled anyway): the new
                // path is added; the original path follows as its own record.
                let (_, path) = fields_then_path(rest, 8)?;
                records.next();
                (path, Change::Added)
            }
            b'u' => {
                let (_, path) = fields_then_path(rest, 9)?;
                status.conflicted.push(RepoPath::from_bytes(path));
                (path, Change::Conflicted)
            }
            b'?' => (rest.strip_prefix(b" ").unwrap_or(rest), Change::Untracked),
            b'!' | b'#' => continue,
            _ => return Err(GitError::failed("status", "unexpected porcelain record")),
        };
        status.entries.push(StatusEntry {
            path: RepoPath::from_bytes(path),
            change,
        });
    }
    merge_deleted_and_untracked(&mut status.entries);
    Ok(status)
}

/// Splits ` f1 f2 … fn path` into its `n` fields and the path (which may contain spaces).
fn fields_then_path(rest: &[u8], n: usize) -> Result<(Vec<&[u8]>, &[u8]), GitError> {
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let mut parts = rest.splitn(n + 1, |&b| b == b' ');
    let fields: Vec<&[u8]> = parts.by_ref().take(n).collect();
    match parts.next() {
        Some(path) if fields.len() == n => Ok((fields, path)),
        _ => Err(GitError::failed("status", "short porcelain record")),
    }
}

/// The change against HEAD of an ordinary entry from its `XY` field; `None` when index and
/// working tree cancel out (added to the index, then deleted).
fn ordinary_change(xy: &[u8]) -> Option<Change> {
    let (x, y) = match xy {
        [x, y] => (*x, *y),
        _ => return Some(Change::Modified),
    };
    Some(match (x, y) {
        (b'A', b'D') => return None,
        (b'A', _) => Change::Added,
        (b'D', _) | (_, b'D') => Change::Deleted,
        (b'T', _) | (_, b'T') => Change::TypeChanged,
        _ => Change::Modified,
    })
}

/// A path deleted from the index but present as an untracked file is, against HEAD, modified.
fn merge_deleted_and_untracked(entries: &mut Vec<StatusEntry>) {
    let untracked: std::collections::HashSet<RepoPath> = entries
        .iter()
        .filter(|e| e.change == Change::Untracked)
        .map(|e| e.path.clone())
        .collect();
    if untracked.is_empty() {
        return;
    }
    let mut replaced = std::collections::HashSet::new();
    for entry in entries.iter_mut() {
        if entry.change == Change::Deleted && untracked.contains(&entry.path) {
            entry.change = Change::Modified;
            replaced.insert(entry.path.clone());
        }
    }
    entries.retain(|e| !(e.change == Change::Untracked && replaced.contains(&e.path)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> WorkTreeStatus {
        parse_porcelain_v2(text.as_bytes()).expect("parses")
    }

    #[test]
    fn ordinary_entries_keep_spaces_in_paths() {
        let s = parse("1 .M N... 100644 100644 100644 aaa bbb my file.txt\0? new dir/\0");
        assert_eq!(
            s.entries,
            vec![
                StatusEntry {
                    path: RepoPath::from_bytes("my file.txt"),
                    change: Change::Modified
                },
                StatusEntry {
                    path: RepoPath::from_bytes("new dir/"),
                    change: Change::Untracked
                },
            ]
        );
    }

    #[test]
    fn unmerged_entries_are_conflicted() {
        let s = parse("u UU N... 100644 100644 100644 100644 a b c both.txt\0");
        assert_eq!(s.conflicted, vec![RepoPath::from_bytes("both.txt")]);
        assert_eq!(s.entries[0].change, Change::Conflicted);
    }

    #[test]
    fn staged_deletion_with_file_back_is_modified() {
        let s = parse("1 D. N... 100644 000000 000000 aaa 000 f\0? f\0");
        assert_eq!(
            s.entries,
            vec![StatusEntry {
                path: RepoPath::from_bytes("f"),
                change: Change::Modified
            }]
        );
    }

    #[test]
    fn added_then_deleted_is_no_change() {
        assert!(parse("1 AD N... 000000 100644 000000 000 aaa gone\0").is_clean());
    }
}
