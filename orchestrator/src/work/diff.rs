//! `work_diff`: the changes, only when the Brain explicitly asks. Default: a short per-file
//! overview of unrecorded work; `level="full"` the patch, bounded; `record_id` one record.

use crate::catalogue::{Key, fill};
use butler_worker::git::{FileStat, RepoPath};
use butler_worker::ledger::RecordId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::WorkError;
use crate::session::Project;

/// The most patch text returned at once (about 12k tokens).
pub const MAX_PATCH_BYTES: usize = 48 * 1024;
/// The most files listed in an overview.
pub const MAX_FILES: usize = 200;

/// How much of the changes is shown: `stat`, a per-file overview; `full`, the patch (bounded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Level {
    #[default]
    Stat,
    Full,
}

#[derive(Debug, Clone)]
pub struct DiffRequest {
    pub path: Option<String>,
    pub level: Level,
    pub record_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileLine {
    pub path: String,
    pub change: String,
    pub added: usize,
    pub deleted: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// `added` is estimated (a new file larger than what is read of it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum DiffView {
    Overview {
        of: String,
        files: Vec<FileLine>,
        #[serde(skip_serializing_if = "Option::is_none")]
        files_more: Option<usize>,
        added: usize,
        deleted: usize,
    },
    Full {
        of: String,
        patch: String,
        truncated: bool,
        total_bytes: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

pub fn diff(project: &Project, req: DiffRequest) -> Result<(String, DiffView), WorkError> {
    let repo = &project.repo;
    let path: Option<RepoPath> = match req.path.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(p) => Some(repo.path_in_repo(p)?),
    };
    let commit = match req.record_id.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(id) => Some((id.to_string(), resolve_record(project, id)?)),
    };
    let of = match &commit {
        Some((id, _)) => format!("record {id}"),
        None => "unrecorded changes".to_string(),
    };
    match req.level {
        Level::Stat => {
            let stats = match &commit {
                Some((_, sha)) => repo.commit_overview(sha, path.as_ref())?,
                None => repo.diff_overview(path.as_ref())?,
            };
            let added = stats.iter().map(|s| s.added).sum();
            let deleted = stats.iter().map(|s| s.deleted).sum();
            let total = stats.len();
            let files: Vec<FileLine> = stats.iter().take(MAX_FILES).map(line).collect();
            let estimate = if stats.iter().any(|s| s.estimated) {
                " (some line counts of very large new files are estimates)"
            } else {
                ""
            };
            let summary =
                format!("{total} file(s) changed in {of}: +{added} -{deleted}{estimate}.");
            let files_more = (total > MAX_FILES).then(|| total - MAX_FILES);
            Ok((
                summary,
                DiffView::Overview {
                    of,
                    files,
                    files_more,
                    added,
                    deleted,
                },
            ))
        }
        Level::Full => {
            let patch = match &commit {
                Some((_, sha)) => repo.commit_patch(sha, path.as_ref(), MAX_PATCH_BYTES)?,
                None => repo.diff_patch(path.as_ref(), MAX_PATCH_BYTES)?,
            };
            let note = patch.truncated.then(|| {
                fill(
                    Key::PatchCut,
                    &[("shown", &patch.text.len()), ("total", &patch.total_bytes)],
                )
            });
            let summary = match &note {
                Some(_) => fill(Key::PatchTruncated, &[("of", &of)]),
                None => fill(Key::Patch, &[("of", &of)]),
            };
            let view = DiffView::Full {
                of,
                patch: patch.text,
                truncated: patch.truncated,
                total_bytes: patch.total_bytes,
                note,
            };
            Ok((summary, view))
        }
    }
}

fn line(stat: &FileStat) -> FileLine {
    FileLine {
        path: stat.path.display(),
        change: format!("{:?}", stat.change).to_lowercase(),
        added: stat.added,
        deleted: stat.deleted,
        binary: stat.binary,
        estimated: stat.estimated,
    }
}

/// A record id (`20260612-001-kqrt`) or a commit id (hex, at least 7 digits; the id
/// `work_history` shows for a commit that is not a record) → the commit.
pub fn resolve_record(project: &Project, id: &str) -> Result<String, WorkError> {
    let not_found = || WorkError::RecordNotFound {
        id: id.chars().take(64).collect(),
    };
    let is_record_id = RecordId::parse(id).is_ok();
    if is_record_id {
        let record = project
            .with_ledger(|l| Ok(l.record_by_id(id)?))?
            .ok_or_else(not_found)?;
        return Ok(record.sha);
    }
    let is_hex = (7..=64).contains(&id.len()) && id.chars().all(|c| c.is_ascii_hexdigit());
    if !is_hex {
        return Err(WorkError::InvalidArgument {
            field: "record_id",
            reason: crate::catalogue::text(Key::ArgRecordId).into(),
        });
    }
    project.repo.resolve_commit(id)?.ok_or_else(not_found)
}
