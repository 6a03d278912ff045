//! `cairn-fuzz TARGET [SECONDS]`: runs one fuzz target for longer (what `scripts/fuzz` calls).

use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    let Some(target) = cairn_fuzz::target(&name) else {
        let names: Vec<&str> = cairn_fuzz::TARGETS.iter().map(|t| t.name).collect();
        #[allow(clippy::print_stderr)]
        {
            eprintln!("usage: cairn-fuzz TARGET [SECONDS]; targets: {}", names.join(", "));
        }
        return ExitCode::from(2);
    };
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    // A fresh walk each run; the seed is printed so a run can be repeated.
    let seed = match std::env::var("CAIRN_FUZZ_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => seed,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    let outcome = cairn_fuzz::fuzz_seeded(target, Duration::from_secs(seconds), seed);
    #[allow(clippy::print_stdout, clippy::print_stderr)]
    match outcome {
        Ok(r) => {
            println!(
                "{}: {} executions in {:.1}s (seed {seed}), no crash",
                target.name,
                r.executions,
                r.elapsed.as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
