//! `butler init` and `butler doctor`: put Butler into a project's Claude Code setup, and check
//! that it really works there.
//!
//! [`init`] merges three things without clobbering what is already there: the `PreToolUse`
//! hook (`.claude/settings.json`), the MCP server (`.mcp.json`) and a short managed block in
//! `CLAUDE.md`. It is idempotent and reversible (`remove`). [`doctor`] checks the hook where
//! Claude Code reads it, runs it the way Claude Code does (`sh -c`) with canary inputs, and
//! starts the MCP server to ask it for its tools through the MCP client ([`BrainClient`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use butler_worker::config::{Environment, Secret};
use butler_worker::process::{self, ChildEnv, ChildSpec, Ending, Limits, env};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::client::BrainClient;

mod launch;
pub use self::launch::{Launch, find_on_path, same_file};

/// Seconds Claude Code gives the hook before it lets the command run anyway.
const HOOK_TIMEOUT_SECS: u64 = 10;
/// How long doctor waits for the hook or the MCP server.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

const BLOCK_BEGIN: &str =
    "<!-- butler:begin (managed by `butler init`; edits inside are replaced) -->";
const BLOCK_END: &str = "<!-- butler:end -->";
// The block's text is the catalogue's (`Key::ClaudeBlock`), in the project's language.
/// What `init` did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The file did not exist and was written.
    Created,
    /// The file was changed.
    Updated,
    /// The file already had what Butler needs (or, when removing, had nothing of Butler's).
    Unchanged,
    /// Only Butler's part was in the file, so the file was deleted.
    Deleted,
}

/// One file `init` looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// What happened to it.
    pub change: Change,
}

/// What `init` changed, per file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitReport {
    /// The files, in the order settings, `.mcp.json`, `CLAUDE.md`.
    pub files: Vec<FileChange>,
    /// How the settings name Butler's programs (not when removing).
    pub launch: Option<Launch>,
}

impl InitReport {
    /// Whether any file was written or deleted.
    pub fn changed_anything(&self) -> bool {
        self.files.iter().any(|f| f.change != Change::Unchanged)
    }
}

impl fmt::Display for InitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for file in &self.files {
            let what = match file.change {
                Change::Created => "created",
                Change::Updated => "updated",
                Change::Unchanged => "unchanged",
                Change::Deleted => "deleted",
            };
            writeln!(f, "{what:>9}  {}", file.path.display())?;
        }
        if !self.changed_anything() {
            writeln!(f, "Nothing to do: the project is already set up that way.")?;
        }
        if let Some(launch) = &self.launch {
            writeln!(f, "{launch}")?;
        }
        Ok(())
    }
}

/// Why `init` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A settings file exists but is not JSON; it is left as it is.
    #[error("`{}` is not valid JSON ({source}); fix or move it, nothing was written", path.display())]
    InvalidJson {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// A settings file has a value of an unexpected type where Butler's entry goes.
    #[error("`{}`: `{at}` is not a JSON {expected}; nothing was written", path.display())]
    UnexpectedShape {
        /// The file.
        path: PathBuf,
        /// Where in the file (`hooks.PreToolUse`).
        at: String,
        /// What was expected there.
        expected: &'static str,
    },
    /// Reading or writing a file failed.
    #[error("`{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A file's new content, computed before anything is written.
struct Plan {
    path: PathBuf,
    existed: bool,
    /// `None` = delete the file.
    content: Option<String>,
    change: Change,
}

/// Merge Butler's hook and MCP server into the project's Claude Code settings and its
/// guidance into `CLAUDE.md` (or, with `remove`, take out exactly those again).
///
/// `launch` says how the settings name Butler's programs ([`Launch::resolve`]: by name when
/// `PATH` finds this binary, else by absolute path). Nothing is written unless every file could
/// be planned: an invalid JSON file stops the whole run.
pub fn init(project: &Path, launch: &Launch, remove: bool) -> Result<InitReport, InstallError> {
    let plans = vec![
        plan_json(&project.join(".claude/settings.json"), |path, doc| {
            merge_hook(path, doc, &hook_command(&launch.hook), remove)
        })?,
        plan_json(&project.join(".mcp.json"), |path, doc| {
            merge_server(path, doc, &launch.server, remove)
        })?,
        plan_markdown(
            &project.join("CLAUDE.md"),
            crate::catalogue::Lang::configured(project),
            remove,
        )?,
    ];
    let mut files = Vec::new();
    for plan in plans {
        apply(&plan)?;
        files.push(FileChange {
            path: plan.path,
            change: plan.change,
        });
    }
    Ok(InitReport {
        files,
        launch: (!remove).then(|| launch.clone()),
    })
}

/// The hook-only binary installed beside `butler` (`butler-git-hook`), if there is one: it
/// starts faster than the full binary, and the hook runs before every shell command.
fn fast_hook_beside(exe: &Path) -> Option<PathBuf> {
    let candidate = exe.parent()?.join("butler-git-hook");
    candidate.is_file().then_some(candidate)
}

/// The hook command as Claude Code runs it through a shell: the quoted path, then `git-hook`.
pub fn hook_command(exe: &str) -> String {
    let mut quoted = String::from("\"");
    for c in exe.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push_str("\" git-hook");
    quoted
}

fn read_optional(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn plan_json(
    path: &Path,
    merge: impl FnOnce(&Path, &mut Map<String, Value>) -> Result<(), InstallError>,
) -> Result<Plan, InstallError> {
    let old = read_optional(path)?;
    let mut doc = match &old {
        None => Map::new(),
        Some(text) if text.trim().is_empty() => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(InstallError::UnexpectedShape {
                    path: path.to_owned(),
                    at: "the top level".to_owned(),
                    expected: "object",
                });
            }
            Err(source) => {
                return Err(InstallError::InvalidJson {
                    path: path.to_owned(),
                    source,
                });
            }
        },
    };
    let before = doc.clone();
    merge(path, &mut doc)?;
    let unchanged = doc == before;
    let new = (!doc.is_empty()).then(|| {
        serde_json::to_string_pretty(&Value::Object(doc)).expect("a JSON value always serializes")
            + "\n"
    });
    Ok(plan(path, old, unchanged, new))
}

fn apply(plan: &Plan) -> Result<(), InstallError> {
    let io = |source| InstallError::Io {
        path: plan.path.clone(),
        source,
    };
    match (&plan.content, plan.change) {
        (_, Change::Unchanged) => Ok(()),
        (None, _) => {
            if plan.existed {
                std::fs::remove_file(&plan.path).map_err(io)?;
                if let Some(dir) = plan.path.parent()
                    && dir.file_name().is_some_and(|n| n == ".claude")
                {
                    // Only succeeds when empty, which is the point.
                    let _ = std::fs::remove_dir(dir);
                }
            }
            Ok(())
        }
        (Some(text), _) => {
            if let Some(dir) = plan.path.parent() {
                std::fs::create_dir_all(dir).map_err(io)?;
            }
            std::fs::write(&plan.path, text).map_err(io)
        }
    }
}

/// `doc[key]` as an object (created when missing).
fn object_at<'a>(
    path: &Path,
    doc: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, InstallError> {
    doc.entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| InstallError::UnexpectedShape {
            path: path.to_owned(),
            at: key.to_owned(),
            expected: "object",
        })
}

/// Whether a hook handler is Butler's git hook (any path to a `butler*` binary).
fn is_butler_hook(handler: &Value) -> bool {
    let Some(command) = handler.get("command").and_then(Value::as_str) else {
        return false;
    };
    let Some(program) = command.trim().strip_suffix(" git-hook") else {
        return false;
    };
    let program = program.trim().trim_matches(['"', '\'']);
    program
        .rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("butler"))
}

fn merge_hook(
    path: &Path,
    doc: &mut Map<String, Value>,
    command: &str,
    remove: bool,
) -> Result<(), InstallError> {
    let shape = |at: &str, expected| InstallError::UnexpectedShape {
        path: path.to_owned(),
        at: at.to_owned(),
        expected,
    };
    if remove && !doc.contains_key("hooks") {
        return Ok(());
    }
    let hooks = object_at(path, doc, "hooks")?;
    let groups = hooks
        .entry("PreToolUse")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| shape("hooks.PreToolUse", "array"))?;
    let wanted = json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS});
    let already = groups.iter().any(|g| {
        g.get("matcher").and_then(Value::as_str) == Some("Bash")
            && g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|h| h.contains(&wanted))
    });
    if already && !remove {
        return Ok(());
    }
    // Take out every Butler hook (a stale path included), and groups left empty by that.
    groups.retain_mut(|group| {
        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = handlers.len();
        handlers.retain(|h| !is_butler_hook(h));
        !(handlers.is_empty() && before > 0)
    });
    if !remove {
        let bash_group = groups.iter_mut().find(|g| {
            g.get("matcher").and_then(Value::as_str) == Some("Bash")
                && g.get("hooks").is_some_and(Value::is_array)
        });
        match bash_group {
            Some(group) => group["hooks"]
                .as_array_mut()
                .expect("checked to be an array")
                .push(wanted),
            None => groups.push(json!({"matcher": "Bash", "hooks": [wanted]})),
        }
    }
    if groups.is_empty() {
        hooks.remove("PreToolUse");
    }
    if hooks.is_empty() {
        doc.remove("hooks");
    }
    Ok(())
}

fn merge_server(
    path: &Path,
    doc: &mut Map<String, Value>,
    exe: &str,
    remove: bool,
) -> Result<(), InstallError> {
    if remove && !doc.contains_key("mcpServers") {
        return Ok(());
    }
    let servers = object_at(path, doc, "mcpServers")?;
    if remove {
        servers.remove("butler");
    } else {
        let wanted = json!({"command": exe, "args": ["mcp"]});
        if servers.get("butler") != Some(&wanted) {
            servers.insert("butler".to_owned(), wanted);
        }
    }
    if servers.is_empty() {
        doc.remove("mcpServers");
    }
    Ok(())
}

fn managed_block(lang: crate::catalogue::Lang) -> String {
    let body = crate::catalogue::template(lang, crate::catalogue::Key::ClaudeBlock);
    format!("{BLOCK_BEGIN}\n{body}\n{BLOCK_END}\n")
}

fn plan_markdown(
    path: &Path,
    lang: crate::catalogue::Lang,
    remove: bool,
) -> Result<Plan, InstallError> {
    let old = read_optional(path)?;
    let text = old.clone().unwrap_or_default();
    let existing = text.find(BLOCK_BEGIN).and_then(|start| {
        let end = text[start..].find(BLOCK_END)? + start + BLOCK_END.len();
        let end = if text[end..].starts_with('\n') {
            end + 1
        } else {
            end
        };
        Some((start, end))
    });
    let new_text = match (existing, remove) {
        (Some((start, end)), true) => {
            let before = text[..start]
                .strip_suffix("\n\n")
                .map_or(&text[..start], |b| b);
            let before = if before.is_empty() || before.ends_with('\n') {
                before.to_owned()
            } else {
                format!("{before}\n")
            };
            format!("{before}{}", &text[end..])
        }
        (None, true) => text.clone(),
        (Some((start, end)), false) => {
            format!("{}{}{}", &text[..start], managed_block(lang), &text[end..])
        }
        (None, false) if text.trim().is_empty() => managed_block(lang),
        (None, false) => {
            let sep = if text.ends_with('\n') { "\n" } else { "\n\n" };
            format!("{text}{sep}{}", managed_block(lang))
        }
    };
    let unchanged = new_text == text;
    let new = (!new_text.trim().is_empty()).then_some(new_text);
    Ok(plan(path, old, unchanged, new))
}

/// What to do with one file: keep it when nothing changed, delete it when nothing is left
/// (`new` is `None`), else write `new`.
fn plan(path: &Path, old: Option<String>, unchanged: bool, new: Option<String>) -> Plan {
    let existed = old.is_some();
    let (content, change) = match new {
        _ if unchanged && existed => (old, Change::Unchanged),
        None if existed => (None, Change::Deleted),
        None => (None, Change::Unchanged),
        Some(text) if existed => (Some(text), Change::Updated),
        Some(text) => (Some(text), Change::Created),
    };
    Plan {
        path: path.to_owned(),
        existed,
        content,
        change,
    }
}

// ───────────────────────────── doctor ─────────────────────────────

/// How one doctor check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Works.
    Ok,
    /// Works, but not as expected (e.g. the hook runs another Butler binary).
    Warn,
    /// Broken.
    Fail,
}

/// One doctor check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Short name (`hook_configured`, `hook_denies_git`, …).
    pub name: &'static str,
    /// The outcome.
    pub status: Status,
    /// What was found, for the user.
    pub detail: String,
}

/// Every check `doctor` ran, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorReport {
    /// The checks.
    pub checks: Vec<Check>,
}

impl DoctorReport {
    /// Whether no check failed.
    pub fn healthy(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Fail)
    }

    /// The check named `name`, if it ran.
    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            let mark = match check.status {
                Status::Ok => "ok",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            writeln!(f, "{mark:>4}  {}: {}", check.name, check.detail)?;
        }
        Ok(())
    }
}

/// Check that Butler's hook and MCP server are configured where Claude Code reads them and
/// really work: the hook denies `git status` and allows `ls`, the server lists its tools.
/// Commands named without a path are looked up on `PATH`, as Claude Code's shell would.
/// `env` is Butler's environment as the edge read it (`HOME`, `PATH`).
pub async fn doctor(project: &Path, butler_exe: &Path, env: &Environment) -> DoctorReport {
    let home = env.get("HOME").map(PathBuf::from);
    let path = env.get("PATH").map(std::ffi::OsStr::new);
    doctor_with(project, butler_exe, home.as_deref(), path).await
}

async fn doctor_with(
    project: &Path,
    butler_exe: &Path,
    home: Option<&Path>,
    path_var: Option<&std::ffi::OsStr>,
) -> DoctorReport {
    let mut checks = Vec::new();
    let mut add = |name, status, detail: String| {
        checks.push(Check {
            name,
            status,
            detail,
        })
    };
    match find_hook(project, home) {
        None => add(
            "hook_configured",
            Status::Fail,
            "no `PreToolUse` hook running `git-hook` for Bash in .claude/settings.json, \
             .claude/settings.local.json or ~/.claude/settings.json; run `butler init`"
                .to_owned(),
        ),
        Some((file, command)) => {
            add(
                "hook_configured",
                Status::Ok,
                format!("`{command}` in {}", file.display()),
            );
            let (status, detail) = check_program(project, &command, butler_exe, path_var);
            add("hook_executable", status, detail);
            let (status, detail) = probe_hook(project, &command, "git status", true).await;
            add("hook_denies_git", status, detail);
            let (status, detail) = probe_hook(project, &command, "ls", false).await;
            add("hook_allows_ls", status, detail);
        }
    }
    match find_server(project) {
        None => add(
            "mcp_configured",
            Status::Fail,
            "no `mcpServers.butler` in .mcp.json; run `butler init`".to_owned(),
        ),
        Some((command, args)) => {
            add(
                "mcp_configured",
                Status::Ok,
                format!("`{command}` {args:?} in .mcp.json"),
            );
            let (status, detail) = match locate(project, &command, path_var) {
                Ok(program) => probe_server(project, &program, &args).await,
                Err(detail) => (Status::Fail, detail),
            };
            add("mcp_answers", status, detail);
        }
    }
    DoctorReport { checks }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Whether a hook matcher applies to the Bash tool.
fn matches_bash(matcher: Option<&Value>) -> bool {
    match matcher.and_then(Value::as_str) {
        None | Some("" | "*") => true,
        Some(m) => m.split(['|', ',']).any(|part| part.trim() == "Bash") || m.contains("Bash"),
    }
}

/// The first Butler git-hook command for Bash, and the file it is in.
fn find_hook(project: &Path, home: Option<&Path>) -> Option<(PathBuf, String)> {
    let mut files = vec![
        project.join(".claude/settings.json"),
        project.join(".claude/settings.local.json"),
    ];
    files.extend(home.map(|home| home.join(".claude/settings.json")));
    for file in files {
        let Some(doc) = read_json(&file) else {
            continue;
        };
        let groups = doc.pointer("/hooks/PreToolUse").and_then(Value::as_array);
        for group in groups.into_iter().flatten() {
            if !matches_bash(group.get("matcher")) {
                continue;
            }
            let handlers = group.get("hooks").and_then(Value::as_array);
            for handler in handlers.into_iter().flatten() {
                let command = handler.get("command").and_then(Value::as_str).unwrap_or("");
                if command.contains("git-hook") {
                    return Some((file, command.to_owned()));
                }
            }
        }
    }
    None
}

/// The program a hook command runs: its first shell word, with `$CLAUDE_PROJECT_DIR` expanded.
fn hook_program(project: &Path, command: &str) -> String {
    let command = command.trim_start();
    let program = if let Some(rest) = command.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => out.extend(chars.next()),
                c => out.push(c),
            }
        }
        out
    } else {
        command.split_whitespace().next().unwrap_or("").to_owned()
    };
    let dir = project.to_string_lossy();
    program
        .replace("${CLAUDE_PROJECT_DIR}", &dir)
        .replace("$CLAUDE_PROJECT_DIR", &dir)
}

/// The file a configured program runs: a name without `/` as the shell finds it on `PATH`, a
/// relative path from the project.
fn locate(
    project: &Path,
    program: &str,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, String> {
    if program.contains('/') {
        return Ok(project.join(program));
    }
    find_on_path(program, path_var).ok_or_else(|| {
        format!(
            "`{program}` is not on PATH: install Butler (`cargo install --locked --path .`) or run \
             `butler init` again to name it by its path"
        )
    })
}

fn check_program(
    project: &Path,
    command: &str,
    butler_exe: &Path,
    path_var: Option<&std::ffi::OsStr>,
) -> (Status, String) {
    use std::os::unix::fs::PermissionsExt;
    let program = hook_program(project, command);
    let path = match locate(project, &program, path_var) {
        Ok(path) => path,
        Err(detail) => return (Status::Fail, detail),
    };
    // A name found on PATH is shown with where it was found.
    let shown = if program.contains('/') {
        format!("`{program}`")
    } else {
        format!("`{program}` (on PATH: {})", path.display())
    };
    match std::fs::metadata(&path) {
        Err(e) => (Status::Fail, format!("{shown}: {e}")),
        Ok(meta) if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 => {
            (Status::Fail, format!("{shown} is not an executable file"))
        }
        Ok(_) => {
            let fast = std::fs::canonicalize(butler_exe)
                .ok()
                .and_then(|exe| fast_hook_beside(&exe));
            let same = same_file(&path, butler_exe) || fast.is_some_and(|f| same_file(&path, &f));
            if same {
                (Status::Ok, format!("{shown} is executable"))
            } else {
                let other = butler_exe.display();
                (
                    Status::Warn,
                    format!("{shown} is executable but is not `{other}`"),
                )
            }
        }
    }
}

fn canary(project: &Path, command: &str) -> Vec<u8> {
    json!({
        "session_id": "butler-doctor",
        "cwd": project,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "butler doctor canary"},
        "tool_use_id": "toolu_butler_doctor",
    })
    .to_string()
    .into_bytes()
}

/// Runs the hook the way Claude Code does (`sh -c <command>` in the project, the canary on
/// stdin), with the base environment, the user's home and `CLAUDE_PROJECT_DIR`.
async fn probe_hook(
    project: &Path,
    hook: &str,
    canary_command: &str,
    expect_deny: bool,
) -> (Status, String) {
    let mut vars = ChildEnv::new();
    vars.inherit(env::inherited(), env::BASE)
        .inherit(env::inherited(), env::HOME_DIRS)
        .set_default("PATH", env::DEFAULT_PATH)
        .set("CLAUDE_PROJECT_DIR", project);
    let mut spec = ChildSpec::shell(hook, project, vars);
    spec.stdin = Some(canary(project, canary_command));
    let mut limits = Limits::new(PROBE_TIMEOUT).keep(64 << 10, 0);
    limits.grace = Duration::from_millis(500);
    let done = process::supervise(spec, &limits, &CancellationToken::new()).await;
    let stdout = done.stdout.text();
    let code = match done.ending {
        Ending::Exited { code } => Some(code),
        Ending::WallClockLimit { .. } => {
            return (
                Status::Fail,
                format!("the hook did not answer within {PROBE_TIMEOUT:?}"),
            );
        }
        Ending::SpawnFailed { reason } => {
            return (Status::Fail, format!("could not run the hook: {reason}"));
        }
        Ending::Signalled { .. }
        | Ending::Stagnated { .. }
        | Ending::Looped { .. }
        | Ending::NoFileChange { .. }
        | Ending::Cancelled => None,
    };
    let denied = serde_json::from_str::<Value>(stdout.trim())
        .ok()
        .is_some_and(|v| {
            v.pointer("/hookSpecificOutput/permissionDecision")
                .and_then(Value::as_str)
                == Some("deny")
        });
    match (code, expect_deny, denied) {
        (Some(0), true, true) => (Status::Ok, format!("`{canary_command}` is denied")),
        (Some(0), false, false) if stdout.trim().is_empty() => {
            (Status::Ok, format!("`{canary_command}` is allowed"))
        }
        (code, _, _) => (
            Status::Fail,
            format!(
                "`{canary_command}`: expected {}, got exit {code:?} with stdout {:?}",
                if expect_deny {
                    "a deny JSON"
                } else {
                    "no output"
                },
                stdout.trim()
            ),
        ),
    }
}

fn find_server(project: &Path) -> Option<(String, Vec<String>)> {
    let doc = read_json(&project.join(".mcp.json"))?;
    let server = doc.pointer("/mcpServers/butler")?;
    let command = server.get("command")?.as_str()?.to_owned();
    let args = server
        .get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Some((command, args))
}

/// Starts the server as `.mcp.json` says (`program` located), through the MCP client, and asks
/// it for its tools.
async fn probe_server(project: &Path, program: &Path, args: &[String]) -> (Status, String) {
    let envs = [(
        "CLAUDE_PROJECT_DIR".to_owned(),
        project.to_string_lossy().into_owned(),
    )];
    let probe = async {
        let client = BrainClient::launch(program.as_os_str(), args, project, &envs)
            .await
            .map_err(|e| {
                format!(
                    "could not start `{}` as an MCP server: {e}",
                    program.display()
                )
            })?;
        let tools = client.tools().await;
        client.close().await;
        let tools = tools.map_err(|e| format!("`tools/list` failed: {e}"))?;
        if tools.is_empty() {
            return Err("`tools/list` answered with no tools".to_owned());
        }
        Ok(format!("answers `tools/list` with {} tools", tools.len()))
    };
    match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
        Ok(Ok(detail)) => (Status::Ok, detail),
        Ok(Err(detail)) => (Status::Fail, detail),
        Err(_) => (Status::Fail, format!("no answer within {PROBE_TIMEOUT:?}")),
    }
}

/// Check a running `butler serve --http` at `url`, as a client would: a session opens
/// (`initialize`, with `token` as the bearer token when given), the tools are listed, and
/// `work_observe` answers with the envelope.
pub async fn doctor_http(url: &str, token: Option<&Secret>) -> DoctorReport {
    let mut checks = Vec::new();
    let mut add = |name, status, detail: String| {
        checks.push(Check {
            name,
            status,
            detail,
        })
    };
    let connected =
        tokio::time::timeout(PROBE_TIMEOUT, BrainClient::connect_http(url, token)).await;
    let client = match connected {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            let hint = if token.is_none() {
                " (the server asks for its bearer token, and none was found in \
                 `$XDG_CONFIG_HOME/butler/http-token`: pass `--token-file FILE` or set \
                 `BUTLER_HTTP_TOKEN`)"
            } else {
                ""
            };
            add(
                "http_session",
                Status::Fail,
                format!("no MCP session with {url}: {e}{hint}"),
            );
            return DoctorReport { checks };
        }
        Err(_) => {
            add(
                "http_session",
                Status::Fail,
                format!("{url} did not answer `initialize` within {PROBE_TIMEOUT:?}"),
            );
            return DoctorReport { checks };
        }
    };
    add(
        "http_session",
        Status::Ok,
        format!("`initialize` answered by {url}"),
    );
    let (status, detail) = match tokio::time::timeout(PROBE_TIMEOUT, client.tools()).await {
        Ok(Ok(tools)) if !tools.is_empty() => (
            Status::Ok,
            format!("answers `tools/list` with {} tools", tools.len()),
        ),
        Ok(Ok(_)) => (Status::Fail, "`tools/list` answered with no tools".into()),
        Ok(Err(e)) => (Status::Fail, format!("`tools/list` failed: {e}")),
        Err(_) => (Status::Fail, format!("no answer within {PROBE_TIMEOUT:?}")),
    };
    add("http_tools", status, detail);
    let observed = tokio::time::timeout(
        PROBE_TIMEOUT,
        client.call("work_observe", Value::Object(Map::new())),
    )
    .await;
    let (status, detail) = match observed {
        Ok(Ok(answer)) if answer.status() == "ok" && answer.consistent => (
            Status::Ok,
            format!(
                "`work_observe` answers (`work_state` {})",
                answer.data()["work_state"]
            ),
        ),
        Ok(Ok(answer)) => (
            Status::Fail,
            format!("`work_observe` answered {}", answer.envelope),
        ),
        Ok(Err(e)) => (Status::Fail, format!("`work_observe` failed: {e}")),
        Err(_) => (Status::Fail, format!("no answer within {PROBE_TIMEOUT:?}")),
    };
    add("http_observe", status, detail);
    client.close().await;
    DoctorReport { checks }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/opt/butler/bin/butler";

    fn abs(exe: &str) -> Launch {
        Launch::absolute(Path::new(exe))
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).expect("file exists")
    }

    fn json_at(path: &Path) -> Value {
        serde_json::from_str(&read(path)).expect("valid JSON")
    }

    fn changes(report: &InitReport) -> Vec<Change> {
        report.files.iter().map(|f| f.change).collect()
    }

    #[test]
    fn init_on_an_empty_project_creates_three_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let report = init(dir.path(), &abs(EXE), false).expect("init");
        assert_eq!(changes(&report), [Change::Created; 3]);
        let settings = json_at(&dir.path().join(".claude/settings.json"));
        assert_eq!(
            settings,
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "\"/opt/butler/bin/butler\" git-hook", "timeout": 10}
            ]}]}})
        );
        let mcp = json_at(&dir.path().join(".mcp.json"));
        assert_eq!(
            mcp,
            json!({"mcpServers": {"butler": {"command": EXE, "args": ["mcp"]}}})
        );
        let claude = read(&dir.path().join("CLAUDE.md"));
        assert!(claude.contains("work_session_start") && claude.contains("work_vcs"));
    }

    #[test]
    fn the_claude_md_block_speaks_the_projects_language_and_is_removed_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".butler")).expect("mkdir");
        std::fs::write(
            dir.path().join(".butler/config.toml"),
            "language = \"ja\"\n",
        )
        .expect("write");
        std::fs::write(dir.path().join("CLAUDE.md"), "# 私のプロジェクト\n").expect("write");
        init(dir.path(), &Launch::absolute(Path::new(EXE)), false).expect("init");
        let claude = read(&dir.path().join("CLAUDE.md"));
        let ja = crate::catalogue::template(
            crate::catalogue::Lang::Ja,
            crate::catalogue::Key::ClaudeBlock,
        );
        assert!(claude.contains(ja), "{claude}");
        assert!(claude.contains("work_session_start") && claude.contains("work_vcs"));
        init(dir.path(), &Launch::absolute(Path::new(EXE)), true).expect("remove");
        assert_eq!(read(&dir.path().join("CLAUDE.md")), "# 私のプロジェクト\n");
    }

    #[test]
    fn init_preserves_existing_settings_hooks_servers_and_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir(root.join(".claude")).expect("mkdir");
        let settings = r#"{
  "zeta": 1,
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-shell"}]}],
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]
  },
  "alpha": true
}"#;
        std::fs::write(root.join(".claude/settings.json"), settings).expect("write");
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"other": {"command": "x"}}}"#,
        )
        .expect("write");
        std::fs::write(root.join("CLAUDE.md"), "# My project\n\nRules.\n").expect("write");

        let report = init(root, &abs(EXE), false).expect("init");
        assert_eq!(changes(&report), [Change::Updated; 3]);

        let text = read(&root.join(".claude/settings.json"));
        let doc: Value = serde_json::from_str(&text).expect("json");
        let keys: Vec<&String> = doc.as_object().expect("object").keys().collect();
        assert_eq!(
            keys,
            ["zeta", "permissions", "hooks", "alpha"],
            "key order is kept"
        );
        let bash = &doc["hooks"]["PreToolUse"][0]["hooks"];
        assert_eq!(bash[0]["command"], "lint-shell");
        assert_eq!(bash[1]["command"], "\"/opt/butler/bin/butler\" git-hook");
        assert_eq!(doc["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "fmt");
        let mcp = json_at(&root.join(".mcp.json"));
        assert_eq!(mcp["mcpServers"]["other"]["command"], "x");
        assert_eq!(mcp["mcpServers"]["butler"]["args"], json!(["mcp"]));
        let claude = read(&root.join("CLAUDE.md"));
        assert!(claude.starts_with("# My project\n\nRules.\n\n<!-- butler:begin"));

        // Removing gives back exactly the original content (JSON re-indented).
        let report = init(root, &abs(EXE), true).expect("remove");
        assert_eq!(changes(&report), [Change::Updated; 3]);
        let original: Value = serde_json::from_str(settings).expect("json");
        assert_eq!(json_at(&root.join(".claude/settings.json")), original);
        assert_eq!(
            json_at(&root.join(".mcp.json")),
            json!({"mcpServers": {"other": {"command": "x"}}})
        );
        assert_eq!(read(&root.join("CLAUDE.md")), "# My project\n\nRules.\n");
    }

    #[test]
    fn second_init_changes_nothing_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        init(dir.path(), &abs(EXE), false).expect("first");
        let before = read(&dir.path().join(".claude/settings.json"));
        let report = init(dir.path(), &abs(EXE), false).expect("second");
        assert_eq!(changes(&report), [Change::Unchanged; 3]);
        assert!(!report.changed_anything());
        assert!(report.to_string().contains("Nothing to do"));
        assert_eq!(read(&dir.path().join(".claude/settings.json")), before);
    }

    #[test]
    fn init_replaces_a_stale_butler_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        init(dir.path(), &abs("/old/butler"), false).expect("first");
        init(dir.path(), &abs(EXE), false).expect("second");
        let doc = json_at(&dir.path().join(".claude/settings.json"));
        let handlers = doc["hooks"]["PreToolUse"][0]["hooks"]
            .as_array()
            .expect("array");
        assert_eq!(handlers.len(), 1);
        assert_eq!(
            handlers[0]["command"],
            "\"/opt/butler/bin/butler\" git-hook"
        );
    }

    #[test]
    fn remove_deletes_files_that_only_held_butler() {
        let dir = tempfile::tempdir().expect("tempdir");
        init(dir.path(), &abs(EXE), false).expect("init");
        let report = init(dir.path(), &abs(EXE), true).expect("remove");
        assert_eq!(changes(&report), [Change::Deleted; 3]);
        assert!(!dir.path().join(".claude").exists());
        assert!(!dir.path().join(".mcp.json").exists());
        assert!(!dir.path().join("CLAUDE.md").exists());
        let again = init(dir.path(), &abs(EXE), true).expect("remove twice");
        assert_eq!(changes(&again), [Change::Unchanged; 3]);
    }

    #[test]
    fn invalid_json_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".claude")).expect("mkdir");
        std::fs::write(dir.path().join(".claude/settings.json"), "{ not json").expect("write");
        let err = init(dir.path(), &abs(EXE), false).expect_err("must refuse");
        assert!(matches!(err, InstallError::InvalidJson { .. }));
        assert!(err.to_string().contains("nothing was written"));
        assert_eq!(
            read(&dir.path().join(".claude/settings.json")),
            "{ not json"
        );
        assert!(!dir.path().join(".mcp.json").exists());
        assert!(!dir.path().join("CLAUDE.md").exists());
    }

    #[test]
    fn hook_command_quotes_the_path() {
        assert_eq!(hook_command("/a b/butler"), "\"/a b/butler\" git-hook");
        assert_eq!(hook_command("/x$y/butler"), "\"/x\\$y/butler\" git-hook");
        assert_eq!(
            hook_program(Path::new("/p"), "\"/x\\$y/butler\" git-hook"),
            "/x$y/butler"
        );
    }

    /// A stand-in hook: denies when the input mentions `git status`, else prints nothing.
    fn fake_hook(dir: &Path) -> PathBuf {
        let path = dir.join("butler");
        let script = r#"#!/bin/sh
[ "$1" = mcp ] && exit 0
input=$(cat)
case "$input" in
  *'git status'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}' ;;
esac
exit 0
"#;
        butler_testkit::write_executable(&path, script);
        path
    }

    #[tokio::test]
    async fn doctor_runs_the_configured_hook_with_canaries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let exe = fake_hook(dir.path());
        init(dir.path(), &Launch::absolute(&exe), false).expect("init");
        let report = doctor_with(dir.path(), &exe, None, None).await;
        for name in [
            "hook_configured",
            "hook_executable",
            "hook_denies_git",
            "hook_allows_ls",
        ] {
            let check = report.check(name).expect("check ran");
            assert_eq!(check.status, Status::Ok, "{name}: {}", check.detail);
        }
        assert_eq!(
            report.check("mcp_configured").expect("ran").status,
            Status::Ok
        );
        // The stand-in is no MCP server: it exits without answering.
        assert_eq!(
            report.check("mcp_answers").expect("ran").status,
            Status::Fail
        );
        assert!(!report.healthy());
    }

    #[tokio::test]
    async fn doctor_reports_a_missing_hook_and_a_broken_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let report = doctor_with(dir.path(), Path::new(EXE), None, None).await;
        assert_eq!(
            report.check("hook_configured").expect("ran").status,
            Status::Fail
        );
        assert_eq!(
            report.check("mcp_configured").expect("ran").status,
            Status::Fail
        );
        init(dir.path(), &abs("/nonexistent/butler"), false).expect("init");
        let report = doctor_with(dir.path(), Path::new(EXE), None, None).await;
        assert_eq!(
            report.check("hook_executable").expect("ran").status,
            Status::Fail
        );
        assert_eq!(
            report.check("hook_denies_git").expect("ran").status,
            Status::Fail
        );
    }
}
