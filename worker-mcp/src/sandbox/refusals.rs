//! Finds refused accesses in a command's output: lines with a permission error (`Permission
//! denied`, `Operation not permitted`, `Read-only file system`, or the errno names), with the
//! path or `host:port` they name. Output is the agent's own account, so this is evidence of
//! what it tried, not proof: the kernel refused it either way.

use super::report::{Refusal, RefusalSource};

/// Refusals kept in the evidence (the total is counted).
pub const MAX_REFUSALS: usize = 20;
/// Characters kept of a line.
const MAX_LINE: usize = 200;

const MARKERS: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "eacces",
    "eperm",
    "erofs",
];

/// The refusals in `text`, in order, each line once.
pub fn scan_refusals(text: &str, source: RefusalSource) -> Vec<Refusal> {
    let mut found: Vec<Refusal> = Vec::new();
    for line in text.lines() {
        let lower = line.to_ascii_lowercase();
        if !MARKERS.iter().any(|m| lower.contains(m)) {
            continue;
        }
        let line = line.trim();
        let refusal = Refusal {
            source,
            target: target_of(line),
            line: line.chars().take(MAX_LINE).collect(),
        };
        if !found.contains(&refusal) {
            found.push(refusal);
        }
    }
    found
}

/// The first quoted path, else the first bare path, else the first `host:port`.
fn target_of(line: &str) -> Option<String> {
    for quote in ['\'', '"', '`'] {
        let mut parts = line.split(quote);
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            if inside.contains('/') && !inside.contains(char::is_whitespace) {
                return Some(inside.to_owned());
            }
        }
    }
    let tokens: Vec<&str> = line
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| matches!(c, ':' | ',' | ';' | '(' | ')' | '[' | ']')))
        .collect();
    if let Some(path) = tokens.iter().find(|t| {
        t.starts_with('/') || t.starts_with("./") || t.starts_with("../") || t.starts_with('~')
    }) {
        return Some((*path).to_owned());
    }
    tokens
        .iter()
        .find(|t| {
            t.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .map(|t| (*t).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(text: &str) -> Vec<Option<String>> {
        scan_refusals(text, RefusalSource::Agent)
            .into_iter()
            .map(|r| r.target)
            .collect()
    }

    #[test]
    fn paths_and_endpoints_are_taken_from_the_usual_messages() {
        let text = "\
touch: cannot touch '/home/me/.bashrc': Permission denied
sh: 1: cannot create /tmp/elsewhere/x: Permission denied
error: could not lock config file /p/.git/config: Permission denied
rm: cannot remove \"/p/.git/butler/ledger.db\": Operation not permitted
fake-agent: connect 127.0.0.1:4000: Permission denied (os error 13)
PermissionError: [Errno 13] Permission denied
fatal: Unable to create '/p/.git/index.lock': Read-only file system
all good here
";
        assert_eq!(
            targets(text),
            vec![
                Some("/home/me/.bashrc".into()),
                Some("/tmp/elsewhere/x".into()),
                Some("/p/.git/config".into()),
                Some("/p/.git/butler/ledger.db".into()),
                Some("127.0.0.1:4000".into()),
                None,
                Some("/p/.git/index.lock".into()),
            ]
        );
    }

    #[test]
    fn lines_are_cut_and_repeated_lines_kept_once() {
        let long = format!("x: Permission denied {}\n", "y".repeat(500));
        let found = scan_refusals(&format!("{long}{long}"), RefusalSource::Verify);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].line.chars().count(), MAX_LINE);
        assert_eq!(found[0].source, RefusalSource::Verify);
    }
}
