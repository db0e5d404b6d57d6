//! The secret scanner: finds credentials in text that is about to leave the user's machine
//! (a record, a publication, an issue, a comment) and names the rule that matched — never the
//! secret, nor any part of it.
//!
//! The rules are Butler's own, written from the issuers' documented token formats (see
//! [`Rule`]): no maintained Rust library of gitleaks-style rules builds with this project's
//! toolchain without pulling in a whole scanner application, and a fixed set of prefix rules
//! found in one Aho-Corasick pass is fast on a large change and rarely wrong. Two heuristic
//! rules (secret-named settings with a generated-looking value, passwords in URLs) guard
//! against placeholders, paths and code. Butler's own tracker token is matched exactly.
//!
//! The scanner reads only what it is given: callers pass the lines a change adds (see
//! `GitRepo::unrecorded_additions`), so an unchanged line already in history is not reported
//! again.

mod assignment;
mod change;
mod names;
mod rule;
mod tokens;
mod value;

use aho_corasick::AhoCorasick;

pub use change::{ChangeScan, FileFinding, MAX_FILE_BYTES, scan_commit, scan_unrecorded};
pub(crate) use names::credential_file_name;
pub use rule::Rule;

use crate::config::Secret;

/// A rule that matched, and the 1-based line of the scanned text (or file) where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Hit {
    pub rule: Rule,
    pub line: usize,
}

/// Secrets Butler holds itself (the tracker token), to be refused wherever they appear.
#[derive(Clone, Default)]
pub struct KnownSecrets {
    matcher: Option<AhoCorasick>,
}

/// Shorter values are not searched for: they would match ordinary text.
const MIN_KNOWN_SECRET: usize = 8;

impl KnownSecrets {
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        let values: Vec<&str> = secrets
            .into_iter()
            .map(Secret::expose)
            .filter(|s| s.len() >= MIN_KNOWN_SECRET)
            .collect();
        let matcher = (!values.is_empty())
            .then(|| AhoCorasick::new(values).ok())
            .flatten();
        Self { matcher }
    }

    fn found_in(&self, line: &[u8]) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_match(line))
    }
}

impl std::fmt::Debug for KnownSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KnownSecrets(<redacted>)")
    }
}

/// Scans numbered lines (for a change: the lines it adds, numbered as in the new file). Each
/// rule is reported once, at its first line.
pub(crate) fn scan_lines(lines: &[(usize, &str)], known: &KnownSecrets) -> Vec<Hit> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut rules = Vec::new();
    for (i, &(number, line)) in lines.iter().enumerate() {
        let bytes = line.as_bytes();
        rules.clear();
        if known.found_in(bytes) {
            rules.push(Rule::ButlerTrackerToken);
        }
        if line.contains("-----BEGIN") && private_key_block(&lines[i..]) {
            rules.push(Rule::PrivateKey);
        }
        tokens::scan_line(bytes, &mut rules);
        if assignment::has_secret_assignment(bytes) {
            rules.push(Rule::SecretAssignment);
        }
        for &rule in &rules {
            if !hits.iter().any(|h| h.rule == rule) {
                hits.push(Hit { rule, line: number });
            }
        }
    }
    hits
}

/// Scans a whole text (a message, an issue body), lines numbered from 1.
pub fn scan_text(text: &str, known: &KnownSecrets) -> Vec<Hit> {
    let lines: Vec<(usize, &str)> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    scan_lines(&lines, known)
}

/// Key material needed after a private-key header: this much base64 at least.
const MIN_KEY_MATERIAL: usize = 64;
/// Lines after the header that are looked at.
const KEY_LOOKAHEAD: usize = 8;

/// `lines[0]` has `-----BEGIN … PRIVATE KEY-----` (or `… PRIVATE KEY BLOCK-----`) followed by
/// key material: on the same line (a JSON string with `\n` escapes) or on the next
/// consecutive lines (PEM headers such as `Proc-Type:` may come first).
fn private_key_block(lines: &[(usize, &str)]) -> bool {
    let (first_number, first) = lines[0];
    let Some(begin) = first.find("-----BEGIN") else {
        return false;
    };
    let header = &first[begin + 10..];
    let Some(end) = header.find("-----") else {
        return false;
    };
    if end > 60 || !header[..end].contains("PRIVATE KEY") {
        return false;
    }
    let mut material = Vec::new();
    collect_base64(&header[end + 5..], &mut material);
    let following = lines.iter().skip(1).take(KEY_LOOKAHEAD);
    for (expected, &(number, line)) in (first_number + 1..).zip(following) {
        if material.len() >= MIN_KEY_MATERIAL || number != expected {
            break;
        }
        let trimmed = line
            .trim()
            .trim_matches(|c| matches!(c, '"' | '\'' | ',' | '+'));
        if trimmed.contains("-----END") {
            break;
        }
        if trimmed.is_empty() || trimmed.contains(':') {
            continue;
        }
        if !collect_base64(trimmed, &mut material) {
            break;
        }
    }
    material.len() >= MIN_KEY_MATERIAL && value::looks_generated(&material)
}

/// Appends the base64 characters at the start of `text` (skipping `\n`/`\r` escapes) to
/// `out`; true when the whole text was key material.
fn collect_base64(text: &str, out: &mut Vec<u8>) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if matches!(bytes.get(i + 1), Some(b'n' | b'r')) => i += 2,
            b if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=') => {
                out.push(b);
                i += 1;
            }
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests;
