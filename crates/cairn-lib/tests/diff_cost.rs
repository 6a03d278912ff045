//! A diff's cost follows the changed subtrees, not the size of the tree.

use cairn_lib::Repository;
use cairn_lib::ops::diff::DiffOptions;
use cairn_lib::ops::diff::DiffResult;
use cairn_lib::ops::save::{SaveOptions, SaveResult};

fn diff_of(store: &Repository, a: &SaveResult, b: &SaveResult) -> DiffResult {
    let options = DiffOptions {
        from: a.snapshot.id.to_string(),
        to: Some(b.snapshot.id.to_string()),
        ..DiffOptions::default()
    };
    store.diff(&options, &Default::default()).unwrap()
}

#[test]
fn a_diff_of_50000_files_with_3_changes_reads_only_the_changed_subtrees() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    // 50,000 files in 1,000 directories, 10 top-level groups of 100 directories.
    for d in 0..1000 {
        let path = work.join(format!("g{}/d{d}", d % 10));
        std::fs::create_dir_all(&path).unwrap();
        for f in 0..50 {
            std::fs::write(path.join(format!("f{f}.txt")), format!("{d}/{f}\n")).unwrap();
        }
    }
    let store = Repository::open(&dir.path().join("store")).unwrap();
    let target = work.display().to_string();
    let a = store
        .save(&SaveOptions { target: target.clone(), ..SaveOptions::default() }, &Default::default())
        .unwrap();
    for d in [3, 500, 999] {
        std::fs::write(work.join(format!("g{}/d{d}/f7.txt", d % 10)), "changed\n").unwrap();
    }
    let b = store
        .save(&SaveOptions { target: target.clone(), ..SaveOptions::default() }, &Default::default())
        .unwrap();
    let diff = diff_of(&store, &a, &b);
    assert_eq!(diff.summary.modified, 3);
    assert_eq!(diff.summary.unchanged, 49_997);
    // Root + 3 groups + 3 directories, on each side: 14 trees of the 1,011 each snapshot has.
    assert_eq!(diff.trees_read, 14, "read {} trees", diff.trees_read);
}

#[test]
fn a_diff_of_a_directory_of_20000_files_with_2_changes_reads_only_their_parts() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let large = work.join("large");
    std::fs::create_dir_all(&large).unwrap();
    for f in 0..20_000 {
        std::fs::write(large.join(format!("f{f:05}.txt")), format!("{f}\n")).unwrap();
    }
    let store = Repository::open(&dir.path().join("store")).unwrap();
    let target = work.display().to_string();
    let save = || {
        store
            .save(&SaveOptions { target: target.clone(), ..SaveOptions::default() }, &Default::default())
            .unwrap()
    };
    let a = save();
    for f in [10, 15_000] {
        std::fs::write(large.join(format!("f{f:05}.txt")), "changed\n").unwrap();
    }
    let b = save();
    let diff = diff_of(&store, &a, &b);
    assert_eq!(diff.summary.modified, 2);
    assert_eq!(diff.summary.unchanged, 19_998);
    let paths: Vec<&str> = diff.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["large/f00010.txt", "large/f15000.txt"]);
    // The two roots, the large directory's two indexes, and on each side the two parts that
    // differ: 8 reads. The directory's other parts, about 75 a side, are not read.
    assert_eq!(diff.trees_read, 8, "read {} trees", diff.trees_read);
}
