//! Identifiers a contract carries: the task's id, intent names, and the id of the work record
//! an attempt saved (the ledger hands them out).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ContractError;

/// A task's id, safe to use in a branch name and a directory name. The ledger allocates them
/// (`t1`, `t2`, …).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TaskId(String);

impl TaskId {
    /// Accepts ASCII letters, digits, `-` and `_`, 1 to 64 characters, not starting with `-`.
    pub fn new(id: impl Into<String>) -> Result<Self, ContractError> {
        let id = id.into();
        let ok = !id.is_empty()
            && id.len() <= 64
            && !id.starts_with('-')
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(Self(id))
        } else {
            Err(ContractError::BadTaskId(id))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The branch an implementation task works on: `butler/task-<id>`.
    pub fn branch(&self) -> String {
        format!("butler/task-{}", self.0)
    }
}

impl TryFrom<String> for TaskId {
    type Error = ContractError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<TaskId> for String {
    fn from(value: TaskId) -> Self {
        value.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name of an intent or of an operation that needs approval: lower-case ASCII letters,
/// digits and `_`, starting with a letter, 1 to 64 characters (`implement`, `git_push`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IntentName(String);

impl IntentName {
    pub fn new(name: impl Into<String>) -> Result<Self, ContractError> {
        let name = name.into();
        let ok = name.len() <= 64
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if ok {
            Ok(Self(name))
        } else {
            Err(ContractError::BadIntent(name.chars().take(80).collect()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for IntentName {
    type Error = ContractError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<IntentName> for String {
    fn from(value: IntentName) -> Self {
        value.0
    }
}

impl fmt::Display for IntentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of a work record: the local date of creation, a daily sequence of at least three
/// digits, and the mark of the clone whose ledger handed it out (`20260612-001-kqrt`, …,
/// `20260612-1000-kqrt`). Ids written before clones were marked have no mark
/// (`20260612-001`); they still name their records.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RecordId(String);

/// A string that is not a record id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a record id (expected the form `20260612-001-kqrt`)")]
pub struct RecordIdError(String);

/// The shortest and longest clone mark a record id may carry (Butler makes them four long).
const MARK_LEN: std::ops::RangeInclusive<usize> = 2..=8;

impl RecordId {
    /// Checks the form `^\d{8}-\d{3,18}(-[a-z]{2,8})?$`.
    pub fn parse(s: &str) -> Result<RecordId, RecordIdError> {
        let bad = || RecordIdError(s.chars().take(40).collect());
        let mut parts = s.split('-');
        let (day, seq, mark) = (parts.next(), parts.next(), parts.next());
        let (Some(day), Some(seq), None) = (day, seq, parts.next()) else {
            return Err(bad());
        };
        let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
        if day.len() != 8 || !digits(day) || seq.len() < 3 || seq.len() > 18 || !digits(seq) {
            return Err(bad());
        }
        if let Some(mark) = mark
            && !(MARK_LEN.contains(&mark.len()) && mark.bytes().all(|b| b.is_ascii_lowercase()))
        {
            return Err(bad());
        }
        Ok(RecordId(s.to_string()))
    }

    /// The id the ledger hands out: `day`, `seq` (three digits at least), `mark`.
    pub(crate) fn new(day: &str, seq: u64, mark: &str) -> RecordId {
        RecordId(format!("{day}-{seq:03}-{mark}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `YYYYMMDD`.
    pub fn day(&self) -> &str {
        &self.0[..8]
    }

    /// The daily sequence number.
    pub(crate) fn seq(&self) -> u64 {
        self.seq_text()
            .parse()
            .expect("validated digits, at most 18")
    }

    fn seq_text(&self) -> &str {
        self.0[9..].split('-').next().expect("validated form")
    }

    /// The mark of the clone that handed it out; `""` for an id without one.
    pub fn mark(&self) -> &str {
        self.0[9..].split('-').nth(1).unwrap_or("")
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for RecordId {
    type Err = RecordIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RecordId::parse(s)
    }
}

impl TryFrom<String> for RecordId {
    type Error = RecordIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        RecordId::parse(&s)
    }
}

impl From<RecordId> for String {
    fn from(id: RecordId) -> String {
        id.0
    }
}

/// By day, then by sequence number (so `-1000` comes after `-999`), then by clone mark.
impl Ord for RecordId {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.day(), self.seq(), self.mark(), &self.0).cmp(&(
            other.day(),
            other.seq(),
            other.mark(),
            &other.0,
        ))
    }
}

impl PartialOrd for RecordId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_branch_safe() {
        assert!(TaskId::new("20260415-001").is_ok());
        assert_eq!(TaskId::new("t3").expect("valid").branch(), "butler/task-t3");
        for bad in ["", "a b", "../x", "-x", "a/b", "x~1"] {
            assert!(TaskId::new(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<TaskId>("\"a/b\"").is_err());
    }

    #[test]
    fn intent_names_are_snake_case_words() {
        for good in ["implement", "git_push", "collect_logs2"] {
            assert!(IntentName::new(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Git_push",
            "git-push",
            "_x",
            "1x",
            "a b",
            &"x".repeat(65),
        ] {
            assert!(IntentName::new(bad).is_err(), "{bad}");
        }
    }

    fn parsed(s: &str) -> RecordId {
        RecordId::parse(s).expect("a record id")
    }

    #[test]
    fn record_ids_validate_their_form() {
        for good in [
            "20260612-001",
            "20260612-1000",
            "00000000-000",
            "20260612-001-kqrt",
        ] {
            assert_eq!(parsed(good).as_str(), good);
        }
        let marked = parsed("20260612-012-kqrt");
        assert_eq!(
            (marked.day(), marked.seq(), marked.mark()),
            ("20260612", 12, "kqrt")
        );
        assert_eq!(parsed("20260612-012").mark(), "");
        for bad in [
            "",
            "20260612",
            "20260612-01",
            "2026061-001",
            "20260612_001",
            "20260612-00a",
            "x20260612-001",
            "20260612-001-",
            "20260612-001-k",
            "20260612-001-KQRT",
            "20260612-001-kqrt-x",
            "20260612-001-kq1t",
            "20260612-001-abcdefghi",
        ] {
            assert!(RecordId::parse(bad).is_err(), "{bad}");
        }
        let json = serde_json::to_string(&parsed("20260612-001")).expect("valid");
        assert_eq!(json, "\"20260612-001\"");
        assert!(serde_json::from_str::<RecordId>("\"nope\"").is_err());
        assert_eq!(
            serde_json::from_str::<RecordId>(&json).expect("valid"),
            parsed("20260612-001")
        );
    }
}
