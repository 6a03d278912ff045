//! Small blobs sharing one zstd frame. Compressed one by one, a 6 kB source file paid for a
//! frame of its own (entropy tables built for it alone, and no match with the files beside it):
//! a tenth of a first save's time, and a sixth of its stored bytes. A writer gathers small
//! blobs into a [`FrameBuilder`] and packs them as one frame; each member's pack entry points at
//! the frame and at where the member starts in it, and a read decodes the frame and takes its
//! member (the [`FrameCache`] keeps the last frames decoded, so reading a directory's files,
//! which share frames, decodes each frame once).
//!
//! An encrypted store seals every blob alone, bound to its id, so it does not frame.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::pack::{self, BlobKind, EncodedBlob};
use crate::error::{Error, Result};
use crate::id::ObjectId;

/// A blob up to this size joins a frame.
pub const FRAMED_UP_TO: usize = 64 * 1024;
/// A frame is closed once its members hold this many bytes.
const FRAME_TARGET: usize = 128 * 1024;
/// The most plain bytes a frame can hold: a frame claiming more is damage.
const MAX_FRAME: usize = FRAME_TARGET + FRAMED_UP_TO;
/// The most frames a [`FrameCache`] keeps decoded (6 MiB).
const KEPT: usize = 32;

/// Small blobs gathered for one frame.
#[derive(Default)]
pub struct FrameBuilder {
    plain: Vec<u8>,
    members: Vec<(ObjectId, u32)>,
}

/// A closed frame, ready to pack.
pub enum Closed {
    /// One zstd frame holding the members' bytes back to back.
    Frame { stored: Vec<u8>, members: Vec<(ObjectId, u32)> },
    /// Members stored each as its own blob: a lone member, or members that do not compress.
    Whole(Vec<EncodedBlob>),
}

impl Closed {
    /// Stored bytes it adds to a pack.
    pub fn stored_len(&self) -> usize {
        match self {
            Closed::Frame { stored, .. } => stored.len(),
            Closed::Whole(blobs) => blobs.iter().map(|b| b.stored.len()).sum(),
        }
    }

    /// Appends it to `pack`.
    pub fn push_into(self, pack: &mut pack::PackBuilder) {
        match self {
            Closed::Frame { stored, members } => pack.push_frame(&stored, &members),
            Closed::Whole(blobs) => blobs.into_iter().for_each(|b| pack.push(b)),
        }
    }
}

impl FrameBuilder {
    /// Adds blob `id` (`data`, at most [`FRAMED_UP_TO`] bytes); true once the frame is full.
    pub fn add(&mut self, id: ObjectId, data: &[u8]) -> bool {
        if self.plain.capacity() == 0 {
            self.plain.reserve(MAX_FRAME);
        }
        self.plain.extend_from_slice(data);
        self.members.push((id, data.len() as u32));
        self.plain.len() >= FRAME_TARGET
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Compresses the members into one frame.
    pub fn close(self) -> Result<Closed> {
        let compress_error = |e| Error::corrupt(format!("zstd could not compress a frame: {e}"));
        if let [(id, _)] = self.members[..] {
            return Ok(Closed::Whole(vec![pack::encode(id, BlobKind::Data, &self.plain)?]));
        }
        let stored = pack::compress(&self.plain).map_err(compress_error)?;
        if stored.len() < self.plain.len() - self.plain.len() / 32 {
            return Ok(Closed::Frame { stored, members: self.members });
        }
        let mut at = 0;
        let whole = self
            .members
            .into_iter()
            .map(|(id, len)| {
                let bytes = self.plain[at..at + len as usize].to_vec();
                at += len as usize;
                EncodedBlob { id, kind: BlobKind::Data, raw_length: len, stored: bytes, compressed: false }
            })
            .collect();
        Ok(Closed::Whole(whole))
    }
}

/// Decodes a frame's stored bytes into its plain bytes.
pub fn decode(stored: &[u8]) -> Result<Vec<u8>> {
    let mut plain = Vec::new();
    decode_into(stored, &mut plain)?;
    Ok(plain)
}

/// Decodes a frame's stored bytes into `plain`, reusing its memory.
fn decode_into(stored: &[u8], plain: &mut Vec<u8>) -> Result<()> {
    let damaged =
        |why: String| Error::corrupt(why).hint(crate::error::Hint::Run(crate::error::Operation::Check));
    let size = zstd::zstd_safe::get_frame_content_size(stored)
        .ok()
        .flatten()
        .filter(|&n| n <= MAX_FRAME as u64)
        .ok_or_else(|| {
            damaged("a shared frame does not give a size it may hold; the store is damaged".into())
        })?;
    pack::decompress_into(stored, size as usize, plain)
        .map_err(|e| damaged(format!("a shared frame does not decompress ({e}); the store is damaged")))
}

/// Takes member `id` (`raw_length` bytes from `within`) out of a decoded frame and checks its
/// content address.
pub fn member(id: &ObjectId, plain: &[u8], within: u32, raw_length: u32) -> Result<Vec<u8>> {
    let bytes =
        plain.get(within as usize..).and_then(|rest| rest.get(..raw_length as usize)).ok_or_else(|| {
            Error::corrupt(format!("blob {id} lies past the end of its frame; the store is damaged"))
        })?;
    pack::decode(id, bytes, false, raw_length)
}

/// The last frames a command decoded, by pack and place: packs are named by their content, so
/// a frame kept under its place is the frame any read of that place would decode.
///
/// A frame decoded again after it was let go is kept apart, in a set of its own: the
/// frame of a save of a few files holds files of many directories, and a restore into a new
/// directory reads it once per directory, between which the frames of the rest of the tree
/// pushed it out. On the 3,000-file repository after the benchmark's rounds (31 snapshots, most
/// of them saves of 20 changed files), the newest snapshot's restore decoded 395 frames where
/// 186 hold its files; with that set it decodes 217, and took 75.3 ms instead of 82.0 ms (15
/// alternating rounds; `cp -a` of the tree 70.7 ms).
///
/// The memory of a frame let go is decoded into again: a page a process touches for the first
/// time costs a fault (on a virtual machine, several microseconds), and every frame decoded into
/// new memory touched up to 48 of them (`docs/design.md`, "Content").
#[derive(Default)]
pub struct FrameCache {
    held: Mutex<Held>,
    spare: Mutex<Vec<Vec<u8>>>,
}

#[derive(Default)]
struct Held {
    /// The frames decoded last, oldest first.
    recent: VecDeque<(FramePlace, Arc<Vec<u8>>)>,
    /// Frames decoded again after `recent` let them go, oldest first.
    again: VecDeque<(FramePlace, Arc<Vec<u8>>)>,
    /// The places of the frames `recent` let go, newest last.
    gone: VecDeque<FramePlace>,
}

/// A frame's pack and offset in it.
type FramePlace = (String, u64);

/// Frames kept decoded: two for each thread that reads (the frame it reads from and the one
/// before), at least eight and at most [`KEPT`].
fn kept() -> usize {
    (2 * rayon::current_num_threads()).clamp(8, KEPT)
}

/// Frames kept apart once decoded again (12 MiB).
const KEPT_AGAIN: usize = 64;
/// Places of frames let go that a later read may find again.
const REMEMBERED: usize = 1024;

impl Held {
    fn find(&self, key: &str, offset: u64) -> Option<&Arc<Vec<u8>>> {
        let mut kept = self.again.iter().chain(&self.recent);
        kept.find(|((k, o), _)| *o == offset && k == key).map(|(_, plain)| plain)
    }

    /// Keeps a frame just decoded; returns the frame it let go, if any.
    fn keep(&mut self, place: FramePlace, plain: Arc<Vec<u8>>) -> Option<Arc<Vec<u8>>> {
        // Offsets first: they rarely match, where every key starts alike.
        if let Some(at) = self.gone.iter().position(|(key, offset)| *offset == place.1 && *key == place.0) {
            self.gone.remove(at);
            self.again.push_back((place, plain));
            return if self.again.len() > KEPT_AGAIN { self.again.pop_front().map(|(_, p)| p) } else { None };
        }
        self.recent.push_back((place, plain));
        if self.recent.len() <= kept() {
            return None;
        }
        let (place, plain) = self.recent.pop_front()?;
        self.gone.push_back(place);
        if self.gone.len() > REMEMBERED {
            self.gone.pop_front();
        }
        Some(plain)
    }
}

impl FrameCache {
    /// The plain bytes of the frame at `offset` in pack `key`, decoded from `stored()` when it
    /// is not kept.
    pub fn get_or_decode(
        &self,
        key: &str,
        offset: u64,
        stored: impl FnOnce() -> Result<Vec<u8>>,
    ) -> Result<Arc<Vec<u8>>> {
        let lock = || self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(plain) = lock().find(key, offset) {
            return Ok(Arc::clone(plain));
        }
        let spare = || self.spare.lock().unwrap_or_else(|p| p.into_inner());
        // Decoded outside the lock: the threads of a restore decode different frames at once.
        let mut plain = spare().pop().unwrap_or_default();
        decode_into(&stored()?, &mut plain)?;
        let plain = Arc::new(plain);
        let gone = lock().keep((key.to_owned(), offset), Arc::clone(&plain));
        // A frame a reader still holds is dropped by it instead.
        if let Some(buffer) = gone.and_then(|plain| Arc::try_unwrap(plain).ok()) {
            spare().push(buffer);
        }
        Ok(plain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(i: usize) -> Vec<u8> {
        format!("fn item_{i}() -> usize {{\n    let value = {i} * 3;\n    value + 1\n}}\n")
            .repeat(20)
            .into_bytes()
    }

    /// The stored bytes of a frame of three sources.
    fn three_sources() -> Vec<u8> {
        let mut frame = FrameBuilder::default();
        for i in 0..3 {
            frame.add(ObjectId::of(&source(i)), &source(i));
        }
        let Closed::Frame { stored, .. } = frame.close().unwrap() else { panic!("not framed") };
        stored
    }

    #[test]
    fn members_of_a_frame_read_back_from_their_places() {
        let mut frame = FrameBuilder::default();
        let blobs: Vec<Vec<u8>> = (0..5).map(source).collect();
        for data in &blobs {
            assert!(!frame.add(ObjectId::of(data), data));
        }
        let Closed::Frame { stored, members } = frame.close().unwrap() else { panic!("not framed") };
        let plain = decode(&stored).unwrap();
        let mut at = 0;
        for ((id, len), data) in members.iter().zip(&blobs) {
            assert_eq!(&member(id, &plain, at, *len).unwrap(), data);
            at += len;
        }
        // A place past the frame, or a member that is not what the id names, is damage.
        assert!(member(&members[0].0, &plain, plain.len() as u32, 1).is_err());
        assert!(member(&members[0].0, &plain, members[0].1, members[1].1).is_err());
    }

    #[test]
    fn a_lone_member_or_incompressible_members_are_stored_whole() {
        let mut lone = FrameBuilder::default();
        lone.add(ObjectId::of(&source(1)), &source(1));
        assert!(matches!(lone.close().unwrap(), Closed::Whole(b) if b.len() == 1 && b[0].compressed));

        let mut noise = FrameBuilder::default();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3 {
            let data: Vec<u8> = (0..4096)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            noise.add(ObjectId::of(&data), &data);
        }
        let Closed::Whole(blobs) = noise.close().unwrap() else { panic!("noise was framed") };
        assert!(blobs.iter().all(|b| !b.compressed && b.raw_length == 4096));
    }

    #[test]
    fn a_frame_is_closed_once_it_holds_its_target() {
        let mut frame = FrameBuilder::default();
        let data = vec![7u8; FRAMED_UP_TO];
        let full = (0..).map(|i| frame.add(ObjectId::of(&[i as u8]), &data)).position(|f| f).unwrap();
        assert_eq!(full + 1, FRAME_TARGET / FRAMED_UP_TO);
    }

    #[test]
    fn the_cache_decodes_a_frame_once_and_damage_fails_the_read() {
        let stored = three_sources();
        let cache = FrameCache::default();
        let first = cache.get_or_decode("packs/a", 0, || Ok(stored.clone())).unwrap();
        let again = cache.get_or_decode("packs/a", 0, || panic!("decoded twice")).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let mut bad = stored.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        bad.truncate(bad.len() / 2);
        assert!(cache.get_or_decode("packs/a", 99, || Ok(bad)).is_err());
    }

    #[test]
    fn a_frame_let_go_lends_its_memory_to_a_later_one_and_is_decoded_again_when_read() {
        let stored = three_sources();
        let cache = FrameCache::default();
        let decode = |offset: u64| cache.get_or_decode("packs/a", offset, || Ok(stored.clone())).unwrap();
        let first = decode(0);
        let (memory, plain) = (first.as_ptr(), first.to_vec());
        drop(first);
        // The first is let go as the room is passed; the frame after that is decoded into it.
        for offset in 1..=kept() as u64 + 1 {
            let later = decode(offset);
            assert_eq!(*later, plain);
            assert_eq!(later.as_ptr() == memory, offset == kept() as u64 + 1, "frame {offset}");
        }
        let decoded = std::cell::Cell::new(false);
        let again = cache
            .get_or_decode("packs/a", 0, || {
                decoded.set(true);
                Ok(stored.clone())
            })
            .unwrap();
        assert!(decoded.get() && *again == plain);
    }

    #[test]
    fn a_frame_read_between_many_others_is_decoded_at_most_twice() {
        let stored = three_sources();
        let cache = FrameCache::default();
        let decodes = std::cell::Cell::new(0);
        let read = |key: &str, offset: u64| {
            cache
                .get_or_decode(key, offset, || {
                    if key == "packs/later" {
                        decodes.set(decodes.get() + 1);
                    }
                    Ok(stored.clone())
                })
                .unwrap()
        };
        // A restore reads the frame of a later save in one directory after another, and the
        // frames of each directory's other files in between.
        for dir in 0..20u64 {
            for offset in 0..kept() as u64 {
                read("packs/first", dir * 100 + offset);
            }
            read("packs/later", 0);
        }
        assert_eq!(decodes.get(), 2);
    }
}
