//! Procedures (the seed's SOPs): typed steps the Brain teaches once, identified by intent and
//! target signature, and what a taught step list must look like.
//!
//! A step is one of four kinds, written as the Brain teaches it:
//!
//! | kind | fields |
//! |---|---|
//! | `cmd` | `argv` (a program and its arguments, no shell) or `shell` (a script for `sh -c`, only when the step says so); `cwd` (inside the project, default its root), `timeout_s` (default 60), `exit_code` (default 0), `writes` (paths it may write besides the project's files: project-relative, absolute or `~/…`) |
//! | `check` | a verifier: `command` (a shell line) with `exit_code`, `output_contains`, `output_matches`; or `path` with `exists`/`absent: true` or `contains` |
//! | `wait` | `until` (a check), `timeout_s` (default 60), `interval_s` (default 2) |
//! | `mcp_call` | `server` (named in `[mcp_servers]`), `tool`, `params` (an object), `timeout_s` (default 60), `output_contains` |
//!
//! `{target.NAME}` in an `argv` word, a `cwd`, a file check's `path` or a text value of
//! `params` stands for the task's target value `NAME`; shell lines read the same values from
//! the environment as `$TARGET_NAME`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::contract::submission::{command_check, file_check, relative_path};
use crate::contract::written::{Given, Read, fields, join, read, variants};
use crate::contract::{
    CommandCheck, FieldProblem, FileCheck, FileCheckSpec, FileExpectation, StepKind,
};

/// Most steps in one procedure.
pub(crate) const MAX_STEPS: usize = 50;
/// A step's time limit when it names none, and the longest allowed, in seconds.
pub(crate) const DEFAULT_STEP_TIMEOUT_S: u64 = 60;
pub(crate) const MAX_STEP_TIMEOUT_S: u64 = 60 * 60;
const MAX_ARGV: usize = 256;
const MAX_WORD_CHARS: usize = 4096;
const MAX_SHELL_CHARS: usize = 16 * 1024;
const MAX_PARAMS_BYTES: usize = 64 * 1024;
const MAX_INTERVAL_S: u64 = 60;
/// Most paths one step may declare in `writes`.
const MAX_WRITES: usize = 32;

/// The step kinds a procedure may use, as the Brain writes them.
pub(crate) fn step_kinds() -> &'static [&'static str] {
    variants::<TaughtKind>()
}

/// A taught step's `kind`: which written form its other fields are read into.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TaughtKind {
    Cmd,
    Check,
    Wait,
    McpCall,
}

/// The field of a taught step that names its kind.
const KIND: &str = "kind";

/// A `cmd` step as taught: each field read on its own, checked by [`Place::cmd`].
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TaughtCmd {
    argv: Given<Vec<String>>,
    shell: Given<String>,
    cwd: Given<String>,
    timeout_s: Given<u64>,
    exit_code: Given<i32>,
    writes: Given<Vec<Given<String>>>,
}

/// A `wait` step as taught.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TaughtWait {
    until: Given<Map<String, Value>>,
    timeout_s: Given<u64>,
    interval_s: Given<u64>,
}

/// An `mcp_call` step as taught.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TaughtMcpCall {
    server: Given<String>,
    tool: Given<String>,
    params: Given<Map<String, Value>>,
    timeout_s: Given<u64>,
    output_contains: Given<String>,
}

/// The fields of a `check` step: those of a command check and of a file check (which one it
/// is, its `command` or its `path` says).
fn check_fields() -> impl Iterator<Item = &'static str> {
    fields::<CommandCheck>()
        .iter()
        .chain(fields::<FileCheckSpec>())
        .copied()
}

/// One step of a procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    Cmd(CmdStep),
    Check(Verifier),
    Wait(WaitStep),
    McpCall(McpCallStep),
}

impl Step {
    pub fn kind(&self) -> StepKind {
        match self {
            Step::Cmd(_) => StepKind::Cmd,
            Step::Check(_) => StepKind::Check,
            Step::Wait(_) => StepKind::Wait,
            Step::McpCall(_) => StepKind::McpCall,
        }
    }
}

/// A program to run: its argument list, or a shell script the step asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandLine {
    Argv(Vec<String>),
    Shell(String),
}

impl CommandLine {
    /// One line for evidence and approval texts.
    pub(crate) fn shown(&self) -> String {
        match self {
            CommandLine::Argv(argv) => argv
                .iter()
                .map(|w| shlex::try_quote(w).map_or_else(|_| format!("{w:?}"), |q| q.into_owned()))
                .collect::<Vec<_>>()
                .join(" "),
            CommandLine::Shell(script) => format!("sh -c {script:?}"),
        }
    }
}

/// `cmd`: runs a program in the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdStep {
    #[serde(flatten)]
    pub run: CommandLine,
    /// Relative to the project root (`.` for the root itself).
    pub cwd: String,
    pub timeout_s: u64,
    pub exit_code: i32,
    /// Paths the step may write besides the project's own files, as taught: project-relative
    /// (a new top-level directory such as `dist/`), absolute, or `~/…`. Writes outside the
    /// project cannot be undone: a step declaring any waits for the user's approval each run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
}

/// Where a declared path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Declared {
    /// Inside the project, relative to its root.
    Project(String),
    /// Outside: an absolute path, or one under the user's home (`~/…`).
    Absolute(std::path::PathBuf),
    Home(String),
}

impl Declared {
    /// Reads one `writes` entry as taught (already checked by `teach`).
    pub(crate) fn of(entry: &str) -> Declared {
        if let Some(rest) = entry.strip_prefix("~/") {
            Declared::Home(rest.trim_end_matches('/').to_owned())
        } else if entry.starts_with('/') {
            Declared::Absolute(std::path::PathBuf::from(entry))
        } else {
            Declared::Project(entry.trim_end_matches('/').to_owned())
        }
    }
}

/// `check`: a verifier of the project's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Verifier {
    /// A shell line in the project root: its exit code and output.
    Command(CommandCheck),
    /// A file in the project: it exists, is absent, or contains a text.
    File(FileCheck),
}

impl Verifier {
    pub(crate) fn shown(&self) -> String {
        match self {
            Verifier::Command(c) => c.command.clone(),
            Verifier::File(f) => match &f.expect {
                FileExpectation::Exists => format!("{} exists", f.path),
                FileExpectation::Absent => format!("{} is absent", f.path),
                FileExpectation::Contains(text) => format!("{} contains {text:?}", f.path),
            },
        }
    }
}

/// `wait`: repeats a check until it passes or the time is up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitStep {
    pub until: Verifier,
    pub timeout_s: u64,
    pub interval_s: u64,
}

/// `mcp_call`: calls a tool of an MCP server named in the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpCallStep {
    pub server: String,
    pub tool: String,
    pub params: Map<String, Value>,
    pub timeout_s: u64,
    /// Text the tool's answer must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_contains: Option<String>,
}

impl McpCallStep {
    pub(crate) fn shown(&self) -> String {
        format!("{}.{}", self.server, self.tool)
    }
}

/// Reads a taught step list. `keys` are the target's names the steps may refer to
/// (`{target.NAME}`); `servers` the MCP servers the configuration names. Every problem is
/// named by its place (`steps[2].argv`).
pub fn parse_steps(
    raw: &[Value],
    keys: &BTreeSet<String>,
    servers: &BTreeSet<String>,
) -> Result<Vec<Step>, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    if raw.is_empty() || raw.len() > MAX_STEPS {
        problems.push(FieldProblem {
            field: "steps".into(),
            problem: format!("give 1 to {MAX_STEPS} steps"),
        });
        return Err(problems);
    }
    let mut steps = Vec::with_capacity(raw.len());
    for (i, value) in raw.iter().enumerate() {
        let mut at = Place {
            prefix: format!("steps[{i}]"),
            problems: &mut problems,
            keys,
        };
        if let Some(step) = at.step(value, servers) {
            steps.push(step);
        }
    }
    if problems.is_empty() {
        Ok(steps)
    } else {
        Err(problems)
    }
}

/// One step being read, with the problems found so far.
struct Place<'a> {
    prefix: String,
    problems: &'a mut Vec<FieldProblem>,
    keys: &'a BTreeSet<String>,
}

impl Place<'_> {
    fn add(&mut self, field: &str, problem: impl Into<String>) {
        let field = if field.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}.{field}", self.prefix)
        };
        self.problems.push(FieldProblem {
            field,
            problem: problem.into(),
        });
    }

    fn step(&mut self, value: &Value, servers: &BTreeSet<String>) -> Option<Step> {
        let Value::Object(map) = value else {
            self.add("", "give each step as an object with a `kind`");
            return None;
        };
        let written = map.get(KIND).and_then(Value::as_str).unwrap_or_default();
        let Ok(kind) = serde_json::from_value::<TaughtKind>(Value::from(written)) else {
            self.add(
                KIND,
                format!(
                    "`{}` is not a step kind (kinds: {})",
                    written.chars().take(40).collect::<String>(),
                    step_kinds().join(", ")
                ),
            );
            return None;
        };
        // Every other field is hostile until read into the kind's written form and checked.
        let fields: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| *k != KIND)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let before = self.problems.len();
        let step = match kind {
            TaughtKind::Cmd => {
                let form = self.form::<TaughtCmd>(&fields, written);
                self.cmd(form).map(Step::Cmd)
            }
            TaughtKind::Check => {
                let known: Map<String, Value> = fields
                    .into_iter()
                    .filter(|(k, _)| {
                        let known = check_fields().any(|f| f == k);
                        if !known {
                            self.add(k, format!("not a field of a `{written}` step"));
                        }
                        known
                    })
                    .collect();
                self.verifier("", &known).map(Step::Check)
            }
            TaughtKind::Wait => {
                let form = self.form::<TaughtWait>(&fields, written);
                self.wait(form).map(Step::Wait)
            }
            TaughtKind::McpCall => {
                let form = self.form::<TaughtMcpCall>(&fields, written);
                self.mcp_call(form, servers).map(Step::McpCall)
            }
        };
        if self.problems.len() == before {
            step
        } else {
            None
        }
    }

    /// Reads a step's fields into its kind's written form; a field the kind does not have is
    /// named.
    fn form<T: serde::de::DeserializeOwned + Default>(
        &mut self,
        fields: &Map<String, Value>,
        kind: &str,
    ) -> T {
        let Read {
            value,
            unknown,
            broken,
        } = read::<T>(fields);
        for key in unknown {
            self.add(&key, format!("not a field of a `{kind}` step"));
        }
        if let Some(wrong) = broken {
            self.add(&wrong.path, wrong.reason);
        }
        value
    }

    fn timeout(&mut self, given: &Given<u64>, field: &str, max: u64, default: u64) -> u64 {
        match given {
            Given::Absent | Given::Null => default,
            Given::Is(s) if (1..=max).contains(s) => *s,
            _ => {
                self.add(field, format!("give whole seconds in 1..={max}"));
                default
            }
        }
    }

    fn cmd(&mut self, form: TaughtCmd) -> Option<CmdStep> {
        let run = match (&form.argv, &form.shell) {
            (Given::Absent, Given::Absent) => {
                self.add(
                    "",
                    "give exactly one of `argv` (a program and its arguments) and `shell` (a \
                     script for `sh -c`)",
                );
                None
            }
            (argv, Given::Absent) => self.argv(argv).map(CommandLine::Argv),
            (Given::Absent, Given::Is(script)) => {
                if script.trim().is_empty() || script.len() > MAX_SHELL_CHARS {
                    self.add(
                        "shell",
                        format!("give a script of 1 to {MAX_SHELL_CHARS} bytes"),
                    );
                    None
                } else {
                    self.no_placeholder("shell", script);
                    Some(CommandLine::Shell(script.clone()))
                }
            }
            (Given::Absent, _) => {
                self.add("shell", "give the script as text");
                None
            }
            _ => {
                self.add(
                    "",
                    "give exactly one of `argv` (a program and its arguments) and `shell` (a \
                     script for `sh -c`)",
                );
                None
            }
        };
        let cwd = match &form.cwd {
            Given::Absent | Given::Null => ".".to_owned(),
            Given::Is(path) => {
                self.placeholders("cwd", path);
                match relative_path(path) {
                    Ok(p) if !p.contains(['*', '?', '[']) => p,
                    Ok(_) => {
                        self.add("cwd", "name a directory, not a glob");
                        ".".to_owned()
                    }
                    Err(e) => {
                        self.add("cwd", format!("{e} (a step runs inside the project)"));
                        ".".to_owned()
                    }
                }
            }
            Given::Wrong(_) => {
                self.add("cwd", "give a path relative to the project root");
                ".".to_owned()
            }
        };
        let timeout_s = self.timeout(
            &form.timeout_s,
            "timeout_s",
            MAX_STEP_TIMEOUT_S,
            DEFAULT_STEP_TIMEOUT_S,
        );
        let exit_code = match form.exit_code {
            Given::Absent | Given::Null => 0,
            Given::Is(c) => c,
            Given::Wrong(_) => {
                self.add("exit_code", "give an integer");
                0
            }
        };
        let writes = self.writes(&form.writes);
        Some(CmdStep {
            run: run?,
            cwd,
            timeout_s,
            exit_code,
            writes,
        })
    }

    /// `writes`: paths, each project-relative (inside the project, never its git data),
    /// absolute, or `~/…`, without `..`, globs or placeholders (where a step may write is the
    /// procedure's, never the target's).
    fn writes(&mut self, given: &Given<Vec<Given<String>>>) -> Vec<String> {
        let items = match given {
            Given::Absent | Given::Null => return Vec::new(),
            Given::Is(items) if items.len() <= MAX_WRITES => items,
            _ => {
                self.add(
                    "writes",
                    format!("give at most {MAX_WRITES} paths the step writes, as texts"),
                );
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = format!("writes[{i}]");
            let Given::Is(path) = item else {
                self.add(&field, "give the path as text");
                continue;
            };
            match write_problem(path) {
                Some(problem) => self.add(&field, problem),
                None => out.push(path.clone()),
            }
        }
        out
    }

    fn argv(&mut self, given: &Given<Vec<String>>) -> Option<Vec<String>> {
        match given {
            Given::Is(words)
                if !words.is_empty()
                    && words.len() <= MAX_ARGV
                    && !words[0].trim().is_empty()
                    && words
                        .iter()
                        .all(|w| w.len() <= MAX_WORD_CHARS && !w.contains('\0')) =>
            {
                for word in words {
                    self.placeholders("argv", word);
                }
                if words[0].contains("{target.") {
                    self.add("argv", "the program itself cannot come from the target");
                }
                Some(words.clone())
            }
            _ => {
                self.add(
                    "argv",
                    format!("give the program and its arguments as 1 to {MAX_ARGV} strings"),
                );
                None
            }
        }
    }

    /// A check (`check`'s own fields, or `wait`'s `until`), read as a command check or a file
    /// check by the contract's own readers.
    fn verifier(&mut self, field: &str, map: &Map<String, Value>) -> Option<Verifier> {
        let value = Value::Object(map.clone());
        if map.contains_key("command") {
            match command_check(&value) {
                Ok(check) => {
                    self.no_placeholder(&join(field, "command"), &check.command);
                    Some(Verifier::Command(check))
                }
                Err(problem) => {
                    self.add(field, problem);
                    None
                }
            }
        } else if map.contains_key("path") {
            match file_check(0, &value) {
                Ok(check) => {
                    self.placeholders(&join(field, "path"), &check.path);
                    if let FileExpectation::Contains(text) = &check.expect {
                        self.placeholders(&join(field, "contains"), text);
                    }
                    Some(Verifier::File(check))
                }
                Err(problem) => {
                    self.add(field, problem.replace("`file_checks` entry 0 ", ""));
                    None
                }
            }
        } else {
            self.add(
                field,
                "give `command` (with `exit_code`, `output_contains`, `output_matches`) or `path` \
                 (with `exists`, `absent` or `contains`)",
            );
            None
        }
    }

    fn wait(&mut self, form: TaughtWait) -> Option<WaitStep> {
        let until = match &form.until {
            Given::Is(map) => self.verifier("until", map),
            Given::Absent => {
                self.add("until", "give the check to wait for");
                None
            }
            Given::Null | Given::Wrong(_) => {
                self.add(
                    "until",
                    "give a check: `{command, …}` or `{path, exists|absent|contains}`",
                );
                None
            }
        };
        let timeout_s = self.timeout(
            &form.timeout_s,
            "timeout_s",
            MAX_STEP_TIMEOUT_S,
            DEFAULT_STEP_TIMEOUT_S,
        );
        let interval_s = self.timeout(&form.interval_s, "interval_s", MAX_INTERVAL_S, 2);
        Some(WaitStep {
            until: until?,
            timeout_s,
            interval_s,
        })
    }

    fn mcp_call(&mut self, form: TaughtMcpCall, servers: &BTreeSet<String>) -> Option<McpCallStep> {
        let server = match &form.server {
            Given::Is(server) => server.as_str(),
            _ => "",
        };
        if server.is_empty() {
            self.add(
                "server",
                "name the MCP server (a `[mcp_servers.<name>]` entry)",
            );
        } else if !servers.contains(server) {
            self.add(
                "server",
                format!(
                    "`{}` is not configured (configured: {}); ask the user to add \
                     `[mcp_servers.{0}]` to their ~/.config/butler/config.toml (or to a \
                     .butler/config.toml they trust with `butler trust`)",
                    server.chars().take(64).collect::<String>(),
                    if servers.is_empty() {
                        "none".to_owned()
                    } else {
                        servers.iter().cloned().collect::<Vec<_>>().join(", ")
                    }
                ),
            );
        }
        let tool = match &form.tool {
            Given::Is(tool) => tool.as_str(),
            _ => "",
        };
        if tool.is_empty() || tool.len() > 128 {
            self.add("tool", "name the tool to call");
        }
        let params = match form.params {
            Given::Absent | Given::Null => Map::new(),
            Given::Is(params)
                if Value::Object(params.clone()).to_string().len() <= MAX_PARAMS_BYTES =>
            {
                let mut texts = Vec::new();
                strings_in(&Value::Object(params.clone()), &mut texts);
                for text in texts {
                    self.placeholders("params", &text);
                }
                params
            }
            _ => {
                self.add(
                    "params",
                    "give the tool's arguments as an object (at most 64 KiB)",
                );
                Map::new()
            }
        };
        let timeout_s = self.timeout(&form.timeout_s, "timeout_s", 600, DEFAULT_STEP_TIMEOUT_S);
        let output_contains = match form.output_contains {
            Given::Absent | Given::Null => None,
            Given::Is(text) if !text.is_empty() => Some(text),
            _ => {
                self.add("output_contains", "give the text the answer must contain");
                None
            }
        };
        Some(McpCallStep {
            server: server.to_owned(),
            tool: tool.to_owned(),
            params,
            timeout_s,
            output_contains,
        })
    }

    /// Every `{target.NAME}` in `text` must name a target value the procedure has.
    fn placeholders(&mut self, field: &str, text: &str) {
        for name in placeholder_names(text) {
            if !self.keys.contains(&name) {
                self.add(
                    field,
                    format!("`{{target.{name}}}` names no value of the target"),
                );
            }
        }
    }

    /// Shell lines read target values from the environment, never spliced into the script.
    fn no_placeholder(&mut self, field: &str, text: &str) {
        if let Some(name) = placeholder_names(text).into_iter().next() {
            self.add(
                field,
                format!(
                    "a shell line reads target values from the environment: write \
                     `$TARGET_{}` instead of `{{target.{name}}}`",
                    name.to_ascii_uppercase()
                ),
            );
        }
    }
}

/// What is wrong with one `writes` entry, if anything.
fn write_problem(path: &str) -> Option<String> {
    if path.is_empty() || path.len() > MAX_WORD_CHARS || path.contains('\0') {
        Some("give a path of 1 to 4096 bytes".to_owned())
    } else if path.contains("{target.") {
        Some(
            "where a step writes is the procedure's, never the target's: name the path itself"
                .to_owned(),
        )
    } else if path.contains(['*', '?', '[']) {
        Some("name a path, not a glob".to_owned())
    } else if path
        .split('/')
        .any(|c| c == ".." || (c == "." && path != "."))
    {
        Some("give the path without `.` or `..` components".to_owned())
    } else if path == "/" || path == "~" || path == "~/" {
        Some("name a directory or file, not the whole file system or home".to_owned())
    } else if path.starts_with('~') && !path.starts_with("~/") {
        Some("write the home as `~/…`".to_owned())
    } else if !path.starts_with('/') && !path.starts_with("~/") {
        match relative_path(path) {
            Ok(p) if p == "." || p.split('/').next() == Some(".git") => Some(
                "the project's files are writable already and its git data never is: name a \
                 new top-level directory (`dist/`) or a path outside"
                    .to_owned(),
            ),
            Ok(_) => None,
            Err(e) => Some(e),
        }
    } else {
        None
    }
}

fn strings_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings_in(v, out)),
        _ => {}
    }
}

/// The names `NAME` of every `{target.NAME}` in `text`.
pub(crate) fn placeholder_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{target.") {
        let after = &rest[start + "{target.".len()..];
        match after.find('}') {
            Some(end) => {
                out.push(after[..end].to_owned());
                rest = &after[end + 1..];
            }
            None => {
                out.push(after.to_owned());
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn keys(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    fn parse(steps: Value) -> Result<Vec<Step>, Vec<FieldProblem>> {
        let raw = steps.as_array().expect("array").clone();
        parse_steps(&raw, &keys(&["service"]), &keys(&["kb"]))
    }

    fn fields(problems: &[FieldProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.field.as_str()).collect()
    }

    #[test]
    fn the_four_kinds_read_with_their_defaults() {
        let steps = parse(json!([
            {"kind": "cmd", "argv": ["systemctl", "restart", "{target.service}"]},
            {"kind": "cmd", "shell": "echo \"$TARGET_SERVICE\" | tee run/x", "cwd": "deploy/", "timeout_s": 5},
            {"kind": "check", "command": "curl -fs localhost/health", "output_matches": "^ok"},
            {"kind": "check", "path": "run/{target.service}.pid", "exists": true},
            {"kind": "wait", "until": {"path": "run/ready", "exists": true}, "timeout_s": 30},
            {"kind": "mcp_call", "server": "kb", "tool": "note", "params": {"text": "{target.service} restarted"}}
        ]))
        .expect("valid");
        let Step::Cmd(first) = &steps[0] else {
            panic!("cmd")
        };
        assert_eq!(
            (first.cwd.as_str(), first.timeout_s, first.exit_code),
            (".", 60, 0)
        );
        let Step::Cmd(second) = &steps[1] else {
            panic!("cmd")
        };
        assert_eq!(second.cwd, "deploy/");
        let Step::Wait(wait) = &steps[4] else {
            panic!("wait")
        };
        assert_eq!(wait.interval_s, 2);
        let stored = serde_json::to_value(&steps).expect("json");
        assert_eq!(stored[0]["kind"], "cmd");
        assert_eq!(stored[0]["argv"][2], "{target.service}");
        let back: Vec<Step> = serde_json::from_value(stored).expect("reads back");
        assert_eq!(back, steps);
    }

    #[test]
    fn an_unknown_kind_and_wrong_fields_are_named_by_place() {
        let problems = parse(json!([
            {"kind": "ssh", "host": "x"},
            {"kind": "cmd", "argv": ["ls"], "shell": "ls"},
            {"kind": "cmd", "argv": ["ls"], "cwd": "../elsewhere"},
            {"kind": "cmd", "argv": ["cat", "{target.host}"]},
            {"kind": "cmd", "shell": "systemctl restart {target.service}"},
            {"kind": "mcp_call", "server": "tracker", "tool": "x"},
            {"kind": "check", "command": "true", "colour": 1},
            {"kind": "wait", "until": {"path": "/etc/passwd", "exists": true}}
        ]))
        .expect_err("refused");
        assert_eq!(
            fields(&problems),
            [
                "steps[0].kind",
                "steps[1]",
                "steps[2].cwd",
                "steps[3].argv",
                "steps[4].shell",
                "steps[5].server",
                "steps[6].colour",
                "steps[7].until"
            ]
        );
        assert!(
            problems[0].problem.contains("cmd, check, wait, mcp_call"),
            "{:?}",
            problems[0]
        );
        assert!(
            problems[5].problem.contains("not configured"),
            "{:?}",
            problems[5]
        );
    }

    #[test]
    fn declared_writes_are_checked_and_named_by_place() {
        let steps = parse(json!([
            {"kind": "cmd", "argv": ["make"], "writes": ["dist/", "/var/cache/app", "~/.cache/tool"]}
        ]))
        .expect("valid");
        let Step::Cmd(cmd) = &steps[0] else {
            panic!("cmd")
        };
        assert_eq!(cmd.writes, ["dist/", "/var/cache/app", "~/.cache/tool"]);
        assert_eq!(Declared::of("dist/"), Declared::Project("dist".into()));
        assert_eq!(
            Declared::of("~/.cache/tool"),
            Declared::Home(".cache/tool".into())
        );
        let problems = parse(json!([
            {"kind": "cmd", "argv": ["make"],
             "writes": ["../up", ".git/hooks", "/", "~", "{target.service}", "/a/../b", "src/*", "~x/y", 3, "."]}
        ]))
        .expect_err("refused");
        assert_eq!(
            fields(&problems),
            (0..10)
                .map(|i| format!("steps[0].writes[{i}]"))
                .collect::<Vec<_>>()
        );
        assert!(
            fields(
                &parse(json!([{"kind": "check", "command": "true", "writes": ["x/"]}]))
                    .expect_err("a check writes nothing")
            )
            .contains(&"steps[0].writes")
        );
    }

    #[test]
    fn no_steps_or_too_many_is_refused() {
        assert_eq!(fields(&parse(json!([])).expect_err("empty")), ["steps"]);
        let many: Vec<Value> = (0..=MAX_STEPS)
            .map(|_| json!({"kind": "cmd", "argv": ["true"]}))
            .collect();
        assert_eq!(
            fields(&parse(Value::Array(many)).expect_err("many")),
            ["steps"]
        );
    }

    #[test]
    fn command_lines_show_as_typed() {
        let argv = CommandLine::Argv(vec!["echo".into(), "a b".into(), "it's".into()]);
        assert_eq!(argv.shown(), "echo 'a b' \"it's\"");
        assert_eq!(placeholder_names("a{target.x}b{target.y}"), ["x", "y"]);
    }
}
