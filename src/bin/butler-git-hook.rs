//! `butler-git-hook`: the same PreToolUse hook as `butler git-hook`, in a binary that carries
//! only the hook. It runs before every shell command the Brain issues, and a process start of
//! the full `butler` binary (MCP server, HTTP client, SQLite, libgit2) costs more page faults
//! than the analysis itself; `butler init` installs this one when it sits beside `butler`.
//! Arguments are ignored (so `butler-git-hook git-hook` works too).

fn main() {
    std::process::exit(butler_orchestrator::hook::run_stdio());
}
