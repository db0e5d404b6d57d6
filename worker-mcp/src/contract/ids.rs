//! Identifiers a contract carries: the task's id and intent names.

use std::fmt;

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
}
