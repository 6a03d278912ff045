//! Room on the store's disk for the catalog's shared memory, so a full disk fails a command in
//! one line and never kills it with SIGBUS.
//!
//! SQLite keeps its WAL index in `catalog.db-shm` and maps it into memory. It grows that file
//! by writing one byte at the end of each 4 KiB page, which on a file system of 1 KiB blocks
//! (ext4 makes small file systems so) allocates one block of four: the first write into any of
//! the other three, through the mapping, needs a block then, and on a full disk the kernel
//! answers a page fault it cannot serve with SIGBUS. The first connection to open the catalog
//! truncates the file and rebuilds the index from the WAL, so a WAL left behind faulted every
//! later command too, until space was freed. Two guards, both here:
//! - before the catalog is opened, the disk must have room for the index of the WAL that is
//!   there ([`ensure_room_to_open`]), or the command refuses in one line;
//! - once it is open, the index is allocated with `fallocate` ([`allocate_index`]), and 1 MiB
//!   more (the index of about 500 MB of WAL) where the disk has room for it twice, so writes
//!   through the mapping never need a new block. Extending the file past what SQLite uses is
//!   harmless: it only ever maps what it needs, and a new region reads as zeros, as SQLite
//!   expects. Before each of the large writes (`Catalog::writing`: packs' index rows, stat
//!   caches, snapshots) the allocation is kept that far ahead of the WAL ([`keep_ahead`]), and
//!   a disk without room for the index the WAL needs fails the write in one line. Only a
//!   small write of another kind, crossing into a new region just as the disk fills, is left.
//!
//! The files are reached through descriptors that stay open while the process lives
//! ([`with_held`]): closing any descriptor of a file drops every POSIX lock the process holds
//! on it, SQLite's included, and a process that lost its lock on the WAL index has another one
//! take the index for abandoned and rebuild it under its mapping (SQLite's "disk I/O error").

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, ErrorKind, Result};

/// A catalog file this process opened outside SQLite.
struct Held {
    path: PathBuf,
    /// Its device and inode when opened: a file made anew at the path is another one.
    id: (u64, u64),
    file: File,
}

/// Every catalog file this process opened outside SQLite.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// Runs `use_file` on a descriptor of `path` that is never closed while the file exists (see
/// the module's documentation), opened for reading and writing, and created 0600 when `create`
/// asks.
/// `None` when the file does not exist and is not to be created. A held file that has since
/// been deleted (SQLite deletes the WAL index when its last connection closes) is let go:
/// nothing can hold a lock on it any more.
pub fn with_held<T>(
    path: &Path,
    create: bool,
    use_file: impl FnOnce(&File) -> std::io::Result<T>,
) -> std::io::Result<Option<T>> {
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    held.retain(|h| h.file.metadata().is_ok_and(|m| m.nlink() > 0));
    let now = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let at = match now.and_then(|id| held.iter().position(|h| h.path == path && h.id == id)) {
        Some(at) => at,
        None => {
            if now.is_none() && !create {
                return Ok(None);
            }
            let file =
                std::fs::OpenOptions::new().read(true).write(true).create(create).mode(0o600).open(path)?;
            let meta = file.metadata()?;
            held.push(Held { path: path.to_path_buf(), id: (meta.dev(), meta.ino()), file });
            held.len() - 1
        }
    };
    use_file(&held[at].file).map(Some)
}

/// The byte of the WAL index every connection holds a shared lock on while it has the catalog
/// open (SQLite's `UNIX_SHM_DMS`: after the 8 lock bytes that start at offset 120). The first
/// connection to open the catalog, finding no other lock there, truncates the index.
const OPEN_LOCK_BYTE: u64 = 128;

/// True when another process has the catalog open: its lock on the WAL index keeps the index
/// valid after this process closes, so the next command does not read the WAL back. POSIX
/// locks of this process do not count (`F_GETLK` reports only others').
pub(super) fn open_elsewhere(catalog: &Path) -> bool {
    use rustix::process::{Flock, FlockOffsetType, FlockType, fcntl_getlk};
    let probe = Flock {
        start: OPEN_LOCK_BYTE,
        length: 1,
        pid: None,
        typ: FlockType::WriteLock,
        offset_type: FlockOffsetType::Set,
    };
    let found = with_held(&side_file(catalog, "-shm"), false, |file| Ok(fcntl_getlk(file, &probe)?));
    matches!(found, Ok(Some(Some(_))))
}

/// The WAL index grows in regions of 32 KiB, each indexing 4,096 WAL frames (the first 4,062).
const REGION: u64 = 32 * 1024;
const FRAMES_PER_REGION: u64 = 4062;
/// Index space allocated beyond what the WAL needs now: 32 regions, about 500 MB of WAL.
const AHEAD: u64 = 32 * REGION;
/// Room kept beyond the index when opening: the WAL's header and a few pages of it.
const MARGIN: u64 = 32 * 1024;

pub(super) fn side_file(catalog: &Path, suffix: &str) -> PathBuf {
    let mut name = catalog.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The bytes the WAL index of the WAL beside `catalog` needs.
fn index_bytes(catalog: &Path) -> u64 {
    let wal = std::fs::metadata(side_file(catalog, "-wal")).map(|m| m.len()).unwrap_or(0);
    // The page size is the big-endian u16 at offset 16 of the database header (1 means
    // 65,536); a catalog too new to have a header has no WAL either.
    let mut header = [0u8; 18];
    let read = with_held(catalog, false, |f| f.read_exact_at(&mut header, 0));
    let page = match (read, u16::from_be_bytes([header[16], header[17]])) {
        (Ok(Some(())), 1) => 65536,
        (Ok(Some(())), p) => u64::from(p.max(512)),
        _ => 4096,
    };
    let frames = wal.saturating_sub(32) / (page + 24);
    (frames / FRAMES_PER_REGION + 1) * REGION
}

fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

/// The bytes free on the file system holding `dir`, to anyone; `None` when it cannot be told
/// (some FUSE and network file systems report no sizes at all: zero blocks, zero free).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    (st.f_blocks > 0).then(|| st.f_bavail.saturating_mul(st.f_frsize))
}

/// Refuses, before SQLite touches the WAL index, a disk too full to rebuild it on.
pub fn ensure_room_to_open(catalog: &Path) -> Result<()> {
    let dir = catalog.parent().unwrap_or(Path::new("."));
    let need = index_bytes(catalog) + MARGIN;
    match free_bytes(dir) {
        Some(free) if free < need => Err(Error::new(
            ErrorKind::Io,
            format!(
                "the disk holding the store {} has {} free and its catalog needs {} to open; free some disk space there and retry",
                dir.display(),
                kib(free),
                kib(need),
            ),
        )),
        _ => Ok(()),
    }
}

/// Allocates every block of the WAL index, and of [`AHEAD`] more, so no write through its
/// mapping needs a new block. On a disk without room for the extra, the index as it is now is
/// allocated; a disk without room even for that is refused in one line.
pub fn allocate_index(catalog: &Path) -> Result<u64> {
    let shm = side_file(catalog, "-shm");
    let needed = index_bytes(catalog);
    let dir = catalog.parent().unwrap_or(Path::new("."));
    let free = free_bytes(dir);
    let allocated = with_held(&shm, false, |file| {
        let meta = file.metadata()?;
        // From what the WAL needs, not from the file's length: that length already holds the
        // extra of the last open, and while another process keeps the catalog open (a watcher,
        // the MCP server) SQLite never truncates the file, so each command grew it by the
        // extra again, a megabyte a command. A file longer than this is left as it is.
        let now = needed.div_ceil(REGION) * REGION;
        // The extra only where it leaves the disk as much again: a fallocate that runs out of
        // space keeps what it took, and would fill the disk it was meant to guard.
        let held = meta.blocks() * 512;
        let roomy = free.is_some_and(|free| free > (now + AHEAD).saturating_sub(held) + AHEAD);
        let len = if roomy { now + AHEAD } else { now };
        match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, len) {
            Ok(()) => Ok(len),
            // A file system without fallocate (some network ones) keeps SQLite's own behaviour.
            Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) => Ok(u64::MAX),
            Err(e) => Err(e.into()),
        }
    });
    match allocated {
        // No index file (SQLite made none): nothing is mapped.
        Ok(len) => Ok(len.unwrap_or(0)),
        Err(e) => Err(Error::io("allocate room for the catalog's index", &shm, e)),
    }
}

/// Before a write that may grow the WAL (a pack's index, a stat cache, a snapshot): when
/// the WAL has used up half of the index allocated ahead (`held`, what [`allocate_index`] last
/// returned), allocates more, so a long command's WAL never outgrows it. A disk without room
/// even for the index the WAL needs now fails the write in one line.
pub fn keep_ahead(catalog: &Path, held: &std::sync::atomic::AtomicU64) -> Result<()> {
    use std::sync::atomic::Ordering;
    if index_bytes(catalog) + AHEAD / 2 <= held.load(Ordering::Relaxed) {
        return Ok(());
    }
    held.store(allocate_index(catalog)?, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::super::Catalog;
    use super::*;

    /// A new catalog in a directory of its own, with a table written, so it has a WAL index.
    fn written() -> (tempfile::TempDir, PathBuf, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let catalog = Catalog::open(&path).unwrap();
        catalog.conn().execute_batch("CREATE TABLE scratch(x); INSERT INTO scratch VALUES (1);").unwrap();
        (dir, path, catalog)
    }

    #[test]
    fn the_index_of_an_open_catalog_has_every_block_allocated() {
        let (_dir, path, _catalog) = written();
        let shm = std::fs::metadata(side_file(&path, "-shm")).unwrap();
        assert!(shm.len() >= AHEAD, "{}", shm.len());
        // Blocks are counted in 512-byte units: a file with holes has fewer than its length.
        assert!(shm.blocks() * 512 >= shm.len(), "{} blocks for {} bytes", shm.blocks(), shm.len());
    }

    #[test]
    fn the_index_is_sized_by_the_catalogs_own_page_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA page_size = 65536; CREATE TABLE t(x);").unwrap();
        drop(conn);
        // 5,000 frames of 64 KiB pages: two regions of the index, where 4 KiB pages would
        // make some 80,000 frames of the same bytes, and twenty.
        let frames = 5_000;
        let wal = std::fs::File::create(side_file(&path, "-wal")).unwrap();
        wal.set_len(32 + frames * (65_536 + 24)).unwrap();
        assert_eq!(index_bytes(&path), 2 * REGION);
    }

    #[test]
    fn opening_the_catalog_while_another_connection_holds_it_does_not_grow_its_index() {
        // Held open throughout, as a watcher holds it: SQLite then never truncates the index.
        let (_dir, path, held) = written();
        let shm = side_file(&path, "-shm");
        let before = std::fs::metadata(&shm).unwrap().len();
        for _ in 0..5 {
            let other = Catalog::open(&path).unwrap();
            other.conn().execute_batch("INSERT INTO scratch VALUES (2);").unwrap();
        }
        assert_eq!(std::fs::metadata(&shm).unwrap().len(), before);
        drop(held);
    }
}
