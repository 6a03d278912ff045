//! Files that change while a save reads them are read again, and one that keeps changing is
//! stored as last read and listed in `not_covered`: never stored torn without a word.

mod common;

use std::io::{Seek, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{TestEnv, write};

#[test]
fn a_file_rewritten_while_it_is_saved_is_stored_whole_or_listed() {
    let env = TestEnv::new();
    let path = env.work().join("busy.bin");
    const SIZE: usize = 8 * 1024 * 1024;
    write(&env.work(), "busy.bin", vec![0u8; SIZE]);
    write(&env.work(), "quiet.txt", "still\n");
    let stop = Arc::new(AtomicBool::new(false));
    // Rewrites the whole file in place, each version one byte value throughout: a read that
    // saw one version only is uniform, a torn read is not.
    let writer = {
        let (stop, path) = (stop.clone(), path.clone());
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut version = 1u8;
            while !stop.load(Ordering::Relaxed) {
                file.seek(std::io::SeekFrom::Start(0)).unwrap();
                for _ in 0..SIZE / 65536 {
                    file.write_all(&[version; 65536]).unwrap();
                }
                version = version.wrapping_add(1).max(1);
            }
        })
    };
    let saved = env.json(&["save"]);
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let listed = saved["not_covered"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["path"] == "busy.bin" && e["reason"] == "changed_while_read");
    let dest = env.root().join("copy");
    env.ok(&["restore", saved["id"].as_str().unwrap(), "--to", dest.to_str().unwrap()]);
    let bytes = std::fs::read(dest.join("busy.bin")).unwrap();
    let uniform = bytes.iter().all(|b| *b == bytes[0]);
    assert!(listed || uniform, "busy.bin was stored torn and not listed: {saved}");
    assert_eq!(bytes.len(), SIZE);
    assert_eq!(saved["stats"]["files"], 2);
    // The next save reads it again (a listed file is not cached) and, now quiet, stores it whole.
    let again = env.json(&["save"]);
    assert_eq!(again["not_covered"]["skipped"], serde_json::json!([]), "{again}");
}

#[test]
fn a_newline_in_a_file_name_does_not_break_one_change_per_line() {
    let env = TestEnv::new();
    write(&env.work(), "plain.txt", "a\n");
    env.ok(&["save", "--name", "s"]);
    write(&env.work(), "two\nlines.txt", "b\n");
    write(&env.work(), "plain.txt", "changed\n");
    let diff = env.ok(&["diff", "s"]);
    let dry = env.ok(&["restore", "s", "--dry-run"]);
    env.filters().bind(|| {
        insta::assert_snapshot!(diff, @r"
        diff [ID] → the live tree of [TMP]/work
        M plain.txt (content, mtime)
        A two\nlines.txt
        1 added, 0 removed, 1 modified, 0 unchanged
        ");
        insta::assert_snapshot!(dry, @r"
        would restore [ID] (s) into [TMP]/work: 2 changes
          rewrite  plain.txt (file)
          remove   two\nlines.txt (file)
        ");
    });
}
