//! Capturing one file: taken from the stat cache when its stamp matches, else opened, read
//! (its data extents only, when sparse), checked against the secret rules and stored.
//!
//! Reads the file and writes its blobs through the capture's writer; what it leaves out goes
//! into the entry's `Found`, and its new stat cache entry is returned to its directory.

use std::ffi::OsStr;
use std::io::{Read, Seek};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::Ordering;

use super::found::Found;
use super::too_long;
use super::walk::{At, Walk};
use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::store::chunker::{WHOLE_FILE_LIMIT, store_chunks};
use crate::store::pack::BlobKind;
use crate::targets::dir::secrets;
use crate::targets::dir::sparse::{ExtentReader, data_extents};
use crate::targets::dir::statcache::{CacheEntry, Stamp};
use crate::targets::dir::xattrs;
use crate::tree::{Extra, NodeKind};

/// How many times a file that changes while it is read is read before it is stored as read.
const MAX_READS: u32 = 3;

/// A file's content as read: its ids (none when it was left out as a secret), and the secret
/// rule it matched.
struct ReadContent {
    content: Option<Vec<ObjectId>>,
    secret: Option<&'static str>,
    /// The bytes read.
    bytes: u64,
    /// The file's size as the read saw it: the bytes read, or for a sparse file, its extents'
    /// end when every extent read whole.
    size: u64,
}

/// A captured file: its node kind, extras, and the metadata that goes with the content read
/// (a file read again because it changed has newer metadata than the walk saw).
pub(super) type CapturedFile = (NodeKind, Extra, std::fs::Metadata);

/// A file's new stat cache entry.
pub(super) enum Cached {
    /// The entry of the directory's old row at this place, which vouched for the file: most
    /// files of most saves. It moves into the new row only when that is written, which a
    /// directory where nothing changed never is.
    Kept(usize),
    /// A new entry, by the file's name.
    New(Box<(Vec<u8>, CacheEntry)>),
}

impl Cached {
    fn new(name: &[u8], entry: CacheEntry) -> Self {
        Self::New(Box::new((name.to_vec(), entry)))
    }
}

/// Up to `len` bytes of `file` from where it stands, fewer if it ends first.
fn read_up_to(file: &mut std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    // Not allocated zeroed: 2% of a first save's samples went to the page faults that costs.
    let mut data = crate::store::backend::zeroed_for_reading(len);
    let mut got = 0;
    while got < len {
        match file.read(&mut data[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    data.truncate(got);
    Ok(data)
}

impl Walk<'_> {
    /// True when a file a secret rule matched is captured anyway.
    fn keeps_secret(&self, at: &At, name: &[u8]) -> bool {
        self.include_secrets || secrets::opted_in(at.matchers, &at.abs.join(OsStr::from_bytes(name)))
    }

    /// Captures the file `name` of directory `at`; `rel` is its path in the tree. Returns the
    /// file, if captured, and its new stat cache entry, if it gets one.
    pub(super) fn file(
        &self,
        at: &At,
        rel: Vec<u8>,
        name: &[u8],
        meta: &std::fs::Metadata,
        found: &mut Found,
    ) -> Result<(Option<CapturedFile>, Option<Cached>)> {
        let dir_abs = at.abs;
        if let Some(rule) = secrets::by_name(&rel, name)
            && !self.keeps_secret(at, name)
        {
            found.secret(&rel, rule);
            return Ok((None, None));
        }
        let stamp = Stamp::of(meta);
        let mut cached = at.cache.old.as_ref().and_then(|old| old.find(name, &stamp));
        if let Some((i, entry)) = cached
            && let Some(rule) = &entry.secret
        {
            if !self.keeps_secret(at, name) {
                found.secret(&rel, rule);
                return Ok((None, Some(Cached::Kept(i))));
            }
            // Left out last time, so its bytes were never stored: read it now.
            if entry.content.is_empty() && meta.size() > 0 {
                cached = None;
            }
        }
        // A cached file whose content the store can no longer vouch for is read again.
        if let Some((_, entry)) = cached
            && !self.writer.vouches_all(&entry.content)?
        {
            cached = None;
        }
        self.progress.scanned(meta.size());
        found.link(meta, &rel);
        let (content, secret, extra, left_out) = match cached {
            Some((i, entry)) => {
                self.counted(meta.size());
                found.xattrs_left_out(&rel, &entry.xattrs_left_out);
                let kind = NodeKind::File { size: meta.size(), content: entry.content.clone() };
                return Ok((Some((kind, entry.extra.clone(), meta.clone())), Some(Cached::Kept(i))));
            }
            None => {
                let rel = rel.as_slice();
                let abs = &dir_abs.join(OsStr::from_bytes(name));
                at.cache.misses.fetch_add(1, Ordering::Relaxed);
                let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(abs);
                let mut file = match file {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                        found.skip(rel, "unreadable", false);
                        return Ok((None, None));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        found.skip(rel, "vanished", false);
                        return Ok((None, None));
                    }
                    Err(e) if too_long(&e) => {
                        found.skip(rel, "path_too_long", false);
                        return Ok((None, None));
                    }
                    Err(e) => return Err(Error::io("open", abs, e)),
                };
                let keep = || self.keeps_secret(at, name);
                // A file that changes while it is read (its size, mtime or ctime moved) is read
                // again, a few times; one that keeps changing is stored as last read, listed in
                // `not_covered`, and not cached, so the next save reads it again.
                let mut before = meta.clone();
                let mut reads = 0;
                loop {
                    reads += 1;
                    let (xattrs, left_out) =
                        xattrs::of_file(&file).at("read the extended attributes of", abs)?;
                    let extents = data_extents(&file, &before).at("find the data extents of", abs)?;
                    let read = match &extents {
                        Some(extents) => self.read_extents(&file, abs, extents, before.size())?,
                        None => self.read_content(&mut file, abs, before.size(), (rel, name), keep)?,
                    };
                    self.counters.read_bytes.fetch_add(read.bytes, Ordering::Relaxed);
                    let after = file.metadata().at("read the metadata of", abs)?;
                    let steady = Stamp::of(&after) == Stamp::of(&before) && read.size == after.size();
                    if steady || reads == MAX_READS {
                        let first_read_steady = steady && reads == 1;
                        let secret = read.secret.map(str::to_owned);
                        let Some(content) = read.content else {
                            // Left out as a secret; cached as such, so an unchanged file is
                            // left out again without being read.
                            found.secret(rel, read.secret.unwrap_or_default());
                            let entry = first_read_steady.then(|| {
                                let entry = CacheEntry {
                                    stamp,
                                    content: Vec::new(),
                                    secret,
                                    extra: Extra::default(),
                                    xattrs_left_out: Vec::new(),
                                };
                                Cached::new(name, entry)
                            });
                            return Ok((None, entry));
                        };
                        if !steady {
                            found.changing(rel);
                        }
                        found.xattrs_left_out(rel, &left_out);
                        self.counted(read.size);
                        let extra = Extra { extents, xattrs };
                        if first_read_steady {
                            break (content, secret, extra, left_out);
                        }
                        let file = (NodeKind::File { size: read.size, content }, extra, after);
                        return Ok((Some(file), None));
                    }
                    before = after;
                    file.seek(std::io::SeekFrom::Start(0)).at("read", abs)?;
                }
            }
        };
        let entry = CacheEntry {
            stamp,
            content: content.clone(),
            secret,
            extra: extra.clone(),
            xattrs_left_out: left_out,
        };
        let file = (NodeKind::File { size: meta.size(), content }, extra, meta.clone());
        Ok((Some(file), Some(Cached::new(name, entry))))
    }

    /// Counts a captured file in the snapshot's stats.
    pub(super) fn counted(&self, size: u64) {
        self.counters.files.fetch_add(1, Ordering::Relaxed);
        self.counters.bytes.fetch_add(size, Ordering::Relaxed);
    }

    /// Reads and stores the content of `file`. A file up to the whole-file limit is checked
    /// against the secret content rules before anything is stored; one that matches is stored
    /// only if `keep` says so.
    fn read_content(
        &self,
        file: &mut std::fs::File,
        abs: &Path,
        size: u64,
        (rel, name): (&[u8], &[u8]),
        keep: impl Fn() -> bool,
    ) -> Result<ReadContent> {
        if size <= WHOLE_FILE_LIMIT {
            // The size is known from the walk, so one `read` takes the whole file: no stat to
            // size a buffer, no second read to find the end. A file that grew meanwhile shows
            // a larger size in the stat after the read, and the caller reads it again. A file
            // that says it is empty is read to its end all the same, as some file systems give
            // no size for what they generate.
            let data = if size == 0 {
                let mut data = Vec::new();
                file.by_ref().take(WHOLE_FILE_LIMIT).read_to_end(&mut data).at("read", abs)?;
                data
            } else {
                read_up_to(file, size as usize).at("read", abs)?
            };
            let bytes = data.len() as u64;
            let secret = secrets::by_content(rel, name, &data);
            if secret.is_some() && !keep() {
                return Ok(ReadContent { content: None, secret, bytes, size: bytes });
            }
            let content = Some(vec![self.writer.write(BlobKind::Data, &data)?]);
            return Ok(ReadContent { content, secret, bytes, size: bytes });
        }
        let (ids, read) = store_chunks(self.writer, file).at("read", abs)??;
        Ok(ReadContent { content: Some(ids), secret: None, bytes: read, size: read })
    }

    /// Reads and stores only the data extents of a sparse file of `size` bytes: its holes are
    /// neither read nor stored. A file that shrank under the read reports a short size, so the
    /// caller reads it again.
    fn read_extents(
        &self,
        file: &std::fs::File,
        abs: &Path,
        extents: &[(u64, u64)],
        size: u64,
    ) -> Result<ReadContent> {
        let (ids, read) = store_chunks(self.writer, ExtentReader::new(file, extents)).at("read", abs)??;
        let whole = read == extents.iter().map(|(_, len)| len).sum::<u64>();
        Ok(ReadContent {
            content: Some(ids),
            secret: None,
            bytes: read,
            size: if whole { size } else { read },
        })
    }
}
