//! The instructions sent to the Brain on connect. Claude Code shows them in the
//! system prompt, cut at 4096 characters, and with tool search on lists only tool names until
//! a tool is loaded: so this text alone must say where to start — `work_session_start`, then
//! `work_observe`; git is blocked, `work_vcs` does the rest — and name what a tool name alone
//! does not explain. Tools whose names say what they do (`issue_*`, `work_diff`, …) are left to
//! the deferred list: every byte here is paid in every conversation. The text is the
//! catalogue's (`Key::Instructions`), in the language configured for the project.

use std::path::Path;

use crate::catalogue::{self, Key, Lang};

/// The instructions in `lang`.
pub fn instructions(lang: Lang) -> &'static str {
    catalogue::template(lang, Key::Instructions)
}

/// The instructions a server started in `dir` sends (see [`Lang::configured`]).
pub fn for_dir(dir: &Path) -> &'static str {
    instructions(Lang::configured(dir))
}
