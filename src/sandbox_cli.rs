//! `butler sandbox-exec (--policy <file> [--report <file>] | --unconfined) [--leftovers <file>]
//! [--grace-ms <n>] -- <program> [args…]`: the helper mode that runs one agent, verify command
//! or procedure step under a reaper and, with a policy, confined (see `butler_worker::sandbox`).
//! It runs before anything else in `main` (no runtime, no threads, no logging): the reaper
//! reads its signals through a `signalfd` and waits for its children itself, and Landlock
//! restricts only the calling thread, which then `exec`s the program.

/// Runs the helper; returns only when the program was not executed.
pub fn run() -> ! {
    let code = butler_worker::sandbox::helper_main(std::env::args_os().skip(1));
    std::process::exit(code)
}
