//! File names that say a file holds credentials, whatever is in it.

/// Whether a path's file name looks like it holds secrets (`.env`, `id_rsa`, `*.pem`, …;
/// committed templates such as `.env.example` do not).
pub(crate) fn credential_file_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    const EXACT: &[&str] = &[
        ".env",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        "credentials",
        "credentials.json",
        "service-account.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".htpasswd",
        "secrets.yml",
        "secrets.yaml",
        "secrets.json",
        "secrets.toml",
    ];
    const SUFFIXES: &[&str] = &[".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx"];
    if EXACT.contains(&name.as_str()) || SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return true;
    }
    // `.env.local`, `.env.production` — but not the committed templates.
    if let Some(rest) = name.strip_prefix(".env.") {
        return !matches!(
            rest,
            "example" | "sample" | "template" | "dist" | "defaults"
        );
    }
    false
}

/// A `.pem` file may hold certificates only, which are public: when it is text and names no
/// private key, it is not refused for its name.
pub(crate) fn judged_by_content(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".pem")
}

#[cfg(test)]
mod tests {
    use super::credential_file_name as creds;

    #[test]
    fn secrets_are_recognised() {
        for p in [
            ".env",
            "app/.env.local",
            "deploy/server.pem",
            "id_ed25519",
            "a/b/tls.key",
        ] {
            assert!(creds(p), "{p}");
        }
    }

    #[test]
    fn ordinary_files_and_templates_are_not() {
        for p in [
            ".env.example",
            "src/env.rs",
            "keyboard.rs",
            "README.md",
            "key.rs",
            "pem.txt",
        ] {
            assert!(!creds(p), "{p}");
        }
    }
}
