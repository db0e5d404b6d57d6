//! Which git command lines the line tools replace, for the hook's guidance and `work_vcs`'s
//! `use_proper_tool`: only the uses a line tool really covers — starting a line, switching to a named line, merging one named line plainly.
//! Everything else (`switch --detach`, `merge --abort`, `checkout -- file`, …) stays with
//! `work_vcs`.

use butler_worker::git::check_line_name;

use crate::tool::Tool;

/// Options that change nothing about what a switch or merge means.
fn quiet(arg: &str) -> bool {
    matches!(arg, "-q" | "--quiet")
}

/// `rest` without a final `--` (no paths follow: `work_vcs` writes its canonical form so)
/// and without the options that change nothing.
fn words_of(rest: &[String]) -> Vec<&str> {
    let end = match rest.last() {
        Some(last) if last == "--" => rest.len() - 1,
        _ => rest.len(),
    };
    rest[..end]
        .iter()
        .map(String::as_str)
        .filter(|a| !quiet(a))
        .collect()
}

/// A word git would take as a line name rather than a path or a special form.
fn line_word(arg: &str) -> bool {
    !arg.starts_with('-') && arg != "." && check_line_name(arg).is_ok()
}

/// `switch -c NAME [START]`, `checkout -b NAME [START]`: starting a line (and nothing else).
pub fn covers_new(sub: &str, rest: &[String]) -> bool {
    let create: &[&str] = match sub {
        "switch" => &["-c", "--create"],
        "checkout" => &["-b"],
        _ => return false,
    };
    let args = words_of(rest);
    match args.as_slice() {
        [flag, name] => create.contains(flag) && line_word(name),
        [flag, name, start] => create.contains(flag) && line_word(name) && !start.starts_with('-'),
        _ => false,
    }
}

/// `switch NAME`, `checkout NAME` (one name that does not look like a file): switching lines.
pub fn covers_switch(sub: &str, rest: &[String]) -> bool {
    if !matches!(sub, "switch" | "checkout") {
        return false;
    }
    let args = words_of(rest);
    match args.as_slice() {
        // `checkout a.rs` restores a file: a name with a dot in its last part is left to
        // work_vcs, where restoring files goes through approval.
        [name] if sub == "checkout" => {
            line_word(name) && !name.rsplit('/').next().unwrap_or(name).contains('.')
        }
        [name] => line_word(name),
        _ => false,
    }
}

/// `merge NAME` with at most options that do not change the result's content.
pub fn covers_merge(sub: &str, rest: &[String]) -> bool {
    const HARMLESS: &[&str] = &[
        "-q",
        "--quiet",
        "-v",
        "--verbose",
        "--no-edit",
        "--ff",
        "--no-ff",
        "--stat",
        "--no-stat",
        "-n",
    ];
    if sub != "merge" {
        return false;
    }
    let (options, names): (Vec<&str>, Vec<&str>) =
        words_of(rest).into_iter().partition(|a| a.starts_with('-'));
    options.iter().all(|o| HARMLESS.contains(o))
        && matches!(names.as_slice(), [name] if !name.contains("..") && *name != "-")
}

/// The parameters of the line tool call that replaces `git <sub> <rest>`, for the hook's
/// and `work_vcs`'s guidance (`work_switch_line(name="main")`).
pub fn suggested_params(tool: Tool, rest: &[String]) -> Vec<(&'static str, String)> {
    let words: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let quote = |s: &str| serde_json::to_string(s).expect("a string serializes");
    match (tool, words.as_slice()) {
        (Tool::WorkNewLine, [name]) => vec![("name", quote(name))],
        (Tool::WorkNewLine, [name, from]) => vec![("name", quote(name)), ("from", quote(from))],
        (Tool::WorkSwitchLine | Tool::WorkMergeLine, [name]) => vec![("name", quote(name))],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn new_line_covers_creating_a_line_only() {
        assert!(covers_new("switch", &words("-c topic")));
        assert!(covers_new("switch", &words("--create topic main")));
        assert!(covers_new("checkout", &words("-b topic")));
        assert!(covers_new("checkout", &words("-q -b topic v1.0")));
        for (sub, rest) in [
            ("switch", "-C topic"),
            ("switch", "-c"),
            ("switch", "-c topic main extra"),
            ("switch", "-c -x"),
            ("checkout", "-B topic"),
            ("checkout", "-b topic -- a.rs"),
            ("switch", "topic"),
            ("checkout", "-b butler/task-t1"),
        ] {
            assert!(!covers_new(sub, &words(rest)), "{sub} {rest}");
        }
    }

    #[test]
    fn switch_line_covers_switching_to_a_named_line_only() {
        assert!(covers_switch("switch", &words("main")));
        assert!(covers_switch("switch", &words("-q feature/x")));
        assert!(covers_switch("checkout", &words("main")));
        for (sub, rest) in [
            ("switch", "-"),
            ("switch", "--detach HEAD~1"),
            ("switch", "-f main"),
            ("switch", "--discard-changes main"),
            ("switch", "-c topic"),
            ("checkout", "src/a.rs"),
            ("checkout", "."),
            ("checkout", "-- a"),
            ("checkout", "main a.rs"),
            ("checkout", "HEAD~1"),
            ("switch", ""),
        ] {
            assert!(!covers_switch(sub, &words(rest)), "{sub} {rest}");
        }
    }

    #[test]
    fn merge_line_covers_merging_one_line_plainly() {
        assert!(covers_merge("merge", &words("topic")));
        assert!(covers_merge("merge", &words("--no-edit origin/main")));
        for rest in [
            "--abort",
            "--continue",
            "--squash topic",
            "-s ours topic",
            "-X theirs topic",
            "--ff-only topic",
            "-m msg topic",
            "a b",
            "",
        ] {
            assert!(!covers_merge("merge", &words(rest)), "merge {rest}");
        }
    }

    #[test]
    fn suggestions_carry_the_names() {
        assert_eq!(
            suggested_params(Tool::WorkNewLine, &words("-c topic main")),
            vec![("name", "\"topic\"".into()), ("from", "\"main\"".into())]
        );
        assert_eq!(
            suggested_params(Tool::WorkSwitchLine, &words("main")),
            vec![("name", "\"main\"".into())]
        );
    }
}
