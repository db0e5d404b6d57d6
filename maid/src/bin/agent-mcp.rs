//! The restricted worker MCP as a stand-alone program, for the Maid's tests (Butler itself
//! serves it as `butler worker-mcp --task-file <path> --notes <path>`). Accepts the same
//! arguments, with or without the leading `worker-mcp`.

fn main() -> Result<(), std::io::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .ok_or_else(|| std::io::Error::other(format!("{flag} is required")))
    };
    let task_file = std::path::PathBuf::from(value("--task-file")?);
    let notes = std::path::PathBuf::from(value("--notes")?);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(butler_worker::agent_mcp::serve_agent_mcp(task_file, notes))
}
