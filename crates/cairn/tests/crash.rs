//! The crash test: kill -9 at random moments of save, in-place restore, gc and remove, with
//! writes to the tree between the kill and the next command. After each round: the next save
//! either works or, after a killed in-place restore, refuses and changes nothing; then
//! `restore --continue` or `--abort` resolves it. Every byte written after the kill stays in
//! the live tree (and, after a resolution, is in its recovery snapshot too), `check
//! --read-data` passes, and at the end every snapshot ever reported saved (and not removed
//! since) restores exactly.
//!
//! Seeded and bounded: `CAIRN_CRASH_SEED` picks the run, `CAIRN_CRASH_SECONDS` how long it
//! lasts (60 by default; `scripts/crash-test` runs it longer).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Entry, Rng, TestEnv, describe, noise, write};

fn churn(env: &TestEnv, rng: &mut Rng, round: u64) {
    for _ in 0..40 {
        let i = rng.below(300);
        write(&env.work(), &format!("d{}/f{i}.txt", i % 10), format!("round {round} file {i}\n"));
    }
    let big = rng.below(3);
    write(&env.work(), &format!("big{big}.bin"), noise(1_500_000, round * 7 + big));
}

#[test]
fn kill_9_at_random_points_loses_no_saved_snapshot_and_no_later_write() {
    let seed = std::env::var("CAIRN_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(17u64);
    let seconds = std::env::var("CAIRN_CRASH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60u64);
    let mut rng = Rng(seed.max(1));
    let env = TestEnv::new();
    for i in 0..300 {
        write(&env.work(), &format!("d{}/f{i}.txt", i % 10), format!("file {i}\n"));
    }
    let mut saved: BTreeMap<String, BTreeMap<PathBuf, Entry>> = BTreeMap::new();
    let first = env.json(&["save"]);
    saved.insert(first["id"].as_str().unwrap().to_owned(), describe(&env.work()));
    let started = Instant::now();
    let mut round = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) || round < 4 {
        round += 1;
        churn(&env, &mut rng, round);
        let ids: Vec<&String> = saved.keys().collect();
        let pick = ids[rng.below(ids.len() as u64) as usize].clone();
        let args: Vec<&str> = match rng.below(4) {
            0 => vec!["save"],
            1 => vec!["restore", &pick],
            2 => vec!["gc"],
            _ => vec!["remove", "--retain-recent", "4"],
        };
        let mut child = env.process(&args).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(120)));
        let _ = child.kill();
        let _ = child.wait();
        // Written after the kill: it must survive whatever the next command does.
        let name = format!("after-kill-{round}.txt");
        let content = format!("written after kill {round} ({args:?})\n");
        write(&env.work(), &name, &content);
        let first = env.cairn(&["--json", "save"]).output().unwrap();
        let next: serde_json::Value = if first.status.success() {
            serde_json::from_slice(&first.stdout).unwrap()
        } else {
            // Only a killed in-place restore stops a save, and it changes nothing.
            let refused: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
            assert_eq!(
                refused["code"], "interrupted_restore",
                "round {round} ({args:?}), seed {seed}: {refused}"
            );
            assert_eq!(std::fs::read_to_string(env.work().join(&name)).unwrap(), content, "round {round}");
            let how = if rng.below(2) == 0 { "--continue" } else { "--abort" };
            let resolved = env.json(&["restore", how]);
            let dest = env.root().join(format!("recovery-{round}"));
            env.ok(&[
                "restore",
                resolved["interrupted_restore"]["recovery_snapshot"].as_str().unwrap(),
                "--to",
                dest.to_str().unwrap(),
            ]);
            assert_eq!(
                std::fs::read_to_string(dest.join(&name)).unwrap(),
                content,
                "the recovery snapshot, round {round} ({how}), seed {seed}"
            );
            env.json(&["save"])
        };
        let id = next["id"].as_str().unwrap().to_owned();
        // Whatever resolved the kill, the write is where the user left it.
        assert_eq!(
            std::fs::read_to_string(env.work().join(&name)).unwrap(),
            content,
            "round {round} ({args:?}), seed {seed}"
        );
        saved.insert(id, describe(&env.work()));
        let check = env.json(&["check", "--read-data"]);
        assert_eq!(check["problems"], serde_json::json!([]), "round {round} ({args:?}), seed {seed}");
    }
    let listed: Vec<String> = env.json(&["list"])["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect();
    for (id, tree) in saved.iter().filter(|(id, _)| listed.contains(id)) {
        let dest = env.root().join(format!("final-{id}"));
        env.ok(&["restore", id, "--to", dest.to_str().unwrap()]);
        assert_eq!(&describe(&dest), tree, "snapshot {id}, seed {seed}");
    }
}
