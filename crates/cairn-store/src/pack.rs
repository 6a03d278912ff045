//! Pack files: many blobs appended into one object, with a trailing header that lists them.
//!
//! Layout: `blob bytes… | header (postcard) | header length (u32 LE) | MAGIC`. The header holds
//! everything needed to rebuild the catalog's blob index from the packs alone.
//!
//! Small files share zstd frames (`frame.rs`): each member's entry gives the frame's place and
//! where the member starts in the frame's plain bytes. A pack that holds a frame ends with
//! [`FRAMED_MAGIC`], and its header lists entries with that field; a pack without one keeps the
//! first form, byte for byte, so it reads as packs always have. A build that predates frames
//! finds no header it knows in a framed pack and says the pack is damaged rather than misread it.
//!
//! In an encrypted store each blob is sealed on its own (bound to its id), so a restore still
//! reads one blob by a byte range, and so is the header; the trailer then ends with
//! [`SEALED_MAGIC`] and tells only the header's length.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use super::crypto::RepoKey;
use crate::error::{Error, Result};
use crate::id::ObjectId;

/// The last 8 bytes of every pack.
const MAGIC: &[u8; 8] = b"CAIRNPK1";
/// The last 8 bytes of a pack that holds a shared frame.
const FRAMED_MAGIC: &[u8; 8] = b"CAIRNPK2";
/// The last 8 bytes of every pack of an encrypted store.
const SEALED_MAGIC: &[u8; 8] = b"CAIRNPE1";
/// What a pack header is sealed to.
const HEADER_CONTEXT: &[u8] = b"cairn pack header";

/// A pack is published once it holds about this many bytes.
pub const TARGET_PACK_SIZE: usize = 16 * 1024 * 1024;

/// What a blob holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlobKind {
    /// File content (a whole small file, or one chunk of a large one).
    Data = 0,
    /// An encoded directory tree or document.
    Tree = 1,
}

impl BlobKind {
    pub(crate) fn from_i64(v: i64) -> Self {
        if v == 1 { Self::Tree } else { Self::Data }
    }
}

/// Where one blob sits in a pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackEntry {
    /// The blob's id.
    pub id: ObjectId,
    /// Data or tree.
    pub kind: BlobKind,
    /// Where its stored bytes start: the blob's own, or its frame's.
    pub offset: u32,
    /// Stored length (compressed, when `compressed`); a frame's whole length for a member.
    pub length: u32,
    /// Plain length (of the blob, also for a member of a frame).
    pub raw_length: u32,
    /// Whether the stored bytes are zstd-compressed.
    pub compressed: bool,
    /// For a member of a shared frame, where it starts in the frame's plain bytes.
    pub within: Option<u32>,
}

/// A [`PackEntry`] as the first header form stores it: no blob shares a frame.
#[derive(Serialize, Deserialize)]
struct WholeEntry {
    id: ObjectId,
    kind: BlobKind,
    offset: u32,
    length: u32,
    raw_length: u32,
    compressed: bool,
}

impl From<&PackEntry> for WholeEntry {
    fn from(e: &PackEntry) -> Self {
        Self {
            id: e.id,
            kind: e.kind,
            offset: e.offset,
            length: e.length,
            raw_length: e.raw_length,
            compressed: e.compressed,
        }
    }
}

impl From<WholeEntry> for PackEntry {
    fn from(e: WholeEntry) -> Self {
        let WholeEntry { id, kind, offset, length, raw_length, compressed } = e;
        Self { id, kind, offset, length, raw_length, compressed, within: None }
    }
}

/// A blob ready to be packed: its id and the bytes to store.
pub struct EncodedBlob {
    /// The blob's id (the hash of its plain bytes).
    pub id: ObjectId,
    /// Data or tree.
    pub kind: BlobKind,
    /// Plain length.
    pub raw_length: u32,
    /// The bytes to store: compressed when `compressed`, else the plain bytes.
    pub stored: Vec<u8>,
    /// Whether `stored` is zstd-compressed.
    pub compressed: bool,
}

thread_local! {
    // One zstd context per thread and level, made on first use and reused: creating a context
    // for every blob cost more than compressing a typical small source file.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static TREE_COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Compresses file content with zstd (level 1), reusing this thread's context.
pub fn compress(data: &[u8]) -> std::io::Result<Vec<u8>> {
    compress_with(&COMPRESSOR, 1, data)
}

/// The level of [`compress_tree`]: zstd's fast mode, which stores literals as they are.
const TREE_LEVEL: i32 = -1;

/// Compresses a tree, or a record of the same make (the stat cache's rows), with zstd's fast
/// mode. Most of their bytes are content ids, which no entropy coder shrinks: on the 10,000-file
/// tree of the benchmark's scale series they stored as small as at level 1, where a watched save
/// of 20 files, which rewrites every tree above them and their directories' rows, spent a sixth
/// of its CPU time compressing those.
pub fn compress_tree(data: &[u8]) -> std::io::Result<Vec<u8>> {
    compress_with(&TREE_COMPRESSOR, TREE_LEVEL, data)
}

fn compress_with(
    key: &'static std::thread::LocalKey<RefCell<Option<zstd::bulk::Compressor<'static>>>>,
    level: i32,
    data: &[u8],
) -> std::io::Result<Vec<u8>> {
    key.with_borrow_mut(|slot| match slot {
        Some(c) => c.compress(data),
        None => slot.insert(zstd::bulk::Compressor::new(level)?).compress(data),
    })
}

/// Decompresses zstd bytes whose plain length is at most `capacity`.
pub fn decompress(stored: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    let mut plain = Vec::new();
    decompress_into(stored, capacity, &mut plain)?;
    Ok(plain)
}

/// Decompresses zstd bytes whose plain length is at most `capacity` into `buf`, replacing
/// what it held and reusing its memory.
pub fn decompress_into(stored: &[u8], capacity: usize, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    buf.reserve(capacity);
    DECOMPRESSOR.with_borrow_mut(|slot| match slot {
        Some(d) => d.decompress_to_buffer(stored, buf),
        None => slot.insert(zstd::bulk::Decompressor::new()?).decompress_to_buffer(stored, buf),
    })?;
    Ok(())
}

/// Compresses `data` with zstd, or keeps it raw when compression saves little (already
/// compressed media, random data), so reading it back costs nothing.
pub fn encode(id: ObjectId, kind: BlobKind, data: &[u8]) -> Result<EncodedBlob> {
    let raw_length = data.len() as u32;
    if data.len() >= 64 {
        let packed = match kind {
            BlobKind::Data => compress(data),
            BlobKind::Tree => compress_tree(data),
        }
        .map_err(|e| Error::corrupt(format!("zstd could not compress a blob: {e}")))?;
        if packed.len() < data.len() - data.len() / 32 {
            return Ok(EncodedBlob { id, kind, raw_length, stored: packed, compressed: true });
        }
    }
    Ok(EncodedBlob { id, kind, raw_length, stored: data.to_vec(), compressed: false })
}

/// Reverses [`encode`] and checks the content address.
pub fn decode(id: &ObjectId, stored: &[u8], compressed: bool, raw_length: u32) -> Result<Vec<u8>> {
    let plain = if compressed {
        decompress(stored, raw_length as usize)
            .map_err(|e| Error::corrupt(format!("blob {id} does not decompress: {e}")).hint(check()))?
    } else {
        stored.to_vec()
    };
    if ObjectId::of(&plain) != *id {
        return Err(
            Error::corrupt(format!("blob {id} fails its hash check; the store is damaged")).hint(check())
        );
    }
    Ok(plain)
}

/// Seals a blob's stored bytes in an encrypted store (`key`), bound to its id.
pub fn seal(key: Option<&RepoKey>, mut blob: EncodedBlob) -> EncodedBlob {
    if let Some(key) = key {
        blob.stored = key.seal(&blob.stored, &blob.id.0);
    }
    blob
}

/// Reverses [`seal`]: the bytes [`decode`] takes.
pub fn unseal(key: Option<&RepoKey>, id: &ObjectId, stored: Vec<u8>) -> Result<Vec<u8>> {
    match key {
        None => Ok(stored),
        Some(key) => key.open(&stored, &id.0).ok_or_else(|| {
            Error::corrupt(format!("blob {id} does not open with the store's key; the store is damaged"))
                .hint(check())
        }),
    }
}

/// Builds one pack in memory.
#[derive(Default)]
pub struct PackBuilder {
    bytes: Vec<u8>,
    entries: Vec<PackEntry>,
}

impl PackBuilder {
    /// A builder that fills `buffer` (emptied), the buffer of a pack written before.
    pub fn reusing(mut buffer: Vec<u8>) -> Self {
        buffer.clear();
        Self { bytes: buffer, entries: Vec::new() }
    }

    /// Appends stored bytes and returns where they start.
    fn append(&mut self, stored: &[u8]) -> u32 {
        if self.bytes.capacity() == 0 {
            // A pack is published once it reaches the target, so it never holds more than the
            // target and one blob (a chunk or a whole file, at most a MiB, a frame, or a tree):
            // sized once, its buffer is not doubled past the target as it fills.
            self.bytes.reserve(TARGET_PACK_SIZE + stored.len().max(2 << 20));
        }
        let offset = self.bytes.len() as u32;
        self.bytes.extend_from_slice(stored);
        offset
    }

    /// Appends one blob, stored on its own.
    pub fn push(&mut self, blob: EncodedBlob) {
        let offset = self.append(&blob.stored);
        self.entries.push(PackEntry {
            id: blob.id,
            kind: blob.kind,
            offset,
            length: blob.stored.len() as u32,
            raw_length: blob.raw_length,
            compressed: blob.compressed,
            within: None,
        });
    }

    /// Appends one shared frame (`stored`, compressed) holding `members`: each blob's id and
    /// plain length, in the order their bytes follow each other in the frame.
    pub fn push_frame(&mut self, stored: &[u8], members: &[(ObjectId, u32)]) {
        self.push_shared(
            stored,
            members.iter().scan(0u32, |at, &(id, raw_length)| {
                let within = *at;
                *at += raw_length;
                Some((id, BlobKind::Data, raw_length, Some(within)))
            }),
        );
    }

    /// Appends stored bytes that several entries point into (a frame gc copies as it is):
    /// each as (id, kind, plain length, place in the frame).
    pub fn push_shared(
        &mut self,
        stored: &[u8],
        members: impl IntoIterator<Item = (ObjectId, BlobKind, u32, Option<u32>)>,
    ) {
        let offset = self.append(stored);
        for (id, kind, raw_length, within) in members {
            self.entries.push(PackEntry {
                id,
                kind,
                offset,
                length: stored.len() as u32,
                raw_length,
                compressed: true,
                within,
            });
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends the header (sealed with `key` in an encrypted store) and returns the pack's
    /// key, bytes and entries.
    pub fn finish(mut self, key: Option<&RepoKey>) -> Result<(String, Vec<u8>, Vec<PackEntry>)> {
        let framed = self.entries.iter().any(|e| e.within.is_some());
        // An encrypted store seals each blob alone, bound to its id, so it never frames.
        debug_assert!(!(framed && key.is_some()), "an encrypted store's pack holds a frame");
        let encoded = if framed {
            postcard::to_allocvec(&self.entries)
        } else {
            let whole: Vec<WholeEntry> = self.entries.iter().map(WholeEntry::from).collect();
            postcard::to_allocvec(&whole)
        };
        let mut header =
            encoded.map_err(|e| Error::corrupt(format!("could not encode a pack header: {e}")))?;
        if let Some(key) = key {
            header = key.seal(&header, HEADER_CONTEXT);
        }
        // Named by the hash of the header, not of the whole pack: the header lists every blob's
        // content address and place, so it names the content just as well, and hashing 16 MiB
        // again per pack cost a first save several percent of its time.
        let hash = ObjectId::of(&header).to_hex();
        self.bytes.extend_from_slice(&header);
        self.bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(match (key.is_some(), framed) {
            (true, _) => SEALED_MAGIC,
            (false, true) => FRAMED_MAGIC,
            (false, false) => MAGIC,
        });
        let key = format!("packs/{}/{}.pack", &hash[..2], hash);
        Ok((key, self.bytes, self.entries))
    }
}

/// Whether a pack of a store with `key` (or without) may end with `magic`, and whether its
/// header is then the framed form.
fn header_form(key: Option<&RepoKey>, magic: &[u8]) -> Option<bool> {
    match (key.is_some(), magic) {
        (true, m) if m == SEALED_MAGIC => Some(false),
        (false, m) if m == MAGIC => Some(false),
        (false, m) if m == FRAMED_MAGIC => Some(true),
        _ => None,
    }
}

/// Decodes a header as stored: opened first in an encrypted store; `framed` is the form.
fn parse_header(
    header: &[u8],
    key: Option<&RepoKey>,
    framed: bool,
) -> std::result::Result<Vec<PackEntry>, String> {
    let opened;
    let plain = match key {
        None => header,
        Some(key) => {
            opened = key.open(header, HEADER_CONTEXT).ok_or("does not open with the store's key")?;
            &opened[..]
        }
    };
    if framed {
        return postcard::from_bytes(plain).map_err(|e| e.to_string());
    }
    let whole: Vec<WholeEntry> = postcard::from_bytes(plain).map_err(|e| e.to_string())?;
    Ok(whole.into_iter().map(PackEntry::from).collect())
}

/// The trailer forms a pack of a store with `seal` (or without) may end with: whether the
/// header is the framed form, in the order recovery tries them.
pub fn header_forms(seal: Option<&RepoKey>) -> &'static [bool] {
    if seal.is_some() { &[false] } else { &[false, true] }
}

/// The name a pack's header hashes to: its key without folder and extension.
pub fn pack_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key).trim_end_matches(".pack")
}

/// Whether `header` hashes to the name of pack `key`: the proof that bytes found by a search
/// are the pack's own header.
pub fn names_pack(key: &str, header: &[u8]) -> bool {
    ObjectId::of(header).to_hex() == pack_name(key)
}

/// Decodes `header` (already proven by [`names_pack`]) in form `framed`, and keeps it only if
/// every blob it places lies before `start`, where the header sat: recovery's decoder for a
/// header whose trailer is damaged.
pub fn decode_found_header(
    header: &[u8],
    start: usize,
    seal: Option<&RepoKey>,
    framed: bool,
) -> Option<Vec<PackEntry>> {
    let entries = parse_header(header, seal, framed).ok()?;
    entries.iter().all(|e| e.offset as usize + e.length as usize <= start).then_some(entries)
}

/// The entries the header where the trailer places it lists, though it does not hash to the
/// pack's name (a byte inside it is damaged): claims only, each to be checked against the
/// blob's bytes. Empty when the trailer or the header does not decode.
/// The entries read one by one until the first that does not decode, so a damaged byte near
/// the end of a header costs only the entries from it on.
pub fn unproven_header(pack: &[u8], seal: Option<&RepoKey>) -> Vec<PackEntry> {
    let Some(start) = stated_header_start(pack) else { return Vec::new() };
    let header = &pack[start..pack.len() - 12];
    let opened;
    let plain = match seal {
        None => header,
        Some(key) => match key.open(header, HEADER_CONTEXT) {
            Some(plain) => {
                opened = plain;
                &opened[..]
            }
            None => return Vec::new(),
        },
    };
    let mut best = Vec::new();
    for &framed in header_forms(seal) {
        let Ok((count, mut rest)) = postcard::take_from_bytes::<u64>(plain) else { continue };
        let mut entries = Vec::new();
        while (entries.len() as u64) < count {
            let next = if framed {
                postcard::take_from_bytes::<PackEntry>(rest)
            } else {
                postcard::take_from_bytes::<WholeEntry>(rest).map(|(e, r)| (PackEntry::from(e), r))
            };
            let Ok((entry, after)) = next else { break };
            entries.push(entry);
            rest = after;
        }
        entries.retain(|e| e.offset as usize + e.length as usize <= start);
        if entries.len() > best.len() {
            best = entries;
        }
    }
    best
}

/// Where the trailer of `pack` says its header starts, if that lies inside the pack.
pub fn stated_header_start(pack: &[u8]) -> Option<usize> {
    let len_at = pack.len().checked_sub(12)?;
    let header_len = u32::from_le_bytes([pack[len_at], pack[len_at + 1], pack[len_at + 2], pack[len_at + 3]]);
    len_at.checked_sub(header_len as usize)
}

/// Reads the header of a whole pack (used by recovery and `check`).
pub fn read_header(key: &str, pack: &[u8], seal: Option<&RepoKey>) -> Result<Vec<PackEntry>> {
    let bad = || Error::corrupt(format!("pack {key} has no valid header")).hint(check());
    if pack.len() < 12 {
        return Err(bad());
    }
    let framed = header_form(seal, &pack[pack.len() - 8..]).ok_or_else(bad)?;
    let len_at = pack.len() - 12;
    let header_len = u32::from_le_bytes(pack[len_at..len_at + 4].try_into().map_err(|_| bad())?) as usize;
    let start = len_at.checked_sub(header_len).ok_or_else(bad)?;
    parse_header(&pack[start..len_at], seal, framed).map_err(|_| bad())
}

/// Reads the header of pack `key` (`size` bytes) with two range reads, the trailer and then
/// the header, so indexing a remote pack does not download its data. The header must hash to
/// the pack's name.
pub fn read_header_ranged(
    backend: &dyn super::backend::Backend,
    key: &str,
    size: u64,
    seal: Option<&RepoKey>,
) -> Result<Vec<PackEntry>> {
    // Read when a shared store's catalog catches up on open, which a damaged header stops: a
    // repair recovers the pack blob by blob, and `check` could not open the store either.
    let bad = || {
        Error::corrupt(format!("pack {key} has no valid header"))
            .hint(crate::error::Hint::Run(crate::error::Operation::Repair))
    };
    if size < 12 {
        return Err(bad());
    }
    let trailer = backend.get_range(key, size - 12, 12)?;
    let framed = header_form(seal, &trailer[4..]).ok_or_else(bad)?;
    let header_len = u32::from_le_bytes(trailer[..4].try_into().map_err(|_| bad())?) as u64;
    let start = (size - 12).checked_sub(header_len).ok_or_else(bad)?;
    let header = backend.get_range(key, start, header_len)?;
    let name = key.rsplit('/').next().unwrap_or(key).trim_end_matches(".pack");
    if ObjectId::of(&header).to_hex() != name {
        return Err(bad());
    }
    parse_header(&header, seal, framed).map_err(|_| bad())
}

/// Reads and verifies the header of a whole pack: the magic number, a header length that fits
/// (a truncated pack fails here), a header that decodes, the pack's name (the hash of its
/// header) and blob places that lie inside the pack.
pub fn verify_header(
    key: &str,
    pack: &[u8],
    seal: Option<&RepoKey>,
) -> std::result::Result<Vec<PackEntry>, String> {
    let framed = (pack.len() >= 12).then(|| header_form(seal, &pack[pack.len() - 8..])).flatten();
    let Some(framed) = framed else {
        return Err(format!("pack {key} does not end with the pack magic number (damaged or truncated)"));
    };
    let len_at = pack.len() - 12;
    let header_len = u32::from_le_bytes([pack[len_at], pack[len_at + 1], pack[len_at + 2], pack[len_at + 3]]);
    let Some(start) = len_at.checked_sub(header_len as usize) else {
        return Err(format!("pack {key} is shorter than its header says (truncated)"));
    };
    let header = &pack[start..len_at];
    let name = key.rsplit('/').next().unwrap_or(key).trim_end_matches(".pack");
    if ObjectId::of(header).to_hex() != name {
        return Err(format!("pack {key} has a header that does not match its name (damaged)"));
    }
    let entries = parse_header(header, seal, framed)
        .map_err(|e| format!("pack {key} has a header that does not decode ({e})"))?;
    if let Some(e) = entries.iter().find(|e| e.offset as usize + e.length as usize > start) {
        return Err(format!("pack {key} places blob {} past its data", e.id));
    }
    Ok(entries)
}

/// Splits the entries of a whole pack (`pack`, of a store sealed with `seal` or not) into
/// those whose blob reads back whole and those that do not. A shared frame is decoded once for
/// all its members.
pub fn sort_sound(
    pack: &[u8],
    entries: Vec<PackEntry>,
    seal: Option<&RepoKey>,
) -> (Vec<PackEntry>, Vec<PackEntry>) {
    let (mut sound, mut damaged) = (Vec::with_capacity(entries.len()), Vec::new());
    // The last frame decoded: its place, and its plain bytes when it decoded.
    type Decoded = ((u32, u32), Option<Vec<u8>>);
    let mut frame: Option<Decoded> = None;
    for e in entries {
        let Some(stored) = pack.get(e.offset as usize..).and_then(|rest| rest.get(..e.length as usize))
        else {
            damaged.push(e);
            continue;
        };
        let read = match e.within {
            None => unseal(seal, &e.id, stored.to_vec())
                .and_then(|s| decode(&e.id, &s, e.compressed, e.raw_length))
                .map(drop),
            Some(within) => {
                let place = (e.offset, e.length);
                if frame.as_ref().is_none_or(|(at, _)| *at != place) {
                    frame = Some((place, super::frame::decode(stored).ok()));
                }
                match frame.as_ref().and_then(|(_, plain)| plain.as_ref()) {
                    Some(plain) => super::frame::member(&e.id, plain, within, e.raw_length).map(drop),
                    None => Err(Error::corrupt("a shared frame does not decode")),
                }
            }
        };
        match read {
            Ok(()) => sound.push(e),
            Err(_) => damaged.push(e),
        }
    }
    (sound, damaged)
}

/// The hint of every damaged-object error: check the store.
fn check() -> crate::error::Hint {
    crate::error::Hint::Run(crate::error::Operation::Check)
}

#[cfg(test)]
mod tests;
