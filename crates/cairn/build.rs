//! Links the `cairn` binary as a position-dependent executable on Linux.
//!
//! Every command is a new process, and on a small repository its start is a fair share of
//! the whole: a position-independent cairn made the dynamic loader apply about 50,000
//! relocations and copy the pages they fall on before `main`, about a millisecond of every
//! command. Linked at a fixed address the linker resolves them once, at build time.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=cairn=-no-pie");
    }
}
