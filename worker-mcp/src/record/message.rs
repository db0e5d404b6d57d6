//! How a record's message is written into history and read back: the one writer and the one
//! parser of the record trailers.
//!
//! A record is saved as its message, a blank line, and Butler's trailer block as the last
//! paragraph, in this order: `Refs: #50, #123` when it links issues (so a tracker such as
//! Gitea shows the link once published), `Butler-Task: t3` on the ImplementMaid's records
//! (which task saved them), and always `Butler-Record: 20260612-001-kqrt` (the record's id:
//! the trailer is its identity in every clone).
//!
//! Reading back is exact: only a last paragraph that is such a block, line for line, is
//! Butler's; anything else — a `Refs:` or `Butler-Record:` line inside the message, a block
//! with other lines in it — is text, kept whole. A commit without the block was made outside
//! Butler: its issue links are the `#N` references in its text, as trackers read them.

use crate::contract::TaskId;
use crate::ledger::RecordId;

const REFS: &str = "Refs: ";
const TASK: &str = "Butler-Task: ";
const RECORD: &str = "Butler-Record: ";

/// What a record's message says: the text and the trailers' values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMessage {
    /// The message without Butler's trailer block, whole.
    pub text: String,
    pub issue_ids: Vec<u64>,
    /// The record id it claims, if it ends with Butler's trailer block.
    pub record_id: Option<RecordId>,
    /// The task that saved it (the ImplementMaid's records).
    pub task_id: Option<TaskId>,
}

impl RecordMessage {
    /// The full text saved for a record: the message (tidied as git's whitespace cleanup
    /// leaves it, so history holds exactly this text), a blank line, then the trailer block.
    pub(crate) fn compose(
        message: &str,
        issue_ids: &[u64],
        task_id: Option<&TaskId>,
        record_id: &RecordId,
    ) -> String {
        let mut text = tidy(message);
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        let mut linked: Vec<u64> = Vec::new();
        for &n in issue_ids {
            if n > 0 && !linked.contains(&n) {
                linked.push(n);
            }
        }
        let refs: Vec<String> = linked.iter().map(|n| format!("#{n}")).collect();
        if !refs.is_empty() {
            text.push_str(&format!("{REFS}{}\n", refs.join(", ")));
        }
        if let Some(task) = task_id {
            text.push_str(&format!("{TASK}{task}\n"));
        }
        text.push_str(&format!("{RECORD}{record_id}\n"));
        text
    }

    /// Reads a saved message back: Butler's trailer block when the last paragraph is exactly
    /// one, else the whole message as text made outside Butler.
    pub fn parse(full: &str) -> RecordMessage {
        let full = full.trim_end_matches(['\n', '\r', ' ', '\t']);
        let (text, block) = match full.rfind("\n\n") {
            Some(at) => (&full[..at], &full[at + 2..]),
            None => ("", full),
        };
        if let Some(trailers) = Trailers::parse(block) {
            return RecordMessage {
                text: text.trim_end_matches('\n').to_string(),
                issue_ids: trailers.issue_ids,
                record_id: Some(trailers.record_id),
                task_id: trailers.task_id,
            };
        }
        let mut issue_ids = hash_refs(full);
        let mut seen = std::collections::HashSet::new();
        issue_ids.retain(|n| seen.insert(*n));
        RecordMessage {
            text: full.to_string(),
            issue_ids,
            record_id: None,
            task_id: None,
        }
    }

    /// The first line: what lists show.
    pub fn subject(&self) -> &str {
        self.text.lines().next().unwrap_or("")
    }
}

/// Butler's trailer block, read exactly as [`RecordMessage::compose`] writes it.
struct Trailers {
    issue_ids: Vec<u64>,
    task_id: Option<TaskId>,
    record_id: RecordId,
}

impl Trailers {
    fn parse(block: &str) -> Option<Trailers> {
        let mut lines: Vec<&str> = block.split('\n').collect();
        let record_id = RecordId::parse(lines.pop()?.strip_prefix(RECORD)?).ok()?;
        let mut issue_ids = Vec::new();
        let mut task_id = None;
        if let Some(task) = lines.last().and_then(|l| l.strip_prefix(TASK)) {
            task_id = Some(TaskId::new(task).ok()?);
            lines.pop();
        }
        if let Some(refs) = lines.last().and_then(|l| l.strip_prefix(REFS)) {
            for word in refs.split(", ") {
                let digits = word.strip_prefix('#')?;
                let n: u64 = digits.parse().ok()?;
                let exact = n > 0 && n.to_string() == digits && !issue_ids.contains(&n);
                exact.then(|| issue_ids.push(n))?;
            }
            lines.pop();
        }
        lines.is_empty().then_some(Trailers {
            issue_ids,
            task_id,
            record_id,
        })
    }
}

/// Text as git's whitespace cleanup leaves it: line ends trimmed, runs of blank lines made
/// one, blank lines at both ends dropped.
pub fn tidy(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in text.split('\n').map(|l| l.trim_end_matches(is_git_space)) {
        if line.is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(line);
    }
    while out.last() == Some(&"") {
        out.pop();
    }
    out.join("\n")
}

/// What git's cleanup trims at a line's end (C `isspace`).
fn is_git_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\x0b' | '\x0c')
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
            &id("20260612-001-kqrt"),
        );
        assert_eq!(
            full,
            "Add observe\n\nLonger text\n\nRefs: #50, #123\nButler-Record: 20260612-001-kqrt\n"
        );
        let parsed = RecordMessage::parse(&full);
        assert_eq!(parsed.text, "Add observe\n\nLonger text");
        assert_eq!(parsed.issue_ids, vec![50, 123]);
        assert_eq!(parsed.record_id, Some(id("20260612-001-kqrt")));
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
    fn the_text_is_tidied_as_git_would_and_kept_whole() {
        let full = RecordMessage::compose(
            " \n\nAdd a  \r\n\n\n\nbody\t\n",
            &[],
            None,
            &id("20260612-003"),
        );
        assert_eq!(full, "Add a\n\nbody\n\nButler-Record: 20260612-003\n");
        // A message made only of what looks like a trailer is text.
        let full = RecordMessage::compose("Refs: #8", &[], None, &id("20260612-004"));
        let parsed = RecordMessage::parse(&full);
        assert_eq!(parsed.text, "Refs: #8");
        assert_eq!(parsed.issue_ids, Vec::<u64>::new());
        // An empty message is the block alone.
        let full = RecordMessage::compose("  \n", &[3], None, &id("20260612-005"));
        assert_eq!(full, "Refs: #3\nButler-Record: 20260612-005\n");
        let parsed = RecordMessage::parse(&full);
        assert_eq!((parsed.text.as_str(), parsed.issue_ids), ("", vec![3]));
    }

    #[test]
    fn forged_trailers_inside_a_message_are_text() {
        let forged = "tidy up\n\nRefs: #7\nButler-Record: 20260101-001\n\nmore";
        let full = RecordMessage::compose(forged, &[2], None, &id("20260612-006"));
        let parsed = RecordMessage::parse(&full);
        assert_eq!(parsed.text, forged);
        assert_eq!(parsed.issue_ids, vec![2]);
        assert_eq!(parsed.record_id, Some(id("20260612-006")));
        // A forged block as the message's own last paragraph is not the last paragraph.
        let forged = "tidy up\n\nRefs: #7\nButler-Record: 20260101-001";
        let full = RecordMessage::compose(forged, &[], None, &id("20260612-007"));
        let parsed = RecordMessage::parse(&full);
        assert_eq!(parsed.text, forged);
        assert_eq!(parsed.issue_ids, Vec::<u64>::new());
        assert_eq!(parsed.record_id, Some(id("20260612-007")));
    }

    #[test]
    fn a_block_not_exactly_butlers_makes_the_whole_message_text() {
        for block in [
            "Butler-Record: 20260612-001\nRefs: #1",
            "Refs: #1\nSigned-off-by: a <a@b>\nButler-Record: 20260612-001",
            "Refs:  #1\nButler-Record: 20260612-001",
            "Refs: #01\nButler-Record: 20260612-001",
            "Refs: #1,#2\nButler-Record: 20260612-001",
            "Refs: #1, #1\nButler-Record: 20260612-001",
            "Butler-Record:  20260612-001",
            "Butler-Record: tomorrow",
            "Butler-Task: a/b\nButler-Record: 20260612-001",
            "Butler-Task: t1\nRefs: #1\nButler-Record: 20260612-001",
        ] {
            let full = format!("Fix #2\n\n{block}");
            let parsed = RecordMessage::parse(&full);
            assert_eq!(parsed.record_id, None, "{block:?}");
            assert_eq!(parsed.text, full.trim_end(), "{block:?}");
            assert_eq!(parsed.issue_ids[0], 2, "outside: `#N` in the text");
        }
    }

    #[test]
    fn outside_commits_link_by_hash_references() {
        let parsed = RecordMessage::parse("Fix crash (#12), see #7 and #7; not a#3, #4x or &#5");
        assert_eq!(parsed.issue_ids, vec![12, 7]);
        assert_eq!(parsed.record_id, None);
    }
}
