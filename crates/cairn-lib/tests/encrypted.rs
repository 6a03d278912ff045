//! Tests of encrypted stores beyond the contract suite, through the library's public API: what
//! the objects reveal when read raw, a wrong password, keys added and removed, `init` on a store
//! that exists.

use std::path::Path;
use std::sync::Arc;

use cairn_lib::ops::init::InitOptions;
use cairn_lib::ops::key::{KeyAddOptions, KeyListOptions, KeyRemoveOptions};
use cairn_lib::ops::resolve::CallContext;
use cairn_lib::ops::save::SaveOptions;
use cairn_lib::ops::session::SessionCreateOptions;
use cairn_lib::{
    Backend, ErrorKind, LocalBackend, MemoryBackend, OpenMode, Repository, Secret, StoreAddress, Unlock,
};
use cairn_test_support::Moto;

/// Strings of the captured tree and its catalog that no object may hold, read raw.
const SECRETS: [&str; 5] = [
    "quokka-ledger.txt",
    "wombat-subfolder",
    "the plain content of a file",
    "zebra-snapshot-name",
    "ocelot-session",
];

fn password(text: &str) -> Unlock {
    Unlock::with_secret(Secret::password(text)).encrypt_new(true)
}

/// Saves a tree whose file names, content, snapshot name and session name are [`SECRETS`],
/// twice (the second a small change), into `store`.
fn fill(store: &Repository, work: &Path) {
    let tree = work.join("tree");
    std::fs::create_dir_all(tree.join("wombat-subfolder")).unwrap();
    std::fs::write(tree.join("quokka-ledger.txt"), "the plain content of a file\n").unwrap();
    let many = "the plain content of a file, again and again\n".repeat(2_000);
    std::fs::write(tree.join("wombat-subfolder/big.txt"), many).unwrap();
    let context = CallContext::default();
    let session = SessionCreateOptions { name: Some("ocelot-session".into()), from: None };
    store.session_create(&session, &context).unwrap();
    let save = |name: Option<&str>| SaveOptions {
        target: tree.display().to_string(),
        name: name.map(str::to_owned),
        session: Some("ocelot-session".into()),
        ..Default::default()
    };
    store.save(&save(Some("zebra-snapshot-name")), &context).unwrap();
    std::fs::write(tree.join("quokka-ledger.txt"), "the plain content of a file, changed\n").unwrap();
    store.save(&save(None), &context).unwrap();
}

/// Which of [`SECRETS`] (and the tree's path) some object's key or bytes hold.
fn revealed(backend: &dyn Backend, tree: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let path = tree.display().to_string();
    let needles: Vec<&str> = SECRETS.iter().copied().chain([path.as_str()]).collect();
    for key in backend.list("").unwrap() {
        let bytes = backend.get(&key).unwrap();
        for needle in &needles {
            let inside = bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
            if inside || key.contains(needle) {
                found.push(format!("{needle} in {key}"));
            }
        }
    }
    found
}

#[test]
fn a_plain_shared_store_shows_names_which_is_what_the_next_test_looks_for() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(MemoryBackend::default());
    let store =
        Repository::open_shared(backend.clone(), &dir.path().join("cache"), OpenMode::CreateIfMissing)
            .unwrap();
    fill(&store, dir.path());
    let found = revealed(backend.as_ref(), &dir.path().join("tree"));
    assert!(found.iter().any(|f| f.starts_with("quokka-ledger.txt")), "{found:?}");
    assert!(found.iter().any(|f| f.starts_with("zebra-snapshot-name")), "{found:?}");
}

#[test]
fn an_encrypted_bucket_read_raw_holds_no_file_name_or_content() {
    let moto = Moto::start();
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(moto.backend("sealed", "team/store"));
    let store = Repository::open_shared_with(
        backend.clone(),
        &dir.path().join("cache"),
        OpenMode::CreateIfMissing,
        &password("pw"),
    )
    .unwrap();
    fill(&store, dir.path());
    assert_eq!(revealed(backend.as_ref(), &dir.path().join("tree")), Vec::<String>::new());
    // The cache, rebuilt from the bucket alone, sees both snapshots.
    drop(store);
    std::fs::remove_dir_all(dir.path().join("cache")).unwrap();
    let again =
        Repository::open_shared_with(backend, &dir.path().join("cache"), OpenMode::Existing, &password("pw"))
            .unwrap();
    assert_eq!(again.find_session("ocelot-session").unwrap().snapshot_count, 2);
}

#[test]
fn an_encrypted_local_store_read_raw_holds_no_file_name_or_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let address = StoreAddress::Dir(root.clone());
    let unlock = password("pw").cache_home(dir.path().join("cache"));
    let made = Repository::init(
        &address,
        &InitOptions { encrypt: true, ..Default::default() },
        &unlock,
        &CallContext::default(),
    )
    .unwrap();
    assert!(made.encrypted && made.key.is_some());
    let store = Repository::open_address_with(&address, OpenMode::Existing, &unlock).unwrap();
    fill(&store, dir.path());
    let raw = LocalBackend::new(root.clone(), root.join("tmp"));
    assert_eq!(revealed(&raw, &dir.path().join("tree")), Vec::<String>::new());
    // Opened without a secret, it is refused in one line, and so is opening it as a plain one.
    let no_secret = Unlock::default().cache_home(dir.path().join("cache"));
    let err = Repository::open_address_with(&address, OpenMode::Existing, &no_secret).unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "the store at {} is encrypted, and no password or key file was given; give the store's password or key file",
            root.display()
        )
    );
    assert!(Repository::open_in(&root, OpenMode::Existing).is_err());
}

#[test]
fn a_wrong_password_is_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(MemoryBackend::default());
    let cache = dir.path().join("cache");
    Repository::open_shared_with(backend.clone(), &cache, OpenMode::CreateIfMissing, &password("right"))
        .unwrap();
    let err =
        Repository::open_shared_with(backend, &cache, OpenMode::Existing, &password("wrong")).unwrap_err();
    assert_eq!(
        err.message(),
        "the password does not unlock the store at an in-memory store (its one key does not match)"
    );
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
}

#[test]
fn keys_added_and_removed_unlock_and_stop_unlocking() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(MemoryBackend::default());
    let cache = dir.path().join("cache");
    let open =
        |pw: &str| Repository::open_shared_with(backend.clone(), &cache, OpenMode::Existing, &password(pw));
    let context = CallContext::default();
    let first =
        Repository::open_shared_with(backend.clone(), &cache, OpenMode::CreateIfMissing, &password("old"))
            .unwrap();
    fill(&first, dir.path());
    let old_id = first.key_id().unwrap().to_owned();
    let add = KeyAddOptions { label: Some("laptop".into()), secret: Some(Secret::password("new")) };
    let added = first.key_add(&add, &context).unwrap();
    assert_eq!(
        (added.keys, added.key.kind.as_str(), added.key.label.as_deref()),
        (2, "password", Some("laptop"))
    );
    let file = KeyAddOptions { label: None, secret: Some(Secret::key_file(vec![42; 64])) };
    first.key_add(&file, &context).unwrap();
    drop(first);

    let second = open("new").unwrap();
    let listed = second.key_list(&KeyListOptions {}, &context).unwrap().keys;
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().any(|k| k.current && k.id == added.key.id));
    let removed = second.key_remove(&KeyRemoveOptions { id: old_id[..6].to_owned() }, &context).unwrap();
    assert_eq!((removed.key.id.as_str(), removed.keys), (old_id.as_str(), 2));
    assert_eq!(second.find_session("ocelot-session").unwrap().snapshot_count, 2);
    drop(second);

    assert_eq!(open("old").unwrap_err().kind(), ErrorKind::PermissionDenied);
    let by_file = Repository::open_shared_with(
        backend.clone(),
        &cache,
        OpenMode::Existing,
        &Unlock::with_secret(Secret::key_file(vec![42; 64])),
    )
    .unwrap();
    let file_id = by_file.key_id().unwrap().to_owned();
    by_file.key_remove(&KeyRemoveOptions { id: added.key.id.clone() }, &context).unwrap();
    let last = by_file.key_remove(&KeyRemoveOptions { id: file_id.clone() }, &context).unwrap_err();
    assert_eq!(
        last.message(),
        format!(
            "key {file_id} is the only key of the store at an in-memory store, and a store no key unlocks is lost; add another key first"
        )
    );
    assert!(by_file.key_remove(&KeyRemoveOptions { id: "f".repeat(33) }, &context).is_err());
}

#[test]
fn init_twice_is_refused_in_one_line_and_changes_nothing() {
    let moto = Moto::start();
    let dir = tempfile::tempdir().unwrap();
    let context = CallContext::default();
    let remote =
        StoreAddress::S3 { settings: moto.settings("init", "twice"), cache_home: dir.path().join("cache") };
    let made = Repository::init(&remote, &InitOptions::default(), &password("pw"), &context).unwrap();
    assert!(made.encrypted, "a remote store is encrypted by default");
    let again = Repository::init(&remote, &InitOptions::default(), &password("pw"), &context).unwrap_err();
    assert_eq!(
        again.message(),
        "there is already an encrypted store at s3://init/twice; nothing was changed"
    );

    let local = StoreAddress::Dir(dir.path().join("plain"));
    let made = Repository::init(&local, &InitOptions::default(), &Unlock::default(), &context).unwrap();
    assert!(!made.encrypted && made.key.is_none());
    let again = Repository::init(
        &local,
        &InitOptions { encrypt: true, ..Default::default() },
        &password("pw"),
        &context,
    )
    .unwrap_err();
    assert_eq!(
        again.message(),
        format!(
            "there is already a plain store at {}; nothing was changed",
            dir.path().join("plain").display()
        )
    );
}

#[test]
fn an_old_plain_store_marker_opens_as_it_always_did() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(MemoryBackend::default());
    let marker = format!(r#"{{"format":1,"id":"{}"}}"#, uuid::Uuid::now_v7());
    backend.put_if_absent("cairn-store.json", marker.as_bytes()).unwrap();
    let store = Repository::open_shared_with(
        backend,
        &dir.path().join("cache"),
        OpenMode::Existing,
        &password("unused"),
    )
    .unwrap();
    assert!(!store.is_encrypted());
}
