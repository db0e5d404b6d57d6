//! Target signatures: how a procedure is matched to a task's target.
//!
//! A signature is the target's names, each with a value or `*` (any value), written in name
//! order: `env=staging,service=*`. A task's target matches a signature with exactly the same
//! names whose values are equal or `*`; of several matches the most specific (fewest `*`) wins.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::contract::OperationTarget;
use crate::contract::submission::{key_problem, value_problem};

/// The value that stands for any value in a taught target.
pub(crate) const ANY: &str = "*";

/// A procedure's target signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Signature(BTreeMap<String, String>);

impl Signature {
    /// The signature of exactly this target.
    pub(crate) fn exact(target: &OperationTarget) -> Signature {
        Signature(target.0.clone())
    }

    /// A taught target: names and values, where a value may be `*`. Returns the problems by
    /// name (`target.service`).
    pub(crate) fn taught(
        target: &BTreeMap<String, String>,
    ) -> Result<Signature, Vec<(String, String)>> {
        let mut problems = Vec::new();
        for (key, value) in target {
            if let Some(p) = key_problem(key) {
                problems.push((format!("target.{key}"), p));
            } else if value != ANY
                && let Some(p) = value_problem(value)
            {
                problems.push((format!("target.{key}"), p));
            }
        }
        if problems.is_empty() {
            Ok(Signature(target.clone()))
        } else {
            Err(problems)
        }
    }

    /// Reads a stored signature (`a=1,b=*`); the empty text is the empty target.
    pub(crate) fn parse(text: &str) -> Option<Signature> {
        if text.is_empty() {
            return Some(Signature(BTreeMap::new()));
        }
        let mut map = BTreeMap::new();
        for part in text.split(',') {
            let (k, v) = part.split_once('=')?;
            map.insert(unescape(k), unescape(v));
        }
        Some(Signature(map))
    }

    /// The names a target must have.
    pub(crate) fn keys(&self) -> BTreeSet<String> {
        self.0.keys().cloned().collect()
    }

    /// `target` fits: the same names, each value equal or `*`.
    pub(crate) fn matches(&self, target: &OperationTarget) -> bool {
        self.0.len() == target.0.len()
            && self
                .0
                .iter()
                .all(|(k, v)| target.0.get(k).is_some_and(|given| v == ANY || v == given))
    }

    /// How many values are pinned (more is more specific).
    pub(crate) fn pinned(&self) -> usize {
        self.0.values().filter(|v| *v != ANY).count()
    }

    /// Whether every target this one matches is matched by `wider` too.
    pub(crate) fn within(&self, wider: &Signature) -> bool {
        self.0.len() == wider.0.len()
            && self.0.iter().all(|(k, v)| {
                wider
                    .0
                    .get(k)
                    .is_some_and(|w| w == ANY || (v != ANY && w == v))
            })
    }
}

/// `,` `=` and `%` inside names and values are escaped, so a signature reads back exactly.
fn escape(text: &str) -> String {
    text.replace('%', "%25")
        .replace(',', "%2C")
        .replace('=', "%3D")
}

fn unescape(text: &str) -> String {
    text.replace("%2C", ",")
        .replace("%3D", "=")
        .replace("%25", "%")
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
            .collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(pairs: &[(&str, &str)]) -> OperationTarget {
        OperationTarget(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    fn taught(pairs: &[(&str, &str)]) -> Signature {
        Signature::taught(&target(pairs).0).expect("valid")
    }

    #[test]
    fn exact_and_wildcard_signatures_match_as_written() {
        let api = target(&[("service", "api"), ("env", "prod")]);
        assert!(Signature::exact(&api).matches(&api));
        let any_service = taught(&[("service", "*"), ("env", "prod")]);
        assert!(any_service.matches(&api));
        assert!(!any_service.matches(&target(&[("service", "api"), ("env", "dev")])));
        assert!(!any_service.matches(&target(&[("service", "api")])));
        assert_eq!(any_service.to_string(), "env=prod,service=*");
        assert_eq!(any_service.pinned(), 1);
        assert!(Signature::exact(&api).within(&any_service));
        assert!(!any_service.within(&Signature::exact(&api)));
    }

    #[test]
    fn signatures_read_back_exactly() {
        for sig in [
            taught(&[]),
            taught(&[("a", "x,y=z%"), ("b", "*")]),
            taught(&[("path", "logs/api.log")]),
        ] {
            assert_eq!(Signature::parse(&sig.to_string()), Some(sig));
        }
    }

    #[test]
    fn taught_targets_are_checked_like_submitted_ones() {
        let bad = target(&[("Service", "x"), ("host", "-rf")]);
        let problems = Signature::taught(&bad.0).expect_err("refused");
        let names: Vec<&str> = problems.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(names, ["target.Service", "target.host"]);
    }
}
