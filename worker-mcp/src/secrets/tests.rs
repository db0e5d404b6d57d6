use super::*;

/// Key material that looks generated (built at run time: this file holds no key).
fn material(lines: usize) -> Vec<String> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..lines)
        .map(|l| {
            (0..64)
                .map(|i| char::from(alphabet[(i * 11 + l * 5 + i / 7) % 64]))
                .collect()
        })
        .collect()
}

fn pem(kind: &str) -> String {
    let dashes = "-".repeat(5);
    let mut text = format!("{dashes}BEGIN {kind}PRIVATE KEY{dashes}\n");
    for line in material(4) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&format!("{dashes}END {kind}PRIVATE KEY{dashes}\n"));
    text
}

fn rules(text: &str) -> Vec<Rule> {
    scan_text(text, &KnownSecrets::default())
        .into_iter()
        .map(|h| h.rule)
        .collect()
}

#[test]
fn private_key_blocks_are_found_in_every_layout() {
    for kind in ["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "] {
        let text = format!("notes\n{}", pem(kind));
        assert_eq!(
            scan_text(&text, &KnownSecrets::default()),
            vec![Hit {
                rule: Rule::PrivateKey,
                line: 2
            }],
            "{kind}"
        );
    }
    // A service-account JSON keeps the key on one line with `\n` escapes.
    let one_line = pem("").replace('\n', "\\n");
    let json = format!("{{\n  \"private_key\": \"{one_line}\",\n}}");
    assert_eq!(rules(&json), vec![Rule::PrivateKey]);
    // Indented in YAML, with PEM headers first.
    let yaml = pem("RSA ")
        .replacen('\n', "\nProc-Type: 4,ENCRYPTED\n\n", 1)
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect::<String>();
    assert_eq!(rules(&format!("key: |\n{yaml}")), vec![Rule::PrivateKey]);
}

#[test]
fn a_header_without_key_material_is_not_a_key() {
    let dashes = "-".repeat(5);
    for text in [
        format!("const HEADER: &str = \"{dashes}BEGIN PRIVATE KEY{dashes}\";\n"),
        format!("{dashes}BEGIN PRIVATE KEY{dashes}\n...\n{dashes}END PRIVATE KEY{dashes}\n"),
        format!("{dashes}BEGIN PUBLIC KEY{dashes}\n{}\n", material(1)[0]),
    ] {
        assert_eq!(rules(&text), vec![], "{text}");
    }
}

#[test]
fn key_material_must_follow_on_consecutive_lines() {
    let text = pem("");
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (if i == 0 { 1 } else { i + 10 }, l))
        .collect();
    assert_eq!(scan_lines(&lines, &KnownSecrets::default()), vec![]);
}

#[test]
fn butlers_own_token_is_found_anywhere() {
    let token = Secret::new("0123456789abcdef0123456789abcdef01234567");
    let known = KnownSecrets::new([&token]);
    let text = format!("Deployed.\nused {} to call the API", token.expose());
    assert_eq!(
        scan_text(&text, &known),
        vec![Hit {
            rule: Rule::ButlerTrackerToken,
            line: 2
        }]
    );
    assert!(!format!("{known:?}").contains(token.expose()));
    // Too short to search for without matching ordinary text.
    let short = Secret::new("abc");
    assert_eq!(scan_text("abc abc", &KnownSecrets::new([&short])), vec![]);
}

#[test]
fn placeholders_are_not_secrets() {
    let text = "KEY=changeme\nAPI_KEY=changeme\nPASSWORD=\nTOKEN=<your token>\n\
                SECRET=${SECRET}\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n\
                GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\n";
    assert_eq!(rules(text), vec![]);
}

#[test]
fn each_rule_is_reported_once_at_its_first_line() {
    let text = "A_TOKEN=q8Zr2kLm9Wx4Tb7Nc3Vd\nB_TOKEN=Zr2kLm9Wx4Tb7Nc3Vdq8\n";
    assert_eq!(
        scan_text(text, &KnownSecrets::default()),
        vec![Hit {
            rule: Rule::SecretAssignment,
            line: 1
        }]
    );
}
