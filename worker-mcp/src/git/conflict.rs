//! Finishing what git started: conflict markers left in files, the message git prepared for the
//! commit that ends a merge, cherry-pick or revert, and carrying a rebase, `am` or a series of
//! picks on once the conflicts are resolved — without ever opening an editor.
//!
//! A conflict marker is what git writes into a conflicted file: a line of `<` (7 by default,
//! the `conflict-marker-size` attribute can make it longer) followed by a space or the line's
//! end, later a line of exactly as many `=`, later a line of as many `>`. A lone `=======` (a
//! Markdown heading underline) is not one.

use std::io::Read;
use std::time::Duration;

use serde::Serialize;

use super::GitRepo;
use super::command::GitCommand;
use super::error::GitError;
use super::lock::TreeLock;
use super::path::RepoPath;
use super::repo::InProgress;

/// The most of one file read when looking for conflict markers.
const MAX_MARKER_READ: u64 = 32 << 20;
/// git's own rule: a NUL in the first 8000 bytes makes a file binary.
const BINARY_SNIFF: usize = 8000;
/// Continuing may replay many records, each with the repository's hooks.
const CONTINUE_TIMEOUT: Duration = Duration::from_secs(600);
/// The shortest marker git writes.
const MIN_MARKER: usize = 7;

/// Where conflict markers remain in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Markers {
    pub path: RepoPath,
    /// The lines (1-based) where a conflict block starts.
    pub lines: Vec<usize>,
}

/// How carrying an operation on ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Continued {
    /// The operation ran to its end.
    Finished,
    /// It went on and stopped on conflicts in these files (still in progress).
    Conflicted { files: Vec<RepoPath> },
    /// It went on and stopped without a conflict (a rebase's `edit` or `break` step): still
    /// in progress, waiting to be continued again.
    Paused,
}

impl InProgress {
    /// git's name of the operation (`cherry-pick`), which is also its command.
    pub fn command(self) -> &'static str {
        match self {
            InProgress::Merge => "merge",
            InProgress::Rebase => "rebase",
            InProgress::CherryPick => "cherry-pick",
            InProgress::Revert => "revert",
            InProgress::Bisect => "bisect",
            InProgress::ApplyMailbox => "am",
        }
    }

    /// The arguments that give the operation up, back to where it started.
    pub fn abort_args(self) -> [&'static str; 2] {
        match self {
            InProgress::Bisect => ["bisect", "reset"],
            other => [other.command(), "--abort"],
        }
    }

    /// Whether the operation ends with a commit of the resolved tree that Butler makes (a
    /// record), rather than one git makes itself while replaying (rebase, `am`).
    pub fn ends_with_a_record(self) -> bool {
        matches!(
            self,
            InProgress::Merge | InProgress::CherryPick | InProgress::Revert
        )
    }
}

/// The lines where conflict blocks start, in `lines` (numbered lines in file order; they
/// need not be consecutive, e.g. only the lines a change adds).
pub fn marker_starts<'a>(lines: impl IntoIterator<Item = (usize, &'a str)>) -> Vec<usize> {
    let mut found = Vec::new();
    // (line of the opening marker, its size, separator seen)
    let mut open: Option<(usize, usize, bool)> = None;
    for (number, line) in lines {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(size) = marker(line, '<', true) {
            open = Some((number, size, false));
            continue;
        }
        let Some((start, size, separated)) = open else {
            continue;
        };
        if !separated && marker(line, '=', false) == Some(size) {
            open = Some((start, size, true));
        } else if separated && marker(line, '>', true) == Some(size) {
            found.push(start);
            open = None;
        }
    }
    found
}

/// The size of a marker of `c` that `line` is (`<<<<<<< ours`, `=======`), if it is one.
/// `label`: a space and any text may follow the marker.
fn marker(line: &str, c: char, label: bool) -> Option<usize> {
    let size = line.chars().take_while(|&x| x == c).count();
    if size < MIN_MARKER {
        return None;
    }
    let rest = &line[size..];
    let fits = rest.is_empty() || (label && rest.starts_with(' '));
    fits.then_some(size)
}

impl GitRepo {
    /// The files among `paths` whose working copy still holds conflict markers, with where.
    /// Missing, binary or unreadable files hold none.
    pub fn conflict_markers(&self, paths: &[RepoPath]) -> Vec<Markers> {
        paths
            .iter()
            .filter_map(|path| {
                let text = read_text(&self.workdir().join(path.as_path()))?;
                let lines = marker_starts(text.lines().enumerate().map(|(i, l)| (i + 1, l)));
                (!lines.is_empty()).then(|| Markers {
                    path: path.clone(),
                    lines,
                })
            })
            .collect()
    }

    /// The message git prepared for the commit that ends the merge, cherry-pick or revert in
    /// progress (`MERGE_MSG`), without its comment lines; `None` when there is none.
    pub fn prepared_message(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.git_dir().join("MERGE_MSG")).ok()?;
        let comment = self.comment_char();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with(comment.as_str()))
            .collect();
        let message = kept.join("\n").trim().to_owned();
        (!message.is_empty()).then_some(message)
    }

    /// git's comment character for commit messages (`core.commentChar`; `#` by default or
    /// when set to `auto`).
    fn comment_char(&self) -> String {
        let configured = self
            .open()
            .ok()
            .and_then(|r| r.config().ok())
            .and_then(|mut c| c.snapshot().ok())
            .and_then(|c| c.get_string("core.commentChar").ok());
        match configured {
            Some(c) if !c.is_empty() && c != "auto" => c,
            _ => "#".to_owned(),
        }
    }

    /// Whether a series of cherry-picks or reverts has steps left after the current one.
    pub fn sequence_pending(&self) -> bool {
        std::fs::read_to_string(self.git_dir().join("sequencer").join("todo")).is_ok_and(|todo| {
            todo.lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
    }

    /// Carries `op` on with everything staged (the caller staged the resolution): `rebase
    /// --continue`, `am --continue`, or for a series of picks or reverts whose current step is
    /// committed, `cherry-pick --continue` / `revert --continue`. No editor is opened: each
    /// replayed record keeps its message. With Butler's lock on the tree held.
    pub fn continue_operation(
        &self,
        held: &TreeLock,
        op: InProgress,
    ) -> Result<Continued, GitError> {
        self.holds(held)?;
        let out = self.sequence_command(op, "--continue")?.run()?;
        self.after_step(op, out.status.success(), &out.detail())
    }

    /// Skips the current step of `op` (a pick whose resolution changes nothing) and carries
    /// the rest on.
    pub fn skip_step(&self, held: &TreeLock, op: InProgress) -> Result<Continued, GitError> {
        self.holds(held)?;
        let out = self.sequence_command(op, "--skip")?.run()?;
        self.after_step(op, out.status.success(), &out.detail())
    }

    fn sequence_command(&self, op: InProgress, step: &str) -> Result<GitCommand, GitError> {
        if matches!(op, InProgress::Merge | InProgress::Bisect) {
            return Err(GitError::failed("continue", "nothing to carry on"));
        }
        Ok(GitCommand::new(self, "continue")
            .args([op.command(), step])
            // `:` is git's "no editor": replayed records keep their messages.
            .env("GIT_EDITOR", ":")
            .env("GIT_SEQUENCE_EDITOR", ":")
            .env("GIT_MERGE_AUTOEDIT", "no")
            .timeout(CONTINUE_TIMEOUT))
    }

    fn after_step(
        &self,
        op: InProgress,
        succeeded: bool,
        detail: &str,
    ) -> Result<Continued, GitError> {
        let still = self.operation_in_progress() == Some(op) || self.sequence_pending();
        if !still {
            return if succeeded {
                Ok(Continued::Finished)
            } else {
                Err(GitError::failed("continue", detail))
            };
        }
        let files = self.status()?.conflicted;
        if !files.is_empty() {
            return Ok(Continued::Conflicted { files });
        }
        if succeeded {
            Ok(Continued::Paused)
        } else {
            Err(GitError::failed("continue", detail))
        }
    }
}

/// A text file's content (bounded); `None` when missing, not a regular file, or binary.
fn read_text(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_MARKER_READ)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(text: &str) -> Vec<usize> {
        marker_starts(text.lines().enumerate().map(|(i, l)| (i + 1, l)))
    }

    #[test]
    fn conflict_blocks_are_found_where_they_start() {
        let text = "a\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> abc (x)\nb\n<<<<<<<\n||||||| base\nold\n=======\n>>>>>>>\n";
        assert_eq!(starts(text), vec![2, 8]);
        let crlf = "<<<<<<< HEAD\r\nx\r\n=======\r\ny\r\n>>>>>>> b\r\n";
        assert_eq!(starts(crlf), vec![1]);
        let longer = "<<<<<<<<<< ours\nx\n==========\ny\n>>>>>>>>>> theirs\n";
        assert_eq!(starts(longer), vec![1]);
    }

    #[test]
    fn text_that_only_looks_like_markers_is_not_a_conflict() {
        // A Markdown heading, an arrow, markers of mismatched sizes, an unfinished block.
        for text in [
            "Title\n=======\n\ntext\n",
            "<<<<<<<< ours\nx\n=======\ny\n>>>>>>>> theirs\n",
            "<<<<<<<x\n=======\n>>>>>>>\n",
            "<<<<<<< HEAD\nx\n=======\ny\n",
            "a <<<<<<< b\n=======\n>>>>>>> c\n",
        ] {
            assert_eq!(starts(text), Vec::<usize>::new(), "{text:?}");
        }
    }

    #[test]
    fn abort_names_the_operation() {
        assert_eq!(InProgress::Rebase.abort_args(), ["rebase", "--abort"]);
        assert_eq!(
            InProgress::CherryPick.abort_args(),
            ["cherry-pick", "--abort"]
        );
        assert_eq!(InProgress::ApplyMailbox.abort_args(), ["am", "--abort"]);
        assert_eq!(InProgress::Bisect.abort_args(), ["bisect", "reset"]);
    }
}
