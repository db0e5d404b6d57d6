//! Scanning a change: the work a record would save, or one commit about to be published.
//! Only what the change adds is read (see `GitRepo::unrecorded_additions`), each file up to
//! [`MAX_FILE_BYTES`]; binary files are judged by their name only.

use serde::Serialize;

use super::names::judged_by_content;
use super::{KnownSecrets, Rule, credential_file_name, scan_lines};
use crate::git::{Added, Addition, GitError, GitRepo, WorkTreeStatus};

/// How much of one file is read. A larger file is scanned in its first part and reported in
/// [`ChangeScan::partly_read`].
pub const MAX_FILE_BYTES: usize = 4 << 20;

/// A file that must not be shared as it is, and why (never what matched).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileFinding {
    /// The path as [`crate::git::RepoPath::display`] writes it.
    pub path: String,
    pub rule: Rule,
    /// The line in the new version of the file; absent for a rule on the file's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeScan {
    pub findings: Vec<FileFinding>,
    /// Files larger than [`MAX_FILE_BYTES`]: only their first part was scanned.
    pub partly_read: Vec<String>,
    /// How many files were looked at.
    pub files: usize,
}

impl ChangeScan {
    fn add(&mut self, addition: Addition<'_>, known: &KnownSecrets) {
        self.files += 1;
        let path = addition.path.display();
        // A text `.pem` without a private key in it holds certificates only.
        let public = match &addition.content {
            Added::Text { lines, .. } => {
                judged_by_content(&path) && !lines.iter().any(|(_, l)| l.contains("PRIVATE KEY"))
            }
            Added::Binary => false,
        };
        if addition.new_file && credential_file_name(&path) && !public {
            self.findings.push(FileFinding {
                path: path.clone(),
                rule: Rule::CredentialFileName,
                line: None,
            });
        }
        let Added::Text { lines, cut } = addition.content else {
            return;
        };
        if cut {
            self.partly_read.push(path.clone());
        }
        for hit in scan_lines(&lines, known) {
            self.findings.push(FileFinding {
                path: path.clone(),
                rule: hit.rule,
                line: Some(hit.line),
            });
        }
    }
}

/// Scans what a record of the current work would save: changed tracked files (staged or
/// not) by the lines they gain, new files by name and content.
pub fn scan_unrecorded(
    repo: &GitRepo,
    status: &WorkTreeStatus,
    known: &KnownSecrets,
) -> Result<ChangeScan, GitError> {
    let mut scan = ChangeScan::default();
    repo.unrecorded_additions(status, MAX_FILE_BYTES, &mut |a| scan.add(a, known))?;
    Ok(scan)
}

/// Scans what the commit `sha` adds against its parents.
pub fn scan_commit(
    repo: &GitRepo,
    sha: &str,
    known: &KnownSecrets,
) -> Result<ChangeScan, GitError> {
    let mut scan = ChangeScan::default();
    repo.commit_additions(sha, MAX_FILE_BYTES, &mut |a| scan.add(a, known))?;
    Ok(scan)
}
