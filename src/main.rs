//! `butler`: the command line. Wiring only; everything else lives in the library crates.

mod demo;
mod oplog_cli;
mod sandbox_cli;
mod task_cli;
mod trust_cli;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use butler_worker::config::Environment;
use butler_worker::time::{FixedClock, SharedClock, SystemClock, Timestamp};
use clap::{Parser, Subcommand};
use task_cli::project_dir;

#[derive(Parser)]
#[command(
    name = "butler",
    version,
    about = "A work-record system for AI coding agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the Brain-facing MCP server on stdio (what Claude Code starts).
    Mcp,
    /// Serve the Brain-facing MCP server over streamable HTTP, for several clients at once; each
    /// MCP session has its own project and active issue, and every request needs the bearer
    /// token. Stops on SIGTERM/SIGINT after the calls in flight finish.
    Serve(ServeArgs),
    /// Claude Code PreToolUse hook: blocks shell git and names the Butler tool instead.
    GitHook,
    /// Install Butler into a project for Claude Code: the git hook, the MCP server entry and a
    /// short guidance block in CLAUDE.md (merged, idempotent; `--remove` takes it out again).
    Init {
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        /// Take out exactly what `init` added.
        #[arg(long)]
        remove: bool,
    },
    /// Prove the installation works: the hook denies a canary `git status` and allows `ls`,
    /// and the MCP server starts and answers.
    Doctor {
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
        /// Check a running `butler serve --http` at this URL instead (`http://127.0.0.1:8765/mcp`):
        /// initialize, the tool list and a `work_observe` round trip.
        #[arg(long, value_name = "URL")]
        http: Option<String>,
        /// With `--http`: the bearer token's file (else `BUTLER_HTTP_TOKEN`, else
        /// `$XDG_CONFIG_HOME/butler/http-token`).
        #[arg(long, requires = "http")]
        token_file: Option<PathBuf>,
    },
    /// The restricted MCP server an implementation agent is given (started by the agent).
    WorkerMcp {
        /// The task's contract, as the Maid wrote it.
        #[arg(long)]
        task_file: PathBuf,
        /// Where the agent's notes are appended for the Maid.
        #[arg(long)]
        notes: PathBuf,
    },
    /// Run a program under a reaper that ends everything it leaves running, confined with
    /// Landlock when a policy is given (how the Maid starts agents and verify commands):
    /// `sandbox-exec (--policy FILE [--report FILE] | --unconfined) [--leftovers FILE]
    /// [--grace-ms N] -- PROGRAM [ARGS…]`.
    #[command(disable_help_flag = true)]
    SandboxExec {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Delegated implementation tasks: list them, show one, print its log, open a shell in it.
    #[command(subcommand)]
    Task(task_cli::TaskCommand),
    /// Run a delegated implementation task from the terminal (live progress on stderr, a
    /// summary on stdout, or the result as JSON with `--json`).
    Implement(task_cli::ImplementCommand),
    /// Trust the project's `.butler/config.toml` as it is now: its settings of what runs and
    /// where it may reach (sandbox, network, programs, env_allow, …) apply until the file
    /// changes. Recorded in the user's configuration directory.
    Trust {
        /// The project (default: the current directory).
        project: Option<PathBuf>,
        /// Forget the trust instead.
        #[arg(long)]
        revoke: bool,
    },
    /// List the operations Butler ran on the project (newest first), each undoable.
    Oplog {
        /// How many (default 20).
        #[arg(default_value_t = 20)]
        n: usize,
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// Restore the project's files, index and references to before an operation (default: the
    /// newest); refused, changing nothing, when later work would be lost. Itself undoable.
    Undo {
        /// The operation's id (from `butler oplog`).
        operation: Option<u64>,
        /// The project (default: the current directory).
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// Run a scratch project through a real MCP session and print what the Brain sees.
    Demo {
        /// Keep the scratch project instead of deleting it.
        #[arg(long)]
        keep: bool,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Listen on this address (`127.0.0.1:8765`; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    http: std::net::SocketAddr,
    /// Read the bearer token every request must carry (`Authorization: Bearer <token>`) from
    /// this file; else from `BUTLER_HTTP_TOKEN`; else from `$XDG_CONFIG_HOME/butler/http-token`,
    /// made (mode 0600) on the first start.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Also accept requests from this browser origin (`https://host[:port|:*]`; repeatable).
    /// Loopback origins are accepted on a loopback address; any other `Origin` is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Close a session after this many seconds without a call.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    idle_timeout: u64,
    /// On SIGTERM/SIGINT, give the calls in flight this many seconds to finish.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    shutdown_grace: u64,
    /// Give a client this many seconds to send a request's headers, and as many for its body.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    read_timeout: u64,
    /// Keep at most this many connections open (at the cap an idle one makes room; when all
    /// are busy a new one gets 503).
    #[arg(long, value_name = "N", default_value_t = 256)]
    max_connections: usize,
    /// Keep at most this many MCP sessions live (a new one beyond them gets 503).
    #[arg(long, value_name = "N", default_value_t = 128)]
    max_sessions: usize,
}

fn main() -> anyhow::Result<()> {
    // The hook runs before every shell command the Brain issues: answer before anything else
    // (no runtime, no logging set-up).
    if std::env::args_os().nth(1).is_some_and(|a| a == "git-hook") {
        std::process::exit(butler_orchestrator::hook::run_stdio());
    }
    // The sandbox helper restricts its own thread and `exec`s: nothing may run before it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == butler_worker::sandbox::HELPER_SUBCOMMAND)
    {
        sandbox_cli::run();
    }
    let cli = Cli::parse();
    init_logging();
    // TLS clients that libraries build for themselves find the process's provider too.
    butler_worker::http_client::install_tls_provider();
    // The process environment, read once here: Butler's settings and what children inherit.
    let vars: Vec<_> = std::env::vars_os().collect();
    butler_worker::process::env::set_inherited(vars.clone());
    let env = Arc::new(Environment::from_vars(vars));
    let clock = clock(&env)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match cli.command {
        Command::Mcp => {
            let served = runtime.block_on(serve_mcp(clock, env));
            // The stdin reader may still block in its thread (a signal came, the client did not
            // close): nothing is left to wait for once the tasks are stopped.
            runtime.shutdown_background();
            served
        }
        Command::Serve(args) => runtime.block_on(serve_http(args, clock, env)),
        Command::GitHook => unreachable!("dispatched above"),
        Command::Demo { keep } => runtime.block_on(demo::run(keep)),
        Command::SandboxExec { .. } => unreachable!("dispatched above"),
        Command::WorkerMcp { task_file, notes } => runtime
            .block_on(butler_worker::agent_mcp::serve_agent_mcp(task_file, notes))
            .context("serving the worker MCP on stdio"),
        Command::Task(task_cli::TaskCommand::Run) => {
            let code = runtime.block_on(task_cli::run_pod_task(clock, &env));
            std::process::exit(code);
        }
        Command::Task(command) => task_cli::run_task_command(command, clock),
        Command::Implement(command) => {
            let code = runtime.block_on(task_cli::run_implement_command(command, clock, &env))?;
            std::process::exit(code);
        }
        Command::Trust { project, revoke } => {
            write_out(&trust_cli::run(&project_dir(project)?, revoke, &env)?)
        }
        Command::Oplog { n, project } => write_out(&oplog_cli::oplog(&project_dir(project)?, n)?),
        Command::Undo { operation, project } => write_out(&oplog_cli::undo(
            &project_dir(project)?,
            operation,
            &clock,
            &env,
        )?),
        Command::Init { project, remove } => {
            let project = project_dir(project)?;
            let launch = butler_orchestrator::install::Launch::resolve(
                &exe()?,
                std::env::var_os("PATH").as_deref(),
            );
            let report = butler_orchestrator::install::init(&project, &launch, remove)?;
            write_out(&report.to_string())
        }
        Command::Doctor {
            http: Some(url),
            token_file,
            ..
        } => {
            use butler_orchestrator::http::{TOKEN_ENV, client_token};
            let token = client_token(
                token_file.as_deref(),
                env.get(TOKEN_ENV).map(Into::into),
                user_token_file(&env).as_deref(),
            )?;
            let report = runtime.block_on(butler_orchestrator::install::doctor_http(
                &url,
                token.as_ref(),
            ));
            write_out(&report.to_string())?;
            if !report.healthy() {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Doctor { project, .. } => {
            let project = project_dir(project)?;
            let report = runtime.block_on(butler_orchestrator::install::doctor(
                &project,
                &exe()?,
                &env,
            ));
            // Stops whatever a probe left running before the process exits.
            drop(runtime);
            write_out(&report.to_string())?;
            if !report.healthy() {
                std::process::exit(1);
            }
            Ok(())
        }
    }
}

/// The user's bearer token file for the HTTP server (`$XDG_CONFIG_HOME/butler/http-token`).
fn user_token_file(env: &Environment) -> Option<PathBuf> {
    butler_orchestrator::http::default_token_file(env.get("XDG_CONFIG_HOME"), env.get("HOME"))
}

/// `butler serve --http`: reads (or makes) the token, binds, says on stderr where it listens
/// and how a client connects (never the token itself), serves until SIGTERM/SIGINT; then, as
/// `butler mcp` does, stops every task still running before the process exits.
async fn serve_http(
    args: ServeArgs,
    clock: SharedClock,
    env: Arc<Environment>,
) -> anyhow::Result<()> {
    use butler_orchestrator::http::{
        HttpOptions, HttpServer, TOKEN_ENV, client_setup, server_token, termination_signal,
    };
    use butler_orchestrator::implement::{STOP_LIMIT, stop_running_tasks};
    use std::time::Duration;
    let token = server_token(
        args.token_file.as_deref(),
        env.get(TOKEN_ENV).map(Into::into),
        user_token_file(&env).as_deref(),
    )?;
    let mut options = HttpOptions::new(args.http, token.secret);
    options.allowed_origins = args.allow_origins;
    options.idle_timeout = Duration::from_secs(args.idle_timeout.max(1));
    options.shutdown_grace = Duration::from_secs(args.shutdown_grace);
    options.read_timeout = Duration::from_secs(args.read_timeout.max(1));
    options.max_connections = args.max_connections;
    options.max_sessions = args.max_sessions;
    let server = HttpServer::bind(options).await?;
    // Said whatever the log filter: the person (or test) that started it needs the address and
    // how to connect. Stderr, as every server's word: stdout is never the server's.
    {
        use std::io::Write;
        let url = server.url();
        let mut err = std::io::stderr().lock();
        writeln!(err, "butler: serving MCP at {url} (bearer token required)")?;
        err.write_all(client_setup(&url, &token.origin).as_bytes())?;
    }
    server.serve(clock, env, termination_signal()).await;
    if !stop_running_tasks("Butler's HTTP server stopped", STOP_LIMIT).await {
        tracing::warn!("tasks still running after the stop limit; their groups are killed on exit");
    }
    Ok(())
}

/// `butler mcp`: serves until the client closes the connection or a SIGTERM / SIGINT comes;
/// either way every running task is stopped (its agent's process group ended) and stored
/// before the process exits, so no agent outlives the server.
async fn serve_mcp(clock: SharedClock, env: Arc<Environment>) -> anyhow::Result<()> {
    use butler_orchestrator::implement::{STOP_LIMIT, stop_running_tasks};
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("handling SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("handling SIGINT")?;
    let (served, reason) = tokio::select! {
        served = butler_orchestrator::server::serve_stdio(clock, env) => {
            (served.context("serving MCP on stdio"), "the MCP client closed the connection")
        }
        _ = term.recv() => (Ok(()), "Butler received SIGTERM"),
        _ = int.recv() => (Ok(()), "Butler received SIGINT"),
    };
    if !stop_running_tasks(reason, STOP_LIMIT).await {
        tracing::warn!("tasks still running after the stop limit; their groups are killed on exit");
    }
    served
}

/// What a terminal command prints for the person who ran it.
fn write_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Logs go to stderr (stdout belongs to the MCP protocol); `BUTLER_LOG` sets the filter.
/// rmcp's own request and response dumps (debug and below) are never written: they would
/// copy whatever the Brain sent or got — a secret it was refused for included — into the log;
/// its INFO lines (sessions opening and closing) only when `BUTLER_LOG` asks for them.
fn init_logging() {
    let (filter, rmcp) = match tracing_subscriber::EnvFilter::try_from_env("BUTLER_LOG") {
        Ok(asked) => (asked, "rmcp=info"),
        Err(_) => (tracing_subscriber::EnvFilter::new("warn"), "rmcp=warn"),
    };
    let filter = filter.add_directive(rmcp.parse().expect("a valid directive"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .init();
}

/// Butler's clock, chosen once here and passed down: the system's, or — when `BUTLER_NOW` holds
/// an RFC 3339 time (`2026-04-15T10:00:00+09:00`) — one frozen at that instant, so records,
/// tasks and issues get reproducible times and ids (as `SOURCE_DATE_EPOCH` does for builds).
fn clock(env: &Environment) -> anyhow::Result<SharedClock> {
    match env.get("BUTLER_NOW") {
        Some(now) => {
            let at = Timestamp::parse(now).context("BUTLER_NOW")?;
            Ok(FixedClock::shared(at))
        }
        None => Ok(SystemClock::shared()),
    }
}

fn exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("locating the butler binary")
}
