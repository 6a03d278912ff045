//! Fuzz targets for every parser of untrusted input, and the driver that runs them.
//!
//! The driver is proptest on the stable toolchain: each input is a seed from
//! `corpus/<target>/` (small files written for this repository) with a random list of byte
//! edits applied (flips, inserts, deletions, truncation, splices of another seed), run until a
//! time budget is spent. A panic fails the run; proptest then shrinks the input to a small one,
//! which is written to `crashes/<target>-<n>.bin` and becomes a regression test in
//! `tests/regressions.rs`. `docs/security.md` says why this and not AFL or bolero.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestError, TestRunner};

/// One target: its name (its corpus directory) and the parser it drives.
pub struct Target {
    /// The name `scripts/fuzz` takes.
    pub name: &'static str,
    /// What it parses.
    pub about: &'static str,
    /// The parser, fed one input.
    pub run: fn(&[u8]),
}

/// Reads `bytes` as a Pi, Claude Code or Gemini CLI session file (the format is told by the
/// content), then walks its active path.
fn transcript(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for source in ["fuzz.jsonl", "2025-01-10T09-00-00-000Z_0193a1f0.jsonl"] {
        if let Ok(t) = cairn_transcript::Transcript::parse(source, &text) {
            let path = t.active_path();
            let _ = path.summary();
            let _ = path.document();
        }
    }
}

/// Decodes `bytes` as arguments of one tool of any profile, as a call would: the first line
/// names it (`codecalc/session_snapshot`), or, when it names none, the first byte picks one.
fn mcp_arguments(bytes: &[u8]) {
    static TOOLS: std::sync::OnceLock<Vec<(String, cairn_mcp::registry::ToolSpec)>> =
        std::sync::OnceLock::new();
    let tools = TOOLS.get_or_init(|| {
        cairn_mcp::PROFILES
            .iter()
            .flat_map(|p| {
                (p.tools)().unwrap_or_default().into_iter().map(|t| (format!("{}/{}", p.name, t.name()), t))
            })
            .collect()
    });
    let (head, rest) = match bytes.iter().position(|&b| b == b'\n') {
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
        None => (&bytes[..0], bytes),
    };
    let named = std::str::from_utf8(head).ok().and_then(|h| tools.iter().find(|(n, _)| n == h));
    let Some((_, tool)) = named.or_else(|| tools.get(usize::from(*bytes.first()?) % tools.len().max(1)))
    else {
        return;
    };
    if let Ok(serde_json::Value::Object(arguments)) = serde_json::from_slice(rest) {
        let _ = tool.check_arguments(arguments);
    }
}

/// Reads `bytes` as the event an agent's hook sends on stdin, for each agent.
fn hook_payload(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for agent in cairn_lib::agents::Agent::ALL {
        let _ = cairn_lib::agents::parse_payload(agent, &text);
    }
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "tar_import",
        about: "an archive to import (tar, tar.gz, tar.zst)",
        run: cairn_lib::fuzz::tar_import,
    },
    Target { name: "pack", about: "a pack file: trailing header and blobs", run: cairn_lib::fuzz::pack },
    Target {
        name: "record",
        about: "a snapshot record, tree, root or stat cache",
        run: cairn_lib::fuzz::record,
    },
    Target { name: "transcript", about: "a Pi, Claude Code or Gemini CLI session file", run: transcript },
    Target {
        name: "dap",
        about: "Content-Length framed DAP messages from an adapter",
        run: cairn_dap::fuzz::framing,
    },
    Target {
        name: "compose_labels",
        about: "compose labels of a container",
        run: cairn_docker::fuzz::compose_labels,
    },
    Target {
        name: "options",
        about: "JSON arguments of the operations MCP tools call",
        run: cairn_lib::fuzz::options,
    },
    Target {
        name: "mcp_arguments",
        about: "arguments of every tool of every MCP profile",
        run: mcp_arguments,
    },
    Target {
        name: "catalog_rebuild",
        about: "a remote store's objects, read back into a fresh catalog cache",
        run: cairn_lib::fuzz::catalog_rebuild,
    },
    Target { name: "hook_payload", about: "a Claude Code or Gemini CLI hook event", run: hook_payload },
];

/// The target named `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// The checked-in seed corpus of a target.
pub fn corpus_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(name)
}

/// The seeds of a target, sorted by file name.
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(name))
        .map(|it| it.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|f| std::fs::read(f).ok()).collect()
}

/// One edit of an input.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
    Splice(usize, usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Flip(at, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, b)| Edit::Insert(at, b)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Edit::Delete(at, n)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), any::<usize>(), 1usize..512).prop_map(|(s, at, n)| Edit::Splice(s, at, n)),
    ]
}

fn apply(seeds: &[Vec<u8>], seed: usize, edits: &[Edit]) -> Vec<u8> {
    let mut out = seeds[seed % seeds.len()].clone();
    for e in edits {
        let len = out.len();
        match e {
            Edit::Flip(at, b) if len > 0 => out[at % len] ^= b,
            Edit::Insert(at, bytes) => {
                let at = at % (len + 1);
                out.splice(at..at, bytes.iter().copied());
            }
            Edit::Delete(at, n) if len > 0 => {
                let at = at % len;
                out.drain(at..(at + n).min(len));
            }
            Edit::Truncate(at) => out.truncate(at % (len + 1)),
            Edit::Splice(s, at, n) => {
                let other = &seeds[s % seeds.len()];
                let from = if other.is_empty() { 0 } else { at % other.len() };
                let piece: Vec<u8> = other[from..(from + n).min(other.len())].to_vec();
                let at = at % (out.len() + 1);
                out.splice(at..at, piece);
            }
            _ => {}
        }
    }
    out
}

/// The generator's seed for one round: never the same for two rounds of a run, however long.
fn rng_seed(seed: u64, round: u64, name: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..8].copy_from_slice(&seed.to_le_bytes());
    out[8..16].copy_from_slice(&round.to_le_bytes());
    for (i, b) in name.bytes().take(16).enumerate() {
        out[16 + i] = b;
    }
    out
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    /// Inputs run, seeds included.
    pub executions: u64,
    /// Wall time spent.
    pub elapsed: Duration,
}

/// Runs `target` on its seeds, then on edited seeds until `budget` is spent. A crash returns
/// the shrunk input that caused it, also written to `crashes/`.
pub fn fuzz(target: &Target, budget: Duration) -> Result<Report, String> {
    fuzz_seeded(target, budget, 0)
}

/// [`fuzz`] from another starting point: each `seed` walks other inputs (the suite uses 0,
/// so its runs repeat; a long run picks a fresh one).
pub fn fuzz_seeded(target: &Target, budget: Duration, seed: u64) -> Result<Report, String> {
    let started = Instant::now();
    let seeds = seeds(target.name);
    if seeds.is_empty() {
        return Err(format!("target {} has no seeds in {}", target.name, corpus_dir(target.name).display()));
    }
    for seed in &seeds {
        (target.run)(seed);
    }
    let ran = std::cell::Cell::new(seeds.len() as u64);
    let strategy = (any::<usize>(), prop::collection::vec(edit(), 0..12));
    let mut round = 0u64;
    while started.elapsed() < budget {
        let config = Config { cases: 256, failure_persistence: None, ..Config::default() };
        let mut runner = TestRunner::new_with_rng(
            config,
            proptest::test_runner::TestRng::from_seed(
                proptest::test_runner::RngAlgorithm::ChaCha,
                &rng_seed(seed, round, target.name),
            ),
        );
        round += 1;
        let run = runner.run(&strategy, |(seed, edits)| {
            // A slow target (one store opened per input) must not run a whole round past the
            // budget: the rest of the round passes without running.
            if started.elapsed() < budget {
                (target.run)(&apply(&seeds, seed, &edits));
                ran.set(ran.get() + 1);
            }
            Ok(())
        });
        if let Err(TestError::Fail(why, (seed, edits))) = run {
            let input = apply(&seeds, seed, &edits);
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes");
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("{}-{round}.bin", target.name));
            let _ = std::fs::write(&file, &input);
            return Err(format!(
                "target {} crashed ({why}); the input is in {}",
                target.name,
                file.display()
            ));
        }
    }
    Ok(Report { executions: ran.get(), elapsed: started.elapsed() })
}
