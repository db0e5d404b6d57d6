//! The instructions sent to the Brain on connect (seed BWR). Claude Code shows them in the
//! system prompt, cut at 4096 characters, and with tool search on lists only tool names until
//! a tool is loaded: so this text alone must say where to start. Kept well under 2 KB.

pub const INSTRUCTIONS: &str = "\
Butler is this project's work-record system: use it instead of git and the issue tracker.
1. Once per session: work_session_start(project_root).
2. Then, and whenever unsure what to do next: work_observe(). It returns the work state, changed \
files, recent records, the active issue, and required_action: the one thing to do next.
- work_start(issue_id): the issue this work is for.
- work_record(message?, issue_ids?): save all current work as a permanent record (no message: \
one is proposed).
- work_publish(): share recorded work. When the user asks to commit, push, publish or finalise: \
work_observe, then work_record if needed, then work_publish.
- work_finish(auto?, close?): the closing checklist; auto=true records, publishes and comments \
on the active issue itself.
- work_new_line(name?), work_switch_line(name), work_merge_line(name?): lines of work.
- work_diff(path?, level?, record_id?): the changes themselves, only when needed.
- work_history(n?, path?): past records.
- work_vcs(args): other version-control operations (branch, stash, fetch, ...).
- run_implement(goal, target_paths, ...): delegate an implementation to a supervised agent on \
its own line of work; read the evidence, then task_accept or task_discard.
- issue_read, issue_create, issue_comment, issue_delete_comment, issue_update_title, \
issue_update_body, issue_reopen, issue_close, issue_list. Issue bodies have three sections: \
## Current state, ## Next action, ## Blockers; Butler asks when one is missing.
Shell git commands are blocked. Low-level backend operations are not offered.";

#[cfg(test)]
mod tests {
    #[test]
    fn fits_what_claude_code_shows() {
        assert!(
            super::INSTRUCTIONS.len() < 2048,
            "{}",
            super::INSTRUCTIONS.len()
        );
    }
}
