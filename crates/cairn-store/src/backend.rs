//! Where objects live: a narrow contract (put-if-absent, get, get a range, list, delete) so that a
//! remote backend (S3-compatible) can arrive without touching the engine.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::fault::{self, FaultPoint};
use crate::error::{Error, IoContext, Result};

/// Object storage as the engine sees it. Keys are `/`-separated relative names (`packs/ab/ab….pack`).
///
/// Objects are write-once: `put_if_absent` publishes an object atomically or not at all.
pub trait Backend: Send + Sync {
    /// Stores `data` under `key` unless an object is already there; returns whether it wrote.
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<bool>;
    /// Reads a whole object.
    fn get(&self, key: &str) -> Result<Vec<u8>>;
    /// Reads `len` bytes of an object from `offset`.
    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Vec<u8>>;
    /// Lists the keys that start with `prefix`, sorted.
    fn list(&self, prefix: &str) -> Result<Vec<String>>;
    /// Deletes an object; deleting a missing object is not an error.
    fn delete(&self, key: &str) -> Result<()>;
    /// The size of an object, or `None` when there is none under `key`.
    fn size(&self, key: &str) -> Result<Option<u64>>;

    /// [`Backend::size`] of each of `keys`, in order.
    fn sizes(&self, keys: &[String]) -> Result<Vec<Option<u64>>> {
        keys.iter().map(|key| self.size(key)).collect()
    }

    /// Lists the keys that start with `prefix` with their sizes, sorted (one listing on a
    /// remote backend, where asking each object's size costs a request).
    fn list_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        for key in self.list(prefix)? {
            if let Some(size) = self.size(&key)? {
                out.push((key, size));
            }
        }
        Ok(out)
    }

    /// Reads a small mutable object (a name, a pointer) with its version tag.
    fn get_versioned(&self, key: &str) -> Result<Option<Versioned>>;

    /// Writes a small mutable object if it is still at version `expected`, or, with `None`, if
    /// there is none yet: a compare-and-swap. Returns false, writing nothing, when another
    /// writer got there first.
    fn put_versioned(&self, key: &str, data: &[u8], expected: Option<&str>) -> Result<bool>;

    /// Where the objects are, for messages.
    fn describe(&self) -> String;

    /// Does as much of `put_if_absent(key, data)` as can be done without `key` showing the
    /// object: a local store writes and flushes its temp file, so that flush can run beside
    /// other work (a snapshot's record beside its last pack's). [`Backend::publish`] finishes
    /// the put; a staged object never published is gone with its [`Staged`].
    fn stage(&self, key: &str, data: &[u8]) -> Result<Staged> {
        Ok(Staged { key: key.to_owned(), held: Held::Bytes(data.to_vec()) })
    }

    /// Publishes what [`Backend::stage`] wrote as `put_if_absent` would; returns whether it
    /// wrote.
    fn publish(&self, staged: Staged) -> Result<bool> {
        let data = staged.bytes()?;
        self.put_if_absent(&staged.key, &data)
    }
}

/// An object [`Backend::stage`] wrote and no key shows yet.
#[must_use = "a staged object is deleted unless it is published"]
pub struct Staged {
    key: String,
    held: Held,
}

enum Held {
    Bytes(Vec<u8>),
    /// A flushed temp file, deleted with it unless it is renamed into place.
    File(StagedFile),
}

impl Staged {
    /// The key it is staged for.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Its bytes, for a backend that publishes by a plain put.
    fn bytes(&self) -> Result<Vec<u8>> {
        match &self.held {
            Held::Bytes(data) => Ok(data.clone()),
            Held::File(file) => file.read(),
        }
    }
}

/// A mutable object's bytes and the tag of this version of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// The bytes.
    pub data: Vec<u8>,
    /// An opaque version tag: an ETag remotely, a content hash locally.
    pub tag: String,
}

fn content_tag(data: &[u8]) -> String {
    blake3::hash(data).to_hex().to_string()
}

/// Objects as files below a directory, published by temp file + fsync + rename + directory
/// fsync. Every directory it makes is 0700 and every file 0600.
pub struct LocalBackend {
    root: PathBuf,
    tmp: PathBuf,
    /// Open pack files, so a restore's many range reads do not reopen the same file.
    open_files: Mutex<HashMap<String, Arc<std::fs::File>>>,
}

impl LocalBackend {
    /// A backend rooted at `root`, writing temporary files into `tmp` (same file system).
    pub fn new(root: PathBuf, tmp: PathBuf) -> Self {
        Self { root, tmp, open_files: Mutex::new(HashMap::new()) }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    fn open(&self, key: &str) -> Result<Arc<std::fs::File>> {
        let mut files = self.open_files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = files.get(key) {
            return Ok(f.clone());
        }
        let path = self.path(key);
        let file = Arc::new(std::fs::File::open(&path).at("open", &path)?);
        if files.len() >= 64 {
            files.clear();
        }
        files.insert(key.to_owned(), file.clone());
        Ok(file)
    }
}

/// A new private temp file in `tmp`, named `<pid>-<uuid>.tmp` so that the next command can
/// tell one a dead process left.
fn create_temp(tmp: &Path) -> Result<(PathBuf, std::fs::File)> {
    let path = tmp.join(format!("{}-{}.tmp", std::process::id(), uuid::Uuid::now_v7().simple()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .at("create", &path)?;
    Ok((path, file))
}

/// Writes `data` to a fresh temp file in `tmp`, flushes it to disk, and returns its path.
pub fn write_temp(tmp: &Path, data: &[u8]) -> Result<PathBuf> {
    write_temp_with_fault(tmp, data, None)
}

/// [`write_temp`], with a fault point between the two halves of the data (crash tests).
fn write_temp_with_fault(tmp: &Path, data: &[u8], halfway: Option<FaultPoint>) -> Result<PathBuf> {
    let (path, mut file) = create_temp(tmp)?;
    let (first, rest) = data.split_at(data.len() / 2);
    file.write_all(first).at("write", &path)?;
    if let Some(point) = halfway {
        fault::kill_at(point);
    }
    file.write_all(rest).at("write", &path)?;
    file.sync_data().at("flush", &path)?;
    Ok(path)
}

/// Replaces the small file `dest` with `data` so that a crash leaves the old or the new
/// content, never a mix: written to a temp file in `tmp` (same filesystem), flushed, renamed
/// over `dest`, and the rename flushed into `dest`'s directory. `what` names the write in errors.
pub fn replace_file(tmp: &Path, data: &[u8], dest: &Path, what: &str) -> Result<()> {
    stage_file(tmp, data)?.replace(dest, what)
}

/// Replaces `dest` with `data` as [`replace_file`] does, whole or not at all for every reader
/// and across a kill of this process, but without its two flushes: for a file that a power
/// cut may take back (the marker of a restore into a new directory, whose token beside the
/// restored files is not flushed either).
pub fn replace_file_unflushed(tmp: &Path, data: &[u8], dest: &Path, what: &str) -> Result<()> {
    let (temp, mut file) = create_temp(tmp)?;
    let written = file.write_all(data).at("write", &temp);
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, dest).at(what, dest)) {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    Ok(())
}

/// The first half of [`replace_file`]: `data` written to a temp file in `tmp` and flushed, so
/// that flush can run beside others; [`StagedFile::replace`] does the rest.
pub fn stage_file(tmp: &Path, data: &[u8]) -> Result<StagedFile> {
    write_temp(tmp, data).map(|path| StagedFile(Some(path)))
}

/// A flushed temp file [`stage_file`] wrote, deleted when dropped unless it replaced its file.
#[must_use = "a staged file is deleted unless it replaces its destination"]
pub struct StagedFile(Option<PathBuf>);

impl StagedFile {
    /// Its bytes, read back.
    fn read(&self) -> Result<Vec<u8>> {
        let path = self.0.as_deref().expect("a staged file holds its temp file until it replaces one");
        std::fs::read(path).at("read", path)
    }

    /// Renames it over `dest` and flushes the rename into `dest`'s directory.
    pub fn replace(mut self, dest: &Path, what: &str) -> Result<()> {
        let temp = self.0.take().expect("a staged file holds its temp file until it replaces one");
        if let Err(e) = std::fs::rename(&temp, dest) {
            let _ = std::fs::remove_file(&temp);
            return Err(e).at(what, dest);
        }
        sync_dir(dest.parent().unwrap_or(Path::new("/")))
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            // Best effort: the next command removes what is left in tmp/ anyway.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Flushes a directory's entries to disk, so a rename into it survives a crash.
pub fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).at("flush", dir)
}

/// Creates `dir` and its missing parents, each 0700, and flushes each new entry into its
/// parent, so an object renamed into a new directory is reachable after a crash.
pub fn create_dir_durably(dir: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut at = dir;
    while !at.exists() {
        missing.push(at);
        match at.parent() {
            Some(parent) => at = parent,
            None => break,
        }
    }
    for new in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(new) {
            // Another writer made it first: it flushed it too.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            other => other.at("create", new)?,
        }
        std::fs::set_permissions(new, std::fs::Permissions::from_mode(0o700)).at("protect", new)?;
        if let Some(parent) = new.parent() {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

/// A buffer of `len` zeros for a read to fill. `vec![0; len]` asks the allocator for zeroed
/// memory, which jemalloc gives a large block by handing its pages back to the kernel and taking
/// them anew, so every read into it faults each page in again: a restore of the 3,000-file
/// repository took 6,900 page faults for 16 MB read, 3,600 with this. Zeroed here, memory the
/// last read freed is zeroed in place and stays mapped.
#[expect(clippy::slow_vector_initialization, reason = "allocated zeroed, a large buffer costs more")]
pub fn zeroed_for_reading(len: usize) -> Vec<u8> {
    let mut buf = Vec::with_capacity(len);
    buf.resize(len, 0);
    buf
}

/// Makes every one of the 256 directories packs are spread over (`packs/00` to `packs/ff`)
/// that is missing, and flushes them into `packs` at once. Made one at a time as packs
/// arrived, a young store's saves paid a flush of `packs` for most new packs.
fn create_fan_out(packs: &Path) -> Result<()> {
    create_dir_durably(packs)?;
    let mut protect = true;
    for byte in 0..=255u8 {
        let dir = packs.join(format!("{byte:02x}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            other => {
                other.at("create", &dir)?;
                if protect {
                    // Whatever the umask took away; one it left whole says it takes nothing.
                    let mode = std::fs::metadata(&dir).at("read the mode of", &dir)?.permissions().mode();
                    protect = mode & 0o777 != 0o700;
                }
                if protect {
                    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                        .at("protect", &dir)?;
                }
            }
        }
    }
    sync_dir(packs)
}

impl Backend for LocalBackend {
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<bool> {
        let dest = self.path(key);
        if dest.exists() {
            return Ok(false);
        }
        let parent = dest.parent().ok_or_else(|| Error::invalid(format!("bad object key {key:?}")))?;
        if key.starts_with("packs/") && !parent.exists() {
            create_fan_out(parent.parent().unwrap_or(parent))?;
        }
        create_dir_durably(parent)?;
        let halfway = key.starts_with("packs/").then_some(FaultPoint::PackHalfWritten);
        let tmp = write_temp_with_fault(&self.tmp, data, halfway)?;
        std::fs::rename(&tmp, &dest).at("publish", &dest)?;
        // The object exists for the engine once this returns; a crash must not take it back.
        sync_dir(parent)?;
        Ok(true)
    }

    fn stage(&self, key: &str, data: &[u8]) -> Result<Staged> {
        let parent = self.path(key);
        let parent = parent.parent().ok_or_else(|| Error::invalid(format!("bad object key {key:?}")))?;
        if key.starts_with("packs/") && !parent.exists() {
            create_fan_out(parent.parent().unwrap_or(parent))?;
        }
        create_dir_durably(parent)?;
        let file = stage_file(&self.tmp, data)?;
        Ok(Staged { key: key.to_owned(), held: Held::File(file) })
    }

    fn publish(&self, staged: Staged) -> Result<bool> {
        let file = match staged.held {
            Held::File(file) => file,
            Held::Bytes(data) => return self.put_if_absent(&staged.key, &data),
        };
        let dest = self.path(&staged.key);
        if dest.exists() {
            return Ok(false);
        }
        file.replace(&dest, "publish")?;
        Ok(true)
    }

    fn get(&self, key: &str) -> Result<Vec<u8>> {
        let path = self.path(key);
        std::fs::read(&path).at("read", &path)
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        let path = self.path(key);
        match std::fs::metadata(&path) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read the size of", &path, e)),
        }
    }

    /// Each top directory (`packs`) is opened once and its objects asked from it, not each by
    /// its whole path: every save asks the size of every pack (`writer::Suspect`), and the
    /// kernel resolved the same directories again for each (with 500 packs, 1.0 to 1.1 ms of
    /// a watched save that changed nothing, 0.9 ms this way).
    fn sizes(&self, keys: &[String]) -> Result<Vec<Option<u64>>> {
        let mut dirs: HashMap<&str, Option<std::os::fd::OwnedFd>> = HashMap::new();
        let mut sizes = Vec::with_capacity(keys.len());
        for key in keys {
            let (dir, name) = key.split_once('/').unwrap_or(("", key.as_str()));
            if !dirs.contains_key(dir) {
                dirs.insert(dir, open_dir(&self.path(dir))?);
            }
            let size = match &dirs[dir] {
                None => None,
                Some(fd) => match rustix::fs::statat(fd, name, rustix::fs::AtFlags::empty()) {
                    Ok(stat) => Some(stat.st_size as u64),
                    Err(rustix::io::Errno::NOENT) => None,
                    Err(err) => return Err(Error::io("read the size of", &self.path(key), err.into())),
                },
            };
            sizes.push(size);
        }
        Ok(sizes)
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let file = self.open(key)?;
        let mut buf = zeroed_for_reading(len as usize);
        file.read_exact_at(&mut buf, offset).at("read", &self.path(key))?;
        Ok(buf)
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let start = self.root.join(prefix.split('/').next().unwrap_or(""));
        if !start.exists() {
            return Ok(out);
        }
        for entry in walk_files(&start)? {
            let rel = entry.strip_prefix(&self.root).unwrap_or(&entry);
            let key = rel.to_string_lossy().into_owned();
            if key.starts_with(prefix) {
                out.push(key);
            }
        }
        out.sort();
        Ok(out)
    }

    fn get_versioned(&self, key: &str) -> Result<Option<Versioned>> {
        let path = self.path(key);
        match std::fs::read(&path) {
            Ok(data) => Ok(Some(Versioned { tag: content_tag(&data), data })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read", &path, e)),
        }
    }

    fn put_versioned(&self, key: &str, data: &[u8], expected: Option<&str>) -> Result<bool> {
        // The compare and the swap happen under one lock that every process on this machine
        // takes: files have no conditional write of their own.
        let _guard = super::lock::lock_waiting(&self.tmp, "versioned")?;
        let current = self.get_versioned(key)?;
        if current.as_ref().map(|v| v.tag.as_str()) != expected {
            return Ok(false);
        }
        let dest = self.path(key);
        let parent = dest.parent().ok_or_else(|| Error::invalid(format!("bad object key {key:?}")))?;
        create_dir_durably(parent)?;
        replace_file(&self.tmp, data, &dest, "write")?;
        Ok(true)
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn delete(&self, key: &str) -> Result<()> {
        self.open_files.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        let path = self.path(key);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other.at("delete", &path),
        }
    }
}

fn walk_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).at("list", &d)? {
            let entry = entry.at("list", &d)?;
            let ty = entry.file_type().at("inspect", &entry.path())?;
            if ty.is_dir() {
                stack.push(entry.path());
            } else if ty.is_file() {
                out.push(entry.path());
            }
        }
    }
    Ok(out)
}

/// A strict in-memory backend (tests, throwaway stores): it refuses a second put of a key with
/// other bytes, which content-addressed objects never need.
#[derive(Default)]
pub struct MemoryBackend {
    objects: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl Backend for MemoryBackend {
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<bool> {
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        match objects.get(key) {
            Some(existing) if existing != data => {
                Err(Error::corrupt(format!("object {key} was written twice with different bytes")))
            }
            Some(_) => Ok(false),
            None => {
                objects.insert(key.to_owned(), data.to_vec());
                Ok(true)
            }
        }
    }

    fn get(&self, key: &str) -> Result<Vec<u8>> {
        let objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        objects.get(key).cloned().ok_or_else(|| Error::not_found(format!("no object {key}")))
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let all = self.get(key)?;
        let (start, end) = (offset as usize, (offset + len) as usize);
        all.get(start..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::corrupt(format!("object {key} is shorter than {end} bytes")))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        let objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        Ok(objects.keys().filter(|k| k.starts_with(prefix)).cloned().collect())
    }

    fn delete(&self, key: &str) -> Result<()> {
        self.objects.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        Ok(())
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        Ok(self.objects.lock().unwrap_or_else(|p| p.into_inner()).get(key).map(|b| b.len() as u64))
    }

    fn get_versioned(&self, key: &str) -> Result<Option<Versioned>> {
        let objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        Ok(objects.get(key).map(|data| Versioned { tag: content_tag(data), data: data.clone() }))
    }

    fn put_versioned(&self, key: &str, data: &[u8], expected: Option<&str>) -> Result<bool> {
        let mut objects = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        let current = objects.get(key).map(|d| content_tag(d));
        if current.as_deref() != expected {
            return Ok(false);
        }
        objects.insert(key.to_owned(), data.to_vec());
        Ok(true)
    }

    fn describe(&self) -> String {
        "an in-memory store".to_owned()
    }
}

/// A directory opened for lookups beneath it, or `None` when there is none at `path`.
fn open_dir(path: &Path) -> Result<Option<std::os::fd::OwnedFd>> {
    use rustix::fs::OFlags;
    match rustix::fs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(fd) => Ok(Some(fd)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(err) => Err(Error::io("open", path, err.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_files(tmp: &Path) -> usize {
        std::fs::read_dir(tmp).unwrap().count()
    }

    #[test]
    fn sizes_asked_together_match_each_asked_alone_whatever_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let (root, tmp) = (dir.path().join("objects"), dir.path().join("tmp"));
        create_dir_durably(&tmp).unwrap();
        let backend = LocalBackend::new(root.clone(), tmp);
        for (key, data) in
            [("packs/aa/1.pack", &b"one"[..]), ("packs/aa/2.pack", b"second"), ("packs/bb/3.pack", b"3")]
        {
            assert!(backend.put_if_absent(key, data).unwrap());
        }
        std::fs::write(root.join("packs/aa/2.pack"), b"cut").unwrap();
        std::fs::remove_file(root.join("packs/bb/3.pack")).unwrap();
        std::fs::remove_dir(root.join("packs/bb")).unwrap();
        let keys: Vec<String> =
            ["packs/aa/1.pack", "packs/aa/2.pack", "packs/aa/gone.pack", "packs/bb/3.pack", "top"]
                .map(String::from)
                .to_vec();
        let together = backend.sizes(&keys).unwrap();
        assert_eq!(together, [Some(3), Some(3), None, None, None]);
        let alone: Vec<_> = keys.iter().map(|key| backend.size(key).unwrap()).collect();
        assert_eq!(together, alone);
    }

    #[test]
    fn a_staged_object_waits_flushed_in_tmp_until_published_and_is_gone_if_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (root, tmp) = (dir.path().join("objects"), dir.path().join("tmp"));
        create_dir_durably(&tmp).unwrap();
        let backend = LocalBackend::new(root.clone(), tmp.clone());

        let staged = backend.stage("records/a.json", b"a").unwrap();
        assert_eq!(temp_files(&tmp), 1);
        assert!(!root.join("records/a.json").exists());
        assert!(backend.publish(staged).unwrap());
        assert_eq!(std::fs::read(root.join("records/a.json")).unwrap(), b"a");
        assert_eq!(temp_files(&tmp), 0, "renamed into place");
        let again = backend.stage("records/a.json", b"other").unwrap();
        assert!(!backend.publish(again).unwrap(), "an object is published once");
        assert_eq!(std::fs::read(root.join("records/a.json")).unwrap(), b"a");

        drop(backend.stage("records/b.json", b"b").unwrap());
        assert_eq!(temp_files(&tmp), 0, "removed when dropped");
        assert!(!root.join("records/b.json").exists());
    }

    #[test]
    fn a_staged_file_waits_in_tmp_replaces_its_destination_and_is_gone_if_dropped_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        create_dir_durably(&tmp).unwrap();
        let dest = dir.path().join("journal.json");
        std::fs::write(&dest, "old").unwrap();

        let staged = stage_file(&tmp, b"new").unwrap();
        assert_eq!(temp_files(&tmp), 1);
        assert_eq!(std::fs::read(&dest).unwrap(), b"old", "nothing replaced before the rename");
        staged.replace(&dest, "write").unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"new");
        assert_eq!(temp_files(&tmp), 0, "renamed into place");

        drop(stage_file(&tmp, b"dropped").unwrap());
        assert_eq!(temp_files(&tmp), 0, "removed when dropped");

        let nowhere = dir.path().join("missing").join("journal.json");
        let err = stage_file(&tmp, b"lost").unwrap().replace(&nowhere, "write").unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        assert_eq!(temp_files(&tmp), 0, "removed when the rename fails");
    }
}
