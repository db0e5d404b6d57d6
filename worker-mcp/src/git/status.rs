//! Working-tree status through `git status --porcelain=v2 -z` (fastest on big trees, and when
//! no other Butler is busy with the tree it saves the refreshed index, so the next call is
//! cheap; see `lock.rs`).
//!
//! Untracked files are listed one by one (`--untracked-files=all`: a new directory's files,
//! not the directory), so the one untracked entry that still ends in `/` is a directory git
//! does not descend into: a repository of its own nested in the project. Such a repository,
//! and work inside a submodule that did not move the submodule's commit, cannot be saved by a
//! record of this project: they are listed apart ([`WorkTreeStatus::unrecordable`]) so that
//! what observing calls unrecorded is exactly what recording saves.

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
    /// Not tracked and not ignored (each file; nested repositories are not entries).
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

/// Why a changed path is not something a record of this project can save.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotRecordable {
    /// An untracked directory with a repository of its own (`dir/.git`): recording it would
    /// save only a pointer to a commit that no one else can fetch.
    NestedRepository,
    /// Edits or new files inside a submodule whose commit did not move: they belong to the
    /// submodule's own history.
    SubmoduleWork,
}

/// A path with work that a record of this project does not save.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unrecordable {
    /// The directory, ending in `/` for a nested repository.
    pub path: RepoPath,
    pub why: NotRecordable,
}

/// Every unrecorded change of the working tree (index and files together, against HEAD).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkTreeStatus {
    /// Changed paths a record saves, in git's order (conflicted ones included; untracked
    /// files one by one).
    pub entries: Vec<StatusEntry>,
    /// Paths with unresolved conflicts.
    pub conflicted: Vec<RepoPath>,
    /// Work a record of this project cannot save (not in `entries`).
    pub unrecordable: Vec<Unrecordable>,
}

impl WorkTreeStatus {
    /// No unrecorded change at all.
    pub fn is_clean(&self) -> bool {
        self.entries.is_empty()
    }
}

impl GitRepo {
    /// Unrecorded changes: staged and unstaged changes against HEAD, untracked files (each
    /// file), conflicts; nested repositories and work inside submodules apart. Ignored files
    /// are left out. An unborn HEAD works (everything present is added or untracked).
    pub fn status(&self) -> Result<WorkTreeStatus, GitError> {
        let refresh = self.refresh();
        let out = refresh
            .apply(GitCommand::new(self, "status"))
            .args([
                "status",
                "--porcelain=v2",
                "-z",
                "--untracked-files=all",
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

impl WorkTreeStatus {
    /// The changed files (not deleted) of at least `min_bytes` in the working tree, with
    /// their sizes, largest first: what would enter history for good when recorded.
    pub fn large_files(&self, repo: &GitRepo, min_bytes: u64) -> Vec<(RepoPath, u64)> {
        let mut large: Vec<(RepoPath, u64)> = self
            .entries
            .iter()
            .filter(|e| e.change != Change::Deleted)
            .filter_map(|e| {
                let meta = std::fs::symlink_metadata(repo.workdir().join(e.path.as_path())).ok()?;
                (meta.is_file() && meta.len() >= min_bytes).then(|| (e.path.clone(), meta.len()))
            })
            .collect();
        large.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        large
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
                let submodule = Submodule::of(fields[1]);
                if submodule.inner_work {
                    status.unrecordable.push(Unrecordable {
                        path: RepoPath::from_bytes(path),
                        why: NotRecordable::SubmoduleWork,
                    });
                }
                match ordinary_change(fields[0]) {
                    Some(_) if submodule.only_inner(fields[0]) => continue,
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
            b'?' => {
                let path = rest.strip_prefix(b" ").unwrap_or(rest);
                if path.ends_with(b"/") {
                    // With every untracked file listed, a directory is one git did not enter.
                    status.unrecordable.push(Unrecordable {
                        path: RepoPath::from_bytes(path),
                        why: NotRecordable::NestedRepository,
                    });
                    continue;
                }
                (path, Change::Untracked)
            }
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

/// The `<sub>` field of a porcelain v2 entry: `N...` for a file, `S<c><m><u>` for a
/// submodule (commit changed, tracked changes inside, untracked files inside).
struct Submodule {
    is_submodule: bool,
    commit_changed: bool,
    inner_work: bool,
}

impl Submodule {
    fn of(field: &[u8]) -> Submodule {
        match field {
            [b'S', c, m, u] => Submodule {
                is_submodule: true,
                commit_changed: *c == b'C',
                inner_work: *m == b'M' || *u == b'U',
            },
            _ => Submodule {
                is_submodule: false,
                commit_changed: false,
                inner_work: false,
            },
        }
    }

    /// A submodule whose only change is work inside it (its commit, in the index and in the
    /// working tree, is the recorded one): nothing for a record of this project.
    fn only_inner(&self, xy: &[u8]) -> bool {
        self.is_submodule && !self.commit_changed && xy.first() == Some(&b'.')
    }
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
        let s = parse("1 .M N... 100644 100644 100644 aaa bbb my file.txt\0? new dir/a b\0");
        assert_eq!(
            s.entries,
            vec![
                StatusEntry {
                    path: RepoPath::from_bytes("my file.txt"),
                    change: Change::Modified
                },
                StatusEntry {
                    path: RepoPath::from_bytes("new dir/a b"),
                    change: Change::Untracked
                },
            ]
        );
    }

    #[test]
    fn a_nested_repository_is_not_an_entry() {
        let s = parse("? a/x\0? a/b/nested/\0");
        assert_eq!(s.entries.len(), 1);
        assert_eq!(
            s.unrecordable,
            vec![Unrecordable {
                path: RepoPath::from_bytes("a/b/nested/"),
                why: NotRecordable::NestedRepository
            }]
        );
    }

    #[test]
    fn work_inside_a_submodule_is_apart_unless_its_commit_moved() {
        let inner = parse("1 .M S.MU 160000 160000 160000 aaa aaa sub\0");
        assert!(inner.is_clean(), "{inner:?}");
        assert_eq!(inner.unrecordable[0].why, NotRecordable::SubmoduleWork);
        let moved = parse("1 .M SCM. 160000 160000 160000 aaa aaa sub\0");
        assert_eq!(moved.entries[0].change, Change::Modified);
        assert_eq!(
            moved.unrecordable.len(),
            1,
            "the edits inside are reported too"
        );
        let staged = parse("1 M. S... 160000 160000 160000 aaa bbb sub\0");
        assert_eq!(staged.entries.len(), 1);
        assert!(staged.unrecordable.is_empty());
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
