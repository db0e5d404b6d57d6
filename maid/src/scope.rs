//! A task's scope: the target paths it may change, as files, directories or globs.
//!
//! - `README.md` — that file, or everything under it if it is a directory;
//! - `src/` — everything under `src`;
//! - `src/**/*.rs` — a glob anchored at the project root: `*` and `?` stay within one path
//!   segment, `[abc]`/`[!a-z]` are classes, `**` spans any number of segments. A path is also
//!   in scope when the glob matches one of its parent directories (`src/*` covers `src/a/b.rs`);
//! - `.` — the whole project.

/// The changed paths (relative, `/`-separated) that no target covers, in input order.
pub(crate) fn scope_violations(changed: &[String], targets: &[String]) -> Vec<String> {
    changed
        .iter()
        .filter(|path| !in_scope(path, targets))
        .cloned()
        .collect()
}

/// Whether any target covers `path`.
pub(crate) fn in_scope(path: &str, targets: &[String]) -> bool {
    targets.iter().any(|target| covers(target, path))
}

/// Whether one target covers `path`.
pub(crate) fn covers(target: &str, path: &str) -> bool {
    let path = path.trim_start_matches("./");
    if target == "." {
        return true;
    }
    let (body, dir_only) = match target.strip_suffix('/') {
        Some(body) => (body, true),
        None => (target, false),
    };
    if !body.contains(['*', '?', '[']) {
        return is_under(path, body) || (!dir_only && path == body);
    }
    let pattern: Vec<&str> = body.split('/').collect();
    let segments: Vec<&str> = path.split('/').collect();
    // A directory target covers what is beneath it, never a file of the same name.
    let longest = if dir_only {
        segments.len() - 1
    } else {
        segments.len()
    };
    (1..=longest).any(|n| match_segments(&pattern, &segments[..n]))
}

fn is_under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/'))
}

fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, path_rest)) => {
                match_segment(first.as_bytes(), segment.as_bytes())
                    && match_segments(rest, path_rest)
            }
            None => false,
        },
    }
}

/// One segment against one pattern segment (`*`, `?`, `[...]`, literals).
fn match_segment(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| match_segment(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && match_segment(rest, &text[1..]),
        Some((b'[', rest)) => match (class_end(rest), text.split_first()) {
            (Some(end), Some((c, text_rest))) => {
                class_matches(&rest[..end], *c) && match_segment(&rest[end + 1..], text_rest)
            }
            (None, Some((c, text_rest))) => *c == b'[' && match_segment(rest, text_rest),
            (_, None) => false,
        },
        Some((literal, rest)) => text.first() == Some(literal) && match_segment(rest, &text[1..]),
    }
}

/// Index of the `]` closing a class that starts right after `[` (a `]` first is a literal).
fn class_end(class: &[u8]) -> Option<usize> {
    let start = usize::from(matches!(class.first(), Some(b'!' | b'^')));
    let start = start + usize::from(class.get(start) == Some(&b']'));
    class[start..]
        .iter()
        .position(|b| *b == b']')
        .map(|i| i + start)
}

fn class_matches(class: &[u8], c: u8) -> bool {
    let (negated, body) = match class.split_first() {
        Some((b'!' | b'^', body)) => (true, body),
        _ => (false, class),
    };
    let mut i = 0;
    let mut hit = false;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == b'-' {
            hit |= (body[i]..=body[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    hit != negated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn directories_cover_everything_beneath() {
        assert!(covers("src/", "src/a.rs"));
        assert!(covers("src/", "src/deep/b.rs"));
        assert!(!covers("src/", "src"));
        assert!(!covers("src/", "srcx/a.rs"));
        assert!(!covers("src/", "tests/a.rs"));
    }

    #[test]
    fn plain_names_cover_the_file_or_the_directory() {
        assert!(covers("README.md", "README.md"));
        assert!(!covers("README.md", "README.md.bak"));
        assert!(covers("docs", "docs/x.md"));
        assert!(!covers("docs", "docsx"));
    }

    #[test]
    fn globs_stay_in_a_segment_unless_doubled() {
        assert!(covers("src/*.rs", "src/a.rs"));
        assert!(!covers("src/*.rs", "src/deep/a.rs"));
        assert!(covers("src/**/*.rs", "src/a.rs"));
        assert!(covers("src/**/*.rs", "src/x/y/a.rs"));
        assert!(!covers("src/**/*.rs", "src/x/a.txt"));
        assert!(!covers("src/**/*.rs", "lib/a.rs"));
        assert!(covers("*.md", "README.md"));
        assert!(!covers("*.md", "docs/README.md"), "anchored at the root");
        assert!(covers("**/*.md", "docs/README.md"));
        assert!(covers("src/?.rs", "src/a.rs"));
        assert!(!covers("src/?.rs", "src/ab.rs"));
    }

    #[test]
    fn a_glob_matching_a_parent_directory_covers_its_contents() {
        assert!(covers("src/*", "src/a/b.rs"));
        assert!(covers("crates/*/src/", "crates/x/src/lib.rs"));
        assert!(
            !covers("crates/*/src/", "crates/x/src"),
            "a directory target is not a file"
        );
        assert!(covers("crates/*/src", "crates/x/src/lib.rs"));
    }

    #[test]
    fn classes() {
        assert!(covers("v[0-9].txt", "v3.txt"));
        assert!(!covers("v[0-9].txt", "vx.txt"));
        assert!(covers("v[!0-9].txt", "vx.txt"));
        assert!(covers("a[]]b", "a]b"));
    }

    #[test]
    fn the_whole_project() {
        assert!(covers(".", "anything/at/all"));
    }

    #[test]
    fn violations_are_the_uncovered_paths_in_order() {
        let changed = targets(&["src/a.rs", "Cargo.toml", "README.md", "tests/t.rs"]);
        assert_eq!(
            scope_violations(&changed, &targets(&["src/", "README.md"])),
            vec!["Cargo.toml", "tests/t.rs"]
        );
        assert!(scope_violations(&changed, &targets(&["."])).is_empty());
    }
}
