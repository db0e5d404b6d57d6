//! The text of the Maid's own records, written exactly as the orchestrator writes a record
//! (`orchestrator/src/work/message.rs`): the message, a blank line, `Refs: #N` when the task has
//! an issue, then the trailers — the Maid's `Butler-Task: <id>` before `Butler-Record: <id>`.

/// The full commit text of a Maid record.
pub fn compose(message: &str, issue_ids: &[u64], task_id: &str, record_id: &str) -> String {
    let mut text = message.trim_end().to_owned();
    text.push_str("\n\n");
    if !issue_ids.is_empty() {
        let refs: Vec<String> = issue_ids.iter().map(|n| format!("#{n}")).collect();
        text.push_str(&format!("Refs: {}\n", refs.join(", ")));
    }
    text.push_str(&format!("Butler-Task: {task_id}\n"));
    text.push_str(&format!("Butler-Record: {record_id}\n"));
    text
}

/// The record id a commit message claims (`Butler-Record:` trailer), if any.
pub fn record_id_of(message: &str) -> Option<String> {
    message
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("Butler-Record:"))
        .map(|id| id.trim().to_owned())
}

/// The first line of the goal, at most 72 characters: the subject of the task's records.
pub fn subject(goal: &str) -> String {
    goal.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(72)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_follow_the_orchestrators_layout() {
        assert_eq!(
            compose("Add greet\n", &[5], "t3", "20260415-002"),
            "Add greet\n\nRefs: #5\nButler-Task: t3\nButler-Record: 20260415-002\n"
        );
        let text = compose("Add greet", &[], "t3", "20260415-002");
        assert_eq!(
            text,
            "Add greet\n\nButler-Task: t3\nButler-Record: 20260415-002\n"
        );
        assert_eq!(record_id_of(&text).as_deref(), Some("20260415-002"));
        assert_eq!(subject("line one\nline two"), "line one");
    }
}
