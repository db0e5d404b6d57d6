//! The git-equivalents registry: which git subcommands each Brain-facing tool replaces.
//!
//! Every tool declares its git equivalents beside its definition (`GIT_EQUIVALENTS` in
//! `crate::work::*`); this module only collects them. The hook's block messages and
//! `work_vcs`'s `use_proper_tool` refusals are both built from [`proper_tool`], so adding a
//! tool updates both.

use crate::work;

/// One Brain-facing tool and the git subcommands it stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolEquivalents {
    /// The Butler tool the Brain should call instead.
    pub tool: &'static str,
    /// git subcommands (as typed after `git`) that this tool replaces.
    pub git: &'static [&'static str],
}

/// Every declaration, in the order tools are listed to the Brain.
pub const REGISTRY: &[ToolEquivalents] = &[
    ToolEquivalents {
        tool: "work_observe",
        git: work::observe::GIT_EQUIVALENTS,
    },
    ToolEquivalents {
        tool: "work_diff",
        git: work::diff::GIT_EQUIVALENTS,
    },
    ToolEquivalents {
        tool: "work_history",
        git: work::history::GIT_EQUIVALENTS,
    },
    ToolEquivalents {
        tool: "work_record",
        git: work::record::GIT_EQUIVALENTS,
    },
    ToolEquivalents {
        tool: "work_publish",
        git: work::publish::GIT_EQUIVALENTS,
    },
];

/// The tool that replaces `subcommand`, if one does; `None` means the operation belongs to
/// `work_vcs`.
pub fn proper_tool(subcommand: &str) -> Option<&'static ToolEquivalents> {
    REGISTRY.iter().find(|decl| decl.git.contains(&subcommand))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_subcommand_has_at_most_one_tool() {
        let mut seen = std::collections::HashSet::new();
        for decl in REGISTRY {
            for sub in decl.git {
                assert!(seen.insert(*sub), "`{sub}` is declared by two tools");
            }
        }
    }

    #[test]
    fn status_maps_to_observe_and_branch_to_nothing() {
        assert_eq!(proper_tool("status").map(|d| d.tool), Some("work_observe"));
        assert_eq!(proper_tool("branch"), None);
    }
}
