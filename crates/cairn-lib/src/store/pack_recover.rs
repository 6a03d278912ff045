//! Recovering the blobs of a pack whose header or trailer does not verify, for `repair`.
//!
//! A pack is `blob bytes… | header | header length | magic`, named by the hash of its header,
//! so a damaged trailer (a flipped magic byte, a damaged length, a few bytes cut off the end)
//! leaves the blobs, and usually the header, intact. Recovery uses every source of truth it
//! has, and keeps a blob only where its bytes hash-verify at the place given:
//! 1. the header itself, found by a search near the end: each candidate place is proven by the
//!    pack's name (the hash of the header), so a wrong guess is never believed;
//! 2. the blob index a catalog had for the pack (the current one before a repair resets it, or
//!    a damaged catalog put aside);
//! 3. in a store that does not seal its packs, the zstd frames the pack holds (zstd frames
//!    delimit themselves): each one that decodes is a blob whose id is the hash of its bytes.
//!
//! The search is bounded: a few hundred candidate lengths, hashed (or, for a plain header,
//! first decoded) one at a time within a budget of a few times the pack's size.

use std::collections::HashSet;

use super::crypto::RepoKey;
use super::pack::{self, BlobKind, PackEntry};
use crate::id::ObjectId;

/// How a pack's blobs were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
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
pub(crate) struct Recovered {
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
pub(crate) fn recover(key: &str, bytes: &[u8], seal: Option<&RepoKey>, known: Vec<PackEntry>) -> Recovered {
    if let Ok(entries) = pack::verify_header(key, bytes, seal) {
        let (sound, damaged) = pack::sort_sound(bytes, entries, seal);
        return Recovered { sound, damaged, source: Source::Header };
    }
    if let Some(entries) = find_header(key, bytes, seal, &known) {
        let (sound, damaged) = pack::sort_sound(bytes, entries, seal);
        return Recovered { sound, damaged, source: Source::FoundHeader };
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack of three blobs: two that compress (and a plain one between), and their entries.
    fn sample(seal: Option<&RepoKey>) -> (String, Vec<u8>, Vec<PackEntry>) {
        let mut builder = pack::PackBuilder::default();
        let blobs = [
            "fn first() {}\n".repeat(300).into_bytes(),
            crate::id::ObjectId::of(b"noise").0.repeat(3),
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
        // The header itself damaged: no candidate hashes to the name.
        let header_at = entries.iter().map(|e| (e.offset + e.length) as usize).max().unwrap();
        let mut bytes = bytes;
        bytes[header_at + 2] ^= 0x55;
        assert!(find_header(&key, &bytes, None, &entries).is_none());

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
