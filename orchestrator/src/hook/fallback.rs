//! The scan used when a command cannot be parsed (syntax error, too large, too deeply nested).
//!
//! It blocks only when a de-quoted `git` word stands where a command could start: at the start
//! of the text, after a control operator (`;`, `&`, `|`, `(`, `)`, `{`, `` ` ``, `$(`, newline),
//! after a reserved word (`then`, `do`, …), after assignments, or after a wrapper word such as
//! `sudo`. The inside of quoted strings is scanned the same way (it may be a `sh -c` script), so
//! this scan errs towards blocking. It is linear in the input and never recurses.

/// Reserved words after which the next word is in command position.
const RESERVED: &[&str] = &[
    "then", "do", "else", "elif", "if", "while", "until", "!", "time",
];

use super::{glob, programs, wrappers};

/// Words after which any later word of the same command may be the command that runs: the
/// wrappers [`wrappers`] knows, and `find`'s exec actions.
fn is_wrapper(word: &str) -> bool {
    matches!(word, "-exec" | "-execdir" | "-ok" | "-okdir")
        || wrappers::runs_a_command(&programs::program_name(word))
}

/// The arguments after the first `git` (or `git-<sub>`) found in command position, if any.
pub fn git_in_command_position(text: &str) -> Option<Vec<String>> {
    let mut pending: Vec<String> = vec![text.to_owned()];
    let mut scanned = 0usize;
    while let Some(chunk) = pending.pop() {
        scanned += chunk.len();
        if scanned > 64 * 1024 * 1024 {
            break;
        }
        let (words, quoted) = split_words(&chunk);
        if let Some(args) = find_in_words(&words) {
            return Some(args);
        }
        pending.extend(quoted);
    }
    None
}

/// A word and whether it starts a new command (follows a control operator).
struct Word {
    text: String,
    after_operator: bool,
}

fn find_in_words(words: &[Word]) -> Option<Vec<String>> {
    let mut command_position = true;
    let mut after_wrapper = false;
    for (i, word) in words.iter().enumerate() {
        if word.after_operator {
            command_position = true;
            after_wrapper = false;
        }
        if after_wrapper {
            // Wrapper options and their values are not known here: every later word of the
            // same command may be the wrapped command.
            command_position = true;
        }
        if !command_position {
            continue;
        }
        // Quoting is not kept here: every `*`, `?` and `[…]` is read as a pattern.
        if let Some(args) = programs::git_prefix(&glob::pattern(&word.text)) {
            // A subcommand known only at run time is shown as `…`.
            let mut args: Vec<String> = args
                .into_iter()
                .map(|a| a.replace(wrappers::DYNAMIC, "…"))
                .collect();
            args.extend(
                words[i + 1..]
                    .iter()
                    .take_while(|w| !w.after_operator)
                    .take(64)
                    .map(|w| w.text.clone()),
            );
            return Some(args);
        }
        let is_assignment = word.text.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if is_wrapper(&word.text) {
            after_wrapper = true;
        }
        command_position = is_assignment || after_wrapper || RESERVED.contains(&word.text.as_str());
    }
    None
}

/// Split into de-quoted words; also return the contents of every quoted string, to be scanned
/// as scripts of their own.
fn split_words(text: &str) -> (Vec<Word>, Vec<String>) {
    let mut words = Vec::new();
    let mut quoted = Vec::new();
    let mut current = String::new();
    let mut has_word = false;
    let mut after_operator = true;
    let mut chars = text.chars().peekable();
    let flush =
        |words: &mut Vec<Word>, current: &mut String, has_word: &mut bool, after: &mut bool| {
            if *has_word {
                words.push(Word {
                    text: std::mem::take(current),
                    after_operator: *after,
                });
                *has_word = false;
                *after = false;
            }
        };
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let mut inner = String::new();
                while let Some(q) = chars.next() {
                    if q == c {
                        break;
                    }
                    // Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\`
                    // and a newline (`"C:\Git\git.exe"` keeps its backslashes).
                    if q == '\\' && c == '"' {
                        match chars.peek() {
                            Some('$' | '`' | '"' | '\\') => inner.extend(chars.next()),
                            Some('\n') => {
                                chars.next();
                            }
                            _ => inner.push('\\'),
                        }
                        continue;
                    }
                    inner.push(q);
                }
                current.push_str(&inner);
                has_word = true;
                quoted.push(inner);
            }
            '\\' => {
                match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => current.push(n),
                }
                has_word = true;
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                flush(&mut words, &mut current, &mut has_word, &mut after_operator);
                after_operator = true;
            }
            ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '\n' | '<' | '>' => {
                flush(&mut words, &mut current, &mut has_word, &mut after_operator);
                if !matches!(c, '<' | '>') {
                    after_operator = true;
                }
            }
            c if c.is_whitespace() => {
                flush(&mut words, &mut current, &mut has_word, &mut after_operator);
            }
            '#' if !has_word => {
                // A comment runs to the end of the line.
                for n in chars.by_ref() {
                    if n == '\n' {
                        after_operator = true;
                        break;
                    }
                }
            }
            c => {
                current.push(c);
                has_word = true;
            }
        }
    }
    flush(&mut words, &mut current, &mut has_word, &mut after_operator);
    (words, quoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(text: &str) -> Option<String> {
        git_in_command_position(text).map(|a| a.first().cloned().unwrap_or_default())
    }

    #[test]
    fn finds_git_where_a_command_starts() {
        assert_eq!(sub("cd x && git status (").as_deref(), Some("status"));
        assert_eq!(sub("g\\it log ((").as_deref(), Some("log"));
        assert_eq!(sub("sh -c 'git push' )").as_deref(), Some("push"));
        assert_eq!(sub("sudo -u x git diff ((").as_deref(), Some("diff"));
    }

    #[test]
    fn windows_paths_in_double_quotes_keep_their_backslashes() {
        assert_eq!(
            sub(r#"& "C:\Program Files\Git\cmd\git.exe" status"#).as_deref(),
            Some("status")
        );
    }

    #[test]
    fn ignores_git_as_data() {
        assert_eq!(sub("echo git status (("), None);
        assert_eq!(sub("grep -r git src ))"), None);
        assert_eq!(sub("# git status\nls"), None);
    }
}
