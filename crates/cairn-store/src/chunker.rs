//! How file content is cut into blobs.
//!
//! Files up to [`WHOLE_FILE_LIMIT`] are one blob. Larger files are cut with FastCDC (2020
//! variant), so an edit in the middle of a large file changes only the chunks around it. The
//! crate version is pinned and the golden vectors below fail if its cut points ever move,
//! because moved cut points silently stop deduplication against existing stores.

use std::io::Read;

use rayon::prelude::*;

use crate::id::ObjectId;
use crate::pack::BlobKind;
use crate::writer::BlobWriter;

/// Files of at most this many bytes are stored as a single blob.
pub const WHOLE_FILE_LIMIT: u64 = 1024 * 1024;
const MIN_CHUNK: u32 = 64 * 1024;
const AVG_CHUNK: u32 = 256 * 1024;
const MAX_CHUNK: u32 = 1024 * 1024;

/// Chunk sizes for documents (transcripts, debugger captures) stored by
/// [`store_document_chunks`]: smaller than a file's, because a document that grows is saved
/// again after each growth and every save stores its old last chunk again (the new bytes end it
/// at a new cut point). With a 256 KiB maximum that costs at most a quarter of a megabyte per
/// save, where a file's 1 MiB maximum could double what a 1 MB turn of a transcript costs; a
/// 64 KiB average keeps the root's list of chunks (32 bytes an id) near 0.05% of the document.
/// Files keep their own sizes: their cut points must not move.
pub const DOCUMENT_MIN_CHUNK: u32 = 16 * 1024;
/// See [`DOCUMENT_MIN_CHUNK`].
pub const DOCUMENT_AVG_CHUNK: u32 = 64 * 1024;
/// See [`DOCUMENT_MIN_CHUNK`].
pub const DOCUMENT_MAX_CHUNK: u32 = 256 * 1024;

/// The content-defined chunks of `reader`, in order, with a file's chunk sizes.
fn chunks<R: Read>(reader: R) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    chunks_sized(reader, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK)
}

/// The content-defined chunks of `reader`, in order, cut with the sizes given.
fn chunks_sized<R: Read>(
    reader: R,
    min: u32,
    avg: u32,
    max: u32,
) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    fastcdc::v2020::StreamCDC::new(reader, min, avg, max).map(|chunk| {
        chunk.map(|c| c.data).map_err(|e| match e {
            fastcdc::v2020::Error::IoError(io) => io,
            other => std::io::Error::other(other.to_string()),
        })
    })
}

/// Hands each chunk of `reader` to `sink`, in order (the golden vectors below check the cut
/// points through it).
#[cfg(test)]
fn for_each_chunk<R: Read>(
    reader: R,
    mut sink: impl FnMut(&[u8]) -> crate::error::Result<()>,
) -> std::result::Result<crate::error::Result<()>, std::io::Error> {
    for chunk in chunks(reader) {
        if let Err(e) = sink(&chunk?) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}

/// Chunks read ahead before they are stored together: a few megabytes, so the cores share one
/// large file's compression rather than one core taking it alone while the others idle at the
/// end of a capture.
const BATCH_BYTES: usize = 4 * 1024 * 1024;

/// Stores `reader` as content-defined chunks; returns their ids, in order, and the length read.
/// The chunks of each batch are hashed and compressed in parallel.
pub fn store_chunks<R: Read>(
    writer: &BlobWriter<'_>,
    reader: R,
) -> std::result::Result<crate::error::Result<(Vec<ObjectId>, u64)>, std::io::Error> {
    store_chunk_stream(writer, chunks(reader))
}

/// Stores `reader`, a document, as content-defined chunks of the document sizes
/// ([`DOCUMENT_MIN_CHUNK`] and the two after it), as [`store_chunks`] stores a file.
pub fn store_document_chunks<R: Read>(
    writer: &BlobWriter<'_>,
    reader: R,
) -> std::result::Result<crate::error::Result<(Vec<ObjectId>, u64)>, std::io::Error> {
    store_chunk_stream(
        writer,
        chunks_sized(reader, DOCUMENT_MIN_CHUNK, DOCUMENT_AVG_CHUNK, DOCUMENT_MAX_CHUNK),
    )
}

/// Stores `chunks` in batches; returns their ids, in order, and their total length.
fn store_chunk_stream(
    writer: &BlobWriter<'_>,
    chunks: impl Iterator<Item = std::io::Result<Vec<u8>>>,
) -> std::result::Result<crate::error::Result<(Vec<ObjectId>, u64)>, std::io::Error> {
    let store = |batch: &mut Vec<Vec<u8>>, ids: &mut Vec<ObjectId>| -> crate::error::Result<()> {
        let stored: Vec<ObjectId> = batch
            .par_iter()
            .map(|chunk| writer.write(BlobKind::Data, chunk))
            .collect::<crate::error::Result<_>>()?;
        ids.extend(stored);
        batch.clear();
        Ok(())
    };
    let (mut ids, mut total) = (Vec::new(), 0u64);
    let (mut batch, mut batched) = (Vec::new(), 0usize);
    for chunk in chunks {
        let chunk = chunk?;
        total += chunk.len() as u64;
        batched += chunk.len();
        batch.push(chunk);
        if batched >= BATCH_BYTES {
            if let Err(e) = store(&mut batch, &mut ids) {
                return Ok(Err(e));
            }
            batched = 0;
        }
    }
    if let Err(e) = store(&mut batch, &mut ids) {
        return Ok(Err(e));
    }
    Ok(Ok((ids, total)))
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

    #[test]
    fn chunks_stored_in_parallel_keep_their_order_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::Store::open(&dir.path().join("store")).unwrap();
        // Several batches, so chunks of different batches and of one batch both count.
        let data = sample(3 * BATCH_BYTES + 12345);
        let writer = BlobWriter::new(&store);
        let (ids, total) = store_chunks(&writer, data.as_slice()).unwrap().unwrap();
        writer.finish().unwrap();
        assert_eq!(total, data.len() as u64);
        let mut sequential = Vec::new();
        for_each_chunk(data.as_slice(), |c| {
            sequential.push(ObjectId::of(c));
            Ok(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(ids, sequential);
        let back: Vec<u8> = ids.iter().flat_map(|id| store.read_blob(id).unwrap()).collect();
        assert!(back == data, "the chunks do not read back as the data");
    }

    fn document_cut_points(data: &[u8]) -> Vec<usize> {
        let mut at = 0;
        chunks_sized(data, DOCUMENT_MIN_CHUNK, DOCUMENT_AVG_CHUNK, DOCUMENT_MAX_CHUNK)
            .map(|c| {
                at += c.unwrap().len();
                at
            })
            .collect()
    }

    #[test]
    fn golden_document_cut_points_have_not_moved() {
        let data = sample(1024 * 1024);
        let points = document_cut_points(&data);
        assert_eq!(*points.last().unwrap(), data.len());
        assert!(points.windows(2).all(|w| w[1] - w[0] <= DOCUMENT_MAX_CHUNK as usize));
        assert_eq!(
            points, GOLDEN_DOCUMENT_CUT_POINTS,
            "FastCDC cut points of documents moved: a growing document would store again what \
             stores written before hold"
        );
    }

    #[test]
    fn documents_stored_in_chunks_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::Store::open(&dir.path().join("store")).unwrap();
        let data = sample(BATCH_BYTES + 54321);
        let writer = BlobWriter::new(&store);
        let (ids, total) = store_document_chunks(&writer, data.as_slice()).unwrap().unwrap();
        writer.finish().unwrap();
        assert_eq!(total, data.len() as u64);
        assert_eq!(ids.len(), document_cut_points(&data).len());
        let back: Vec<u8> = ids.iter().flat_map(|id| store.read_blob(id).unwrap()).collect();
        assert!(back == data, "the chunks do not read back as the document");
    }

    /// Cut points of `sample(1 MiB)` with fastcdc 3.2.1 and the document chunk sizes.
    const GOLDEN_DOCUMENT_CUT_POINTS: [usize; 12] =
        [107373, 127427, 195752, 311878, 394612, 619882, 679019, 768984, 892350, 975777, 1040333, 1048576];

    /// Cut points of `sample(4 MiB)` with fastcdc 3.2.1 and this file's chunk sizes.
    const GOLDEN_CUT_POINTS: [usize; 13] = [
        477054, 1040333, 1278861, 1583970, 1976211, 2390584, 2474732, 2646563, 3145909, 3512366, 3877774,
        4082364, 4194304,
    ];
}
