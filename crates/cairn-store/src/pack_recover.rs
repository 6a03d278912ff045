//! Recovering the blobs of a pack whose header or trailer does not verify, for `repair`.
//!
//! A pack is `blob bytes… | header | header length | magic`, named by the hash of its header,
//! so a damaged trailer (a flipped magic byte, a damaged length, a few bytes cut off the end)
//! leaves the blobs, and usually the header, intact. Recovery uses every source of truth it
//! has, and keeps a blob only where its bytes hash-verify at the place given:
//! 1. the header itself, found by a search near the end: each candidate place is proven by the
//!    pack's name (the hash of the header), so a wrong guess is never believed;
//! 2. the blob index a catalog had for the pack (the current one before a repair resets it, or
//!    a damaged catalog put aside), and the header where the trailer places it when a byte
//!    inside it is damaged (it still decodes, but each entry is only a claim);
//! 3. in a store that does not seal its packs, the zstd frames the pack holds (zstd frames
//!    delimit themselves): each one that decodes is a blob whose id is the hash of its bytes;
//!    and between them, raw blobs whose bytes hash to an id a snapshot refers to and the index
//!    lacks ([`recover_gaps`], once the records are back).
//!
//! The search is bounded: a few hundred candidate lengths, hashed (or, for a plain header,
//! first decoded) one at a time within a budget of a few times the pack's size.

use std::collections::HashSet;

use super::Store;
use super::crypto::RepoKey;
use super::pack::{self, BlobKind, PackEntry};
use crate::id::ObjectId;

/// How a pack's blobs were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The header verified where the trailer says it is.
    Header,
    /// The trailer is damaged; the header was found by a search and proven by the pack's name.
    FoundHeader,
    /// No header was found: blobs come from a catalog's index of the pack and, in a plain
    /// store, from the zstd frames in it.
    Blobs,
}

/// What recovery found in one pack.
#[derive(Debug)]
pub struct Recovered {
    /// Entries whose bytes verify where they are placed.
    pub sound: Vec<PackEntry>,
    /// Entries a source listed whose bytes do not verify.
    pub damaged: Vec<PackEntry>,
    /// Where `sound` came from.
    pub source: Source,
}

/// The 4 magic bytes every zstd frame starts with.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// The most bytes of a trailer a search assumes were cut off (the magic number's length).
const MAX_CUT: usize = 8;
/// A frame found by the scan that claims more plain bytes than this is not believed: no blob
/// or shared frame the writer makes is larger than a chunk, and trees are far smaller.
const MAX_SCANNED_FRAME: u64 = 16 << 20;

/// Recovers what pack `key` (its whole bytes `bytes`, of a store sealed with `seal` or not)
/// still holds. `known` lists what catalogs indexed in it (may be empty).
pub fn recover(key: &str, bytes: &[u8], seal: Option<&RepoKey>, known: Vec<PackEntry>) -> Recovered {
    if let Ok(entries) = pack::verify_header(key, bytes, seal) {
        let (sound, damaged) = pack::sort_sound(bytes, entries, seal);
        return Recovered { sound, damaged, source: Source::Header };
    }
    if let Some(entries) = find_header(key, bytes, seal, &known) {
        let (sound, damaged) = pack::sort_sound(bytes, entries, seal);
        return Recovered { sound, damaged, source: Source::FoundHeader };
    }
    let mut known = known;
    known.extend(pack::unproven_header(bytes, seal));
    let mut candidates = dedup(known);
    if seal.is_none() {
        let listed: HashSet<ObjectId> = candidates.iter().map(|e| e.id).collect();
        candidates.extend(scan_frames(bytes).into_iter().filter(|e| !listed.contains(&e.id)));
    }
    let (sound, damaged) = pack::sort_sound(bytes, candidates, seal);
    Recovered { sound, damaged, source: Source::Blobs }
}

/// One entry per id (two catalogs may both list a blob), in pack order.
fn dedup(mut entries: Vec<PackEntry>) -> Vec<PackEntry> {
    entries.sort_by_key(|e| (e.id, e.offset, e.within));
    entries.dedup_by_key(|e| e.id);
    entries.sort_by_key(|e| (e.offset, e.within));
    entries
}

/// Searches for the header of pack `key` near its end. The header ends where the length field
/// starts; that field sits 12 bytes before the end, or fewer when bytes were cut off. Its
/// value, or that value with one of its four bytes damaged, or the end of the last blob a
/// catalog knew, gives where the header starts; a candidate counts only if it hashes to the
/// pack's name.
fn find_header(
    key: &str,
    bytes: &[u8],
    seal: Option<&RepoKey>,
    known: &[PackEntry],
) -> Option<Vec<PackEntry>> {
    let last_blob_end = known.iter().map(|e| e.offset as usize + e.length as usize).max();
    let mut candidates: Vec<(usize, usize, u64)> = Vec::new();
    for cut in 0..=MAX_CUT {
        // The length field is at `len_at..len_at + 4`, with `cut` bytes of the magic missing.
        let Some(len_at) = (bytes.len() + cut).checked_sub(12) else { continue };
        let Some(field) = bytes.get(len_at..len_at + 4) else { continue };
        let stated = u32::from_le_bytes([field[0], field[1], field[2], field[3]]);
        let mut push = |len: u32, rank: u64| {
            if let Some(start) = len_at.checked_sub(len as usize) {
                candidates.push((start, len_at, rank));
            }
        };
        // The stated length first, then the end of the last known blob, then one byte of the
        // field damaged (nearest lengths first).
        push(stated, cut as u64);
        if let Some(end) = last_blob_end.filter(|&end| end <= len_at) {
            push((len_at - end) as u32, MAX_CUT as u64 + 1 + cut as u64);
        }
        for byte in 0..4 {
            for value in 0..=255u32 {
                let len = (stated & !(0xFF << (8 * byte))) | (value << (8 * byte));
                if len != stated {
                    push(len, (1 << 20) + u64::from(len.abs_diff(stated)));
                }
            }
        }
    }
    candidates.sort_by_key(|c| c.2);
    let mut tried = HashSet::new();
    // Hashing every candidate whole could cost hundreds of times the pack; the nearest ones
    // are tried first, and the search stops once it has hashed a few times the pack's size.
    let mut budget = 4 * bytes.len() + (1 << 20);
    for (start, end, _) in candidates {
        if !tried.insert((start, end)) {
            continue;
        }
        let header = &bytes[start..end];
        for &framed in pack::header_forms(seal) {
            if seal.is_none() {
                // A plain header decodes first, which costs far less than a hash; a sealed one
                // cannot be opened cheaply, so it is hashed straight away.
                let Some(entries) = pack::decode_found_header(header, start, seal, framed) else { continue };
                if entries.is_empty()
                    || entries.iter().map(|e| e.offset as usize + e.length as usize).max() != Some(start)
                {
                    continue;
                }
            }
            if budget < header.len() {
                return None;
            }
            budget -= header.len();
            if pack::names_pack(key, header) {
                return pack::decode_found_header(header, start, seal, framed);
            }
            if seal.is_none() {
                // The hash does not depend on the form: one failure rules out both.
                break;
            }
        }
    }
    None
}

/// Every zstd frame in `bytes` that decodes whole, as an entry named by the hash of its plain
/// bytes. A frame shared by several small blobs decodes too, but its members' boundaries are in
/// the header alone, so it names none of them and a read never asks for it.
fn scan_frames(bytes: &[u8]) -> Vec<PackEntry> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(rel) = bytes.get(at..).and_then(|rest| rest.windows(4).position(|w| w == ZSTD_MAGIC)) {
        let start = at + rel;
        at = start + 1;
        let rest = &bytes[start..];
        let Ok(length) = zstd::zstd_safe::find_frame_compressed_size(rest) else { continue };
        let Ok(Some(plain_len)) = zstd::zstd_safe::get_frame_content_size(rest) else { continue };
        if length > rest.len() || plain_len > MAX_SCANNED_FRAME {
            continue;
        }
        let Ok(plain) = pack::decompress(&rest[..length], plain_len as usize) else { continue };
        if plain.len() as u64 != plain_len {
            continue;
        }
        found.push(PackEntry {
            id: ObjectId::of(&plain),
            kind: BlobKind::Data,
            offset: start as u32,
            length: length as u32,
            raw_length: plain_len as u32,
            compressed: true,
            within: None,
        });
        at = start + length;
    }
    found
}

/// Raw blobs (stored as they are, so nothing delimits them) in the stretches of `bytes` that
/// no entry of `found` covers, each proven by its id being one of `wanted`: ids snapshots refer
/// to that the index lacks, with their plain length when a snapshot tells it. A stretch is tried
/// whole (one raw blob between two found ones), then walked from its start one wanted length
/// at a time. The hashing is bounded by a few times the pack's size.
pub fn recover_gaps(
    bytes: &[u8],
    found: &[PackEntry],
    wanted: &std::collections::HashMap<ObjectId, Option<u32>>,
) -> Vec<PackEntry> {
    let mut lengths: Vec<usize> = wanted.values().flatten().map(|&l| l as usize).filter(|&l| l > 0).collect();
    lengths.sort_unstable();
    lengths.dedup();
    let mut places: Vec<(usize, usize)> =
        found.iter().map(|e| (e.offset as usize, e.offset as usize + e.length as usize)).collect();
    // Where the trailer says the header starts, blobs end (when nothing found lies past it).
    if let Some(header) = pack::stated_header_start(bytes).filter(|&h| places.iter().all(|p| p.1 <= h)) {
        places.push((header, bytes.len()));
    }
    places.sort_unstable();
    let mut gaps = Vec::new();
    let mut at = 0;
    for (start, end) in places {
        if start > at {
            gaps.push((at, start.min(bytes.len())));
        }
        at = at.max(end);
    }
    if at < bytes.len() {
        gaps.push((at, bytes.len()));
    }
    let mut budget = 4 * bytes.len() + (1 << 20);
    let mut out = Vec::new();
    let take = |start: usize, end: usize, budget: &mut usize, out: &mut Vec<PackEntry>| {
        let len = end - start;
        if *budget < len {
            return false;
        }
        *budget -= len;
        let id = ObjectId::of(&bytes[start..end]);
        let fits = wanted.get(&id).is_some_and(|l| l.is_none_or(|l| l as usize == len));
        if fits {
            out.push(PackEntry {
                id,
                kind: BlobKind::Data,
                offset: start as u32,
                length: len as u32,
                raw_length: len as u32,
                compressed: false,
                within: None,
            });
        }
        fits
    };
    let mut finalizes = MAX_PREFIX_HASHES;
    for (start, end) in gaps {
        if take(start, end, &mut budget, &mut out) {
            continue;
        }
        let mut at = start;
        loop {
            if let Some(&len) =
                lengths.iter().find(|&&len| at + len <= end && take(at, at + len, &mut budget, &mut out))
            {
                at += len;
                continue;
            }
            // No length is known (a tree, a snapshot's root): every prefix of the stretch is
            // hashed as it grows, which costs one finalization a byte, not a hash of each.
            let stretch = &bytes[at..end.min(at + MAX_UNSIZED)];
            let Some(len) = prefix_match(stretch, wanted, &mut finalizes) else {
                // Nothing wanted starts here (a tree no record names yet may): the last blob
                // before the next found one may be wanted (a snapshot's root is written last).
                if let Some(from) = suffix_match(&bytes[at..end], wanted, &mut budget) {
                    out.push(PackEntry {
                        id: ObjectId::of(&bytes[at + from..end]),
                        kind: BlobKind::Data,
                        offset: (at + from) as u32,
                        length: (end - at - from) as u32,
                        raw_length: (end - at - from) as u32,
                        compressed: false,
                        within: None,
                    });
                }
                break;
            };
            out.push(PackEntry {
                id: ObjectId::of(&stretch[..len]),
                kind: BlobKind::Data,
                offset: at as u32,
                length: len as u32,
                raw_length: len as u32,
                compressed: false,
                within: None,
            });
            at += len;
        }
    }
    out
}

/// The longest raw blob a search without a known length looks for: trees and snapshot roots
/// are small, and a file's length is known from its tree.
const MAX_UNSIZED: usize = 64 * 1024;
/// How many prefixes a search of one pack hashes at most.
const MAX_PREFIX_HASHES: usize = 1 << 20;

/// The longest raw blob a search from the end of a stretch looks for: each length costs a hash
/// of its own, so only small ones (snapshot roots, trees of a few entries) are tried.
const MAX_SUFFIX: usize = 4 * 1024;

/// The start of the shortest suffix of `stretch` whose hash is a wanted id.
fn suffix_match(
    stretch: &[u8],
    wanted: &std::collections::HashMap<ObjectId, Option<u32>>,
    budget: &mut usize,
) -> Option<usize> {
    for len in 1..=stretch.len().min(MAX_SUFFIX) {
        *budget = budget.checked_sub(len)?;
        let from = stretch.len() - len;
        let id = ObjectId::of(&stretch[from..]);
        if wanted.get(&id).is_some_and(|l| l.is_none_or(|l| l as usize == len)) {
            return Some(from);
        }
    }
    None
}

/// The shortest prefix of `stretch` whose hash is a wanted id, hashing incrementally.
fn prefix_match(
    stretch: &[u8],
    wanted: &std::collections::HashMap<ObjectId, Option<u32>>,
    finalizes: &mut usize,
) -> Option<usize> {
    let mut hasher = blake3::Hasher::new();
    for (i, byte) in stretch.iter().enumerate() {
        *finalizes = finalizes.checked_sub(1)?;
        hasher.update(std::slice::from_ref(byte));
        let id = ObjectId(*hasher.finalize().as_bytes());
        if wanted.get(&id).is_some_and(|l| l.is_none_or(|l| l as usize == i + 1)) {
            return Some(i + 1);
        }
    }
    None
}

impl Store {
    /// Whether pack `key` (`size` bytes by the index) is what its name says: its header reads
    /// and hashes to the name. A pack that is not is kept and reported, unless pruned.
    pub fn pack_header_sound(&self, key: &str, size: u64) -> bool {
        crate::pack::read_header_ranged(self.backend(), key, size, self.sealing()).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack of three blobs: two that compress (and a plain one between), and their entries.
    fn sample(seal: Option<&RepoKey>) -> (String, Vec<u8>, Vec<PackEntry>) {
        let mut builder = pack::PackBuilder::default();
        let blobs = [
            "fn first() {}\n".repeat(300).into_bytes(),
            [ObjectId::of(b"a").0, ObjectId::of(b"b").0, ObjectId::of(b"c").0].concat(),
            "struct Second;\n".repeat(400).into_bytes(),
        ];
        for data in &blobs {
            let blob = pack::encode(ObjectId::of(data), BlobKind::Data, data).unwrap();
            builder.push(pack::seal(seal, blob));
        }
        builder.finish(seal).unwrap()
    }

    fn ids(entries: &[PackEntry]) -> Vec<ObjectId> {
        let mut ids: Vec<ObjectId> = entries.iter().map(|e| e.id).collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_damaged_trailer_is_found_again_by_the_pack_name() {
        for seal in [None, Some(RepoKey::random())] {
            let seal = seal.as_ref();
            let (key, bytes, entries) = sample(seal);
            let n = bytes.len();
            let mut magic = bytes.clone();
            magic[n - 3] ^= 0x55;
            let mut length = bytes.clone();
            length[n - 12] ^= 0x55;
            let mut high = bytes.clone();
            high[n - 10] ^= 0x01;
            for (what, damaged) in [
                ("magic", magic),
                ("length", length),
                ("high length", high),
                ("cut", bytes[..n - 1].to_vec()),
            ] {
                assert!(pack::verify_header(&key, &damaged, seal).is_err(), "{what}");
                let found = recover(&key, &damaged, seal, Vec::new());
                assert_eq!(found.source, Source::FoundHeader, "{what}, sealed: {}", seal.is_some());
                assert_eq!(found.sound, entries, "{what}");
                assert!(found.damaged.is_empty(), "{what}");
            }
        }
    }

    #[test]
    fn without_a_header_the_index_and_the_frames_give_back_what_verifies() {
        let (key, bytes, entries) = sample(None);
        // A byte of the header damaged: no candidate hashes to the name, but what the header
        // still says is checked blob by blob (the entry it garbled is a frame, found again).
        let header_at = entries.iter().map(|e| (e.offset + e.length) as usize).max().unwrap();
        let mut bytes = bytes;
        bytes[header_at + 2] ^= 0x55;
        assert!(find_header(&key, &bytes, None, &entries).is_none());
        assert_eq!(ids(&recover(&key, &bytes, None, Vec::new()).sound), ids(&entries));
        // Its count zeroed, it lists nothing.
        bytes[header_at + 2] ^= 0x55;
        bytes[header_at] = 0;
        assert!(pack::unproven_header(&bytes, None).is_empty());

        // The frames alone give back the two blobs that compress; the plain one has no
        // delimiter, so only an index can place it.
        let scanned = recover(&key, &bytes, None, Vec::new());
        assert_eq!(scanned.source, Source::Blobs);
        let compressed: Vec<PackEntry> = entries.iter().filter(|e| e.compressed).cloned().collect();
        assert_eq!(ids(&scanned.sound), ids(&compressed));

        // An index gives back all three; an entry whose bytes were damaged is dropped.
        let indexed = recover(&key, &bytes, None, entries.clone());
        assert_eq!(ids(&indexed.sound), ids(&entries));
        bytes[entries[1].offset as usize] ^= 0x55;
        let indexed = recover(&key, &bytes, None, entries.clone());
        assert_eq!(ids(&indexed.damaged), ids(&entries[1..2]));
        assert_eq!(indexed.sound.len(), 2);
    }

    #[test]
    fn raw_blobs_between_found_ones_are_placed_by_the_ids_snapshots_want() {
        let (key, mut bytes, entries) = sample(None);
        let header_at = entries.iter().map(|e| (e.offset + e.length) as usize).max().unwrap();
        bytes[header_at] = 0;
        let scanned = recover(&key, &bytes, None, Vec::new());
        let raw = entries.iter().find(|e| !e.compressed).unwrap();
        let mut wanted = std::collections::HashMap::new();
        assert!(recover_gaps(&bytes, &scanned.sound, &wanted).is_empty(), "nothing is wanted");
        wanted.insert(raw.id, Some(raw.raw_length));
        wanted.insert(ObjectId::of(b"elsewhere"), Some(7));
        assert_eq!(recover_gaps(&bytes, &scanned.sound, &wanted), std::slice::from_ref(raw));
        // Two raw blobs side by side: the stretch is walked by the lengths wanted.
        let mut builder = pack::PackBuilder::default();
        let blobs = [
            [ObjectId::of(b"d").0, ObjectId::of(b"e").0, ObjectId::of(b"f").0].concat(),
            [ObjectId::of(b"g").0, ObjectId::of(b"h").0].concat(),
        ];
        for data in &blobs {
            builder.push(pack::encode(ObjectId::of(data), BlobKind::Data, data).unwrap());
        }
        let (_, bytes, entries) = builder.finish(None).unwrap();
        let wanted = entries.iter().map(|e| (e.id, Some(e.raw_length))).collect();
        assert_eq!(recover_gaps(&bytes, &[], &wanted), entries);
        // Without their lengths (trees, roots) they are found by their hashes alone.
        let wanted = entries.iter().map(|e| (e.id, None)).collect();
        assert_eq!(recover_gaps(&bytes, &[], &wanted), entries);
    }

    #[test]
    fn a_sealed_pack_without_its_header_keeps_what_the_index_places() {
        let key_material = RepoKey::random();
        let seal = Some(&key_material);
        let (key, mut bytes, entries) = sample(seal);
        let header_at = entries.iter().map(|e| (e.offset + e.length) as usize).max().unwrap();
        bytes[header_at + 30] ^= 0x55;
        let found = recover(&key, &bytes, seal, entries[..2].to_vec());
        assert_eq!(found.source, Source::Blobs);
        assert_eq!(ids(&found.sound), ids(&entries[..2]));
        assert!(recover(&key, &bytes, seal, Vec::new()).sound.is_empty());
    }

    #[test]
    fn a_sound_pack_reads_from_its_header() {
        let (key, bytes, entries) = sample(None);
        let found = recover(&key, &bytes, None, Vec::new());
        assert_eq!((found.source, found.sound), (Source::Header, entries));
    }
}
