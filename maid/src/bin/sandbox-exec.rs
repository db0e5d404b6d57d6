//! The sandbox helper as a stand-alone program, for the Maid's tests (Butler itself runs it as
//! `butler sandbox-exec --policy <file> [--report <file>] -- <program> [args…]`, see
//! `butler_worker::sandbox`). Accepts the same arguments, with or without the leading
//! `sandbox-exec`; its second stage runs this program again.

fn main() {
    std::process::exit(butler_worker::sandbox::helper_main(
        std::env::args_os().skip(1),
    ));
}
