//! What a change adds, as the secret scanner reads it: real repositories, real git.

use std::path::Path;

use butler_testkit::World;
use butler_worker::git::{Added, GitRepo};
use butler_worker::secrets::{KnownSecrets, Rule, scan_commit, scan_unrecorded};

/// git in `dir` as the world's user; its stdout, trimmed.
fn git(w: &World, dir: &Path, args: &[&str]) -> String {
    w.git(dir, args).trim().to_string()
}

fn write(dir: &Path, rel: &str, content: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

fn repo(w: &World, dir: &Path) -> GitRepo {
    GitRepo::discover(dir)
        .expect("repo")
        .with_command_env(w.env.clone())
}

/// A secret-named setting with a generated-looking value (built here, not written in source).
fn setting(name: &str, seed: usize) -> String {
    let alphabet = "q8Zr2kLm9Wx4Tb7Nc3VdHs6Jp1Yf5Ga0Ue";
    let value: String = (0..24)
        .map(|i| alphabet.as_bytes()[(i * 5 + seed) % alphabet.len()] as char)
        .collect();
    format!("{name}={value}")
}

/// Numbered lines, or `None` for a binary file.
type Lines = Option<Vec<(usize, String)>>;

/// `(path, new_file, lines)` of every addition.
fn additions(repo: &GitRepo) -> Vec<(String, bool, Lines)> {
    let status = repo.status().expect("status");
    let mut out = Vec::new();
    repo.unrecorded_additions(&status, 1 << 20, &mut |a| {
        let lines = match a.content {
            Added::Text { lines, .. } => {
                Some(lines.into_iter().map(|(n, l)| (n, l.to_string())).collect())
            }
            Added::Binary => None,
        };
        out.push((a.path.display(), a.new_file, lines));
    })
    .expect("additions");
    out.sort();
    out
}

#[test]
fn only_what_a_record_would_add_is_read() {
    let w = World::unborn();
    let dir = w.project.as_path();
    write(
        dir,
        "config.env",
        &format!("{}\nA=1\n", setting("OLD_TOKEN", 1)),
    );
    write(dir, "gone.txt", "bye\n");
    git(&w, dir, &["add", "-A"]);
    git(&w, dir, &["commit", "-q", "-m", "base"]);

    write(
        dir,
        "config.env",
        &format!("{}\nA=2\nB=3\n", setting("OLD_TOKEN", 1)),
    );
    write(dir, "staged/new.txt", "staged line\n");
    git(&w, dir, &["add", "staged/new.txt"]);
    write(dir, "fresh/dir/deep.txt", "untracked line\n");
    std::fs::remove_file(dir.join("gone.txt")).expect("rm");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).expect("symlink");
    std::fs::write(dir.join("blob.bin"), [0u8, 1, 2, 3]).expect("binary");

    let got = additions(&repo(&w, dir));

    let text = |lines: &[(usize, &str)]| {
        Some(
            lines
                .iter()
                .map(|(n, l)| (*n, l.to_string()))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        got,
        vec![
            ("blob.bin".to_string(), true, None),
            (
                "config.env".to_string(),
                false,
                text(&[(2, "A=2"), (3, "B=3")])
            ),
            (
                "fresh/dir/deep.txt".to_string(),
                true,
                text(&[(1, "untracked line")])
            ),
            (
                "staged/new.txt".to_string(),
                true,
                text(&[(1, "staged line")])
            ),
        ],
        "the recorded secret line is not read again; deleted files and links add nothing"
    );
}

#[test]
fn a_merge_adds_only_what_none_of_its_parents_had() {
    let w = World::unborn();
    let dir = w.project.as_path();
    write(dir, "README", "base\n");
    git(&w, dir, &["add", "-A"]);
    git(&w, dir, &["commit", "-q", "-m", "base"]);
    git(&w, dir, &["switch", "-q", "-c", "side"]);
    write(dir, "side.env", &format!("{}\n", setting("API_KEY", 3)));
    git(&w, dir, &["add", "-A"]);
    git(&w, dir, &["commit", "-q", "-m", "side"]);
    let side = git(&w, dir, &["rev-parse", "HEAD"]);
    git(&w, dir, &["switch", "-q", "main"]);
    write(dir, "main.txt", "main work\n");
    git(&w, dir, &["add", "-A"]);
    git(&w, dir, &["commit", "-q", "-m", "main"]);
    git(&w, dir, &["merge", "-q", "--no-edit", "side"]);
    let merge = git(&w, dir, &["rev-parse", "HEAD"]);
    let repo = repo(&w, dir);
    let known = KnownSecrets::default();

    let on_side = scan_commit(&repo, &side, &known).expect("scan");
    let rules: Vec<(String, Rule)> = on_side
        .findings
        .iter()
        .map(|f| (f.path.clone(), f.rule))
        .collect();
    assert_eq!(
        rules,
        vec![("side.env".to_string(), Rule::SecretAssignment)]
    );
    let on_merge = scan_commit(&repo, &merge, &known).expect("scan");
    assert_eq!(on_merge.findings, vec![], "the merge itself adds nothing");
    assert_eq!(
        repo.commit_message(&merge).expect("message").lines().next(),
        Some("Merge branch 'side'")
    );
}

#[test]
fn a_staged_key_is_found_whatever_the_file_is_called() {
    let w = World::unborn();
    let dir = w.project.as_path();
    let dashes = "-".repeat(5);
    let material: String = (0..4)
        .map(|l| {
            (0..64)
                .map(|i| {
                    let a = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                    a[(i * 13 + l * 7 + i / 5) % 64] as char
                })
                .collect::<String>()
                + "\n"
        })
        .collect();
    write(
        dir,
        "notes/todo.md",
        &format!(
            "# todo\n{dashes}BEGIN OPENSSH PRIVATE KEY{dashes}\n{material}{dashes}END OPENSSH PRIVATE KEY{dashes}\n"
        ),
    );
    git(&w, dir, &["add", "-A"]);
    let repo = repo(&w, dir);
    let scan = scan_unrecorded(
        &repo,
        &repo.status().expect("status"),
        &KnownSecrets::default(),
    )
    .expect("scan");
    assert_eq!(scan.findings.len(), 1, "{:?}", scan.findings);
    assert_eq!(scan.findings[0].path, "notes/todo.md");
    assert_eq!(scan.findings[0].rule, Rule::PrivateKey);
    assert_eq!(scan.findings[0].line, Some(2));
}

#[test]
fn a_certificate_is_public_but_a_key_file_is_not() {
    let w = World::unborn();
    let dir = w.project.as_path();
    let dashes = "-".repeat(5);
    let body: String = (0..64)
        .map(|i| (b'A' + (i * 7 % 26) as u8) as char)
        .collect();
    write(
        dir,
        "certs/server.pem",
        &format!("{dashes}BEGIN CERTIFICATE{dashes}\n{body}\n{dashes}END CERTIFICATE{dashes}\n"),
    );
    write(dir, "certs/server.key", "opaque\n");
    let repo = repo(&w, dir);
    let scan = scan_unrecorded(
        &repo,
        &repo.status().expect("status"),
        &KnownSecrets::default(),
    )
    .expect("scan");
    let found: Vec<(&str, Rule)> = scan
        .findings
        .iter()
        .map(|f| (f.path.as_str(), f.rule))
        .collect();
    assert_eq!(found, vec![("certs/server.key", Rule::CredentialFileName)]);
}
