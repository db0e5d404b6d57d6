//! The instructions sent to the Brain on connect. Claude Code shows them in the system prompt
//! (under a heading of its own), cut at 4096 characters, and with tool search on lists only tool
//! names until a tool is loaded, except the four every session calls (`_meta`
//! `anthropic/alwaysLoad`), whose descriptions say what they replace. So this text says only
//! where to start — `work_session_start`, then `work_observe` — and that git in the shell is
//! blocked, `work_vcs` doing what no other tool covers; every other tool is left to its name in
//! the deferred list and its description: every byte here is paid in every conversation. The
//! text is the catalogue's (`Key::Instructions`), in the language configured for the project.

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
