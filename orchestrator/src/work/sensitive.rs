//! Secrets stay home: what a record would save, what a publication would share, and the text
//! the Brain writes into a record message or an issue are checked by the worker's scanner
//! (`butler_worker::secrets`) before anything is written or sent.
//!
//! A finding names the file (or record, or field) and the rule, never the secret. The user's
//! way through a false alarm is `allow_sensitive` (paths; on `work_publish` also record ids,
//! for a message). Butler's own tracker token can never be allowed, and text fields (record
//! messages, issue titles, bodies, comments) have no allowance: the Brain rewords them.

use butler_worker::git::{GitRepo, WorkTreeStatus};
use butler_worker::secrets::{self, ChangeScan, FileFinding, KnownSecrets, Rule};

use crate::catalogue::{Key, fill};
use crate::error::{RecordFinding, WorkError};
use crate::work::records::commit_id;
use butler_worker::record::RecordMessage;

/// Commits looked at before a publication; more are published after only these were checked
/// (and the answer says so).
pub const MAX_COMMITS_SCANNED: usize = 1000;

/// Refuses a text field (a record message, an issue title, body or comment) that holds a
/// secret.
pub fn check_text(field: &'static str, text: &str, known: &KnownSecrets) -> Result<(), WorkError> {
    match secrets::scan_text(text, known).first() {
        Some(hit) => Err(WorkError::SecretInText {
            field,
            rule: hit.rule,
        }),
        None => Ok(()),
    }
}

/// Checks what `work_record` would save: the message, then every changed or new file (staged
/// or not) by name and by the lines it adds. Returns notes for files only partly read.
pub fn check_record(
    repo: &GitRepo,
    status: &WorkTreeStatus,
    message: &str,
    allow: &[String],
    known: &KnownSecrets,
) -> Result<Vec<String>, WorkError> {
    check_text("message", message, known)?;
    let scan = secrets::scan_unrecorded(repo, status, known)?;
    let findings: Vec<FileFinding> = scan
        .findings
        .iter()
        .filter(|f| !allowed(allow, &f.path, f.rule))
        .cloned()
        .collect();
    if !findings.is_empty() {
        return Err(WorkError::SecretsInWork { findings });
    }
    Ok(partly_read_note(&scan))
}

/// Checks the records `work_publish` would share (`shas`, newest first; `total` of them in
/// all): each one's message and the lines it adds.
pub fn check_publish(
    repo: &GitRepo,
    shas: &[String],
    total: usize,
    allow: &[String],
    known: &KnownSecrets,
) -> Result<Vec<String>, WorkError> {
    let mut findings = Vec::new();
    let mut partly = ChangeScan::default();
    for sha in shas.iter().take(MAX_COMMITS_SCANNED) {
        let text = repo.commit_message(sha)?;
        let record = RecordMessage::parse(&text)
            .record_id
            .map_or_else(|| commit_id(sha), |id| id.to_string());
        if let Some(hit) = secrets::scan_text(&text, known).first()
            && !allowed(allow, &record, hit.rule)
        {
            findings.push(RecordFinding {
                record: record.clone(),
                path: None,
                rule: hit.rule,
                line: None,
            });
        }
        let scan = secrets::scan_commit(repo, sha, known)?;
        for f in scan.findings {
            if !allowed(allow, &f.path, f.rule) {
                findings.push(RecordFinding {
                    record: record.clone(),
                    path: Some(f.path),
                    rule: f.rule,
                    line: f.line,
                });
            }
        }
        partly.partly_read.extend(scan.partly_read);
    }
    if !findings.is_empty() {
        return Err(WorkError::SecretsInRecords { findings });
    }
    let mut notes = partly_read_note(&partly);
    let scanned = shas.len().min(MAX_COMMITS_SCANNED);
    if total > scanned {
        notes.push(fill(
            Key::NoteScanPartial,
            &[("scanned", &scanned), ("total", &total)],
        ));
    }
    Ok(notes)
}

/// Whether the user allowed `name` (a path or a record id) for `rule`. Butler's own token is
/// never allowed.
fn allowed(allow: &[String], name: &str, rule: Rule) -> bool {
    rule != Rule::ButlerTrackerToken
        && allow
            .iter()
            .any(|a| a.trim().trim_start_matches("./") == name)
}

fn partly_read_note(scan: &ChangeScan) -> Vec<String> {
    if scan.partly_read.is_empty() {
        return Vec::new();
    }
    let mut names: Vec<&str> = scan.partly_read.iter().map(String::as_str).collect();
    names.dedup();
    let shown: Vec<&str> = names.iter().take(3).copied().collect();
    vec![format!(
        "{} file(s) larger than {} MiB were checked for secrets in their first {} MiB only: {}{}.",
        names.len(),
        secrets::MAX_FILE_BYTES >> 20,
        secrets::MAX_FILE_BYTES >> 20,
        shown.join(", "),
        if names.len() > 3 { ", …" } else { "" }
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowances_name_paths_but_never_butlers_own_token() {
        let allow = vec!["./config/app.env".to_string(), "20260612-001".to_string()];
        assert!(allowed(&allow, "config/app.env", Rule::SecretAssignment));
        assert!(allowed(&allow, "20260612-001", Rule::Jwt));
        assert!(!allowed(&allow, "config/app.env", Rule::ButlerTrackerToken));
        assert!(!allowed(&allow, "config/other.env", Rule::SecretAssignment));
    }

    #[test]
    fn a_secret_in_a_text_names_the_field_and_the_rule_only() {
        let token = butler_worker::config::Secret::new("tok-0123456789abcdef");
        let known = KnownSecrets::new([&token]);
        let err = check_text("body", "see tok-0123456789abcdef", &known).unwrap_err();
        assert!(matches!(
            err,
            WorkError::SecretInText {
                field: "body",
                rule: Rule::ButlerTrackerToken
            }
        ));
        assert!(!format!("{err} {err:?}").contains("0123456789abcdef"));
        assert!(check_text("body", "KEY=changeme", &known).is_ok());
    }
}
