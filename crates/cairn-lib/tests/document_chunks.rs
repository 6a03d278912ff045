//! A document snapshot costs its growth: a transcript saved turn after turn is stored as
//! content-defined chunks, so each save adds its new tail and not the whole document again;
//! a document stored whole, as stores made before chunking hold them, still reads; and gc
//! keeps every chunk a remaining snapshot needs.

use std::path::Path;

use cairn_lib::ops::check::CheckOptions;
use cairn_lib::ops::document::DocumentSave;
use cairn_lib::ops::gc::GcOptions;
use cairn_lib::ops::remove::RemoveOptions;
use cairn_lib::ops::session::SessionCreateOptions;
use cairn_lib::{Repository, SessionId, SnapshotId, TargetKind};
use cairn_store::model::snapshot::Snapshot;
use cairn_store::pack::BlobKind;
use cairn_store::writer::BlobWriter;

/// Lines shaped like an agent's session file: JSON records of messages and tool results, of
/// words drawn from a small vocabulary, so they compress about as well as real ones.
fn jsonl(seed: u64, bytes: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "the", "file", "function", "returns", "error", "let", "match", "test", "store", "snapshot", "chunk",
        "index", "read", "write", "path", "line", "value", "because", "then", "check", "fn", "struct",
        "impl", "self", "result", "Ok", "None", "Some", "cargo", "build",
    ];
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(bytes + 4096);
    while out.len() < bytes {
        let n = 20 + (next() % 400) as usize;
        let text: Vec<&str> = (0..n).map(|_| WORDS[(next() % WORDS.len() as u64) as usize]).collect();
        let line = format!(
            "{{\"type\":\"{}\",\"uuid\":\"{:016x}{:016x}\",\"timestamp\":\"2026-01-01T00:{:02}:{:02}Z\",\"message\":{{\"content\":\"{}\"}}}}\n",
            if next() % 2 == 0 { "assistant" } else { "user" },
            next(),
            next(),
            next() % 60,
            next() % 60,
            text.join(" "),
        );
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(bytes);
    out
}

/// The bytes of every pack file under `store`.
fn pack_bytes(store: &Path) -> u64 {
    fn walk(dir: &Path) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
        entries
            .flatten()
            .map(|e| {
                let meta = e.metadata().unwrap();
                if meta.is_dir() { walk(&e.path()) } else { meta.len() }
            })
            .sum()
    }
    walk(&store.join("objects").join("packs"))
}

fn session(store: &Repository) -> SessionId {
    let options = SessionCreateOptions { name: Some("work".into()), from: None };
    store.session_create(&options, &Default::default()).unwrap().id
}

fn save(store: &Repository, session: SessionId, document: &[u8]) -> Snapshot {
    let save = DocumentSave {
        target: "transcript:/work/session.jsonl".into(),
        kind: TargetKind::Transcript,
        name: None,
        description: None,
        force: false,
        details: serde_json::Value::Null,
        stats: Default::default(),
        not_covered: Default::default(),
        session,
    };
    store.save_document(&save, document).unwrap()
}

fn check_clean(store: &Repository) {
    let check = store.check(&CheckOptions { read_data: true }).unwrap();
    assert!(check.problems.is_empty(), "check found {:?}", check.problems);
}

#[test]
fn a_growing_transcript_stores_only_what_was_appended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let store = Repository::open(&path).unwrap();
    let session = session(&store);
    let full = jsonl(7, 8 * 1024 * 1024);
    let step = 1024 * 1024;
    let first = save(&store, session, &full[..2 * step]);
    assert_eq!(store.read_document(&first).unwrap(), full[..2 * step]);
    let (mut grown, mut appended, mut appended_alone) = (0u64, 0u64, 0u64);
    for end in (3..=8).map(|i| i * step) {
        let before = pack_bytes(&path);
        let snapshot = save(&store, session, &full[..end]);
        let growth = pack_bytes(&path) - before;
        assert!(growth > 0, "the packs did not grow: are they where this test looks?");
        let alone = zstd::encode_all(&full[end - step..end], 1).unwrap().len() as u64;
        // Each save stores the appended bytes and its old last chunk again (at most the
        // document chunks' 256 KiB maximum), so every turn, not just the average, stays
        // within 1.5 times the appended bytes compressed alone.
        assert!(
            growth as f64 <= 1.5 * alone as f64,
            "saving {end} bytes, {step} of them new ({alone} compressed alone), grew the packs by {growth}"
        );
        assert!(store.read_document(&snapshot).unwrap() == full[..end], "the document does not read back");
        (grown, appended, appended_alone) = (grown + growth, appended + step as u64, appended_alone + alone);
    }
    // On average over the turns the old last chunk is half its maximum.
    assert!(
        grown as f64 <= 1.3 * appended_alone as f64,
        "{appended} appended bytes ({appended_alone} compressed alone) grew the packs by {grown}"
    );
    check_clean(&store);
}

#[test]
fn a_document_stored_as_one_blob_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = Repository::open(&dir.path().join("store")).unwrap();
    let session = session(&store);
    let document = jsonl(11, 3 * 1024 * 1024);
    // As a store written before chunking holds it: the whole document as one data blob.
    let writer = BlobWriter::new(&store);
    let root = writer.write(BlobKind::Data, &document).unwrap();
    writer.finish().unwrap();
    let mut old = save(&store, session, b"{}\n");
    old.id = SnapshotId::new();
    old.name = Some("old".into());
    old.root = Some(root);
    store.commit_snapshot(&old, false).unwrap();
    assert!(store.read_document(&old).unwrap() == document, "the old document does not read back");
    store.gc(&GcOptions::default()).unwrap();
    assert!(store.read_document(&old).unwrap() == document, "gc lost the old document");
    check_clean(&store);
}

#[test]
fn a_document_chunked_with_the_file_chunk_sizes_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let store = Repository::open(&path).unwrap();
    let session = session(&store);
    let document = jsonl(17, 3 * 1024 * 1024 + 4321);
    // As the first chunked documents were stored: cut with a file's chunk sizes (up to 1 MiB),
    // under a root of the magic line and the postcard-encoded length and chunk list.
    let writer = BlobWriter::new(&store);
    let (content, size) = cairn_store::chunker::store_chunks(&writer, document.as_slice()).unwrap().unwrap();
    assert!(content.len() > 1, "the document should be several chunks");
    let mut root = b"cairn document chunks v1\n".to_vec();
    root.extend(postcard::to_allocvec(&(size, content)).unwrap());
    let root = writer.write(BlobKind::Tree, &root).unwrap();
    writer.finish().unwrap();
    let mut old = save(&store, session, b"{}\n");
    old.id = SnapshotId::new();
    old.name = Some("old".into());
    old.root = Some(root);
    store.commit_snapshot(&old, false).unwrap();
    assert!(store.read_document(&old).unwrap() == document, "the old document does not read back");
    // The same document grown and saved with the document chunk sizes: both read back, and gc
    // keeps the old chunks the new root does not list.
    let mut grown = document.clone();
    grown.extend(jsonl(19, 512 * 1024));
    let new = save(&store, session, &grown);
    store.gc(&GcOptions::default()).unwrap();
    assert!(store.read_document(&old).unwrap() == document, "gc lost the old document");
    assert!(store.read_document(&new).unwrap() == grown, "the grown document does not read back");
    check_clean(&store);
}

#[test]
fn gc_after_removing_some_snapshots_keeps_the_chunks_of_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let store = Repository::open(&dir.path().join("store")).unwrap();
    let session = session(&store);
    let full = jsonl(13, 5 * 1024 * 1024);
    let step = 1024 * 1024;
    let snapshots: Vec<Snapshot> = (1..=5).map(|i| save(&store, session, &full[..i * step])).collect();
    let refs = vec![snapshots[1].id.to_string(), snapshots[3].id.to_string(), snapshots[4].id.to_string()];
    let remove = RemoveOptions { refs, session: Some("work".into()), ..RemoveOptions::default() };
    store.remove(&remove, &Default::default()).unwrap();
    store.gc(&GcOptions::default()).unwrap();
    check_clean(&store);
    for (i, snapshot) in [(1, &snapshots[0]), (3, &snapshots[2])] {
        assert!(
            store.read_document(snapshot).unwrap() == full[..i * step],
            "snapshot {i} does not read back"
        );
    }
}
