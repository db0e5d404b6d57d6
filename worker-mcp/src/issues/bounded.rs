//! Text from a tracker is bounded before anyone reads it: a title, a body or a comment larger
//! than Butler shows is cut, and the cut is said in the text itself, so every reader (the
//! Brain, `work_observe`, the Maid) sees that it is not the whole.

use super::MAX_TITLE_CHARS;

/// The most of an issue body that is kept.
pub(crate) const MAX_BODY_BYTES: usize = 32 << 10;
/// The most of one comment that is kept.
pub(crate) const MAX_COMMENT_BYTES: usize = 8 << 10;

/// A title of at most [`MAX_TITLE_CHARS`] characters, on one line; a longer one ends in a note.
pub(crate) fn bound_title(title: String) -> String {
    let one_line = !title.contains(['\n', '\r']);
    if one_line && title.chars().count() <= MAX_TITLE_CHARS {
        return title;
    }
    const NOTE: &str = "… (title cut by Butler)";
    let keep = MAX_TITLE_CHARS - NOTE.chars().count();
    let mut out: String = title
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .take(keep)
        .collect();
    out.push_str(NOTE);
    out
}

/// `text` if it has at most `max` bytes; else its start (cut at a line end when one is near)
/// followed by a note saying how much was left out.
pub(crate) fn bound_text(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(nl) = text[..end].rfind('\n')
        && nl >= end - end / 4
    {
        end = nl;
    }
    format!(
        "{}\n\n[Butler cut this text here: it has {} bytes and only the first {end} are shown.]",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_kept_whole() {
        assert_eq!(bound_title("Fix it".into()), "Fix it");
        assert_eq!(bound_text("body".into(), 10), "body");
    }

    #[test]
    fn long_titles_are_cut_with_a_note() {
        let cut = bound_title("作".repeat(1000));
        assert_eq!(cut.chars().count(), MAX_TITLE_CHARS);
        assert!(cut.ends_with("(title cut by Butler)"));
        assert!(!bound_title("two\nlines".into()).contains('\n'));
    }

    #[test]
    fn long_texts_are_cut_at_a_line_with_a_note() {
        let text = "line\n".repeat(1000);
        let cut = bound_text(text, 1000);
        assert!(cut.starts_with("line\nline"));
        assert!(
            cut.contains("it has 5000 bytes and only the first 999 are shown"),
            "{cut}"
        );
        let multibyte = bound_text("é".repeat(100), 11);
        assert!(multibyte.starts_with("ééééé\n"), "{multibyte}");
    }
}
