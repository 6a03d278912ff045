//! The pack cache of a remote store: byte ranges of packs fetched from the bucket, kept as
//! files under `<cache folder>/pack-cache/` so a repeated restore (or copy) reads them from
//! disk instead of the network. Bounded by the `cache.max_bytes` setting, least recently used
//! first out.
//!
//! Packs are immutable and named by the hash of their header, so a cached range never goes
//! stale; what it holds is checked anyway, since every blob read from it is hash-checked
//! ([`super::pack::decode`]), and a range that fails is dropped and fetched again. A range is
//! the file `<pack name>.<start>-<end>`, written to a temp file and renamed into place, so two
//! commands caching the same range, or one killed halfway, never leave a torn file; one
//! evicted while another command reads it stays readable through its open handle.
//!
//! Recency is the file's mtime: a range is touched when first used by a command, and eviction
//! removes the oldest until the cache fits.
//!
//! A range is read whole, once, and kept in memory while blobs are read from it ([`HOT`]
//! ranges at a time, each read whole at most once per command): a restore reads a pack's
//! blobs one after another, and a read of each blob from the file on its own (an open, a seek
//! and a read per blob, 50,000 for a large tree) made a restore served from the cache slower
//! than one that fetched the packs.
//! Packs a save uploads enter the cache too ([`super::Store::cache_uploaded`]).

use std::collections::{HashMap, HashSet, VecDeque};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{IoContext, Result};

/// The folder below the store's cache folder.
const DIR: &str = "pack-cache";
/// Ranges kept in memory at once while their blobs are read: a restore's reads move from
/// pack to pack, a few threads at a time.
const HOT: usize = 4;
/// A range larger than this is read blob by blob from its file rather than whole.
const HOT_MAX: u64 = 64 * 1024 * 1024;
/// Cached ranges held open at once.
const OPEN_MAX: usize = 256;

/// One cached range of a pack.
#[derive(Debug, Clone)]
struct Range {
    start: u64,
    end: u64,
    file: PathBuf,
}

#[derive(Default)]
struct Index {
    /// Pack name → its cached ranges.
    ranges: HashMap<String, Vec<Range>>,
    /// Bytes the cache holds.
    total: u64,
}

/// The cache of one remote store on this machine.
pub struct PackCache {
    dir: PathBuf,
    tmp: PathBuf,
    max_bytes: u64,
    /// Read from the folder on first use.
    index: Mutex<Option<Index>>,
    /// Ranges this command touched already (one mtime update each).
    touched: Mutex<HashSet<PathBuf>>,
    /// The ranges read last, whole, newest last.
    hot: Mutex<VecDeque<(PathBuf, Arc<Vec<u8>>)>>,
    /// Ranges this command read whole already: one that left [`HOT`] and is asked for again
    /// is read blob by blob, so reads that jump between many packs never read a range whole
    /// more than once.
    read_whole: Mutex<HashSet<PathBuf>>,
    /// Ranges this command opened, kept open: opening the file for each blob (50,000 opens
    /// for a large restore) cost more than reading it.
    open: Mutex<HashMap<PathBuf, Arc<std::fs::File>>>,
}

impl super::Store {
    /// The pack cache of this (remote) store, in its cache folder, bounded by `cache.max_bytes`.
    pub fn new_pack_cache(&self) -> PackCache {
        let max = self.config().cache_max_bytes();
        PackCache::new(&self.layout.root, self.layout.tmp(), max)
    }

    /// The longest copy of pack `key` from its first byte that this machine's pack cache
    /// holds, as the store wrote it; `None` without a cache or such a copy. What it is worth
    /// is for the caller to check: a repair takes it only when its header proves it whole.
    pub fn cached_pack_from_start(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let Some(cache) = &self.pack_cache else { return Ok(None) };
        cache.read_from_start(key)
    }

    /// Keeps pack `key`, which this command has just uploaded whole, in the pack cache (when
    /// the store has one, and the pack takes at most half of it, as a fetch would). A failure
    /// to keep it costs only a fetch later, so it is not the save's failure.
    pub fn cache_uploaded(&self, key: &str, bytes: &[u8]) {
        if let Some(cache) = &self.pack_cache
            && bytes.len() as u64 <= cache.max_bytes() / 2
        {
            let _ = cache.insert(key, 0, bytes);
        }
    }
}

fn pack_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key).trim_end_matches(".pack")
}

impl PackCache {
    /// The cache below the store's cache folder `root`, writing temp files into `tmp`.
    pub fn new(root: &Path, tmp: PathBuf, max_bytes: u64) -> Self {
        Self {
            dir: root.join(DIR),
            tmp,
            max_bytes,
            index: Mutex::new(None),
            touched: Mutex::new(HashSet::new()),
            hot: Mutex::new(VecDeque::new()),
            read_whole: Mutex::new(HashSet::new()),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The largest number of bytes the cache holds.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    fn with_index<T>(&self, f: impl FnOnce(&mut Index) -> T) -> Result<T> {
        let mut guard = self.index.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(self.load()?);
        }
        Ok(f(guard.as_mut().expect("loaded above")))
    }

    fn load(&self) -> Result<Index> {
        let mut index = Index::default();
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(index),
            Err(e) => return Err(crate::error::Error::io("list", &self.dir, e)),
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((pack, span)) = name.split_once('.') else { continue };
            let Some((start, end)) = span.split_once('-') else { continue };
            let (Ok(start), Ok(end)) = (start.parse::<u64>(), end.parse::<u64>()) else { continue };
            if end <= start {
                continue;
            }
            index.total += end - start;
            index.ranges.entry(pack.to_owned()).or_default().push(Range { start, end, file: entry.path() });
        }
        Ok(index)
    }

    /// True when `offset..offset + len` of pack `key` is cached.
    pub fn covers(&self, key: &str, offset: u64, len: u64) -> Result<bool> {
        Ok(self.find(key, offset, len)?.is_some())
    }

    fn find(&self, key: &str, offset: u64, len: u64) -> Result<Option<Range>> {
        let pack = pack_name(key);
        self.with_index(|index| {
            index.ranges.get(pack).and_then(|ranges| {
                ranges.iter().find(|r| r.start <= offset && offset + len <= r.end).cloned()
            })
        })
    }

    /// Reads `len` bytes of pack `key` from `offset` when the cache holds them.
    pub fn read(&self, key: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        let Some(range) = self.find(key, offset, len)? else { return Ok(None) };
        let at = (offset - range.start) as usize;
        if let Some(whole) = self.hot_range(&range.file) {
            return Ok(whole.get(at..at + len as usize).map(<[u8]>::to_vec));
        }
        let Some(file) = self.opened(key, &range.file)? else { return Ok(None) };
        let first_use = self.touched.lock().unwrap_or_else(|p| p.into_inner()).insert(range.file.clone());
        if first_use {
            // Recency for the eviction order; a failure only makes it look older.
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        let size = range.end - range.start;
        if size <= HOT_MAX
            && self.read_whole.lock().unwrap_or_else(|p| p.into_inner()).insert(range.file.clone())
        {
            // Read whole, once: the blobs after this one come from memory.
            let mut whole = crate::backend::zeroed_for_reading(size as usize);
            if file.read_exact_at(&mut whole, 0).is_err() {
                self.drop_range(key, &range.file)?;
                return Ok(None);
            }
            let out = whole[at..at + len as usize].to_vec();
            let mut hot = self.hot.lock().unwrap_or_else(|p| p.into_inner());
            if hot.len() >= HOT {
                hot.pop_front();
            }
            hot.push_back((range.file, Arc::new(whole)));
            return Ok(Some(out));
        }
        let mut buf = crate::backend::zeroed_for_reading(len as usize);
        if file.read_exact_at(&mut buf, at as u64).is_err() {
            self.drop_range(key, &range.file)?;
            return Ok(None);
        }
        Ok(Some(buf))
    }

    /// Cached range `file` of pack `key`, opened once per command; `None` when another
    /// command evicted it (it is not cached any more).
    fn opened(&self, key: &str, file: &Path) -> Result<Option<Arc<std::fs::File>>> {
        if let Some(open) = self.open.lock().unwrap_or_else(|p| p.into_inner()).get(file) {
            return Ok(Some(Arc::clone(open)));
        }
        let Ok(opened) = std::fs::File::open(file) else {
            self.forget(key, file)?;
            return Ok(None);
        };
        let opened = Arc::new(opened);
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.len() >= OPEN_MAX {
            open.clear();
        }
        open.insert(file.to_path_buf(), Arc::clone(&opened));
        Ok(Some(opened))
    }

    /// The whole of cached range `file`, when it is one of those read last.
    fn hot_range(&self, file: &Path) -> Option<Arc<Vec<u8>>> {
        let hot = self.hot.lock().unwrap_or_else(|p| p.into_inner());
        hot.iter().rev().find(|(f, _)| f == file).map(|(_, bytes)| Arc::clone(bytes))
    }

    /// The longest cached range of pack `key` that starts at its first byte.
    pub fn read_from_start(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let pack = pack_name(key);
        let longest = self.with_index(|index| {
            index
                .ranges
                .get(pack)
                .and_then(|ranges| ranges.iter().filter(|r| r.start == 0).max_by_key(|r| r.end).cloned())
        })?;
        let Some(range) = longest else { return Ok(None) };
        match std::fs::read(&range.file) {
            Ok(bytes) if bytes.len() as u64 == range.end => Ok(Some(bytes)),
            _ => Ok(None),
        }
    }

    /// Pack `key` whole (`size` bytes), when one cached range holds all of it.
    pub fn read_whole(&self, key: &str, size: u64) -> Result<Option<Vec<u8>>> {
        let Some(range) = self.find(key, 0, size)? else { return Ok(None) };
        let file = match std::fs::File::open(&range.file) {
            Ok(file) => file,
            Err(_) => {
                self.forget(key, &range.file)?;
                return Ok(None);
            }
        };
        if self.touched.lock().unwrap_or_else(|p| p.into_inner()).insert(range.file.clone()) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        let mut buf = crate::backend::zeroed_for_reading(size as usize);
        if file.read_exact_at(&mut buf, 0).is_err() {
            self.drop_range(key, &range.file)?;
            return Ok(None);
        }
        Ok(Some(buf))
    }

    /// Caches `bytes`, the range of pack `key` that starts at `start`, then evicts the least
    /// recently used ranges until the cache fits its bound.
    pub fn insert(&self, key: &str, start: u64, bytes: &[u8]) -> Result<()> {
        let len = bytes.len() as u64;
        if len == 0 || len > self.max_bytes || self.covers(key, start, len)? {
            return Ok(());
        }
        super::layout::create_private_dir(&self.dir)?;
        let file = self.dir.join(format!("{}.{start}-{}", pack_name(key), start + len));
        let temp = super::backend::write_temp(&self.tmp, bytes)?;
        std::fs::rename(&temp, &file).at("cache", &file)?;
        self.touched.lock().unwrap_or_else(|p| p.into_inner()).insert(file.clone());
        let over = self.with_index(|index| {
            index.total += len;
            index.ranges.entry(pack_name(key).to_owned()).or_default().push(Range {
                start,
                end: start + len,
                file,
            });
            index.total > self.max_bytes
        })?;
        if over {
            self.evict()?;
        }
        Ok(())
    }

    /// Removes a range whose bytes failed their check, so the next read fetches them again.
    pub fn drop_range(&self, key: &str, file: &Path) -> Result<()> {
        let _ = std::fs::remove_file(file);
        self.hot.lock().unwrap_or_else(|p| p.into_inner()).retain(|(f, _)| f != file);
        self.open.lock().unwrap_or_else(|p| p.into_inner()).remove(file);
        self.forget(key, file)
    }

    /// Drops the cached range holding `offset` of pack `key` (its bytes failed a check).
    pub fn drop_covering(&self, key: &str, offset: u64, len: u64) -> Result<()> {
        if let Some(range) = self.find(key, offset, len)? {
            self.drop_range(key, &range.file)?;
        }
        Ok(())
    }

    fn forget(&self, key: &str, file: &Path) -> Result<()> {
        self.with_index(|index| {
            if let Some(ranges) = index.ranges.get_mut(pack_name(key))
                && let Some(at) = ranges.iter().position(|r| r.file == file)
            {
                let r = ranges.swap_remove(at);
                index.total -= r.end - r.start;
            }
        })
    }

    /// Removes the least recently used ranges (oldest mtime first) until the cache holds at
    /// most `max_bytes`. Reads the folder again, so ranges other commands added count too.
    fn evict(&self) -> Result<()> {
        let mut guard = self.index.lock().unwrap_or_else(|p| p.into_inner());
        let mut index = self.load()?;
        let mut by_age: Vec<(std::time::SystemTime, String, Range)> = Vec::new();
        for (pack, ranges) in &index.ranges {
            for r in ranges {
                let at =
                    std::fs::metadata(&r.file).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
                by_age.push((at, pack.clone(), r.clone()));
            }
        }
        by_age.sort_by_key(|a| a.0);
        // Down to nine tenths, so that a run of inserts into a full cache does not list the
        // folder on every one of them.
        let goal = self.max_bytes - self.max_bytes / 10;
        for (_, pack, r) in by_age {
            if index.total <= goal {
                break;
            }
            let _ = std::fs::remove_file(&r.file);
            index.total -= r.end - r.start;
            if let Some(ranges) = index.ranges.get_mut(&pack) {
                ranges.retain(|x| x.file != r.file);
            }
        }
        *guard = Some(index);
        Ok(())
    }

    /// Bytes the cache holds.
    #[cfg(test)]
    pub fn total(&self) -> Result<u64> {
        self.with_index(|index| index.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path, max: u64) -> PackCache {
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        PackCache::new(dir, dir.join("tmp"), max)
    }

    #[test]
    fn a_cached_range_serves_reads_inside_it_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path(), 1 << 20);
        c.insert("packs/ab/abcd.pack", 100, b"0123456789").unwrap();
        assert_eq!(c.read("packs/ab/abcd.pack", 103, 4).unwrap().unwrap(), b"3456");
        assert!(c.read("packs/ab/abcd.pack", 108, 4).unwrap().is_none(), "runs past the range");
        assert!(c.read("packs/ab/other.pack", 100, 1).unwrap().is_none());
        // A second open of the same folder finds it.
        let again = cache(dir.path(), 1 << 20);
        assert_eq!(again.read("packs/ab/abcd.pack", 100, 10).unwrap().unwrap(), b"0123456789");
    }

    #[test]
    fn the_least_recently_used_range_goes_first_when_the_cache_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path(), 25);
        c.insert("packs/aa/one.pack", 0, &[1; 10]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        c.insert("packs/aa/two.pack", 0, &[2; 10]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A fresh command reads "one", so "two" is now the oldest.
        let reader = cache(dir.path(), 25);
        assert!(reader.read("packs/aa/one.pack", 0, 10).unwrap().is_some());
        std::thread::sleep(std::time::Duration::from_millis(20));
        reader.insert("packs/aa/three.pack", 0, &[3; 10]).unwrap();
        assert!(reader.total().unwrap() <= 25);
        assert!(reader.read("packs/aa/two.pack", 0, 10).unwrap().is_none(), "two was evicted");
        assert!(reader.read("packs/aa/one.pack", 0, 10).unwrap().is_some());
        assert!(reader.read("packs/aa/three.pack", 0, 10).unwrap().is_some());
    }

    #[test]
    fn a_range_is_read_whole_once_and_its_blobs_come_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path(), 1 << 20);
        c.insert("packs/ab/abcd.pack", 0, b"0123456789").unwrap();
        let reader = cache(dir.path(), 1 << 20);
        assert_eq!(reader.read("packs/ab/abcd.pack", 2, 3).unwrap().unwrap(), b"234");
        // The file is gone, but the range is held: the next blob still reads.
        for entry in std::fs::read_dir(dir.path().join(DIR)).unwrap().flatten() {
            std::fs::remove_file(entry.path()).unwrap();
        }
        assert_eq!(reader.read("packs/ab/abcd.pack", 7, 3).unwrap().unwrap(), b"789");
        assert!(reader.read("packs/ab/abcd.pack", 8, 3).unwrap().is_none(), "past the range");
    }
}
