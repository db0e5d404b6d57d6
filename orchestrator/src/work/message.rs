//! How a record's message is written into history and read back.
//!
//! A record is saved with the Brain's message followed by trailers:
//! `Refs: #50, #123` (so a tracker such as Gitea shows the link on the issue once published)
//! and `Butler-Record: 20260612-001` (so the record is recognised as Butler's even if the
//! ledger lost track of it). Commits made outside Butler carry no trailer: their issue links
//! are read from `#N` references in the text.

const REFS: &str = "Refs:";
const RECORD: &str = "Butler-Record:";
/// Written by the ImplementMaid on its records: which task saved them.
const TASK: &str = "Butler-Task:";

/// The full text saved for a record.
pub fn compose(message: &str, issue_ids: &[u64], record_id: &str) -> String {
    let mut text = message.trim_end().to_string();
    text.push_str("\n\n");
    if !issue_ids.is_empty() {
        let refs: Vec<String> = issue_ids.iter().map(|n| format!("#{n}")).collect();
        text.push_str(&format!("{REFS} {}\n", refs.join(", ")));
    }
    text.push_str(&format!("{RECORD} {record_id}\n"));
    text
}

/// What Butler reads back from a saved message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The message without Butler's trailers.
    pub text: String,
    pub issue_ids: Vec<u64>,
    pub record_id: Option<String>,
}

impl Parsed {
    /// The first line: what lists show.
    pub fn subject(&self) -> &str {
        self.text.lines().next().unwrap_or("")
    }
}

pub fn parse(full: &str) -> Parsed {
    let mut text_lines = Vec::new();
    let mut issue_ids = Vec::new();
    let mut record_id = None;
    for line in full.lines() {
        if let Some(rest) = line.strip_prefix(RECORD) {
            record_id = Some(rest.trim().to_string());
        } else if line.starts_with(TASK) {
            continue;
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
    Parsed {
        text,
        issue_ids,
        record_id,
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

    #[test]
    fn compose_then_parse_round_trips() {
        let full = compose("Add observe\n\nLonger text", &[50, 123], "20260612-001");
        let parsed = parse(&full);
        assert_eq!(parsed.text, "Add observe\n\nLonger text");
        assert_eq!(parsed.issue_ids, vec![50, 123]);
        assert_eq!(parsed.record_id.as_deref(), Some("20260612-001"));
        assert_eq!(parsed.subject(), "Add observe");
    }

    #[test]
    fn the_maids_task_trailer_is_not_part_of_the_message() {
        let parsed =
            parse("Implement x\n\nRefs: #4\nButler-Task: t1\nButler-Record: 20260612-003\n");
        assert_eq!(parsed.text, "Implement x");
        assert_eq!(parsed.issue_ids, vec![4]);
    }

    #[test]
    fn no_issue_links_writes_no_refs_line() {
        let full = compose("chore", &[], "20260612-002");
        assert!(!full.contains("Refs:"));
        assert_eq!(parse(&full).issue_ids, Vec::<u64>::new());
    }

    #[test]
    fn outside_commits_link_by_hash_references() {
        let parsed = parse("Fix crash (#12), see #7 and #7; not a#3, #4x or &#5");
        assert_eq!(parsed.issue_ids, vec![12, 7]);
        assert_eq!(parsed.record_id, None);
    }
}
