//! The journal never misses a change: thousands of random file-system operations on a real
//! tree, in batches, with a running watcher; after each batch every directory whose entries or
//! entry metadata differ from before the batch is in the answer (or below a new subtree in it).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

mod churn;

use cairn_watch::client;
use cairn_watch::protocol::{Answer, DirtyDir, Token};
use cairn_watch::server::{ServeOptions, Server};
use churn::{Rng, new_batch, operate};

/// What a save compares per entry: kind, size, times, mode, inode; none for a file with several
/// links, whose metadata a write through another link changes with no event here (saves look at
/// such files anyway).
type Listing = BTreeMap<Vec<u8>, Option<(u32, u64, i64, i64, u32, u64)>>;

/// The same entries, with the same metadata where both sides have it.
fn same(a: &Listing, b: &Listing) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && (va.is_none() || vb.is_none() || va == vb))
}

/// Every directory of the tree (relative path) and its listing.
fn state(root: &Path) -> BTreeMap<Vec<u8>, Listing> {
    let mut out = BTreeMap::new();
    let mut stack = vec![Vec::new()];
    while let Some(rel) = stack.pop() {
        let dir = if rel.is_empty() { root.to_owned() } else { root.join(std::ffi::OsStr::from_bytes(&rel)) };
        let mut listing = Listing::new();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            let name = entry.file_name().as_bytes().to_vec();
            let stamp = (
                meta.mode() >> 12,
                meta.size(),
                meta.mtime_nsec() + meta.mtime() * 1_000_000_000,
                meta.ctime_nsec() + meta.ctime() * 1_000_000_000,
                meta.mode(),
                meta.ino(),
            );
            // A directory's size and times change with its own entries, which its own listing shows.
            let stamp = if meta.is_dir() { (stamp.0, 0, 0, 0, stamp.4, stamp.5) } else { stamp };
            listing.insert(name.clone(), (meta.is_dir() || meta.nlink() == 1).then_some(stamp));
            if meta.is_dir() {
                let mut child = rel.clone();
                if !child.is_empty() {
                    child.push(b'/');
                }
                child.extend_from_slice(&name);
                stack.push(child);
            }
        }
        out.insert(rel, listing);
    }
    out
}

fn covered(dirs: &[DirtyDir], path: &[u8]) -> bool {
    dirs.iter().any(|d| {
        d.path == path
            || (d.subtree
                && (d.path.is_empty()
                    || (path.starts_with(&d.path) && path.get(d.path.len()) == Some(&b'/'))))
    })
}

/// The entries of `dir` that differ between two listings and that the answer, when it names
/// entries for `dir`, leaves out.
fn unnamed_changes(dirs: &[DirtyDir], dir: &[u8], before: Option<&Listing>, after: &Listing) -> Vec<String> {
    if dirs.iter().any(|d| d.subtree && covered(std::slice::from_ref(d), dir)) {
        return Vec::new();
    }
    let Some(names) = dirs.iter().find(|d| d.path == dir).and_then(|d| d.names.as_ref()) else {
        return Vec::new();
    };
    let empty = Listing::new();
    let before = before.unwrap_or(&empty);
    let changed = |name: &Vec<u8>| match (before.get(name), after.get(name)) {
        (Some(Some(a)), Some(Some(b))) => a != b,
        (Some(_), Some(_)) => false,
        _ => true,
    };
    before
        .keys()
        .chain(after.keys())
        .filter(|n| changed(n) && !names.contains(n))
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect()
}

#[test]
fn after_every_batch_the_answer_covers_every_changed_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("tree");
    std::fs::create_dir(&root).unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for d in ["a/b/c", "d/e", "f"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
        std::fs::write(root.join(d).join("file"), d).unwrap();
    }
    let socket = tmp.path().join("watch.sock");
    let server = Server::start(ServeOptions::new(socket.clone(), vec![root.clone()])).unwrap();
    std::thread::spawn(move || server.run());

    let first = client::changes(&socket, &root, None).unwrap().unwrap();
    assert!(matches!(first.answer, Answer::Walk { .. }), "the first answer must be a walk");
    let mut token = Some(first.token);
    let (mut ops, mut answered_dirs, mut named_dirs) = (0u64, 0usize, 0usize);
    for (seed, batch) in
        [0x5eed_cafe_u64, 0xdeca_de01, 0xfeed_1234].into_iter().flat_map(|s| (0..50u64).map(move |b| (s, b)))
    {
        let mut rng = Rng(seed ^ (batch + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        new_batch();
        let before = state(&root);
        for _ in 0..(1 + rng.below(60)) {
            operate(&mut rng, &root, &outside, &mut ops);
        }
        let answer = client::changes(&socket, &root, token).unwrap().unwrap();
        token = Some(answer.token);
        let Answer::Dirs(dirs) = answer.answer else { panic!("batch {batch}: a walk: {:?}", answer.answer) };
        answered_dirs += dirs.len();
        let after = state(&root);
        for (dir, listing) in &after {
            if !before.get(dir).is_some_and(|b| same(b, listing)) {
                assert!(
                    covered(&dirs, dir),
                    "seed {seed:#x}, batch {batch}: {:?} changed and is not in the answer {dirs:?}",
                    String::from_utf8_lossy(dir)
                );
                let unnamed = unnamed_changes(&dirs, dir, before.get(dir), listing);
                assert!(
                    unnamed.is_empty(),
                    "seed {seed:#x}, batch {batch}: in {:?}, {unnamed:?} changed and the answer names only {dirs:?}",
                    String::from_utf8_lossy(dir)
                );
                named_dirs += usize::from(dirs.iter().any(|d| d.path == *dir && d.names.is_some()));
            }
        }
    }
    assert!(ops > 3000, "only {ops} operations");
    assert!(answered_dirs > 0);
    assert!(named_dirs > 50, "only {named_dirs} changed directories came with the names of their entries");
    client::request(&socket, &cairn_watch::protocol::Request::Stop).unwrap();
}

#[test]
fn an_unchanged_tree_is_answered_with_no_directories_and_a_restarted_watcher_with_a_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().join("tree");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let socket = tmp.path().join("watch.sock");
    let server = Server::start(ServeOptions::new(socket.clone(), vec![root.clone()])).unwrap();
    std::thread::spawn(move || server.run());
    let first = client::changes(&socket, &root, None).unwrap().unwrap();
    let second = client::changes(&socket, &root, Some(first.token)).unwrap().unwrap();
    assert_eq!(second.answer, Answer::Dirs(vec![]));
    // Asked below the watched tree, the answer is relative to the directory asked about.
    std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
    let sub = client::changes(&socket, &root.join("src"), Some(second.token)).unwrap().unwrap();
    assert_eq!(
        sub.answer,
        Answer::Dirs(vec![DirtyDir { path: vec![], subtree: false, names: Some(vec![b"main.rs".to_vec()]) }])
    );
    let foreign = Token { epoch: uuid::Uuid::nil(), seq: 1 };
    let restarted = client::changes(&socket, &root, Some(foreign)).unwrap().unwrap();
    assert_eq!(
        restarted.answer,
        Answer::Walk { reason: "the watcher was restarted since the last save".into() }
    );
    let err = client::changes(&socket, tmp.path(), None).unwrap_err();
    assert!(err.to_string().contains("does not watch"), "{err}");
    client::request(&socket, &cairn_watch::protocol::Request::Stop).unwrap();
    assert!(client::changes(&socket, &root, None).unwrap().is_none(), "a stopped watcher answers nothing");
}
