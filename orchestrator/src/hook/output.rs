//! What bash's `echo` and `printf` print, worked out before they run: their escapes
//! (`printf 'g\151t status'`, `echo -e 'g\x69t'`) and `printf`'s `%s`/`%b`/`%c`/`%d`
//! conversions with literal widths and precisions (`printf '%.3s' gitxx`). A script piped into
//! a shell, or a variable set with `printf -v`, is judged by that text. `None` where the text
//! depends on more than the words (other conversions, `*` widths).

/// Field widths above this are left to run time (the text would be mostly padding).
const MAX_WIDTH: usize = 4096;
/// Output longer than this is left to run time.
const MAX_OUTPUT: usize = 64 * 1024;

/// `echo [-neE] args…`. Escapes are taken unless `-E` says not: bash takes them with `-e` or
/// `xpg_echo`, and `sh`'s echo always, so the text that can run is the one with them taken.
pub fn echo(args: &[String]) -> Option<String> {
    let mut escapes = true;
    let mut rest = args;
    while let Some((first, after)) = rest.split_first() {
        let Some(flags) = first.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'e' => escapes = true,
                'E' => escapes = false,
                _ => {}
            }
        }
        rest = after;
    }
    let text = rest.join(" ");
    Some(if escapes {
        unescape(&text, Style::Echo).0
    } else {
        text
    })
}

/// `printf [--] format args…`: the format is used again while arguments are left.
pub fn printf(args: &[String]) -> Option<String> {
    let args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    };
    let (format, mut args) = args.split_first()?;
    let format: Vec<char> = format.chars().collect();
    let mut out = String::new();
    for _ in 0..64 {
        let before = args.len();
        if once(&format, &mut args, &mut out)? {
            return Some(out);
        }
        if out.len() > MAX_OUTPUT {
            return None;
        }
        if args.is_empty() || args.len() == before {
            return Some(out);
        }
    }
    None
}

/// One pass of the format; `Some(true)` when `\c` ended all output.
fn once(format: &[char], args: &mut &[String], out: &mut String) -> Option<bool> {
    let mut next = || -> String {
        match args.split_first() {
            Some((first, rest)) => {
                *args = rest;
                first.clone()
            }
            None => String::new(),
        }
    };
    let mut i = 0;
    while i < format.len() {
        match format[i] {
            '\\' => {
                let (text, used, stop) = escape(&format[i..], Style::Printf);
                out.push_str(&text);
                if stop {
                    return Some(true);
                }
                i += used;
            }
            '%' if format.get(i + 1) == Some(&'%') => {
                out.push('%');
                i += 2;
            }
            '%' => {
                let mut j = i + 1;
                while format.get(j).is_some_and(|c| "-+ #0".contains(*c)) {
                    j += 1;
                }
                let number = |j: &mut usize| -> Option<usize> {
                    let start = *j;
                    while format.get(*j).is_some_and(char::is_ascii_digit) {
                        *j += 1;
                    }
                    (start < *j)
                        .then(|| format[start..*j].iter().collect::<String>().parse().ok())?
                };
                let width = number(&mut j).unwrap_or(0);
                if width > MAX_WIDTH {
                    return None;
                }
                let precision = if format.get(j) == Some(&'.') {
                    j += 1;
                    Some(number(&mut j).unwrap_or(0))
                } else {
                    None
                };
                let left = format[i + 1..j].contains(&'-');
                let text = match format.get(j)? {
                    's' => next(),
                    'b' => {
                        let (text, stop) = unescape(&next(), Style::Echo);
                        if stop {
                            out.push_str(&text);
                            return Some(true);
                        }
                        text
                    }
                    'c' => next().chars().take(1).collect(),
                    'd' | 'i' | 'u' => {
                        let arg = next();
                        let arg = arg.trim();
                        if arg.is_empty() {
                            "0".to_owned()
                        } else {
                            arg.parse::<i64>().ok()?.to_string()
                        }
                    }
                    _ => return None,
                };
                let text: String = match precision {
                    Some(p) if matches!(format[j], 's' | 'b') => text.chars().take(p).collect(),
                    _ => text,
                };
                let pad = " ".repeat(width.saturating_sub(text.chars().count()));
                if left {
                    out.push_str(&text);
                    out.push_str(&pad);
                } else {
                    out.push_str(&pad);
                    out.push_str(&text);
                }
                if out.len() > MAX_OUTPUT {
                    return None;
                }
                i = j + 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Some(false)
}

/// Which escapes: `echo -e` and `%b` (`\0nnn`), or a `printf` format (`\nnn`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Echo,
    Printf,
}

/// Text with its escapes taken; `true` when `\c` ended it.
fn unescape(text: &str, style: Style) -> (String, bool) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let (piece, used, stop) = escape(&chars[i..], style);
        out.push_str(&piece);
        if stop {
            return (out, true);
        }
        i += used;
    }
    (out, false)
}

/// The escape at the start of `chars` (which begin with `\`): what it stands for, how many
/// characters it takes, and whether it is `\c`.
fn escape(chars: &[char], style: Style) -> (String, usize, bool) {
    let Some(&c) = chars.get(1) else {
        return ("\\".to_owned(), 1, false);
    };
    let simple = |s: &str| (s.to_owned(), 2, false);
    match c {
        'n' => simple("\n"),
        't' => simple("\t"),
        'r' => simple("\r"),
        'a' => simple("\u{7}"),
        'b' => simple("\u{8}"),
        'e' | 'E' => simple("\u{1b}"),
        'f' => simple("\u{c}"),
        'v' => simple("\u{b}"),
        '\\' => simple("\\"),
        '"' if style == Style::Printf => simple("\""),
        '\'' if style == Style::Printf => simple("'"),
        'c' => (String::new(), 2, true),
        'x' => radix(chars, 2, 2, 16).unwrap_or_else(|| simple("\\x")),
        'u' => radix(chars, 2, 4, 16).unwrap_or_else(|| simple("\\u")),
        'U' => radix(chars, 2, 8, 16).unwrap_or_else(|| simple("\\U")),
        '0' if style == Style::Echo => radix(chars, 2, 3, 8).unwrap_or(("\0".to_owned(), 2, false)),
        '0'..='7' if style == Style::Printf => {
            radix(chars, 1, 3, 8).unwrap_or_else(|| simple("\\"))
        }
        other => (format!("\\{other}"), 2, false),
    }
}

/// Up to `max` digits of `radix` from `chars[from..]`, as one character.
fn radix(chars: &[char], from: usize, max: usize, radix: u32) -> Option<(String, usize, bool)> {
    let digits: String = chars
        .iter()
        .skip(from)
        .take(max)
        .take_while(|c| c.is_digit(radix))
        .collect();
    if digits.is_empty() {
        return None;
    }
    let code = u32::from_str_radix(&digits, radix).ok()?;
    let c = char::from_u32(code)?;
    Some((c.to_string(), from + digits.chars().count(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn printf_prints_as_bash_does() {
        for (args, printed) in [
            (&["g\\151t status"][..], "git status"),
            (&["%s%s status", "g", "it"], "git status"),
            (&["%.3s status", "gitxx"], "git status"),
            (&["%s\\n", "a", "b"], "a\nb\n"),
            (&["g\\x69t"], "git"),
            (&["%b", "g\\0151t"], "git"),
            (&["%c%c%c", "go", "it", "to"], "git"),
            (&["--", "%5s|%-3s|", "ab", "c"], "   ab|c  |"),
            (&["100%%"], "100%"),
            (&["a\\cb"], "a"),
        ] {
            assert_eq!(printf(&words(args)).as_deref(), Some(printed), "{args:?}");
        }
        assert_eq!(printf(&words(&["%f", "1"])), None);
        assert_eq!(printf(&words(&["%99999999s", "x"])), None);
        let many: Vec<String> = std::iter::once("%4096s".to_owned())
            .chain((0..100).map(|_| "a".to_owned()))
            .collect();
        assert_eq!(printf(&many), None);
        // A backslash before a character of more than one byte.
        assert_eq!(printf(&words(&["\\é%b", "\\€"])).as_deref(), Some("\\é\\€"));
        assert_eq!(echo(&words(&["5\\€"])).as_deref(), Some("5\\€"));
    }

    #[test]
    fn echo_prints_as_bash_does() {
        assert_eq!(
            echo(&words(&["git", "status"])).as_deref(),
            Some("git status")
        );
        assert_eq!(echo(&words(&["-e", "g\\x69t"])).as_deref(), Some("git"));
        assert_eq!(echo(&words(&["-ne", "g\\0151t"])).as_deref(), Some("git"));
        assert_eq!(echo(&words(&["g\\x69t"])).as_deref(), Some("git"));
        assert_eq!(echo(&words(&["-eE", "a\\tb"])).as_deref(), Some("a\\tb"));
        assert_eq!(echo(&words(&["-E", "g\\x69t"])).as_deref(), Some("g\\x69t"));
        assert_eq!(echo(&words(&["-x", "a"])).as_deref(), Some("-x a"));
    }
}
