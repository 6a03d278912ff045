//! How file content is cut into blobs.
//!
//! Files up to [`WHOLE_FILE_LIMIT`] are one blob. Larger files are cut with FastCDC (2020
//! variant), so an edit in the middle of a large file changes only the chunks around it. The
//! crate version is pinned and the golden vectors below fail if its cut points ever move,
//! because moved cut points silently stop deduplication against existing stores.

use std::io::Read;

/// Files of at most this many bytes are stored as a single blob.
pub(crate) const WHOLE_FILE_LIMIT: u64 = 1024 * 1024;
const MIN_CHUNK: u32 = 64 * 1024;
const AVG_CHUNK: u32 = 256 * 1024;
const MAX_CHUNK: u32 = 1024 * 1024;

/// Cuts `reader` into content-defined chunks and hands each to `sink`, in order.
pub(crate) fn for_each_chunk<R: Read>(
    reader: R,
    mut sink: impl FnMut(&[u8]) -> crate::error::Result<()>,
) -> std::result::Result<crate::error::Result<()>, std::io::Error> {
    let chunker = fastcdc::v2020::StreamCDC::new(reader, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK);
    for chunk in chunker {
        let chunk = chunk.map_err(|e| match e {
            fastcdc::v2020::Error::IoError(io) => io,
            other => std::io::Error::other(other.to_string()),
        })?;
        if let Err(e) = sink(&chunk.data) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random bytes (xorshift), so the vectors need no fixture file.
    fn sample(len: usize) -> Vec<u8> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    fn cut_points(data: &[u8]) -> Vec<usize> {
        let mut points = Vec::new();
        let mut at = 0;
        for_each_chunk(data, |c| {
            at += c.len();
            points.push(at);
            Ok(())
        })
        .unwrap()
        .unwrap();
        points
    }

    #[test]
    fn golden_cut_points_have_not_moved() {
        let data = sample(4 * 1024 * 1024);
        let points = cut_points(&data);
        assert_eq!(*points.last().unwrap(), data.len());
        assert_eq!(
            points, GOLDEN_CUT_POINTS,
            "FastCDC cut points moved: stores written before would stop deduplicating"
        );
    }

    #[test]
    fn an_edit_in_the_middle_changes_few_chunks() {
        let data = sample(8 * 1024 * 1024);
        let mut edited = data.clone();
        for b in &mut edited[4_000_000..4_000_100] {
            *b = b.wrapping_add(1);
        }
        let a: std::collections::HashSet<_> = chunks(&data);
        let b: std::collections::HashSet<_> = chunks(&edited);
        assert!(b.difference(&a).count() <= 2, "{} new chunks", b.difference(&a).count());
    }

    fn chunks(data: &[u8]) -> std::collections::HashSet<blake3::Hash> {
        let mut out = std::collections::HashSet::new();
        for_each_chunk(data, |c| {
            out.insert(blake3::hash(c));
            Ok(())
        })
        .unwrap()
        .unwrap();
        out
    }

    /// Cut points of `sample(4 MiB)` with fastcdc 3.2.1 and this file's chunk sizes.
    const GOLDEN_CUT_POINTS: [usize; 13] = [
        477054, 1040333, 1278861, 1583970, 1976211, 2390584, 2474732, 2646563, 3145909, 3512366, 3877774,
        4082364, 4194304,
    ];
}
