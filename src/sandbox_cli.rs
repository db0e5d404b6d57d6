//! `butler sandbox-exec --policy <file> [--report <file>] -- <program> [args…]`: the helper
//! mode that confines one agent or verify command (see `butler_worker::sandbox`). It runs
//! before anything else in `main` (no runtime, no threads, no logging), because Landlock
//! restricts only the calling thread, which then `exec`s the program.

/// Runs the helper; returns only when the program was not executed.
pub fn run() -> ! {
    let code = butler_worker::sandbox::helper_main(std::env::args_os().skip(1));
    std::process::exit(code)
}
