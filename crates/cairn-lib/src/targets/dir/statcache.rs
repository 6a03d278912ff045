//! The per-target stat cache: a file whose (dev, inode, size, mtime, ctime, mode) all match its
//! cached entry is not read again; its cached content ids are reused.
//!
//! Racy-git rule: an entry whose mtime or ctime falls at or after the moment its scan started
//! (on the kernel's coarse clock, which stamps file times) is not trusted, because the file may
//! have changed again within the same clock tick.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};

use super::journal::JournalState;
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::Store;
use crate::tree::Extra;

/// What a file looked like when its content was last read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub mode: u32,
}

impl Stamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            mode: meta.mode(),
        }
    }
}

/// One cached file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CacheEntry {
    pub stamp: Stamp,
    /// The content ids; empty for a file left out as a secret (its bytes were never stored).
    pub content: Vec<ObjectId>,
    /// The secret rule the file's content matched when it was read, so an unchanged secret
    /// stays left out without being read again (`targets/dir/secrets.rs`).
    pub secret: Option<String>,
    /// The file's sparse layout and captured extended attributes, as its node holds them.
    pub extra: Extra,
    /// The extended attributes it had that snapshots leave out (listed in `not_covered`).
    pub xattrs_left_out: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Encoded {
    scan_started_ns: i64,
    entries: Vec<(Vec<u8>, CacheEntry)>,
    journal: JournalState,
}

/// The start of a stored cache: this tag, then the BLAKE3 hash of the rest (zstd of postcard).
/// A cache whose hash fails (a flipped bit in the catalog) is discarded, never trusted: a wrong
/// stamp or content id in it would reuse content that is not the file's.
/// `SC3` holds the sparse layout and extended attributes of each file and the journal's
/// directory summaries; an older cache is read as none (the next save reads every file once).
const CHECKED: &[u8; 4] = b"SC3\0";

/// Decodes a stored cache, or `None` when it is damaged or of an older form.
fn decode(blob: &[u8]) -> Option<Encoded> {
    let rest = blob.strip_prefix(CHECKED.as_slice())?;
    let (hash, packed) = rest.split_at_checked(32)?;
    if ObjectId::of(packed).0.as_slice() != hash {
        return None;
    }
    let raw = zstd::decode_all(packed).ok()?;
    postcard::from_bytes(&raw).ok()
}

/// A loaded stat cache.
#[derive(Debug, Default)]
pub(crate) struct StatCache {
    scan_started_ns: i64,
    entries: HashMap<Vec<u8>, CacheEntry>,
    /// Where the capture stood in the watcher's journal, and its directory summaries.
    pub(crate) journal: JournalState,
}

/// The kernel's coarse real-time clock, which stamps file times, in nanoseconds.
pub(crate) fn coarse_now_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

impl StatCache {
    /// Loads the cache of `target` (empty when there is none or it cannot be read).
    pub(crate) fn load(store: &Store, target: &str) -> Result<Self> {
        let Some(blob) = store.catalog.stat_cache(target)? else {
            return Ok(Self::default());
        };
        let decoded = decode(&blob);
        // A cache that does not decode is only a lost speed-up: the next save reads everything.
        Ok(decoded
            .map(|e| Self {
                scan_started_ns: e.scan_started_ns,
                entries: e.entries.into_iter().collect(),
                journal: e.journal,
            })
            .unwrap_or_default())
    }

    /// The cached content of `path`, when `stamp` matches and the entry is not racy.
    #[cfg(test)]
    pub(crate) fn lookup(&self, path: &[u8], stamp: &Stamp) -> Option<&[ObjectId]> {
        self.lookup_entry(path, stamp).map(|e| e.content.as_slice())
    }

    /// The cached entry of `path`, when `stamp` matches and the entry is not racy.
    pub(crate) fn lookup_entry(&self, path: &[u8], stamp: &Stamp) -> Option<&CacheEntry> {
        let entry = self.entries.get(path)?;
        let racy =
            entry.stamp.mtime_ns >= self.scan_started_ns || entry.stamp.ctime_ns >= self.scan_started_ns;
        (entry.stamp == *stamp && !racy).then_some(entry)
    }

    /// True when a file of `links` ((device, inode) → link count and paths seen) was cached
    /// under a path below one of `reused`, other than the paths seen: a new link joins a file
    /// that a subtree taken unseen holds, and a write through it made no event there.
    pub(crate) fn links_into(
        &self,
        reused: &HashSet<Vec<u8>>,
        links: &HashMap<(u64, u64), super::capture::LinkGroup>,
    ) -> bool {
        if reused.is_empty() || links.is_empty() {
            return false;
        }
        let inside = |path: &[u8]| reused.iter().any(|r| super::journal::at_or_below(path, r));
        self.entries.iter().any(|(path, e)| {
            links
                .get(&(e.stamp.dev, e.stamp.ino))
                .is_some_and(|(_, seen)| !seen.contains(path) && inside(path))
        })
    }

    /// True when the cache has an entry for `path`, whatever its stamp.
    pub(crate) fn contains(&self, path: &[u8]) -> bool {
        self.entries.contains_key(path)
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every content id the cache refers to (gc keeps them).
    pub(crate) fn decode_content_ids(blob: &[u8]) -> Vec<ObjectId> {
        decode(blob).map(|e| e.entries.into_iter().flat_map(|(_, c)| c.content).collect()).unwrap_or_default()
    }

    /// Writes a new cache for `target`.
    pub(crate) fn store(
        store: &Store,
        target: &str,
        scan_started_ns: i64,
        entries: Vec<(Vec<u8>, CacheEntry)>,
    ) -> Result<()> {
        Self::store_with_journal(store, target, scan_started_ns, entries, JournalState::default())
    }

    /// Writes a new cache for `target`, with the capture's place in the watcher's journal.
    pub(crate) fn store_with_journal(
        store: &Store,
        target: &str,
        scan_started_ns: i64,
        mut entries: Vec<(Vec<u8>, CacheEntry)>,
        journal: JournalState,
    ) -> Result<()> {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let raw = postcard::to_allocvec(&Encoded { scan_started_ns, entries, journal })
            .map_err(|e| Error::corrupt(format!("could not encode the stat cache: {e}")))?;
        let packed = zstd::bulk::compress(&raw, 1)
            .map_err(|e| Error::corrupt(format!("could not compress the stat cache: {e}")))?;
        let blob = [CHECKED.as_slice(), ObjectId::of(&packed).0.as_slice(), &packed].concat();
        store.catalog.put_stat_cache(target, &blob)
    }

    /// The cached entries below any of `dirs` (subtrees taken whole from the last capture),
    /// to carry into the new cache: one pass over the cache, whatever the number of subtrees.
    pub(crate) fn entries_below_any(&self, dirs: &HashSet<Vec<u8>>) -> Vec<(Vec<u8>, CacheEntry)> {
        if dirs.is_empty() {
            return Vec::new();
        }
        let inside = |path: &[u8]| {
            let mut p = path;
            while let Some(i) = p.iter().rposition(|&b| b == b'/') {
                p = &p[..i];
                if dirs.contains(p) {
                    return true;
                }
            }
            dirs.contains(&b""[..])
        };
        self.entries.iter().filter(|(path, _)| inside(path)).map(|(p, e)| (p.clone(), e.clone())).collect()
    }

    /// A cache made by a scan that started at `scan_started_ns` (not stored yet).
    pub(crate) fn from_scan(scan_started_ns: i64, entries: Vec<(Vec<u8>, CacheEntry)>) -> Self {
        Self { scan_started_ns, entries: entries.into_iter().collect(), journal: JournalState::default() }
    }

    /// The same cache, with the journal state of the capture that made it.
    pub(crate) fn with_journal(mut self, journal: JournalState) -> Self {
        self.journal = journal;
        self
    }

    /// The entries the racy-git rule trusts, to carry over into a cache rewritten after a
    /// restore. Racy ones are dropped: the rewritten cache has a later scan time, under which
    /// they would wrongly look safe.
    pub(crate) fn into_trusted_entries(self) -> HashMap<Vec<u8>, CacheEntry> {
        let since = self.scan_started_ns;
        let mut entries = self.entries;
        entries.retain(|_, e| e.stamp.mtime_ns < since && e.stamp.ctime_ns < since);
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCAN: i64 = 1_700_000_000_000_000_000;

    fn entry_defaults() -> CacheEntry {
        CacheEntry {
            stamp: stamp(0, 0),
            content: Vec::new(),
            secret: None,
            extra: Extra::default(),
            xattrs_left_out: Vec::new(),
        }
    }

    fn stamp(mtime_ns: i64, ctime_ns: i64) -> Stamp {
        Stamp { dev: 1, ino: 42, size: 10, mtime_ns, ctime_ns, mode: 0o100644 }
    }

    fn cache_with(entry: Stamp) -> (StatCache, Vec<ObjectId>) {
        let content = vec![ObjectId::of(b"content")];
        let cache = StatCache::from_scan(
            SCAN,
            vec![(
                b"f".to_vec(),
                CacheEntry { stamp: entry, content: content.clone(), secret: None, ..entry_defaults() },
            )],
        );
        (cache, content)
    }

    #[test]
    fn an_entry_older_than_the_scan_is_trusted() {
        let old = stamp(SCAN - 1, SCAN - 1);
        let (cache, content) = cache_with(old.clone());
        assert_eq!(cache.lookup(b"f", &old), Some(content.as_slice()));
    }

    #[test]
    fn an_entry_whose_mtime_is_at_or_after_the_scan_start_is_racy() {
        for mtime in [SCAN, SCAN + 1] {
            let racy = stamp(mtime, SCAN - 1);
            let (cache, _) = cache_with(racy.clone());
            assert_eq!(cache.lookup(b"f", &racy), None, "mtime {} after the scan start", mtime - SCAN);
        }
    }

    #[test]
    fn an_entry_whose_ctime_is_at_or_after_the_scan_start_is_racy() {
        for ctime in [SCAN, SCAN + 1] {
            let racy = stamp(SCAN - 1, ctime);
            let (cache, _) = cache_with(racy.clone());
            assert_eq!(cache.lookup(b"f", &racy), None, "ctime {} after the scan start", ctime - SCAN);
        }
    }

    #[test]
    fn any_stat_field_that_differs_means_the_file_is_read_again() {
        let cached = stamp(SCAN - 10, SCAN - 10);
        let (cache, _) = cache_with(cached.clone());
        let changes: [fn(&mut Stamp); 6] = [
            |s| s.dev += 1,
            |s| s.ino += 1,
            |s| s.size += 1,
            |s| s.mtime_ns += 1,
            |s| s.ctime_ns += 1,
            |s| s.mode ^= 0o100,
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut live = cached.clone();
            change(&mut live);
            assert_eq!(cache.lookup(b"f", &live), None, "field {i} changed");
        }
        assert_eq!(cache.lookup(b"other", &cached), None);
    }

    #[test]
    fn racy_entries_are_not_carried_into_a_rewritten_cache() {
        let content = vec![ObjectId::of(b"x")];
        let entry = |mtime_ns| CacheEntry {
            stamp: stamp(mtime_ns, SCAN - 5),
            content: content.clone(),
            secret: None,
            ..entry_defaults()
        };
        let cache = StatCache::from_scan(
            SCAN,
            vec![(b"old".to_vec(), entry(SCAN - 5)), (b"racy".to_vec(), entry(SCAN))],
        );
        let kept = cache.into_trusted_entries();
        assert!(kept.contains_key(b"old".as_slice()) && !kept.contains_key(b"racy".as_slice()));
    }
}
