//! The operations `cairn ui` reads and acts through, on a real store: the timeline's pages and
//! filters, one file side by side, store figures, and naming a snapshot after the fact.

use cairn_lib::Repository;
use cairn_lib::ops::file_diff::FileDiffOptions;
use cairn_lib::ops::name::NameOptions;
use cairn_lib::ops::save::SaveOptions;
use cairn_lib::ops::store_stats::StoreStatsOptions;
use cairn_lib::ops::timeline::TimelineOptions;

struct Fixture {
    _dir: tempfile::TempDir,
    work: std::path::PathBuf,
    store: Repository,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let store = Repository::open(&dir.path().join("store")).unwrap();
    Fixture { _dir: dir, work, store }
}

impl Fixture {
    fn save(&self, name: Option<&str>) -> cairn_lib::Snapshot {
        let options = SaveOptions {
            target: self.work.display().to_string(),
            name: name.map(str::to_owned),
            ..SaveOptions::default()
        };
        self.store.save(&options, &Default::default()).unwrap().snapshot
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.work.join(rel), text).unwrap();
        // A file written in the clock tick a scan starts in is read again; keep saves apart.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn the_timeline_pages_newest_first_counts_changed_files_and_filters_by_kind() {
    let f = fixture();
    let mut ids = Vec::new();
    for i in 0..7 {
        f.write("a.txt", &format!("version {i}\n"));
        if i == 3 {
            f.write("b.txt", "new\n");
        }
        ids.push(f.save(None).id);
    }
    let page = |offset, limit| {
        f.store
            .timeline(
                &TimelineOptions { offset, limit: Some(limit), ..Default::default() },
                &Default::default(),
            )
            .unwrap()
    };
    let first = page(0, 3);
    assert_eq!(first.total, 7);
    let shown: Vec<String> = first.entries.iter().map(|e| e.id.clone()).collect();
    assert_eq!(shown, [ids[6], ids[5], ids[4]].map(|i| i.to_string()));
    let last = page(6, 3);
    assert_eq!(last.entries.len(), 1);
    assert_eq!(last.entries[0].parts[0].files_changed, None, "the first snapshot has nothing before it");
    let changed: Vec<Option<u64>> = page(0, 7).entries.iter().map(|e| e.parts[0].files_changed).collect();
    assert_eq!(changed, [Some(1), Some(1), Some(1), Some(2), Some(1), Some(1), None]);
    assert_eq!(first.targets, [f.work.display().to_string()]);

    let none = TimelineOptions { kind: Some("compose".into()), ..Default::default() };
    assert_eq!(f.store.timeline(&none, &Default::default()).unwrap().total, 0);
    let bad = TimelineOptions { kind: Some("disk".into()), ..Default::default() };
    let err = f.store.timeline(&bad, &Default::default()).unwrap_err().to_string();
    assert!(err.contains("the kinds are dir, transcript, compose and debug"), "{err}");
    let big = TimelineOptions { limit: Some(5000), ..Default::default() };
    assert!(f.store.timeline(&big, &Default::default()).is_err());
}

#[test]
fn a_file_is_compared_side_by_side_and_a_binary_one_is_only_sized() {
    let f = fixture();
    std::fs::create_dir_all(f.work.join("src")).unwrap();
    f.write("src/lib.rs", "one\ntwo\nthree\n");
    f.write("blob.bin", "\0\u{1}\u{2}");
    let a = f.save(None);
    f.write("src/lib.rs", "one\n2\nthree\nfour\n");
    f.write("blob.bin", "\0\u{1}\u{2}\u{3}");
    let b = f.save(None);
    let options = |path: &str| FileDiffOptions {
        from: a.id.to_string(),
        to: b.id.to_string(),
        path: path.into(),
        ..Default::default()
    };
    let text = f.store.file_diff(&options("src/lib.rs"), &Default::default()).unwrap();
    let rows: Vec<(String, Option<String>, Option<String>)> =
        text.rows.into_iter().map(|r| (r.tag, r.old, r.new)).collect();
    let s = |t: &str| Some(t.to_owned());
    assert_eq!(
        rows,
        [
            ("equal".into(), s("one"), s("one")),
            ("replace".into(), s("two"), s("2")),
            ("equal".into(), s("three"), s("three")),
            ("insert".into(), None, s("four")),
        ]
    );
    let binary = f.store.file_diff(&options("blob.bin"), &Default::default()).unwrap();
    assert!(binary.binary && binary.rows.is_empty());
    assert_eq!((binary.size_before, binary.size_after), (Some(3), Some(4)));
    for bad in ["../etc/passwd", "", "src/../x"] {
        assert!(f.store.file_diff(&options(bad), &Default::default()).is_err(), "{bad}");
    }
    let missing = f.store.file_diff(&options("nope.rs"), &Default::default()).unwrap_err().to_string();
    assert!(missing.contains("is in neither snapshot"), "{missing}");
}

#[test]
fn store_figures_count_every_record_and_grow_with_each_save() {
    let f = fixture();
    f.write("a.txt", &"x".repeat(10_000));
    f.save(None);
    f.write("b.txt", &"y".repeat(10_000));
    f.save(None);
    let stats = f.store.store_stats(&StoreStatsOptions::default(), &Default::default()).unwrap();
    assert_eq!((stats.snapshots, stats.sessions, stats.growth.len()), (2, 1, 2));
    assert_eq!(stats.logical_bytes, 30_000);
    assert!(stats.stored_bytes > 0 && stats.dedup_ratio > 1.0, "{stats:?}");
    assert!(stats.growth[1].stored_bytes >= stats.growth[0].stored_bytes);
    let bad = StoreStatsOptions { points: Some(1) };
    assert!(f.store.store_stats(&bad, &Default::default()).is_err());
}

#[test]
fn a_name_is_given_refused_when_taken_moved_with_force_and_taken_away() {
    let f = fixture();
    f.write("a.txt", "1\n");
    let a = f.save(Some("first"));
    f.write("a.txt", "2\n");
    let b = f.save(None);
    let name = |r: &str, n: Option<&str>, force| NameOptions {
        reference: r.into(),
        name: n.map(str::to_owned),
        force,
        ..Default::default()
    };
    let named = f.store.name(&name(&b.id.to_string(), Some("second"), false), &Default::default()).unwrap();
    assert_eq!(named.name.as_deref(), Some("second"));
    let taken = f.store.name(&name("second", Some("first"), false), &Default::default()).unwrap_err();
    assert!(taken.to_string().contains("already exists"), "{taken}");
    f.store.name(&name("second", Some("first"), true), &Default::default()).unwrap();
    let a_now = f.store.name(&name(&a.id.to_string(), None, false), &Default::default()).unwrap();
    assert_eq!(a_now.name, None);
    let bad = f.store.name(&name("first", Some("../x"), false), &Default::default()).unwrap_err();
    assert!(bad.to_string().contains("snapshot name"), "{bad}");
}
