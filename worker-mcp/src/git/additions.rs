//! What a change adds, line by line: the text a record or a publication would share that
//! history does not hold yet. The secret scanner reads this, so each file is read once and
//! bounded, binary files are not read as text, and lines already recorded are left out.
//!
//! "Added" means: a line of the new version that the old version (every parent's, for a
//! merge) does not have anywhere. Moving a line is not adding it, and a merge adds only what
//! none of its parents had.

use std::collections::HashSet;
use std::io::Read;

use git2::{Delta, DiffOptions, FileMode, ObjectType, Oid, Repository, Tree};

use super::GitRepo;
use super::error::GitError;
use super::path::RepoPath;
use super::status::{Change, WorkTreeStatus};

/// git's own rule: a NUL in the first 8000 bytes makes a file binary.
const BINARY_SNIFF: usize = 8000;
/// Blobs larger than this are not loaded at all (libgit2 reads a blob whole).
const MAX_BLOB_LOAD: usize = 256 << 20;

/// What a change adds to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition<'a> {
    pub path: &'a RepoPath,
    /// The file did not exist before (in HEAD; in any parent of a commit).
    pub new_file: bool,
    pub content: Added<'a>,
}

/// The text a change adds to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added<'a> {
    /// The new version's lines that the old version lacks, numbered as in the new version.
    /// `cut`: only the first bytes of the new version (up to the bound) were read.
    Text {
        lines: Vec<(usize, &'a str)>,
        cut: bool,
    },
    /// A binary file: not read as text.
    Binary,
}

impl GitRepo {
    /// Calls `visit` for every file a record would save now: tracked files changed in the
    /// index or the working tree, and new files (ignore rules respected). Deleted files,
    /// symbolic links and nested repositories add no text. Each file is read up to
    /// `max_bytes`.
    pub fn unrecorded_additions(
        &self,
        status: &WorkTreeStatus,
        max_bytes: usize,
        visit: &mut dyn FnMut(Addition<'_>),
    ) -> Result<(), GitError> {
        let repo = self.open()?;
        let head = head_tree(&repo)?;
        let mut paths: Vec<RepoPath> = Vec::new();
        let mut untracked_dir = false;
        for entry in &status.entries {
            match entry.change {
                Change::Modified | Change::Added | Change::TypeChanged | Change::Conflicted => {
                    paths.push(entry.path.clone())
                }
                Change::Untracked if entry.path.as_bytes().ends_with(b"/") => untracked_dir = true,
                Change::Untracked => paths.push(entry.path.clone()),
                Change::Deleted => {}
            }
        }
        if untracked_dir {
            // Every untracked file, listed one by one (a new directory's files included).
            let untracked: HashSet<&RepoPath> = status
                .entries
                .iter()
                .filter(|e| e.change == Change::Untracked)
                .map(|e| &e.path)
                .collect();
            paths.retain(|p| !untracked.contains(p));
            paths.extend(self.untracked_files()?);
        }
        for path in paths {
            let Some((bytes, cut)) = read_work_file(self, &path, max_bytes) else {
                continue;
            };
            let old = match &head {
                Some(tree) => blob_at(&repo, tree, &path, max_bytes)?,
                None => None,
            };
            let new_file = old.is_none();
            let old = old.unwrap_or_default();
            report(&path, new_file, &bytes, cut, &old, visit);
        }
        Ok(())
    }

    /// The whole message of the commit `sha`: what sharing it sends besides its changes.
    pub fn commit_message(&self, sha: &str) -> Result<String, GitError> {
        let full = self.resolve_commit(sha)?.ok_or(GitError::UnknownCommit)?;
        let repo = self.open()?;
        let commit = repo.find_commit(Oid::from_str(&full)?)?;
        Ok(String::from_utf8_lossy(commit.message_bytes()).into_owned())
    }

    /// Calls `visit` for every file the commit `sha` adds text to, against its parents (for a
    /// merge, only lines none of the parents had). Each blob is read up to `max_bytes`.
    pub(crate) fn commit_additions(
        &self,
        sha: &str,
        max_bytes: usize,
        visit: &mut dyn FnMut(Addition<'_>),
    ) -> Result<(), GitError> {
        let full = self.resolve_commit(sha)?.ok_or(GitError::UnknownCommit)?;
        let repo = self.open()?;
        let commit = repo.find_commit(Oid::from_str(&full)?)?;
        let tree = commit.tree()?;
        let parents: Vec<Tree> = commit
            .parents()
            .map(|p| p.tree())
            .collect::<Result<_, _>>()?;
        let mut opts = DiffOptions::new();
        opts.include_typechange(true).skip_binary_check(true);
        let diff = repo.diff_tree_to_tree(parents.first(), Some(&tree), Some(&mut opts))?;
        for delta in diff.deltas() {
            if !matches!(
                delta.status(),
                Delta::Added | Delta::Modified | Delta::Typechange | Delta::Copied | Delta::Renamed
            ) {
                continue;
            }
            let new = delta.new_file();
            if !matches!(new.mode(), FileMode::Blob | FileMode::BlobExecutable) {
                continue;
            }
            let Some(path_bytes) = new.path_bytes() else {
                continue;
            };
            let path = RepoPath::from_bytes(path_bytes);
            let in_parents: Vec<Option<Vec<u8>>> = parents
                .iter()
                .map(|t| blob_at(&repo, t, &path, max_bytes))
                .collect::<Result<_, _>>()?;
            let Some((bytes, cut)) = read_blob(&repo, new.id(), max_bytes)? else {
                continue;
            };
            if in_parents
                .iter()
                .any(|old| old.as_deref() == Some(&bytes[..]))
            {
                continue;
            }
            let new_file = in_parents.iter().all(Option::is_none);
            let old: Vec<u8> = in_parents
                .into_iter()
                .flatten()
                .flat_map(|mut b| {
                    b.push(b'\n');
                    b
                })
                .collect();
            report(&path, new_file, &bytes, cut, &old, visit);
        }
        Ok(())
    }
}

/// Classifies `bytes` and hands the added lines to `visit`.
fn report(
    path: &RepoPath,
    new_file: bool,
    bytes: &[u8],
    cut: bool,
    old: &[u8],
    visit: &mut dyn FnMut(Addition<'_>),
) {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        visit(Addition {
            path,
            new_file,
            content: Added::Binary,
        });
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    let old_text = String::from_utf8_lossy(old);
    let known: HashSet<&str> = old_text.lines().collect();
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !known.contains(line))
        .map(|(i, line)| (i + 1, line))
        .collect();
    visit(Addition {
        path,
        new_file,
        content: Added::Text { lines, cut },
    });
}

fn head_tree(repo: &Repository) -> Result<Option<Tree<'_>>, GitError> {
    match repo.head() {
        Ok(head) => Ok(Some(head.peel_to_tree()?)),
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The content of the blob at `path` in `tree`, when there is one (up to `max_bytes`).
fn blob_at(
    repo: &Repository,
    tree: &Tree,
    path: &RepoPath,
    max_bytes: usize,
) -> Result<Option<Vec<u8>>, GitError> {
    let entry = match tree.get_path(path.as_path()) {
        Ok(entry) => entry,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if entry.kind() != Some(ObjectType::Blob) {
        return Ok(None);
    }
    Ok(read_blob(repo, entry.id(), max_bytes)?.map(|(bytes, _)| bytes))
}

/// A blob's content, cut at the last line end within `max_bytes` when larger.
fn read_blob(
    repo: &Repository,
    id: Oid,
    max_bytes: usize,
) -> Result<Option<(Vec<u8>, bool)>, GitError> {
    let odb = repo.odb()?;
    let (size, kind) = odb.read_header(id)?;
    if kind != ObjectType::Blob {
        return Ok(None);
    }
    if size > MAX_BLOB_LOAD {
        return Ok(Some((Vec::new(), true)));
    }
    let blob = repo.find_blob(id)?;
    let content = blob.content();
    if size <= max_bytes {
        return Ok(Some((content.to_vec(), false)));
    }
    Ok(Some((cut_at_line(&content[..max_bytes]).to_vec(), true)))
}

/// A regular file of the working tree, up to `max_bytes` (cut at the last line end when
/// larger); `None` for anything else (gone, a link, a directory, unreadable).
fn read_work_file(repo: &GitRepo, path: &RepoPath, max_bytes: usize) -> Option<(Vec<u8>, bool)> {
    let full = repo.workdir().join(path.as_path());
    let meta = std::fs::symlink_metadata(&full).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let file = std::fs::File::open(&full).ok()?;
    let mut bytes = Vec::with_capacity((meta.len() as usize).min(max_bytes));
    file.take(max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() > max_bytes {
        bytes.truncate(max_bytes);
        let keep = cut_at_line(&bytes).len();
        bytes.truncate(keep);
        return Some((bytes, true));
    }
    Some((bytes, false))
}

/// `bytes` up to and including its last line end (all of it when it has none).
fn cut_at_line(bytes: &[u8]) -> &[u8] {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => &bytes[..=i],
        None => bytes,
    }
}
