//! How a document (the whole capture of a transcript or debugger target) is laid out in the
//! store, below the operations that save and read it (`ops/document.rs`).
//!
//! A document of more than [`WHOLE_DOCUMENT_LIMIT`] bytes is cut into content-defined chunks
//! (FastCDC, with the document chunk sizes of `cairn_store::chunker`: 16 KiB minimum, 64 KiB
//! average, 256 KiB maximum, smaller than a file's), and its root is a tree blob listing them:
//! a transcript that grows turn after turn then stores only its new tail and its old last
//! chunk again, as the chunks of its unchanged prefix are already in the store. A smaller
//! document, and every document stored before chunking, is one data blob; the root's blob kind
//! in the index tells the two apart. A root lists its chunks whatever sizes cut them, so a
//! document chunked with a file's sizes, as the first chunked documents were, still reads.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;

/// Documents of at most this many bytes are stored as one blob: the document chunks' average
/// size, so a smaller document would be a chunk or a few, and a root listing them would cost
/// more than it saves.
const WHOLE_DOCUMENT_LIMIT: usize = 64 * 1024;

/// What a chunked document's root begins with, before its postcard-encoded [`Chunks`]: a
/// version for the layout, and a check that a tree blob named as a document root is one.
const CHUNKS_MAGIC: &[u8] = b"cairn document chunks v1\n";

/// The root of a chunked document: its length and its chunks, in order.
#[derive(Debug, Serialize, Deserialize)]
struct Chunks {
    size: u64,
    content: Vec<ObjectId>,
}

/// The document at `root`: one blob, or its chunks joined and checked against its length.
pub(crate) fn read(store: &Store, root: &ObjectId) -> Result<Vec<u8>> {
    let Some(chunks) = chunks_of(store, root)? else { return store.read_blob(root) };
    let mut out = Vec::with_capacity(chunks.size as usize);
    for id in &chunks.content {
        out.extend_from_slice(&store.read_blob(id)?);
    }
    if out.len() as u64 != chunks.size {
        return Err(Error::corrupt(format!(
            "document {root} reads back as {} bytes, not the {} its root records",
            out.len(),
            chunks.size
        )));
    }
    Ok(out)
}

/// Stores `document` (chunked when it is large) and returns its root.
pub(crate) fn write_document(writer: &BlobWriter<'_>, document: &[u8]) -> Result<ObjectId> {
    if document.len() <= WHOLE_DOCUMENT_LIMIT {
        return writer.write(BlobKind::Data, document);
    }
    let (content, size) = crate::store::chunker::store_document_chunks(writer, document)
        // Reading a slice does not fail.
        .map_err(|e| Error::corrupt(format!("could not cut a document into chunks: {e}")))??;
    let chunks = Chunks { size, content };
    let mut root = CHUNKS_MAGIC.to_vec();
    root.extend(
        postcard::to_allocvec(&chunks)
            .map_err(|e| Error::corrupt(format!("could not encode a document's chunks: {e}")))?,
    );
    writer.write(BlobKind::Tree, &root)
}

/// Adds the objects the document at `root` needs to `live`: its root, and the chunks of a
/// chunked one. A root the index does not hold is known lost (a repair dropped it and listed
/// the snapshot): nothing more is reachable through it.
pub(crate) fn document_objects(store: &Store, root: &ObjectId, live: &mut HashSet<ObjectId>) -> Result<()> {
    if !live.insert(*root) {
        return Ok(());
    }
    if let Some(chunks) = chunks_of(store, root)? {
        live.extend(chunks.content);
    }
    Ok(())
}

/// The chunks of the document at `root`, or `None` when it is stored as one blob (or known
/// lost, which a read then reports).
fn chunks_of(store: &Store, root: &ObjectId) -> Result<Option<Chunks>> {
    match store.catalog().blob_location(root)? {
        Some(loc) if loc.kind == BlobKind::Tree => {}
        _ => return Ok(None),
    }
    let bytes = store.read_blob(root)?;
    let chunks = bytes
        .strip_prefix(CHUNKS_MAGIC)
        .and_then(|rest| postcard::from_bytes::<Chunks>(rest).ok())
        .ok_or_else(|| {
            Error::corrupt(format!("document root {root} is a tree blob that does not list chunks"))
                .hint(crate::error::Hint::Run(crate::error::Operation::Check))
        })?;
    Ok(Some(chunks))
}
