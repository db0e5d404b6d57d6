//! Changes as statistics or patches: unrecorded work (against HEAD, untracked files included)
//! and the changes of one commit. Tracked files go through `git diff` (fastest on big trees;
//! its line counts are exact, and files past git's `core.bigFileThreshold` count as binary);
//! untracked files are read here, bounded: the lines of one larger than the bound are
//! estimated from the part read, and say so.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::lock::Refresh;
use super::path::RepoPath;
use super::status::{Change, split_nul};

/// The most of one untracked file that is read (larger files' lines are estimated from this
/// much).
const MAX_UNTRACKED_READ: u64 = 16 << 20;
/// git's own rule: a NUL in the first 8000 bytes makes a file binary.
const BINARY_SNIFF: usize = 8000;
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// Per-file statistics of a change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileStat {
    pub path: RepoPath,
    /// `Added` also for untracked files.
    pub change: Change,
    /// Lines added (0 for binary files).
    pub added: usize,
    /// Lines deleted (0 for binary files).
    pub deleted: usize,
    pub binary: bool,
    /// `added` is an estimate: the file is larger than what is read of it.
    pub estimated: bool,
}

/// A patch, possibly cut short.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Patch {
    /// Unified diff text (invalid UTF-8 replaced), cut at a line boundary when truncated.
    pub text: String,
    /// Whether `text` is shorter than the whole patch.
    pub truncated: bool,
    /// The size of the whole patch in bytes.
    pub total_bytes: u64,
}

/// What to compare.
enum Range {
    /// A tree (HEAD or the empty tree) against index and working tree together.
    WorkTree { base: String },
    /// A commit against its first parent (or the empty tree).
    Commit { parent: String, commit: String },
}

impl GitRepo {
    /// Per-file statistics of unrecorded changes against HEAD (index and working tree
    /// together), untracked files included as added; optionally only under `path`. An unborn
    /// HEAD compares against nothing (everything is added).
    pub fn diff_overview(&self, path: Option<&RepoPath>) -> Result<Vec<FileStat>, GitError> {
        let range = Range::WorkTree {
            base: self.head_tree_or_empty()?,
        };
        let mut stats = self.tracked_stats(&range, path)?;
        for file in self.untracked_under(path)? {
            if let Some(new) = read_untracked(self, &file) {
                stats.push(FileStat {
                    added: new.estimated_lines(),
                    deleted: 0,
                    binary: new.binary,
                    estimated: new.cut(),
                    change: Change::Added,
                    path: file,
                });
            }
        }
        stats.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(stats)
    }

    /// The unified patch of unrecorded changes (as [`GitRepo::diff_overview`]), at most
    /// `max_bytes`, cut at a line boundary.
    pub fn diff_patch(&self, path: Option<&RepoPath>, max_bytes: usize) -> Result<Patch, GitError> {
        let range = Range::WorkTree {
            base: self.head_tree_or_empty()?,
        };
        let mut patch = self.tracked_patch(&range, path, max_bytes)?;
        for file in self.untracked_under(path)? {
            if let Some(new) = read_untracked(self, &file) {
                patch.append(&new.patch(&file), max_bytes);
            }
        }
        Ok(patch.finish(max_bytes))
    }

    /// Per-file statistics of the commit `sha` (a full or unique abbreviated id) against its
    /// first parent; optionally only under `path`. Unknown id → `UnknownCommit`.
    pub fn commit_overview(
        &self,
        sha: &str,
        path: Option<&RepoPath>,
    ) -> Result<Vec<FileStat>, GitError> {
        let range = self.commit_range(sha)?;
        self.tracked_stats(&range, path)
    }

    /// The unified patch of the commit `sha` against its first parent, at most `max_bytes`,
    /// cut at a line boundary. Unknown id → `UnknownCommit`.
    pub fn commit_patch(
        &self,
        sha: &str,
        path: Option<&RepoPath>,
        max_bytes: usize,
    ) -> Result<Patch, GitError> {
        let range = self.commit_range(sha)?;
        Ok(self
            .tracked_patch(&range, path, max_bytes)?
            .finish(max_bytes))
    }

    fn commit_range(&self, sha: &str) -> Result<Range, GitError> {
        let full = self.resolve_commit(sha)?.ok_or(GitError::UnknownCommit)?;
        let repo = self.open()?;
        let commit = repo.find_commit(git2::Oid::from_str(&full)?)?;
        let parent = match commit.parent_ids().next() {
            Some(p) => p.to_string(),
            None => empty_tree(&repo).to_string(),
        };
        Ok(Range::Commit {
            parent,
            commit: full,
        })
    }

    fn head_tree_or_empty(&self) -> Result<String, GitError> {
        let repo = self.open()?;
        match repo.head() {
            Ok(head) => match head.target() {
                Some(oid) => Ok(oid.to_string()),
                None => Ok(empty_tree(&repo).to_string()),
            },
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
                ) =>
            {
                Ok(empty_tree(&repo).to_string())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `git diff` of `range`; `refresh` decides whether a working-tree diff may save the
    /// refreshed index, so keep it alive until the command has run.
    fn diff_command(
        &self,
        refresh: &Refresh,
        range: &Range,
        path: Option<&RepoPath>,
        format: &[&str],
    ) -> GitCommand {
        let mut cmd = refresh
            .apply(GitCommand::new(self, "diff"))
            .args(["--literal-pathspecs", "-c", "core.quotePath=false", "diff"])
            .args([
                "--no-renames",
                "--no-ext-diff",
                "--no-color",
                "--no-relative",
            ])
            .args(format);
        cmd = match range {
            Range::WorkTree { base } => cmd.arg(base),
            Range::Commit { parent, commit } => cmd.arg(parent).arg(commit),
        };
        cmd = cmd.arg("--");
        if let Some(path) = path.filter(|p| !p.is_root()) {
            cmd = cmd.arg(path.as_path());
        }
        cmd
    }

    fn tracked_stats(
        &self,
        range: &Range,
        path: Option<&RepoPath>,
    ) -> Result<Vec<FileStat>, GitError> {
        let refresh = self.refresh_for(range);
        let out = self
            .diff_command(&refresh, range, path, &["--raw", "--numstat", "-z"])
            .max_stdout(64 << 20)
            .run_ok()?;
        if out.truncated() {
            return Err(GitError::failed("diff", "output over the bound"));
        }
        parse_raw_numstat(&out.stdout)
    }

    fn tracked_patch(
        &self,
        range: &Range,
        path: Option<&RepoPath>,
        max_bytes: usize,
    ) -> Result<PatchBuilder, GitError> {
        let refresh = self.refresh_for(range);
        let out = self
            .diff_command(&refresh, range, path, &["--patch"])
            .max_stdout(max_bytes.saturating_add(1))
            .run_ok()?;
        Ok(PatchBuilder {
            bytes: out.stdout,
            total: out.stdout_total,
        })
    }

    /// Only a diff against the working tree can refresh the index.
    fn refresh_for(&self, range: &Range) -> Refresh {
        match range {
            Range::WorkTree { .. } => self.refresh(),
            Range::Commit { .. } => Refresh::without_lock(),
        }
    }

    fn untracked_under(&self, path: Option<&RepoPath>) -> Result<Vec<RepoPath>, GitError> {
        let mut cmd = GitCommand::new(self, "ls-files")
            .args([
                "--literal-pathspecs",
                "ls-files",
                "-z",
                "--others",
                "--exclude-standard",
                "--",
            ])
            .max_stdout(64 << 20);
        if let Some(path) = path.filter(|p| !p.is_root()) {
            cmd = cmd.arg(path.as_path());
        }
        let out = cmd.run_ok()?;
        Ok(split_nul(&out.stdout).map(RepoPath::from_bytes).collect())
    }
}

fn empty_tree(repo: &git2::Repository) -> &'static str {
    let sha256 = repo
        .config()
        .and_then(|c| c.get_string("extensions.objectformat"))
        .is_ok_and(|f| f.eq_ignore_ascii_case("sha256"));
    if sha256 {
        EMPTY_TREE_SHA256
    } else {
        EMPTY_TREE_SHA1
    }
}

/// Parses `--raw --numstat -z`: first every `:<modes> <oids> <status>\0<path>\0`, then every
/// `<added>\t<deleted>\t<path>\0` (`-\t-` for binary files).
fn parse_raw_numstat(stdout: &[u8]) -> Result<Vec<FileStat>, GitError> {
    let mut stats: Vec<FileStat> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut tokens = stdout.split(|&b| b == 0).filter(|t| !t.is_empty());
    let mut raw_section = true;
    while let Some(token) = tokens.next() {
        if raw_section && token.first() == Some(&b':') {
            let path = tokens
                .next()
                .ok_or_else(|| GitError::failed("diff", "short raw record"))?;
            let letter = token
                .split(|&b| b == b' ')
                .nth(4)
                .and_then(|s| s.first().copied());
            index.insert(path.to_vec(), stats.len());
            stats.push(FileStat {
                path: RepoPath::from_bytes(path),
                change: change_of(letter.unwrap_or(b'M')),
                added: 0,
                deleted: 0,
                binary: false,
                estimated: false,
            });
            continue;
        }
        raw_section = false;
        let mut parts = token.splitn(3, |&b| b == b'\t');
        let (Some(added), Some(deleted), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(GitError::failed("diff", "short numstat record"));
        };
        let Some(&i) = index.get(path) else {
            continue;
        };
        let number = |b: &[u8]| std::str::from_utf8(b).ok().and_then(|s| s.parse().ok());
        match (number(added), number(deleted)) {
            (Some(a), Some(d)) => {
                stats[i].added = a;
                stats[i].deleted = d;
            }
            _ => stats[i].binary = true,
        }
    }
    Ok(stats)
}

fn change_of(letter: u8) -> Change {
    match letter {
        b'A' | b'C' | b'R' => Change::Added,
        b'D' => Change::Deleted,
        b'T' => Change::TypeChanged,
        b'U' => Change::Conflicted,
        _ => Change::Modified,
    }
}

/// A patch being assembled under a byte bound: keeps at most `max + 1` bytes, counts all.
struct PatchBuilder {
    bytes: Vec<u8>,
    total: u64,
}

impl PatchBuilder {
    fn append(&mut self, part: &[u8], max: usize) {
        self.total += part.len() as u64;
        let room = (max + 1).saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&part[..part.len().min(room)]);
    }

    fn finish(mut self, max: usize) -> Patch {
        let truncated = self.total > max as u64;
        if truncated {
            let cut = self.bytes[..max.min(self.bytes.len())]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            self.bytes.truncate(cut);
        }
        Patch {
            text: String::from_utf8_lossy(&self.bytes).into_owned(),
            truncated,
            total_bytes: self.total,
        }
    }
}

/// An untracked file's content as a new file.
struct NewFile {
    mode: &'static str,
    /// At most [`MAX_UNTRACKED_READ`] bytes of it.
    content: Vec<u8>,
    /// The whole file's size.
    size: u64,
    binary: bool,
    /// Lines in `content`.
    lines: usize,
}

/// Reads an untracked regular file or symlink (bounded); `None` for anything else (a FIFO
/// must not be opened) or what cannot be read.
fn read_untracked(repo: &GitRepo, path: &RepoPath) -> Option<NewFile> {
    let full = repo.workdir().join(path.as_path());
    let meta = std::fs::symlink_metadata(&full).ok()?;
    let size = meta.len();
    let (mode, content) = if meta.file_type().is_symlink() {
        let target: OsString = std::fs::read_link(&full).ok()?.into_os_string();
        (
            "120000",
            std::os::unix::ffi::OsStrExt::as_bytes(target.as_os_str()).to_vec(),
        )
    } else if meta.is_file() {
        let mut content = Vec::new();
        std::fs::File::open(&full)
            .ok()?
            .take(MAX_UNTRACKED_READ)
            .read_to_end(&mut content)
            .ok()?;
        let exec = meta.permissions().mode() & 0o111 != 0;
        (if exec { "100755" } else { "100644" }, content)
    } else {
        return None;
    };
    let binary = content[..content.len().min(BINARY_SNIFF)].contains(&0);
    let lines = if binary { 0 } else { count_lines(&content) };
    Some(NewFile {
        mode,
        content,
        size,
        binary,
        lines,
    })
}

fn count_lines(content: &[u8]) -> usize {
    let newlines = content.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(content.last().is_some_and(|&b| b != b'\n'))
}

impl NewFile {
    /// Whether only the first part of the file was read.
    fn cut(&self) -> bool {
        !self.binary && self.size > self.content.len() as u64
    }

    /// The file's lines: counted when it was read whole, else scaled from the part read.
    fn estimated_lines(&self) -> usize {
        if !self.cut() || self.content.is_empty() {
            return self.lines;
        }
        let per_byte = self.lines as f64 / self.content.len() as f64;
        (per_byte * self.size as f64).round() as usize
    }

    /// The file as git would show a new file (paths in the `RepoPath::display` form).
    fn patch(&self, path: &RepoPath) -> Vec<u8> {
        let shown = path.display();
        let mut out = format!(
            "diff --git a/{shown} b/{shown}\nnew file mode {}\n",
            self.mode
        )
        .into_bytes();
        if self.content.is_empty() {
            return out;
        }
        if self.binary {
            out.extend(format!("Binary files /dev/null and b/{shown} differ\n").bytes());
            return out;
        }
        let range = if self.lines == 1 {
            "1".to_string()
        } else {
            format!("1,{}", self.lines)
        };
        out.extend(format!("--- /dev/null\n+++ b/{shown}\n@@ -0,0 +{range} @@\n").bytes());
        for line in self.content.split_inclusive(|&b| b == b'\n') {
            out.push(b'+');
            out.extend_from_slice(line);
        }
        if self.content.last() != Some(&b'\n') {
            out.extend_from_slice(b"\n\\ No newline at end of file\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_numstat_are_joined() {
        let out = b":100644 100644 aaa bbb M\0a\0:000000 100644 000 ccc A\0bin\0:100644 000000 ddd 000 D\0gone\0\
2\t1\ta\0-\t-\tbin\0\
0\t3\tgone\0";
        let stats = parse_raw_numstat(out).expect("parses");
        assert_eq!(stats.len(), 3);
        assert_eq!(
            (stats[0].change, stats[0].added, stats[0].deleted),
            (Change::Modified, 2, 1)
        );
        assert!(stats[1].binary && stats[1].change == Change::Added);
        assert_eq!((stats[2].change, stats[2].deleted), (Change::Deleted, 3));
    }

    #[test]
    fn patches_are_cut_at_a_line_boundary() {
        let mut b = PatchBuilder {
            bytes: Vec::new(),
            total: 0,
        };
        b.append(b"line one\nline two\nline three\n", 14);
        let p = b.finish(14);
        assert_eq!(p.text, "line one\n");
        assert!(p.truncated);
        assert_eq!(p.total_bytes, 29);
    }

    #[test]
    fn lines_of_a_file_read_in_part_are_estimated() {
        let f = NewFile {
            mode: "100644",
            content: b"ab\ncd\n".to_vec(),
            size: 60,
            binary: false,
            lines: 2,
        };
        assert!(f.cut());
        assert_eq!(f.estimated_lines(), 20);
        let whole = NewFile { size: 6, ..f };
        assert!(!whole.cut());
        assert_eq!(whole.estimated_lines(), 2);
    }

    #[test]
    fn new_file_patch_marks_a_missing_final_newline() {
        let f = NewFile {
            mode: "100644",
            content: b"a\nb".to_vec(),
            size: 3,
            binary: false,
            lines: 2,
        };
        let text = String::from_utf8(f.patch(&RepoPath::from_bytes("n.txt"))).expect("utf8");
        assert!(
            text.contains("@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"),
            "{text}"
        );
    }
}
