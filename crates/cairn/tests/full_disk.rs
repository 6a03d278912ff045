//! A full file system: a save that runs out of space says so and leaves its packs free for gc
//! at once, a restore into a full file system leaves the destination as it found it, and after
//! space is freed a save works. Runs on a small loop-mounted ext4 (needs root).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{TestEnv, noise, write};

/// A mounted 16 MiB ext4 image, unmounted when dropped.
struct SmallFs {
    mount: PathBuf,
}

impl SmallFs {
    fn new(root: &Path) -> Option<Self> {
        let is_root = Command::new("id").arg("-u").output().ok()?.stdout.starts_with(b"0\n");
        if !is_root {
            #[allow(clippy::print_stdout)] // the suite prints why this test did nothing
            {
                println!("skipped: mounting a loop file system needs root");
            }
            return None;
        }
        let image = root.join("small.img");
        let mount = root.join("small");
        std::fs::create_dir_all(&mount).unwrap();
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(16 * 1024 * 1024).unwrap();
        let ok = |c: &mut Command| c.output().map(|o| o.status.success()).unwrap_or(false);
        assert!(ok(Command::new("mkfs.ext4").args(["-q", "-F", "-m", "0"]).arg(&image)), "mkfs.ext4 failed");
        assert!(ok(Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&mount)), "mount failed");
        Some(Self { mount })
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
    }
}

fn used_by_packs(store: &Path) -> u64 {
    common::permissions_below(&store.join("objects/packs"))
        .into_iter()
        .filter_map(|(p, _, _)| std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len()))
        .sum()
}

#[test]
fn a_full_file_system_fails_clearly_leaves_nothing_behind_and_a_save_after_freeing_space_works() {
    let env = TestEnv::new();
    let Some(fs) = SmallFs::new(env.root()) else { return };
    let store = fs.mount.join("store");
    let store_arg = store.to_str().unwrap().to_owned();
    let run = |args: &[&str]| {
        Command::new(assert_cmd::cargo::cargo_bin("cairn"))
            .env_clear()
            .env("HOME", env.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(env.work())
            .arg("--store")
            .arg(&store_arg)
            .args(args)
            .output()
            .unwrap()
    };
    write(&env.work(), "small.txt", "fits\n");
    assert!(run(&["save", "--name", "small"]).status.success());
    // 40 MB of incompressible data does not fit in 16 MiB.
    for i in 0..4 {
        write(&env.work(), &format!("big{i}.bin"), noise(10_000_000, i));
    }
    let failed = run(&["save"]);
    assert_eq!(failed.status.code(), Some(1));
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("free some disk space"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // The failed save's packs are free for gc at once, not after the grace period.
    assert!(run(&["gc"]).status.success());
    assert!(used_by_packs(&store) < 1_000_000, "gc left {} bytes of packs", used_by_packs(&store));
    assert_eq!(std::fs::read_dir(store.join("tmp")).unwrap().count(), 0);
    // A restore that runs out of space leaves the destination as it found it.
    for i in 1..4 {
        std::fs::remove_file(env.work().join(format!("big{i}.bin"))).unwrap();
    }
    assert!(run(&["save", "--name", "one-big"]).status.success());
    let dest = fs.mount.join("copy");
    let to = run(&["restore", "one-big", "--to", dest.to_str().unwrap()]);
    assert_eq!(to.status.code(), Some(1));
    let err = String::from_utf8_lossy(&to.stderr);
    assert!(err.contains("free some disk space") && err.contains("was undone"), "{err}");
    assert!(!dest.exists(), "a failed restore --to left {}", dest.display());
    // After freeing space, a save into the small store works and checks clean.
    assert!(run(&["save", "--name", "after"]).status.success());
    assert!(run(&["check", "--read-data"]).status.success());
    let copy = env.root().join("copy");
    assert!(run(&["restore", "after", "--to", copy.to_str().unwrap()]).status.success());
    assert_eq!(common::describe(&copy), common::describe(&env.work()));
}
