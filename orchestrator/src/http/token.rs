//! The HTTP server's bearer token: where it comes from, and the file Butler makes for it.
//!
//! Every request must carry the token, loopback included (any local process, an agent among
//! them, could otherwise open a Brain session). It is read once at start from `--token-file`,
//! else `BUTLER_HTTP_TOKEN`, else the user's token file `$XDG_CONFIG_HOME/butler/http-token`
//! (`~/.config/butler/http-token`), which the server creates on its first start: 32 bytes from
//! the kernel's random source, written to a new file of mode 0600 in a directory of mode 0700
//! and linked into place, so two servers starting at once agree on one token.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use butler_worker::config::Secret;

/// The environment variable that may hold the bearer token.
pub const TOKEN_ENV: &str = "BUTLER_HTTP_TOKEN";
/// Shortest token accepted: anything shorter could be guessed.
pub const MIN_TOKEN_LEN: usize = 16;
/// The token file's name in Butler's configuration directory.
pub const TOKEN_FILE: &str = "http-token";
/// What a token Butler makes starts with (so a scanner, or a person, knows it for one).
const MADE_PREFIX: &str = "butler-http-";

/// Why the token cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A token file could not be read.
    #[error("the token file `{}` cannot be read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The token is unusable (the token itself is never shown).
    #[error("the bearer token from {from} {why}")]
    Bad {
        /// Where it came from (the file, or the variable's name).
        from: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The user's token file can be read by other users.
    #[error(
        "the token file `{}` can be read by other users: run `chmod 600 {}`, or remove it to have \
         a new one made", path.display(), path.display()
    )]
    Exposed {
        /// The file.
        path: PathBuf,
    },
    /// Neither `XDG_CONFIG_HOME` nor `HOME` names a directory for the token file.
    #[error(
        "no configuration directory to keep the bearer token in (`XDG_CONFIG_HOME` and `HOME` \
         are unset): give `--token-file FILE` or `{TOKEN_ENV}`"
    )]
    NoConfigDir,
    /// The token file could not be made.
    #[error("cannot create the token file `{}`: {source}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Where the server's token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenOrigin {
    /// `--token-file FILE`.
    GivenFile(PathBuf),
    /// [`TOKEN_ENV`].
    Environment,
    /// The user's token file, made by this start.
    Created(PathBuf),
    /// The user's token file, made by an earlier start.
    Kept(PathBuf),
}

/// The token and where it came from.
#[derive(Debug)]
pub struct ServerToken {
    pub secret: Secret,
    pub origin: TokenOrigin,
}

/// The user's token file: `<config_home>/butler/http-token`, where `config_home` is
/// `XDG_CONFIG_HOME` when absolute, else `HOME/.config`; `None` when neither is usable.
pub fn default_token_file(xdg_config_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let absolute = |p: &str| Some(PathBuf::from(p)).filter(|p| p.is_absolute());
    let config = xdg_config_home
        .and_then(absolute)
        .or_else(|| home.and_then(absolute).map(|h| h.join(".config")))?;
    Some(config.join("butler").join(TOKEN_FILE))
}

/// What the person who started the server needs to connect a client to `url` with the token
/// from `origin` — where the token is and a command to paste — never the token itself.
pub fn client_setup(url: &str, origin: &TokenOrigin) -> String {
    let (whence, value) = match origin {
        TokenOrigin::Environment => (
            format!("the token is `{TOKEN_ENV}`'s value"),
            format!("${{{TOKEN_ENV}}}"),
        ),
        TokenOrigin::GivenFile(path) | TokenOrigin::Kept(path) => (
            format!("the token is in {}", path.display()),
            format!("$(cat {})", shell_quote(path)),
        ),
        TokenOrigin::Created(path) => (
            format!("the token was made in {} (mode 0600)", path.display()),
            format!("$(cat {})", shell_quote(path)),
        ),
    };
    format!(
        "butler: every request needs `Authorization: Bearer <token>`; {whence}. To add this \
         server to Claude Code:\n  claude mcp add --transport http butler {url} --header \
         \"Authorization: Bearer {value}\"\n"
    )
}

/// `path` as one shell word.
fn shell_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    shlex::try_quote(&text).map_or_else(|_| format!("{text:?}"), |q| q.into_owned())
}

/// The server's token: from `file`, else `env_value`, else the user's token file `default`
/// (made when missing).
pub fn server_token(
    file: Option<&Path>,
    env_value: Option<OsString>,
    default: Option<&Path>,
) -> Result<ServerToken, TokenError> {
    if let Some(secret) = load_token(file, env_value)? {
        let origin = match file {
            Some(path) => TokenOrigin::GivenFile(path.to_owned()),
            None => TokenOrigin::Environment,
        };
        return Ok(ServerToken { secret, origin });
    }
    let path = default.ok_or(TokenError::NoConfigDir)?;
    if let Some(secret) = read_user_file(path)? {
        return Ok(ServerToken {
            secret,
            origin: TokenOrigin::Kept(path.to_owned()),
        });
    }
    let (secret, created) = create_user_file(path)?;
    let origin = if created {
        TokenOrigin::Created(path.to_owned())
    } else {
        TokenOrigin::Kept(path.to_owned())
    };
    Ok(ServerToken { secret, origin })
}

/// A client's token (`butler doctor --http`): from `file`, else `env_value`, else the user's
/// token file `default` when it exists.
pub fn client_token(
    file: Option<&Path>,
    env_value: Option<OsString>,
    default: Option<&Path>,
) -> Result<Option<Secret>, TokenError> {
    if let Some(secret) = load_token(file, env_value)? {
        return Ok(Some(secret));
    }
    match default {
        Some(path) => read_user_file(path),
        None => Ok(None),
    }
}

/// The bearer token, read once: from `file` when given, else from the variable's value
/// (`env_value`, [`TOKEN_ENV`]); `None` when neither is set. Surrounding whitespace (a file's
/// final newline) is not part of the token.
fn load_token(
    file: Option<&Path>,
    env_value: Option<OsString>,
) -> Result<Option<Secret>, TokenError> {
    let (from, text) = match (file, env_value) {
        (Some(path), _) => {
            let text = std::fs::read(path).map_err(|source| TokenError::Read {
                path: path.to_owned(),
                source,
            })?;
            (format!("`{}`", path.display()), text)
        }
        (None, Some(value)) => (format!("`{TOKEN_ENV}`"), value.into_encoded_bytes()),
        (None, None) => return Ok(None),
    };
    checked(from, text).map(Some)
}

/// `text` as a token, if it is one a header can carry and long enough.
fn checked(from: String, text: Vec<u8>) -> Result<Secret, TokenError> {
    let bad = |why| TokenError::Bad {
        from: from.clone(),
        why,
    };
    let text = String::from_utf8(text).map_err(|_| bad("is not text"))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(bad("is empty"));
    }
    // What an `Authorization` header can carry after `Bearer `.
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("has spaces or characters an HTTP header cannot carry"));
    }
    if token.len() < MIN_TOKEN_LEN {
        return Err(bad("is shorter than 16 characters"));
    }
    Ok(Secret::new(token))
}

/// The user's token file's token; `None` when there is no such file. A file other users can
/// read is refused.
fn read_user_file(path: &Path) -> Result<Option<Secret>, TokenError> {
    let read = |source| TokenError::Read {
        path: path.to_owned(),
        source,
    };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read(e)),
    };
    let mode = file.metadata().map_err(read)?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(TokenError::Exposed {
            path: path.to_owned(),
        });
    }
    let mut text = Vec::new();
    file.read_to_end(&mut text).map_err(read)?;
    checked(format!("`{}`", path.display()), text).map(Some)
}

/// Makes the user's token file; the token and whether this call made it (another process may
/// have made it first, and then its token is the one).
fn create_user_file(path: &Path) -> Result<(Secret, bool), TokenError> {
    let create = |source| TokenError::Create {
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().ok_or_else(|| {
        create(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no directory",
        ))
    })?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(create)?;
    let token = Secret::new(format!("{MADE_PREFIX}{}", random_hex(32).map_err(create)?));
    // Written in full under a name of its own, then linked into place: a reader never sees a
    // half-written token, and a link never replaces a file another process made first.
    let draft = dir.join(format!(".{TOKEN_FILE}.{}", random_hex(8).map_err(create)?));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&draft)?;
        file.write_all(format!("{}\n", token.expose()).as_bytes())?;
        file.sync_all()
    })();
    let linked = written.and_then(|()| std::fs::hard_link(&draft, path));
    let _ = std::fs::remove_file(&draft);
    match linked {
        Ok(()) => Ok((token, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match read_user_file(path)? {
            Some(theirs) => Ok((theirs, false)),
            None => Err(create(e)),
        },
        Err(e) => Err(create(e)),
    }
}

/// `bytes` bytes from the kernel's random source, in hex.
fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef-token";

    #[test]
    fn the_token_comes_from_the_file_first_then_the_variable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("token");
        std::fs::write(&file, format!("{TOKEN}\n")).expect("write");
        let env = Some(OsString::from("from-the-environment-123"));
        let t = load_token(Some(&file), env.clone())
            .expect("ok")
            .expect("some");
        assert_eq!(t.expose(), TOKEN);
        let t = load_token(None, env).expect("ok").expect("some");
        assert_eq!(t.expose(), "from-the-environment-123");
        assert!(load_token(None, None).expect("ok").is_none());
    }

    #[test]
    fn unusable_tokens_are_refused_without_showing_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("token");
        for (text, why) in [
            ("\n", "is empty"),
            ("short-secret", "shorter than 16"),
            ("has a space in the middle", "spaces"),
        ] {
            std::fs::write(&file, text).expect("write");
            let err = load_token(Some(&file), None).expect_err("refused");
            let shown = err.to_string();
            assert!(shown.contains(why), "{shown}");
            assert!(
                !shown.contains("secret") && !shown.contains("middle"),
                "{shown}"
            );
        }
        let missing = load_token(Some(&dir.path().join("none")), None).expect_err("refused");
        assert!(matches!(missing, TokenError::Read { .. }));
    }

    #[test]
    fn the_user_file_lives_in_the_xdg_configuration_directory() {
        assert_eq!(
            default_token_file(Some("/x/cfg"), Some("/home/me")),
            Some(PathBuf::from("/x/cfg/butler/http-token"))
        );
        assert_eq!(
            default_token_file(None, Some("/home/me")),
            Some(PathBuf::from("/home/me/.config/butler/http-token"))
        );
        // A relative XDG_CONFIG_HOME is ignored, as the XDG specification says.
        assert_eq!(
            default_token_file(Some("cfg"), Some("/home/me")),
            Some(PathBuf::from("/home/me/.config/butler/http-token"))
        );
        assert_eq!(default_token_file(None, None), None);
    }

    #[test]
    fn the_user_file_is_made_private_once_then_kept() {
        let home = tempfile::tempdir().expect("tempdir");
        let path = home.path().join("cfg/butler").join(TOKEN_FILE);
        let first = server_token(None, None, Some(&path)).expect("made");
        assert_eq!(first.origin, TokenOrigin::Created(path.clone()));
        let token = first.secret.expose().to_owned();
        assert!(token.starts_with(MADE_PREFIX) && token.len() == MADE_PREFIX.len() + 64);
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().expect("dir")), 0o700);
        let again = server_token(None, None, Some(&path)).expect("kept");
        assert_eq!(again.origin, TokenOrigin::Kept(path.clone()));
        assert_eq!(again.secret.expose(), token);
        let client = client_token(None, None, Some(&path)).expect("read");
        assert_eq!(client.expect("some").expose(), token);
        // Nothing but the token file is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
            .expect("list")
            .collect();
        assert_eq!(left.len(), 1);
        // A given file or the variable wins, and the user's file is not touched.
        let env = Some(OsString::from("from-the-environment-123"));
        let given = server_token(None, env, Some(&path)).expect("env");
        assert_eq!(given.origin, TokenOrigin::Environment);
        assert_eq!(given.secret.expose(), "from-the-environment-123");
    }

    #[test]
    fn a_user_file_others_can_read_is_refused() {
        let home = tempfile::tempdir().expect("tempdir");
        let path = home.path().join(TOKEN_FILE);
        std::fs::write(&path, format!("{TOKEN}\n")).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = server_token(None, None, Some(&path)).expect_err("refused");
        assert!(matches!(err, TokenError::Exposed { .. }), "{err}");
        assert!(err.to_string().contains("chmod 600"));
        assert!(!err.to_string().contains(TOKEN));
        assert!(client_token(None, None, Some(&path)).is_err());
        // No file, no token for a client; no directory at all, no server.
        assert!(
            client_token(None, None, Some(&home.path().join("none")))
                .expect("ok")
                .is_none()
        );
        assert!(matches!(
            server_token(None, None, None),
            Err(TokenError::NoConfigDir)
        ));
    }

    #[test]
    fn the_client_setup_names_the_file_and_never_the_token() {
        let url = "http://127.0.0.1:8765/mcp";
        let made = client_setup(url, &TokenOrigin::Created("/h/it's/http-token".into()));
        assert!(
            made.contains("made in /h/it's/http-token (mode 0600)"),
            "{made}"
        );
        assert!(
            made.contains(&format!(
                "claude mcp add --transport http butler {url} --header \"Authorization: Bearer \
                 $(cat \"/h/it's/http-token\")\""
            )),
            "{made}"
        );
        let env = client_setup(url, &TokenOrigin::Environment);
        assert!(env.contains("Bearer ${BUTLER_HTTP_TOKEN}"), "{env}");
    }

    #[test]
    fn two_starts_at_once_agree_on_one_token() {
        let home = tempfile::tempdir().expect("tempdir");
        let path = home.path().join("butler").join(TOKEN_FILE);
        let tokens: Vec<String> = std::thread::scope(|s| {
            let starts: Vec<_> = (0..8)
                .map(|_| s.spawn(|| server_token(None, None, Some(&path)).expect("token")))
                .collect();
            starts
                .into_iter()
                .map(|h| h.join().expect("joined").secret.expose().to_owned())
                .collect()
        });
        assert!(tokens.iter().all(|t| *t == tokens[0]), "{tokens:?}");
    }
}
