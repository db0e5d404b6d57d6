//! The heuristic rule: a setting whose name says "secret" (`API_KEY=…`, `"password": "…"`,
//! `client_secret: …`, `const TOKEN: &str = "…"`) and whose value looks generated.
//!
//! Names are split into words (`_ - .`, camelCase), so `author`, `max_tokens` and `keyboard`
//! are not secret names; names ending in a word that describes the secret rather than holding
//! it (`password_hash`, `token_url`, `secret_name`) are left out; values go through
//! [`looks_secret`] (letters and digits, high entropy, not a placeholder, a path or code).

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::value::looks_secret;

/// Cheap pre-filter: a line without any of these (any case) has no secret-named setting.
const HINTS: &[&str] = &[
    "secret",
    "token",
    "passw",
    "pwd",
    "passphrase",
    "credential",
    "apikey",
    "api_key",
    "api-key",
    "accesskey",
    "access_key",
    "access-key",
    "privatekey",
    "private_key",
    "private-key",
    "signingkey",
    "signing_key",
    "encryptionkey",
    "encryption_key",
    "masterkey",
    "master_key",
    "accountkey",
    "account_key",
    "authkey",
    "auth_key",
];

/// Words that make a name secret on their own.
const SECRET_WORDS: &[&str] = &[
    "secret",
    "token",
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "credential",
    "credentials",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "accountkey",
    "authkey",
    "authtoken",
    "accesstoken",
];

/// Words that, before `key`, make a secret name (`api_key`, `accessKey`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "signing",
    "encryption",
    "master",
    "account",
    "auth",
    "client",
];

/// A last word that describes the secret instead of holding it.
const DESCRIBING_WORDS: &[&str] = &[
    "name",
    "names",
    "type",
    "url",
    "uri",
    "endpoint",
    "path",
    "file",
    "filename",
    "field",
    "id",
    "length",
    "len",
    "count",
    "max",
    "min",
    "size",
    "env",
    "var",
    "prompt",
    "label",
    "hint",
    "policy",
    "regex",
    "pattern",
    "format",
    "header",
    "prefix",
    "suffix",
    "kind",
    "mode",
    "hash",
    "digest",
    "placeholder",
    "expiry",
    "expires",
    "ttl",
    "timeout",
    "enabled",
    "required",
    "limit",
    "usage",
    "used",
    "location",
    "ref",
    "arn",
    "version",
];

/// How far right of a separator a value is looked for.
const MAX_VALUE_SCAN: usize = 1100;

fn hints() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(HINTS)
            .expect("the hint words form a valid automaton")
    })
}

/// Whether `line` assigns a generated-looking value to a secret-named setting.
pub(crate) fn has_secret_assignment(line: &[u8]) -> bool {
    if !hints().is_match(line) {
        return false;
    }
    (0..line.len())
        .filter(|&i| matches!(line[i], b'=' | b':'))
        .any(|at| assignment_at(line, at))
}

/// The setting whose separator (`=`, `:`, `:=`, `=>`, `?=`) is at `at`, if it is one.
fn assignment_at(line: &[u8], at: usize) -> bool {
    let before = at.checked_sub(1).map(|i| line[i]);
    let after = line.get(at + 1).copied();
    let sep = line[at];
    // Comparisons, paths and URLs (`==`, `!=`, `<=`, `>=`, `::`, `://`); `:=` is read at its `=`.
    let not_a_separator = match sep {
        b'=' => matches!(before, Some(b'=' | b'!' | b'<' | b'>')) || after == Some(b'='),
        _ => before == Some(b':') || matches!(after, Some(b':' | b'/' | b'=')),
    };
    if not_a_separator {
        return false;
    }
    let mut key_end = at;
    if sep == b'=' && matches!(before, Some(b'?' | b'+' | b':')) {
        key_end -= 1;
    }
    let value_start = if sep == b'=' && after == Some(b'>') {
        at + 2
    } else {
        at + 1
    };
    secret_name(&key_words(&line[..key_end], sep))
        && looks_secret(value_of(&line[value_start..]), 12)
}

/// The words of the name left of a separator: its last identifier (`API_KEY`, `"apiKey"`,
/// `$cfg['db_password']`, `export AWS_SECRET_ACCESS_KEY`), and for `=` the name a type
/// annotation belongs to (`const TOKEN: &str =`, `let api_key: String =`). Only the text after
/// the previous `, ; { ( = [` counts, at most 80 bytes.
fn key_words(left: &[u8], sep: u8) -> Vec<String> {
    let from = left.len().saturating_sub(80);
    let window = &left[from..];
    let start = window
        .iter()
        .rposition(|b| b",;{([=".contains(b))
        .map_or(0, |i| i + 1);
    let window = &window[start..];
    let mut out = Vec::new();
    if sep == b'='
        && let Some(colon) = window.iter().rposition(|&b| b == b':')
    {
        out.extend(words(last_ident(&window[..colon])));
    }
    out.extend(words(last_ident(window)));
    out
}

/// The last identifier (letters, digits, `_ - .`) in `text`.
fn last_ident(text: &[u8]) -> &[u8] {
    let is_ident = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let end = text.iter().rposition(is_ident).map_or(0, |i| i + 1);
    let begin = text[..end]
        .iter()
        .rposition(|b| !is_ident(b))
        .map_or(0, |i| i + 1);
    &text[begin..end]
}

/// The value right of a separator: a quoted string, or the unquoted run up to whitespace or
/// a closing bracket, comma or semicolon.
fn value_of(right: &[u8]) -> &[u8] {
    // No value longer than `looks_secret` accepts is looked at whole (a long line stays linear).
    let right = &right[..right.len().min(MAX_VALUE_SCAN)];
    let skip = right.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let right = &right[skip..];
    match right.first() {
        Some(&q @ (b'"' | b'\'' | b'`')) => {
            let inner = &right[1..];
            let end = inner.iter().position(|&b| b == q).unwrap_or(inner.len());
            &inner[..end]
        }
        _ => {
            let end = right
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b",;)}]".contains(&b))
                .unwrap_or(right.len());
            &right[..end]
        }
    }
}

/// Lower-case words of a name: split at non-alphanumerics and camelCase humps.
fn words(name: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev: Option<u8> = None;
    for &b in name {
        if !b.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev = None;
            continue;
        }
        let hump = b.is_ascii_uppercase() && prev.is_some_and(|p| p.is_ascii_lowercase());
        if hump && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(char::from(b.to_ascii_lowercase()));
        prev = Some(b);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn secret_name(words: &[String]) -> bool {
    let Some(last) = words.last() else {
        return false;
    };
    if DESCRIBING_WORDS.contains(&last.as_str()) {
        return false;
    }
    let single = words.iter().any(|w| SECRET_WORDS.contains(&w.as_str()));
    let pair = words
        .windows(2)
        .any(|p| p[1] == "key" && KEY_QUALIFIERS.contains(&p[0].as_str()));
    single || pair
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUE: &str = "q8Zr2kLm9Wx4Tb7Nc3Vd";

    #[test]
    fn secret_named_settings_in_many_syntaxes() {
        for line in [
            format!("API_KEY={VALUE}"),
            format!("export AWS_SECRET_ACCESS_KEY=\"{VALUE}/x+y\""),
            format!("  \"apiKey\": \"{VALUE}\","),
            format!("password: {VALUE}"),
            format!("client_secret = '{VALUE}'"),
            format!("const TOKEN: &str = \"{VALUE}\";"),
            format!("$config['db_password'] => '{VALUE}'"),
            format!("GITEA_TOKEN := {VALUE}"),
            format!("headers = {{\"X-Auth\": 1, \"accessToken\": \"{VALUE}\"}}"),
        ] {
            assert!(has_secret_assignment(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn placeholders_descriptions_and_code_are_not_secrets() {
        for line in [
            "KEY=changeme".to_string(),
            "API_KEY=changeme".to_string(),
            "API_KEY=your-api-key-here".to_string(),
            "PASSWORD=${DB_PASSWORD}".to_string(),
            "password: \"{{ vault_password }}\"".to_string(),
            format!("author = \"{VALUE}\""),
            format!("max_tokens={VALUE}"),
            format!("password_hash_name = \"{VALUE}\""),
            format!("token_url: https://x.example/{VALUE}"),
            "let token = self.read_token(path)?;".to_string(),
            "token: String,".to_string(),
            format!("if password == \"{VALUE}\""),
            "api_key = settings.api_key_v2".to_string(),
            format!("KEYBOARD_LAYOUT={VALUE}"),
            "secret: /run/secrets/db_password1".to_string(),
            format!("see postgres://u:password@h and set `color: {VALUE}` later"),
            format!("``SECRET_KEY_FALLBACKS``. :ghsa:`{VALUE}`"),
        ] {
            assert!(!has_secret_assignment(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(
            words(b"awsSecretAccessKey"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(words(b"API_KEY"), ["api", "key"]);
        assert_eq!(key_words(b"const TOKEN: &str ", b'='), ["token", "str"]);
        assert_eq!(key_words(b"  \"apiKey\"", b':'), ["api", "key"]);
    }
}
