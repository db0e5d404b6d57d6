//! The structured issue-body contract: a body must say why the issue is open, what
//! happens next and what blocks it, as three headed sections. The seed's Japanese headings
//! and their English equivalents are accepted, with or without the parenthesised part.

/// The contract's fields, as named in `invalid_body`'s `required_fields`.
pub const FIELDS: [&str; 3] = ["current_state", "next_action", "blocker"];

const HEADINGS: [(&str, &[&str]); 3] = [
    (
        "current_state",
        &["現在の状態", "current state", "current status", "why open"],
    ),
    (
        "next_action",
        &[
            "次にすること",
            "next action",
            "next actions",
            "next step",
            "next steps",
        ],
    ),
    (
        "blocker",
        &["ブロック要因", "blockers", "blocker", "blocked by"],
    ),
];

/// Which of the three sections is missing or empty (in contract order).
pub fn missing_sections(body: &str) -> Vec<&'static str> {
    let mut filled = [false; 3];
    let mut current: Option<usize> = None;
    for line in body.lines() {
        if let Some(heading) = heading_text(line) {
            current = HEADINGS
                .iter()
                .position(|(_, names)| names.contains(&heading.as_str()));
            continue;
        }
        if let Some(i) = current
            && !line.trim().is_empty()
        {
            filled[i] = true;
        }
    }
    FIELDS
        .iter()
        .zip(filled)
        .filter(|(_, ok)| !ok)
        .map(|(f, _)| *f)
        .collect()
}

/// A Markdown heading's text, lower-cased, without a trailing `(…)` / `（…）` part.
fn heading_text(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if hashes == 0 || hashes > 4 {
        return None;
    }
    let mut text = trimmed[hashes..].trim().to_lowercase();
    for open in ['(', '（'] {
        if let Some(i) = text.find(open) {
            text.truncate(i);
        }
    }
    Some(text.trim().trim_end_matches(':').trim().to_string())
}

/// The default body, from the three parts.
pub fn template(current_state: &str, next_action: &str, blockers: &str) -> String {
    format!(
        "## Current state (why open)\n{}\n\n## Next action\n{}\n\n## Blockers\n{}\n",
        current_state.trim(),
        next_action.trim(),
        blockers.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_japanese_headings_are_accepted() {
        let body = "## 現在の状態（なぜOpenか）\n未実装のため Open\n\n## 次にすること（Next Action）\n実装する\n\n## ブロック要因\nなし";
        assert!(missing_sections(body).is_empty());
    }

    #[test]
    fn english_headings_without_parentheses_are_accepted() {
        let body = "## Current state\nopen\n## Next action\ncode\n### Blockers:\nnone";
        assert!(missing_sections(body).is_empty());
    }

    #[test]
    fn missing_and_empty_sections_are_named() {
        assert_eq!(missing_sections("just text"), FIELDS.to_vec());
        let body = "## Current state\nopen\n## Next action\n\n## Blockers\n";
        assert_eq!(missing_sections(body), vec!["next_action", "blocker"]);
    }

    #[test]
    fn template_satisfies_the_contract() {
        assert!(missing_sections(&template("a", "b", "none")).is_empty());
    }
}
