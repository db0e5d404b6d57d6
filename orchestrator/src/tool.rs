//! The Brain-facing tool surface as a type: every tool Butler lists, its name, its annotations
//! and the git subcommands it stands in for.
//!
//! A tool's description is the doc comment of its method in `crate::server`, its schema the
//! arguments type there; everything else the rest of the crate needs to know about a tool is
//! keyed by [`Tool`], never by its name as a string. A test checks that this list and rmcp's
//! router list exactly the same tools.

use rmcp::model::{MetaObject, ToolAnnotations};

/// The hints of MCP's tool annotations that a tool sets; what is left `None` is MCP's default
/// (read-only false, destructive true, idempotent false, open-world true), which costs the
/// Brain no tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Hints {
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

/// The enum, its list and its table, from one declaration per tool.
macro_rules! tools {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal { $($hint:ident: $value:literal),* $(,)? }
        git: $git:expr;
    )*) => {
        /// One tool of the Brain-facing MCP server.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Tool {
            $($(#[$doc])* $variant,)*
        }

        impl Tool {
            /// Every tool, in the order `tools/list` lists them (by name).
            pub const ALL: &[Tool] = &[$(Tool::$variant,)*];

            /// The tool's name, as the Brain calls it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Tool::$variant => $name,)*
                }
            }

            /// The git subcommands (as typed after `git`) the tool stands in for, for some or
            /// all of their uses (see `crate::equivalents`).
            pub const fn git_equivalents(self) -> &'static [&'static str] {
                match self {
                    $(Tool::$variant => $git,)*
                }
            }

            fn hints(self) -> Hints {
                match self {
                    $(Tool::$variant => Hints { $($hint: Some($value),)* ..Hints::default() },)*
                }
            }
        }
    };
}

tools! {
    Approve = "approve" { read_only: false } git: &[];
    CancelTask = "cancel_task" { destructive: false, idempotent: true, open_world: false } git: &[];
    GetSkillUsage = "get_skill_usage" { read_only: true, open_world: false } git: &[];
    GetStatus = "get_status" { read_only: true, open_world: false } git: &[];
    IssueClose = "issue_close" { destructive: false, idempotent: true } git: &[];
    IssueComment = "issue_comment" { destructive: false } git: &[];
    IssueCreate = "issue_create" { destructive: false } git: &[];
    IssueDeleteComment = "issue_delete_comment" { idempotent: true } git: &[];
    IssueList = "issue_list" { read_only: true } git: &[];
    IssueRead = "issue_read" { read_only: true } git: &[];
    IssueReopen = "issue_reopen" { destructive: false, idempotent: true } git: &[];
    IssueUpdateBody = "issue_update_body" { destructive: false, idempotent: true } git: &[];
    IssueUpdateTitle = "issue_update_title" { destructive: false, idempotent: true } git: &[];
    ListSkills = "list_skills" { read_only: true, open_world: false } git: &[];
    RunImplement = "run_implement" { destructive: false } git: &[];
    SubmitTask = "submit_task" { read_only: false } git: &[];
    TaskAccept = "task_accept" { destructive: false, open_world: false } git: &[];
    TaskDiscard = "task_discard" { destructive: false, idempotent: true, open_world: false } git: &[];
    Teach = "teach" { read_only: false } git: &[];
    WorkDiff = "work_diff" { read_only: true, open_world: false } git: &["diff", "show"];
    WorkFinish = "work_finish" { destructive: false } git: &[];
    WorkHistory = "work_history" { read_only: true, open_world: false }
        git: &["log", "whatchanged", "shortlog"];
    WorkMergeLine = "work_merge_line" { destructive: false, open_world: false } git: &["merge"];
    WorkNewLine = "work_new_line" { destructive: false, open_world: false }
        git: &["switch", "checkout"];
    WorkObserve = "work_observe" { read_only: true, open_world: false } git: &["status"];
    // `git reflog` follows references only, and stays with `work_vcs` for what happened before
    // the log or outside Butler.
    WorkOplog = "work_oplog" { read_only: true, open_world: false } git: &[];
    WorkPublish = "work_publish" { destructive: false, idempotent: true } git: &["push"];
    WorkRecord = "work_record" { destructive: false, open_world: false } git: &["commit", "add"];
    WorkSessionStart = "work_session_start" {
        destructive: false, idempotent: true, open_world: false
    } git: &[];
    WorkStart = "work_start" { destructive: false, idempotent: true, open_world: false } git: &[];
    WorkSwitchLine = "work_switch_line" { destructive: false, idempotent: true, open_world: false }
        git: &["switch", "checkout"];
    WorkUndo = "work_undo" { destructive: false, open_world: false } git: &[];
    WorkVcs = "work_vcs" { read_only: false } git: &[];
}

impl Tool {
    /// The tool called `name`, if Butler has one.
    pub fn named(name: &str) -> Option<Tool> {
        Tool::ALL.iter().copied().find(|t| t.as_str() == name)
    }

    /// The tool's MCP annotations (only the hints it decides).
    pub fn annotations(self) -> ToolAnnotations {
        let h = self.hints();
        ToolAnnotations::from_raw(None, h.read_only, h.destructive, h.idempotent, h.open_world)
    }

    /// The tools every session calls (the server's instructions start with them): Claude Code
    /// lists them whole from the first request instead of behind its tool search, which saves
    /// the search's round trip and their names in the deferred list.
    pub const fn always_loaded(self) -> bool {
        matches!(
            self,
            Tool::WorkSessionStart | Tool::WorkObserve | Tool::WorkRecord | Tool::WorkPublish
        )
    }

    /// The tool's `_meta`: Claude Code's `anthropic/alwaysLoad` for [`Tool::always_loaded`]
    /// tools; other clients ignore it.
    pub fn meta(self) -> Option<MetaObject> {
        self.always_loaded().then(|| {
            let mut meta = serde_json::Map::new();
            meta.insert("anthropic/alwaysLoad".into(), serde_json::Value::Bool(true));
            MetaObject(meta)
        })
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool is written in JSON as its name (`next_action.tool`, `available_next`, …).
impl serde::Serialize for Tool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sorted_unique_and_found_again() {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted, "Tool::ALL is in tools/list order, each once");
        for tool in Tool::ALL {
            assert_eq!(Tool::named(tool.as_str()), Some(*tool));
        }
        assert_eq!(Tool::named("work_nothing"), None);
    }

    #[test]
    fn a_tool_is_written_as_its_name() {
        assert_eq!(
            serde_json::to_value(Tool::WorkRecord).expect("JSON"),
            serde_json::json!("work_record")
        );
        assert_eq!(Tool::WorkVcs.to_string(), "work_vcs");
    }
}
