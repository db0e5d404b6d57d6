//! How a record's message is written into history and read back: the one writer and the one
//! parser of the record trailers.
//!
//! A record is saved with its message followed by trailers: `Refs: #50, #123` (so a tracker
//! such as Gitea shows the link on the issue once published), `Butler-Task: t3` on the
//! ImplementMaid's records (which task saved them), and `Butler-Record: 20260612-001` (so the
//! record is recognised as Butler's even if the ledger lost track of it). Commits made outside
//! Butler carry no record trailer: their issue links are read from `#N` references in the text.

use crate::contract::TaskId;
use crate::ledger::RecordId;

const REFS: &str = "Refs:";
const TASK: &str = "Butler-Task:";
const RECORD: &str = "Butler-Record:";

/// What a record's message says: the text and the trailers' values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMessage {
    /// The message without Butler's trailers.
    pub text: String,
    pub issue_ids: Vec<u64>,
    /// The record id it claims, if it carries Butler's record trailer.
    pub record_id: Option<RecordId>,
    /// The task that saved it (the ImplementMaid's records).
    pub task_id: Option<TaskId>,
}

impl RecordMessage {
    /// The full text saved for a record: the message, a blank line, `Refs:` when it links
    /// issues, `Butler-Task:` when a task saves it, then `Butler-Record:`.
    pub fn compose(
        message: &str,
        issue_ids: &[u64],
        task_id: Option<&TaskId>,
        record_id: &RecordId,
    ) -> String {
        let mut text = message.trim_end().to_string();
        text.push_str("\n\n");
        if !issue_ids.is_empty() {
            let refs: Vec<String> = issue_ids.iter().map(|n| format!("#{n}")).collect();
            text.push_str(&format!("{REFS} {}\n", refs.join(", ")));
        }
        if let Some(task) = task_id {
            text.push_str(&format!("{TASK} {task}\n"));
        }
        text.push_str(&format!("{RECORD} {record_id}\n"));
        text
    }

    /// Reads a saved message back. A trailer whose value is not a valid id stays part of the
    /// text.
    pub fn parse(full: &str) -> RecordMessage {
        let mut text_lines = Vec::new();
        let mut issue_ids = Vec::new();
        let mut record_id = None;
        let mut task_id = None;
        for line in full.lines() {
            let record = line
                .strip_prefix(RECORD)
                .and_then(|v| RecordId::parse(v.trim()).ok());
            let task = line
                .strip_prefix(TASK)
                .and_then(|v| TaskId::new(v.trim()).ok());
            if let Some(id) = record {
                record_id = Some(id);
            } else if let Some(id) = task {
                task_id = Some(id);
            } else if let Some(rest) = line.strip_prefix(REFS) {
                issue_ids.extend(hash_refs(rest));
            } else {
                text_lines.push(line);
            }
        }
        let text = text_lines.join("\n").trim().to_string();
        if record_id.is_none() {
            issue_ids.extend(hash_refs(&text));
        }
        let mut seen = std::collections::HashSet::new();
        issue_ids.retain(|n| seen.insert(*n));
        RecordMessage {
            text,
            issue_ids,
            record_id,
            task_id,
        }
    }

    /// The first line: what lists show.
    pub fn subject(&self) -> &str {
        self.text.lines().next().unwrap_or("")
    }
}

/// `#N` references that stand as words (`#12`, `(#12)`, `fixes #12,`), not `a#1` or `#12a`.
fn hash_refs(text: &str) -> Vec<u64> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        if *b != b'#' {
            continue;
        }
        let before_ok = i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'&';
        let digits: &[u8] = {
            let rest = &bytes[i + 1..];
            let len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            &rest[..len]
        };
        let after = bytes.get(i + 1 + digits.len());
        let after_ok = after.is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_');
        if before_ok && after_ok && !digits.is_empty() && digits.len() <= 9 {
            let n: u64 = std::str::from_utf8(digits)
                .expect("ascii digits")
                .parse()
                .expect("digits");
            if n > 0 {
                found.push(n);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> RecordId {
        RecordId::parse(s).expect("record id")
    }

    #[test]
    fn compose_then_parse_round_trips() {
        let full = RecordMessage::compose(
            "Add observe\n\nLonger text",
            &[50, 123],
            None,
            &id("20260612-001"),
        );
        assert_eq!(
            full,
            "Add observe\n\nLonger text\n\nRefs: #50, #123\nButler-Record: 20260612-001\n"
        );
        let parsed = RecordMessage::parse(&full);
        assert_eq!(parsed.text, "Add observe\n\nLonger text");
        assert_eq!(parsed.issue_ids, vec![50, 123]);
        assert_eq!(parsed.record_id, Some(id("20260612-001")));
        assert_eq!(parsed.task_id, None);
        assert_eq!(parsed.subject(), "Add observe");
    }

    #[test]
    fn a_tasks_record_names_the_task_before_the_record() {
        let task = TaskId::new("t3").expect("task id");
        let full = RecordMessage::compose("Add greet\n", &[5], Some(&task), &id("20260415-002"));
        assert_eq!(
            full,
            "Add greet\n\nRefs: #5\nButler-Task: t3\nButler-Record: 20260415-002\n"
        );
        let parsed = RecordMessage::parse(&full);
        assert_eq!(parsed.text, "Add greet");
        assert_eq!(parsed.issue_ids, vec![5]);
        assert_eq!(parsed.task_id, Some(task));
        assert_eq!(parsed.record_id, Some(id("20260415-002")));
    }

    #[test]
    fn no_issue_links_writes_no_refs_line() {
        let full = RecordMessage::compose("chore", &[], None, &id("20260612-002"));
        assert!(!full.contains("Refs:"));
        assert_eq!(RecordMessage::parse(&full).issue_ids, Vec::<u64>::new());
    }

    #[test]
    fn outside_commits_link_by_hash_references() {
        let parsed = RecordMessage::parse("Fix crash (#12), see #7 and #7; not a#3, #4x or &#5");
        assert_eq!(parsed.issue_ids, vec![12, 7]);
        assert_eq!(parsed.record_id, None);
    }

    #[test]
    fn a_trailer_with_a_malformed_id_is_text() {
        let parsed = RecordMessage::parse("Fix #2\n\nButler-Record: tomorrow\nButler-Task: a/b");
        assert_eq!(parsed.record_id, None);
        assert_eq!(parsed.task_id, None);
        assert!(
            parsed.text.contains("Butler-Record: tomorrow"),
            "{}",
            parsed.text
        );
        assert_eq!(parsed.issue_ids, vec![2]);
    }
}
