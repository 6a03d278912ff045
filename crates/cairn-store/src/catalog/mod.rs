//! The catalog: an embedded SQLite database holding the blob index, pack states, snapshot
//! records, sessions and stat caches. WAL mode, so it survives `kill -9` at any point, and
//! `synchronous = FULL`, so a commit is on disk before the command reports it: a snapshot
//! exists only once its record is durable, and gc deletes a pack file only after the catalog
//! durably stopped pointing at it. The few commits only a later flushed one relies on (a stat
//! cache, a local pack's index) are flushed with it ([`Flush::WithNext`]); in a store of this
//! machine's own, those whose every row the objects hold already (a snapshot's or a moment's,
//! after its record and packs are flushed) are not flushed at all, and the first open after a
//! power cut adds back from the objects what the catalog lost ([`Flush::Recoverable`],
//! `power_cut.rs`).
//!
//! Everything here can be rebuilt from the objects (pack headers, snapshot record objects); the
//! catalog makes lookups fast, it is not the only copy.

mod alike;
mod blobs;
pub mod events;
mod lookups;
mod moments;
mod power_cut;
mod repair;
pub mod room;
mod sessions;
mod snapshots;
mod statcache;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use crate::error::{IoContext, Result};

pub use blobs::BlobLocation;
pub use events::Member;
pub use lookups::BlobLookups;
pub use snapshots::{NewSnapshot, SnapshotFilter};
pub use statcache::{RowWrite, StatCacheWrite, StoredDirRows};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS packs(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,          -- 'pending' while being written, 'ready' once indexed
    pid INTEGER NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs(
    id BLOB PRIMARY KEY,
    pack INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    raw_length INTEGER NOT NULL,
    compressed INTEGER NOT NULL,
    within INTEGER                -- where a member of a shared frame starts in it
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blobs_by_pack ON blobs(pack);
CREATE TABLE IF NOT EXISTS sessions(
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    from_session TEXT
);
CREATE TABLE IF NOT EXISTS snapshots(
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at TEXT NOT NULL,
    description TEXT,
    root BLOB,
    safety INTEGER NOT NULL,
    stats TEXT NOT NULL,
    not_covered TEXT NOT NULL,
    details TEXT
);
CREATE TABLE IF NOT EXISTS memberships(
    session_id TEXT NOT NULL,
    snapshot_id TEXT NOT NULL,
    target TEXT NOT NULL,
    name TEXT,
    PRIMARY KEY(session_id, snapshot_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS membership_names
    ON memberships(session_id, target, name) WHERE name IS NOT NULL;
CREATE INDEX IF NOT EXISTS memberships_by_snapshot ON memberships(snapshot_id);
CREATE TABLE IF NOT EXISTS damaged_blobs(
    id BLOB PRIMARY KEY           -- found damaged by a check: dedup does not trust them
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stat_caches(
    target TEXT PRIMARY KEY,
    data BLOB NOT NULL
);
";

/// The schema [`Catalog::open`] makes, kept in the catalog's `user_version`: raise it with
/// every change to the tables or their migrations, so each catalog is brought up to date once.
const SCHEMA_VERSION: i64 = 2;

/// When a commit reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// Before the call returns (`synchronous = FULL`).
    Now,
    /// With the next commit that is flushed. WAL makes the durable state a prefix of the
    /// commits, so a power cut can take such a commit back only with every later one: fit for
    /// what only a later flushed commit (a snapshot's, gc's) relies on, and for a cache.
    WithNext,
    /// Not on its own: for a commit whose every row an object already flushed holds (a
    /// snapshot's record and packs, a moment's record). A power cut may take it back, and the
    /// first open after it adds back what the objects hold (`power_cut.rs`). Flushed at once
    /// in a shared store, whose other machines learn of it from the catalog's events, and
    /// where the boot is not known.
    Recoverable,
}

/// The catalog connection. One per open store, shared by the store's threads.
pub struct Catalog {
    path: PathBuf,
    /// Idle connections for blob lookups. A capture or restore asks for every blob's location
    /// from several threads at once; WAL lets separate connections read in parallel, where one
    /// shared connection made the threads queue behind its lock.
    ///
    /// Closed before `conn` checkpoints a large WAL (`Drop`): a reader's open transaction
    /// would stop it, and a large save would leave its whole WAL (1 GB at 1,000,000 files)
    /// for the next command to read back in when it opened the catalog.
    readers: Mutex<Vec<Connection>>,
    conn: Mutex<Connection>,
    /// The objects of a shared store, where changes no record carries are published.
    shared: Option<std::sync::Arc<dyn crate::backend::Backend>>,
    /// How much of the WAL index is allocated (`room.rs`), kept ahead of the WAL's growth.
    index_held: std::sync::atomic::AtomicU64,
    /// The boot whose commits may not be on disk yet ([`Flush::Recoverable`]).
    boot: power_cut::BootNote,
}

/// The WAL size above which closing the catalog checkpoints it and empties it. The first
/// command to open the catalog reads the whole WAL back to index it, so this bounds what a
/// command pays for those before it: about 1.5 ms a megabyte, where a checkpoint costs two
/// flushes, a few milliseconds. A save that adds nothing writes about 30 kB, so half a megabyte
/// checkpoints once in some fifteen such saves, and every open reads back a quarter of a
/// megabyte on average (with 2 MB, it read back a megabyte).
const CHECKPOINT_ON_CLOSE_ABOVE: u64 = 512 << 10;

/// The mark while another process has the catalog open (a watcher, the MCP server, `cairn ui`).
/// Its connection keeps the WAL index valid, so the next command reads nothing back; a
/// checkpoint is then only a cost, two flushes and a copy of every page the WAL changed, which
/// at the mark above fell to every other restore or 20-file save. This one leaves about ten
/// such commands between checkpoints, and bounds what the first command after that process
/// exits reads back.
const CHECKPOINT_ON_CLOSE_WHILE_OPEN_ELSEWHERE_ABOVE: u64 = 4 << 20;

impl Drop for Catalog {
    fn drop(&mut self) {
        // Readers first: a checkpoint cannot pass a reader's open transaction.
        self.readers.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
        let mark = if room::open_elsewhere(&self.path) {
            CHECKPOINT_ON_CLOSE_WHILE_OPEN_ELSEWHERE_ABOVE
        } else {
            CHECKPOINT_ON_CLOSE_ABOVE
        };
        self.checkpoint_above(mark);
    }
}

impl Catalog {
    /// For a process that keeps the catalog open and writes for hours (the watcher making
    /// saves), between its writes: checkpoints and empties the WAL past the mark of a catalog
    /// open elsewhere (this process keeps the WAL index valid for every command meanwhile),
    /// where SQLite's own checkpoint would wait for 32 MiB and run in the middle of a commit.
    pub fn checkpoint_if_grown(&self) {
        self.checkpoint_above(CHECKPOINT_ON_CLOSE_WHILE_OPEN_ELSEWHERE_ABOVE);
    }

    fn checkpoint_above(&self, mark: u64) {
        let wal = std::fs::metadata(room::side_file(&self.path, "-wal")).map_or(0, |m| m.len());
        if wal > mark {
            let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
            // Best effort: another process reading the catalog keeps the WAL until its own
            // close, or a later command's, checkpoints it.
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

/// A reader taken from the pool; it goes back when dropped.
pub struct Reader<'c> {
    conn: Option<Connection>,
    pool: &'c Mutex<Vec<Connection>>,
}

impl std::ops::Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("a reader holds its connection until dropped")
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
        }
    }
}

impl Catalog {
    /// Opens (creating if needed) the catalog at `path` and ensures the schema and `baseline`.
    pub fn open(path: &Path) -> Result<Self> {
        // Made 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database
        // file's permissions, so none of them is ever readable by others, whatever the umask.
        // Through a descriptor that stays open: closing one would drop the locks this process's
        // other connections to the catalog hold (`room::with_held`).
        let fresh = room::with_held(path, true, |file| Ok(file.metadata()?.len() == 0)).at("create", path)?
            == Some(true);
        let boot = power_cut::BootNote::read(path);
        // The WAL index is mapped into memory: on a disk too full to rebuild it, a write
        // through the mapping would be a SIGBUS, so such a disk is refused first (`room.rs`).
        room::ensure_room_to_open(path)?;
        let conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        no_mapped_pages(&conn)?;
        if fresh {
            // A new catalog's switch to WAL writes its first page through a rollback journal
            // (three flushes), and its tables' commit flushes the WAL's header and then the
            // commit: seven flushes one after another for a store's first save, with the boot
            // note's. All go unflushed, and are flushed together below. A crash before leaves
            // an empty database, or one whose WAL holds the tables or is dropped (SQLite drops
            // a WAL beside an empty database), which the next open completes.
            conn.pragma_update(None, "synchronous", "OFF")?;
        }
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // A read opens the WAL index (a new catalog has none until then), which is then
        // allocated before anything is written through it.
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
        let index_held = std::sync::atomic::AtomicU64::new(room::allocate_index(path)?);
        if !fresh {
            // NORMAL would leave the last commits in the WAL unflushed until a checkpoint: a
            // power cut could take back a removal, or gc's word that a pack is unreferenced.
            // The commits the objects can give back go unflushed one by one
            // (`Flush::Recoverable`).
            conn.pragma_update(None, "synchronous", "FULL")?;
        }
        // A save rewrites the stat cache rows of the directories it looked at, a megabyte for a
        // directory of 20,000 files: checkpointing every 4 MB (the default) would copy those
        // pages back every few saves. Every 32 MB copies each only once per many saves.
        conn.pragma_update(None, "wal_autocheckpoint", 8192)?;
        // A checkpoint cannot finish while a capture's readers hold transactions, so a large
        // save's WAL grows past the mark above; once it is reset, keep no more of it on disk
        // than a few checkpoints' worth.
        conn.pragma_update(None, "journal_size_limit", 128 << 20)?;
        // Closing the last connection would checkpoint the WAL and delete it, and the next
        // command's first commit would make it again: four flushes and an unlink, twice the
        // flushes of a save that adds nothing. The WAL stays instead, and is checkpointed on
        // close only once it holds more than the next open should read back (`Drop`).
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        // Parsing the schema's statements costs every command a few percent of a small save:
        // a catalog that says it has this schema already is taken at its word.
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            // One transaction, so one flush: each statement on its own was a commit, and a new
            // store's first save paid twenty flushes for its tables.
            let tx = conn.unchecked_transaction()?;
            tx.execute_batch(SCHEMA)?;
            blobs::migrate(&tx)?;
            moments::migrate(&tx)?;
            tx.execute_batch(events::SCHEMA)?;
            tx.execute_batch(statcache::SCHEMA)?;
            tx.execute_batch(alike::SCHEMA)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            // In the same flush as the tables, for a new store.
            sessions::ensure_baseline(&tx)?;
            tx.commit()?;
        } else {
            sessions::ensure_baseline(&conn)?;
        }
        if fresh {
            // The database's first page and the WAL with the tables are flushed side by side
            // with the boot note, whose rename's flush of the directory is theirs too, before
            // anything can be committed that must outlast a power cut.
            let wal = room::side_file(path, "-wal");
            boot.note_new_catalog(|| {
                std::thread::scope(|scope| {
                    let flushing_wal = scope.spawn(|| room::with_held(&wal, false, |file| file.sync_data()));
                    let db = room::with_held(path, false, |file| file.sync_data()).at("flush", path);
                    let wal_flushed =
                        flushing_wal.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    db.and(wal_flushed.at("flush", &wal)).map(drop)
                })
            })?;
            conn.pragma_update(None, "synchronous", "FULL")?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            readers: Mutex::new(Vec::new()),
            conn: Mutex::new(conn),
            shared: None,
            index_held,
            boot,
        })
    }

    /// Locks the connection for one operation.
    pub fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `write` on the locked connection, its commits flushed as `flush` says.
    pub fn writing<T>(&self, flush: Flush, write: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        // The large writes come through here: the WAL index is kept allocated ahead of them.
        room::keep_ahead(&self.path, &self.index_held)?;
        let flush = match flush {
            Flush::Recoverable if self.shared.is_none() && self.boot.note()? => Flush::WithNext,
            Flush::Recoverable => Flush::Now,
            other => other,
        };
        let mut conn = self.conn();
        if flush == Flush::Now {
            return write(&mut conn);
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let written = write(&mut conn);
        let restored = conn.pragma_update(None, "synchronous", "FULL");
        let written = written?;
        restored?;
        Ok(written)
    }

    /// A read-only connection of this thread's own for one lookup, opened on first need.
    pub fn reader(&self) -> Result<Reader<'_>> {
        Ok(Reader { conn: Some(self.take_reader()?), pool: &self.readers })
    }

    /// A read-only connection out of the pool (or a new one), for the caller to
    /// [give back](Catalog::give_back) outside any transaction.
    pub(super) fn take_reader(&self) -> Result<Connection> {
        let idle = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(conn) => Ok(conn),
            None => self.open_read_only(),
        }
    }

    /// Returns a connection from [`Catalog::take_reader`] to the pool.
    pub(super) fn give_back(&self, conn: Connection) {
        self.readers.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
    }

    /// A new read-only connection to the catalog.
    fn open_read_only(&self) -> Result<Connection> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        no_mapped_pages(&conn)?;
        Ok(conn)
    }

    /// True when the catalog holds nothing but what [`Catalog::open`] puts into a new one: no
    /// pack, snapshot, stat cache, or session besides `baseline`.
    pub fn is_empty(&self) -> Result<bool> {
        let conn = self.conn();
        let count = |table: &str| -> Result<i64> {
            Ok(conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?)
        };
        Ok(count("packs")? == 0
            && count("snapshots")? == 0
            && count("memberships")? == 0
            && count("stat_caches")? == 0
            && count("sessions")? <= 1)
    }
}

/// Reads the database file with `read`, never through a memory map: a mapped file that
/// another process truncates, or that sits on a disk that fails, faults with SIGBUS where a
/// read returns an error. 0 is SQLite's default; it is set so that no build changes it.
fn no_mapped_pages(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "mmap_size", 0)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_catalog_is_made_in_wal_mode_with_its_baseline_and_the_boot_noted_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let path = dir.path().join("catalog.db");
        let catalog = Catalog::open(&path).unwrap();
        let conn = catalog.conn();
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let baseline: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sessions WHERE id = ?1",
                [crate::id::SessionId::BASELINE.to_string()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(baseline, 1);
        // Made with its flushes put off and done at once: every later commit is flushed again.
        let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!(synchronous, 2, "synchronous = FULL");
        let in_wal: i64 = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1)).unwrap();
        assert!(in_wal > 0, "the tables were committed to the WAL");
        drop(conn);
        let note = std::fs::read_to_string(dir.path().join("catalog.boot")).ok();
        let boot = crate::fault::boot_id()
            .or_else(|| std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok())
            .map(|b| b.trim().to_owned());
        assert_eq!(note.map(|n| n.trim().to_owned()), boot, "the boot is noted when it is known");
        assert_eq!(std::fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0, "no temp file is left");
        drop(catalog);

        let again = Catalog::open(&path).unwrap();
        let sessions: i64 =
            again.conn().query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0)).unwrap();
        assert_eq!(sessions, 1, "opened again, the catalog is the one made");
    }

    #[test]
    fn a_small_wal_stays_for_the_next_command_and_a_large_one_is_emptied_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let wal = dir.path().join("catalog.db-wal");
        let catalog = Catalog::open(&path).unwrap();
        catalog.conn().execute_batch("CREATE TABLE scratch(x); INSERT INTO scratch VALUES (1);").unwrap();
        drop(catalog);
        let small = std::fs::metadata(&wal).expect("a small WAL is kept").len();
        assert!(small > 0 && small <= CHECKPOINT_ON_CLOSE_ABOVE, "{small}");

        let catalog = Catalog::open(&path).unwrap();
        // A reader in the pool, as a capture leaves them, and a write larger than the mark.
        let count: i64 =
            catalog.reader().unwrap().query_row("SELECT COUNT(*) FROM packs", [], |r| r.get(0)).unwrap();
        assert_eq!(count, 0);
        let big = vec![7u8; 3 << 20];
        catalog.conn().execute("INSERT INTO scratch VALUES (?1)", [&big]).unwrap();
        assert!(std::fs::metadata(&wal).unwrap().len() > CHECKPOINT_ON_CLOSE_ABOVE);
        drop(catalog);
        assert_eq!(std::fs::metadata(&wal).map_or(0, |m| m.len()), 0, "the large WAL was left behind");

        let again = Catalog::open(&path).unwrap();
        let kept: i64 = again.conn().query_row("SELECT COUNT(*) FROM scratch", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 2);
    }

    #[test]
    fn a_catalog_kept_open_empties_its_wal_past_the_mark_between_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let wal = dir.path().join("catalog.db-wal");
        let catalog = Catalog::open(&path).unwrap();
        catalog.conn().execute_batch("CREATE TABLE scratch(x)").unwrap();
        let big = vec![7u8; 1 << 20];
        catalog.conn().execute("INSERT INTO scratch VALUES (?1)", [&big]).unwrap();
        catalog.checkpoint_if_grown();
        let below = std::fs::metadata(&wal).unwrap().len();
        assert!(below > CHECKPOINT_ON_CLOSE_ABOVE, "a WAL below the mark is kept: {below}");
        for _ in 0..4 {
            catalog.conn().execute("INSERT INTO scratch VALUES (?1)", [&big]).unwrap();
        }
        assert!(std::fs::metadata(&wal).unwrap().len() > CHECKPOINT_ON_CLOSE_WHILE_OPEN_ELSEWHERE_ABOVE);
        catalog.checkpoint_if_grown();
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0, "emptied while still open");
        let kept: i64 = catalog.conn().query_row("SELECT COUNT(*) FROM scratch", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 5);
    }

    /// Where the process that [`hold_the_catalog_open_until_stdin_closes`] runs in opens it.
    const HOLD: &str = "CAIRN_TEST_HOLD_CATALOG";

    #[test]
    fn a_wal_past_the_mark_stays_while_another_process_has_the_catalog_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let wal = dir.path().join("catalog.db-wal");
        let catalog = Catalog::open(&path).unwrap();
        catalog.conn().execute_batch("CREATE TABLE scratch(x)").unwrap();
        // This process's own connections are not another process.
        assert!(!room::open_elsewhere(&path));
        drop(catalog);

        let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "catalog::tests::hold_the_catalog_open_until_stdin_closes"])
            .args(["--include-ignored", "--test-threads=1"])
            .env(HOLD, &path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let waited = std::time::Instant::now();
        while !room::open_elsewhere(&path) {
            assert!(waited.elapsed().as_secs() < 30, "the other process never opened the catalog");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let past_the_mark = || {
            let catalog = Catalog::open(&path).unwrap();
            let big = vec![7u8; 1 << 20];
            catalog.conn().execute("INSERT INTO scratch VALUES (?1)", [&big]).unwrap();
            let len = std::fs::metadata(&wal).unwrap().len();
            assert!(len > CHECKPOINT_ON_CLOSE_ABOVE && len < CHECKPOINT_ON_CLOSE_WHILE_OPEN_ELSEWHERE_ABOVE);
            drop(catalog);
        };
        past_the_mark();
        assert!(std::fs::metadata(&wal).unwrap().len() > CHECKPOINT_ON_CLOSE_ABOVE, "checkpointed anyway");

        drop(holder.stdin.take());
        assert!(holder.wait().unwrap().success());
        assert!(!room::open_elsewhere(&path));
        past_the_mark();
        assert_eq!(std::fs::metadata(&wal).map_or(0, |m| m.len()), 0, "the WAL was left behind");
        let again = Catalog::open(&path).unwrap();
        let kept: i64 = again.conn().query_row("SELECT COUNT(*) FROM scratch", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 2);
    }

    /// The other process of the test above, which runs it; on its own it does nothing.
    #[test]
    #[ignore = "the test above runs it in a process of its own"]
    fn hold_the_catalog_open_until_stdin_closes() {
        let Some(path) = std::env::var_os(HOLD) else { return };
        let conn = Connection::open(path).unwrap();
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)).unwrap();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new()).unwrap();
    }
}
