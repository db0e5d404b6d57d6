//! The Claude Code PreToolUse hook (filled in by its owner).
