//! The git-equivalents registry: which git subcommands each Brain-facing tool replaces.
//!
//! Every tool declares its git subcommands with its name ([`Tool::git_equivalents`]); this
//! module says which uses of them it covers. The hook's block messages and `work_vcs`'s
//! `use_proper_tool` refusals are both built from [`proper_tool`], so adding a tool updates
//! both.
//!
//! Most tools stand in for every use of their subcommands. The line tools cover only some
//! uses (`git switch -c x` starts a line, `git switch x` switches, `git switch --detach` is
//! neither), so a declaration also says which argument lists it covers ([`line`]); an
//! uncovered use stays with `work_vcs`.

mod line;

pub use line::suggested_params;

use crate::tool::Tool;

/// One Brain-facing tool and the git subcommands it stands in for.
#[derive(Debug, Clone, Copy)]
pub struct ToolEquivalents {
    /// The Butler tool the Brain should call instead.
    pub tool: Tool,
    /// git subcommands (as typed after `git`) that this tool replaces.
    pub git: &'static [&'static str],
    /// Whether the tool covers this use of the subcommand (the arguments after it).
    pub covers: fn(&str, &[String]) -> bool,
}

impl ToolEquivalents {
    const fn of(tool: Tool, covers: fn(&str, &[String]) -> bool) -> Self {
        ToolEquivalents {
            tool,
            git: tool.git_equivalents(),
            covers,
        }
    }
}

/// For tools that stand in for every use of their subcommands.
fn every_use(_: &str, _: &[String]) -> bool {
    true
}

/// Every declaration, in the order tools are listed to the Brain.
pub const REGISTRY: &[ToolEquivalents] = &[
    ToolEquivalents::of(Tool::WorkObserve, every_use),
    ToolEquivalents::of(Tool::WorkDiff, every_use),
    ToolEquivalents::of(Tool::WorkHistory, every_use),
    ToolEquivalents::of(Tool::WorkRecord, every_use),
    ToolEquivalents::of(Tool::WorkPublish, every_use),
    ToolEquivalents::of(Tool::WorkNewLine, line::covers_new),
    ToolEquivalents::of(Tool::WorkSwitchLine, line::covers_switch),
    ToolEquivalents::of(Tool::WorkMergeLine, line::covers_merge),
];

/// The tool that replaces `git <subcommand> <rest>`, if one does; `None` means the operation
/// belongs to `work_vcs`.
pub fn proper_tool(subcommand: &str, rest: &[String]) -> Option<&'static ToolEquivalents> {
    REGISTRY
        .iter()
        .find(|decl| decl.git.contains(&subcommand) && (decl.covers)(subcommand, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn tool(line: &str) -> Option<&'static str> {
        let mut all = words(line);
        let sub = all.remove(0);
        proper_tool(&sub, &all).map(|d| d.tool.as_str())
    }

    #[test]
    fn every_tool_with_git_equivalents_is_declared() {
        for tool in Tool::ALL {
            let declared = REGISTRY.iter().any(|d| d.tool == *tool);
            assert_eq!(declared, !tool.git_equivalents().is_empty(), "{tool}");
        }
    }

    #[test]
    fn every_use_is_covered_by_at_most_one_tool() {
        // Only tools that cover some uses share a subcommand; the corpus checks they never
        // both cover one use.
        const PARTIAL: &[Tool] = &[Tool::WorkNewLine, Tool::WorkSwitchLine, Tool::WorkMergeLine];
        for decl in REGISTRY {
            for sub in decl.git {
                let sharing: Vec<Tool> = REGISTRY
                    .iter()
                    .filter(|d| d.git.contains(sub))
                    .map(|d| d.tool)
                    .collect();
                assert!(
                    sharing.len() == 1 || sharing.iter().all(|t| PARTIAL.contains(t)),
                    "`{sub}` is declared by {sharing:?}"
                );
            }
        }
        for line in [
            "switch -c topic",
            "switch topic",
            "checkout -b topic main",
            "checkout topic",
            "checkout a.rs",
            "merge topic",
            "switch --detach HEAD",
        ] {
            let mut all = words(line);
            let sub = all.remove(0);
            let covering = REGISTRY
                .iter()
                .filter(|d| d.git.contains(&sub.as_str()) && (d.covers)(&sub, &all))
                .count();
            assert!(covering <= 1, "`git {line}` is covered by {covering} tools");
        }
    }

    #[test]
    fn each_use_maps_to_its_tool_or_to_work_vcs() {
        assert_eq!(tool("status"), Some("work_observe"));
        assert_eq!(tool("branch"), None);
        assert_eq!(tool("switch -c topic"), Some("work_new_line"));
        assert_eq!(tool("checkout -b topic"), Some("work_new_line"));
        assert_eq!(tool("switch topic"), Some("work_switch_line"));
        assert_eq!(tool("checkout main"), Some("work_switch_line"));
        assert_eq!(tool("merge topic"), Some("work_merge_line"));
        for other in [
            "merge --abort",
            "merge --continue",
            "merge --squash topic",
            "switch -",
            "switch --detach HEAD~1",
            "switch -C topic",
            "checkout -- a.rs",
            "checkout src/a.rs",
            "checkout HEAD~1 a.rs",
        ] {
            assert_eq!(tool(other), None, "`git {other}` belongs to work_vcs");
        }
    }
}
