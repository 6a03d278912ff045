//! A diff's cost follows the changed subtrees, not the size of the tree.

use cairn_lib::Store;
use cairn_lib::ops::diff::DiffOptions;
use cairn_lib::ops::save::SaveOptions;

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
    let store = Store::open(&dir.path().join("store")).unwrap();
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
    let diff = store
        .diff(
            &DiffOptions {
                from: a.snapshot.id.to_string(),
                to: Some(b.snapshot.id.to_string()),
                ..DiffOptions::default()
            },
            &Default::default(),
        )
        .unwrap();
    assert_eq!(diff.summary.modified, 3);
    assert_eq!(diff.summary.unchanged, 49_997);
    // Root + 3 groups + 3 directories, on each side: 14 trees of the 1,011 each snapshot has.
    assert_eq!(diff.trees_read, 14, "read {} trees", diff.trees_read);
}
