//! Tokens with a documented, fixed shape: a literal prefix, then a known alphabet and length.
//!
//! Every prefix is found in one pass over the text (Aho-Corasick), and only then is the shape
//! after it checked, so a large change costs little more than reading it. A token inside a
//! longer word (`xAKIA…`) does not count; bodies that are placeholders (`ghp_XXXX…`) do not
//! either.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use super::rule::Rule;
use super::value::{looks_generated, looks_secret};

/// What a trigger checks once its prefix is found at `at` in `line`.
type Check = fn(line: &[u8], at: usize, prefix: usize) -> Option<Rule>;

/// Each literal prefix and the check of what follows it.
const TRIGGERS: &[(&str, Check)] = &[
    ("PuTTY-User-Key-File-", putty_key),
    ("AKIA", aws_key_id),
    ("ASIA", aws_key_id),
    ("ABIA", aws_key_id),
    ("ACCA", aws_key_id),
    ("ghp_", github_classic),
    ("gho_", github_classic),
    ("ghu_", github_classic),
    ("ghs_", github_classic),
    ("ghr_", github_classic),
    ("github_pat_", github_fine_grained),
    ("glpat-", gitlab),
    ("gldt-", gitlab),
    ("glrt-", gitlab),
    ("glptt-", gitlab),
    ("glcbt-", gitlab),
    ("glsoat-", gitlab),
    ("gloas-", gitlab),
    ("glft-", gitlab),
    ("glimt-", gitlab),
    ("glagent-", gitlab),
    ("GR1348941", gitlab),
    ("xoxb-", slack),
    ("xoxp-", slack),
    ("xoxa-", slack),
    ("xoxo-", slack),
    ("xoxr-", slack),
    ("xoxs-", slack),
    ("xoxe-", slack),
    ("xoxe.xox", slack),
    ("xapp-", slack),
    ("hooks.slack.com/", slack_webhook),
    ("sk_live_", stripe),
    ("sk_test_", stripe),
    ("rk_live_", stripe),
    ("rk_test_", stripe),
    ("whsec_", stripe_webhook),
    ("sk-", openai_or_anthropic),
    ("AIza", google_api_key),
    ("GOCSPX-", google_oauth_secret),
    ("eyJ", jwt),
    ("npm_", npm),
    ("pypi-AgEIcHlwaS5vcmc", pypi),
    ("hf_", huggingface),
    ("SG.", sendgrid),
    ("dop_v1_", digitalocean),
    ("doo_v1_", digitalocean),
    ("dor_v1_", digitalocean),
    ("://", password_in_url),
];

fn automaton() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasick::new(TRIGGERS.iter().map(|(p, _)| p))
            .expect("the trigger prefixes form a valid automaton")
    })
}

/// Every rule a token in `line` matches, with the byte offset of its prefix.
pub(crate) fn scan_line(line: &[u8], out: &mut Vec<Rule>) {
    for m in automaton().find_overlapping_iter(line) {
        let (prefix, check) = TRIGGERS[m.pattern().as_usize()];
        // A prefix inside a longer word (base64, an identifier) is dismissed first, cheaply;
        // `://` follows its scheme by nature.
        let word_prefix = prefix.starts_with(|c: char| c.is_ascii_alphanumeric());
        if word_prefix && !starts_clean(line, m.start()) {
            continue;
        }
        if let Some(rule) = check(line, m.start(), prefix.len())
            && !out.contains(&rule)
        {
            out.push(rule);
        }
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Nothing word-like right before `at`.
fn starts_clean(line: &[u8], at: usize) -> bool {
    at == 0 || !is_word(line[at - 1])
}

/// No token is longer; a run is not followed further (the scan stays linear on any line).
const MAX_RUN: usize = 8192;

/// The run of bytes from `from` that `pred` accepts (at most [`MAX_RUN`]).
fn run(line: &[u8], from: usize, pred: fn(u8) -> bool) -> &[u8] {
    let rest = line.get(from..).unwrap_or_default();
    let len = rest.iter().take(MAX_RUN).take_while(|&&b| pred(b)).count();
    &rest[..len]
}

/// Nothing of `pred`'s alphabet right after `end`.
fn ends_clean(line: &[u8], end: usize, pred: fn(u8) -> bool) -> bool {
    line.get(end).is_none_or(|&b| !pred(b))
}

fn putty_key(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let version = line.get(at + prefix)?;
    (at == 0 && version.is_ascii_digit() && line.get(at + prefix + 1) == Some(&b':'))
        .then_some(Rule::PrivateKey)
}

fn aws_key_id(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, |b| {
        b.is_ascii_uppercase() || b.is_ascii_digit()
    });
    let ok = starts_clean(line, at)
        && body.len() == 16
        && ends_clean(line, at + prefix + 16, is_word)
        && !body.ends_with(b"EXAMPLE")
        && looks_generated(body);
    ok.then_some(Rule::AwsAccessKeyId)
}

fn github_classic(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_word);
    (starts_clean(line, at) && (36..=255).contains(&body.len()) && looks_generated(body))
        .then_some(Rule::GithubToken)
}

fn github_fine_grained(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, |b| is_word(b) || b == b'_');
    (starts_clean(line, at) && body.len() >= 80 && looks_generated(body))
        .then_some(Rule::GithubToken)
}

fn gitlab(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, |b| is_b64url(b) || b == b'.');
    (starts_clean(line, at) && body.len() >= 20 && looks_generated(body))
        .then_some(Rule::GitlabToken)
}

fn slack(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, |b| is_word(b) || b == b'-');
    let ok = starts_clean(line, at)
        && body.len() >= 20
        && body.iter().any(u8::is_ascii_digit)
        && looks_generated(body);
    ok.then_some(Rule::SlackToken)
}

/// `hooks.slack.com/services/T…/B…/<secret>` and `hooks.slack.com/workflows/…/<secret>`.
fn slack_webhook(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let path = run(line, at + prefix, |b| is_word(b) || b == b'/' || b == b'_');
    let segments: Vec<&[u8]> = path.split(|&b| b == b'/').collect();
    let secret = match segments.first()? {
        s if *s == b"services" && segments.len() >= 4 => segments[3],
        s if *s == b"workflows" && segments.len() >= 3 => segments.last()?,
        _ => return None,
    };
    (secret.len() >= 20 && looks_generated(secret)).then_some(Rule::SlackToken)
}

fn stripe(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_word);
    (starts_clean(line, at) && body.len() >= 20 && looks_generated(body)).then_some(Rule::StripeKey)
}

fn stripe_webhook(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_word);
    (starts_clean(line, at) && body.len() >= 32 && looks_generated(body)).then_some(Rule::StripeKey)
}

/// `sk-ant-api03-…` (Anthropic); `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…` and legacy keys
/// carrying `T3BlbkFJ` (OpenAI).
fn openai_or_anthropic(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    if !starts_clean(line, at) {
        return None;
    }
    let start = at + prefix;
    let rest = line.get(start..)?;
    if let Some(after) = rest.strip_prefix(b"ant-") {
        let kind = run(after, 0, |b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if kind.is_empty() || after.get(kind.len()) != Some(&b'-') {
            return None;
        }
        let body = run(after, kind.len() + 1, is_b64url);
        return (body.len() >= 32 && looks_generated(body)).then_some(Rule::AnthropicApiKey);
    }
    let body = run(line, start, is_b64url);
    let project_kind = [&b"proj-"[..], b"svcacct-", b"admin-", b"None-"]
        .iter()
        .any(|k| body.starts_with(k));
    let marked = body.windows(8).any(|w| w == b"T3BlbkFJ");
    (body.len() >= 40 && (project_kind || marked) && looks_generated(body))
        .then_some(Rule::OpenaiApiKey)
}

fn google_api_key(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_b64url);
    (starts_clean(line, at) && body.len() == 35 && looks_generated(body))
        .then_some(Rule::GoogleApiKey)
}

fn google_oauth_secret(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_b64url);
    (starts_clean(line, at) && body.len() >= 28 && looks_generated(body))
        .then_some(Rule::GoogleApiKey)
}

/// Header and payload both JSON objects (`eyJ` is base64url for `{"`), and a signature.
fn jwt(line: &[u8], at: usize, _prefix: usize) -> Option<Rule> {
    if !starts_clean(line, at) {
        return None;
    }
    let header = run(line, at, is_b64url);
    let mut next = at + header.len();
    if header.len() < 13 || line.get(next) != Some(&b'.') {
        return None;
    }
    let payload = run(line, next + 1, is_b64url);
    next += 1 + payload.len();
    if payload.len() < 13 || !payload.starts_with(b"eyJ") || line.get(next) != Some(&b'.') {
        return None;
    }
    let signature = run(line, next + 1, is_b64url);
    (signature.len() >= 16 && looks_generated(signature)).then_some(Rule::Jwt)
}

fn npm(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_word);
    (starts_clean(line, at) && body.len() == 36 && looks_generated(body)).then_some(Rule::NpmToken)
}

fn pypi(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, is_b64url);
    (starts_clean(line, at) && body.len() >= 50 && looks_generated(body)).then_some(Rule::PypiToken)
}

fn huggingface(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, |b| b.is_ascii_alphabetic());
    let ok = starts_clean(line, at)
        && body.len() == 34
        && ends_clean(line, at + prefix + 34, |b| is_word(b) || b == b'_')
        && body.iter().any(u8::is_ascii_uppercase)
        && body.iter().any(u8::is_ascii_lowercase)
        && looks_generated(body);
    ok.then_some(Rule::HuggingfaceToken)
}

fn sendgrid(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let first = run(line, at + prefix, is_b64url);
    let dot = at + prefix + first.len();
    if !starts_clean(line, at) || first.len() != 22 || line.get(dot) != Some(&b'.') {
        return None;
    }
    let second = run(line, dot + 1, is_b64url);
    (second.len() == 43 && looks_generated(second)).then_some(Rule::SendgridApiKey)
}

fn digitalocean(line: &[u8], at: usize, prefix: usize) -> Option<Rule> {
    let body = run(line, at + prefix, |b| {
        b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
    });
    (starts_clean(line, at) && body.len() == 64 && looks_generated(body))
        .then_some(Rule::DigitaloceanToken)
}

/// `scheme://user:password@host` with a password that looks real.
fn password_in_url(line: &[u8], at: usize, _prefix: usize) -> Option<Rule> {
    let scheme_len = line[..at]
        .iter()
        .rev()
        .take(32)
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
        .count();
    if scheme_len < 2 {
        return None;
    }
    let rest = &line[at + 3..];
    let rest = &rest[..rest.len().min(512)];
    let end = rest.iter().position(|&b| {
        b == b'@' || b == b'/' || b.is_ascii_whitespace() || b"\"'`<>".contains(&b)
    })?;
    if rest[end] != b'@' {
        return None;
    }
    let userinfo = &rest[..end];
    let colon = userinfo.iter().position(|&b| b == b':')?;
    // `%XX` escapes decoded, as a URL's user information is read (a broken one kept as is).
    let password: Vec<u8> = percent_encoding::percent_decode(&userinfo[colon + 1..]).collect();
    looks_secret(&password, 8).then_some(Rule::PasswordInUrl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(line: &str) -> Vec<Rule> {
        let mut out = Vec::new();
        scan_line(line.as_bytes(), &mut out);
        out
    }

    /// A random-looking body of `n` characters from `alphabet`, deterministic.
    pub(crate) fn body(n: usize, alphabet: &str) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|i| chars[(i * 7 + i / 3 + 5) % chars.len()])
            .collect()
    }

    const B62: &str = "aZ0bY1cX2dW3eV4fU5gT6hS7iR8jQ9kPlOmNnMoLpKqJrIsHtGuFvEwDxCyBzA";
    const UPPER_DIGITS: &str = "QW3ER7TY2UI9OP4AS6DF8GH1JK5LZXCVBNM";

    #[test]
    fn documented_token_shapes_are_found() {
        let cases = [
            (
                format!("key = AKIA{}", body(16, UPPER_DIGITS)),
                Rule::AwsAccessKeyId,
            ),
            (format!("t=ghp_{}", body(36, B62)), Rule::GithubToken),
            (format!("github_pat_{}", body(82, B62)), Rule::GithubToken),
            (format!("glpat-{}", body(20, B62)), Rule::GitlabToken),
            (
                format!("xoxb-1234567890-{}", body(24, B62)),
                Rule::SlackToken,
            ),
            (
                format!(
                    "https://hooks.slack.com/services/T0123/B0456/{}",
                    body(24, B62)
                ),
                Rule::SlackToken,
            ),
            (format!("sk_live_{}", body(24, B62)), Rule::StripeKey),
            (format!("sk-proj-{}", body(48, B62)), Rule::OpenaiApiKey),
            (
                format!("sk-{}T3BlbkFJ{}", body(20, B62), body(20, B62)),
                Rule::OpenaiApiKey,
            ),
            (
                format!("sk-ant-api03-{}AA", body(93, B62)),
                Rule::AnthropicApiKey,
            ),
            (format!("AIza{}", body(35, B62)), Rule::GoogleApiKey),
            (format!("GOCSPX-{}", body(28, B62)), Rule::GoogleApiKey),
            (
                format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.{}", body(43, B62)),
                Rule::Jwt,
            ),
            (format!("npm_{}", body(36, B62)), Rule::NpmToken),
            (
                format!("pypi-AgEIcHlwaS5vcmc{}", body(60, B62)),
                Rule::PypiToken,
            ),
            (
                format!(
                    "hf_{}",
                    body(34, "aZbYcXdWeVfUgThSiRjQkPlOmNnMoLpKqJrIsHtGuFvEwDxCyBzA")
                ),
                Rule::HuggingfaceToken,
            ),
            (
                format!("SG.{}.{}", body(22, B62), body(43, B62)),
                Rule::SendgridApiKey,
            ),
            (
                format!("dop_v1_{}", body(64, "0123456789abcdef")),
                Rule::DigitaloceanToken,
            ),
            (
                format!("postgres://app:{}@db:5432/x", body(16, B62)),
                Rule::PasswordInUrl,
            ),
        ];
        for (line, rule) in cases {
            assert_eq!(rules(&line), vec![rule], "{line}");
        }
    }

    #[test]
    fn look_alikes_are_not_tokens() {
        for line in [
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
            "ghp_short",
            "desk-top sk-abc",
            "xAKIAQW3ER7TY2UI9OP4A",
            "postgres://user:password@localhost/db",
            "postgres://postgres:postgres@localhost/db",
            "https://oauth2:TOKEN123@example.com:8443/o/r",
            "https://user%40mail.com:pa%20ssword1@example.com",
            "https://${USER}:${TOKEN}@example.com",
            "https://github.com/org/repo",
            "see hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "eyJ.eyJ.abc",
            "let hf_model_name_for_the_default_pipeline = 1;",
        ] {
            assert_eq!(rules(line), vec![], "{line}");
        }
    }
}
