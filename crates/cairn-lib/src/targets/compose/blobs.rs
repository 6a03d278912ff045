//! Streams that are not directories (layer tars, image archives, bind-mounted files) stored
//! as content-defined chunks, so the next savepoint stores only the chunks that changed.

use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::chunker::store_chunks;
use crate::store::writer::BlobWriter;

/// Stores `reader` as chunks; returns their ids and the total length.
pub(crate) fn store_stream(
    writer: &BlobWriter<'_>,
    reader: impl Read,
    what: &Path,
) -> Result<(Vec<ObjectId>, u64)> {
    store_chunks(writer, reader).at("read", what)?
}

/// A temp file in the store (named after this process, so a crash leaves nothing the next
/// open does not clean up), already unlinked: it vanishes when dropped.
pub(crate) fn scratch_file(store: &Store, label: &str) -> Result<std::fs::File> {
    let dir = store.layout().tmp();
    let path = dir.join(format!("{}-compose-{label}-{}", std::process::id(), uuid::Uuid::now_v7()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .at("create", &path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

/// Writes the chunks `ids` back into a fresh scratch file, rewound for reading.
pub(crate) fn spill(store: &Store, ids: &[ObjectId], label: &str) -> Result<std::fs::File> {
    let mut file = scratch_file(store, label)?;
    let tmp = store.layout().tmp();
    for id in ids {
        file.write_all(&store.read_blob(id)?).at("write", &tmp)?;
    }
    file.rewind().at("rewind", &tmp)?;
    Ok(file)
}

/// Reads a small stored document (a compose file) back as one buffer.
pub(crate) fn read_all(store: &Store, ids: &[ObjectId]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for id in ids {
        out.extend(store.read_blob(id)?);
    }
    Ok(out)
}

/// A scratch file handed to a Docker call and back.
pub(crate) fn rewind(mut file: std::fs::File, store: &Store) -> Result<std::fs::File> {
    file.rewind().at("rewind", &store.layout().tmp())?;
    Ok(file)
}

/// An error for a stream that could not be encoded.
pub(crate) fn encode_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::corrupt(format!("could not encode {what}: {e}"))
}
