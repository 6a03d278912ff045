use super::*;

#[test]
fn a_blob_indexed_after_the_lookups_began_is_not_stored_twice_and_the_pool_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let data = b"a blob seen twice in one save".to_vec();
    let writer = BlobWriter::new(&store);
    // The first write looks the blob up, which begins the writer's read transaction.
    let id = writer.write(BlobKind::Data, &data).unwrap();
    writer.finish().unwrap();
    // Indexed now, after that transaction began: the held lookup cannot see it.
    assert_eq!(writer.write(BlobKind::Data, &data).unwrap(), id);
    writer.finish().unwrap();
    assert_eq!(writer.totals().0, data.len() as u64, "the blob was stored twice");
    assert_eq!(writer.lock().published.len(), 1);
    drop(writer);
    // The readers went back to the pool out of their transactions, so they see the index
    // as it is now.
    assert!(store.catalog.blob_location(&id).unwrap().is_some());
    let again = BlobWriter::new(&store);
    again.write(BlobKind::Data, &data).unwrap();
    assert_eq!(again.totals().0, 0);
}

#[test]
fn a_frame_holds_the_blobs_of_one_thread_and_every_blob_is_indexed_at_the_finish() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let writer = BlobWriter::new(&store);
    let blob = |thread: usize, i: usize| format!("thread {thread} blob {i}\n").repeat(100).into_bytes();
    // Two threads write at once, each more than one frame's worth and a rest.
    let ids: Vec<Vec<ObjectId>> = std::thread::scope(|scope| {
        let writer = &writer;
        let handles: Vec<_> = (0..2)
            .map(|t| {
                scope.spawn(move || {
                    (0..100).map(|i| writer.write(BlobKind::Data, &blob(t, i)).unwrap()).collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(writer.lock().published.is_empty(), "less than a pack: nothing published yet");
    writer.finish().unwrap();
    let key = writer.lock().published[0].clone();
    let mut frames: HashMap<(u64, u64), Vec<ObjectId>> = HashMap::new();
    for (id, loc) in store.catalog.pack_blobs(&key).unwrap() {
        assert!(loc.within.is_some(), "{id} is not framed");
        frames.entry((loc.offset, loc.length)).or_default().push(id);
    }
    assert!(frames.len() >= 4, "{} frames", frames.len());
    for members in frames.values() {
        let thread = |id: &ObjectId| ids.iter().position(|t| t.contains(id)).unwrap();
        assert!(members.iter().all(|m| thread(m) == thread(&members[0])), "a frame mixes threads");
    }
    for (t, thread_ids) in ids.iter().enumerate() {
        for (i, id) in thread_ids.iter().enumerate() {
            assert_eq!(store.read_blob(id).unwrap(), blob(t, i));
        }
    }
}

#[test]
fn held_lookups_leave_the_checkpoint_free_after_each_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let writer = BlobWriter::new(&store);
    // A lookup begins a read transaction; the publish then commits after it.
    writer.write(BlobKind::Data, b"first").unwrap();
    writer.finish().unwrap();
    writer.write(BlobKind::Data, b"second").unwrap();
    writer.finish().unwrap();
    // With the writer and its readers still alive, the WAL can be copied back whole.
    let (log, copied): (i64, i64) = store
        .catalog
        .conn()
        .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| Ok((r.get(1)?, r.get(2)?)))
        .unwrap();
    assert!(log > 0);
    assert_eq!(copied, log, "a held read transaction kept the checkpoint back");
}

#[test]
fn a_local_writer_publishes_its_first_packs_small_and_each_next_twice_as_large() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let writer = BlobWriter::new(&store);
    // Incompressible blobs too large to share a frame: each is stored as it is, 512 KiB.
    let blob = |i: u32| {
        let mut bytes = vec![0; 512 << 10];
        blake3::Hasher::new().update(&i.to_le_bytes()).finalize_xof().fill(&mut bytes);
        bytes
    };
    for i in 0..36 {
        writer.write(BlobKind::Data, &blob(i)).unwrap();
    }
    // 18 MiB written: packs of 2, 4 and 8 MiB were published while writing.
    assert_eq!(writer.lock().published.len(), 3);
    writer.finish().unwrap();
    let sizes: Vec<u64> =
        writer.lock().published.iter().map(|key| store.backend().size(key).unwrap().unwrap()).collect();
    assert_eq!(sizes.len(), 4, "{sizes:?}");
    for (n, size) in sizes[..3].iter().enumerate() {
        let target = pack_target(n as u32) as u64;
        assert!((target..target + (1 << 20)).contains(size), "pack {n} holds {size} bytes, target {target}");
    }
    assert_eq!(pack_target(3), TARGET_PACK_SIZE);
    assert_eq!(pack_target(u32::MAX), TARGET_PACK_SIZE);
}

#[test]
fn a_tree_a_stat_cache_row_names_is_written_without_a_lookup_unless_something_is_suspect() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    // Never stored: a writer that takes the row's word writes nothing for it, which shows it
    // made no lookup (one would have found nothing, and the tree would be stored).
    let tree = b"a tree the row names".to_vec();
    let writer = BlobWriter::new(&store);
    writer.vouch_kept(ObjectId::of(&tree)).unwrap();
    assert_eq!(writer.write(BlobKind::Tree, &tree).unwrap(), ObjectId::of(&tree));
    writer.finish().unwrap();
    assert_eq!(writer.totals().0, 0, "the vouched tree was stored");
    drop(writer);
    // A store that knows of damage vouches for nothing unlooked at: the tree is stored.
    store.catalog.mark_damaged(&ObjectId::of(b"some damaged blob")).unwrap();
    let writer = BlobWriter::new(&store);
    writer.vouch_kept(ObjectId::of(&tree)).unwrap();
    writer.write(BlobKind::Tree, &tree).unwrap();
    writer.finish().unwrap();
    assert_eq!(writer.totals().0, tree.len() as u64);
    assert_eq!(store.read_blob(&ObjectId::of(&tree)).unwrap(), tree);
}
