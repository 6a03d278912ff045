//! Every fuzz target runs on its seed corpus and then on edited seeds for a short, bounded
//! time (`CAIRN_FUZZ_SECONDS`, default 2) in the test suite.

use std::time::Duration;

fn budget() -> Duration {
    let secs = std::env::var("CAIRN_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    Duration::from_secs(secs)
}

fn run(name: &str) {
    let target = cairn_fuzz::target(name).expect("a known target");
    cairn_fuzz::fuzz(target, budget()).unwrap();
}

#[test]
fn tar_import() {
    run("tar_import");
}

#[test]
fn pack() {
    run("pack");
}

#[test]
fn record() {
    run("record");
}

#[test]
fn transcript() {
    run("transcript");
}

#[test]
fn dap() {
    run("dap");
}

#[test]
fn compose_labels() {
    run("compose_labels");
}

#[test]
fn options() {
    run("options");
}

#[test]
fn every_crash_found_is_a_regression_test() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes");
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let target = cairn_fuzz::TARGETS.iter().find(|t| name.starts_with(&format!("{}-", t.name)));
        let target = target.unwrap_or_else(|| panic!("crash file {name} names no target"));
        (target.run)(&std::fs::read(entry.path()).unwrap());
    }
}

#[test]
fn mcp_arguments() {
    run("mcp_arguments");
}

#[test]
fn catalog_rebuild() {
    run("catalog_rebuild");
}

#[test]
fn hook_payload() {
    run("hook_payload");
}
