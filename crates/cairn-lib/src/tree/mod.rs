//! Merkle trees: a directory is the hash of its sorted entries, so an unchanged subtree has the
//! same id in every snapshot and costs nothing to save, diff or restore.

pub(crate) mod diff;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::Store;
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Node {
    /// File name as raw bytes (Unix names need not be UTF-8).
    pub name: Vec<u8>,
    pub kind: NodeKind,
    /// Permission bits (`0o7777` mask).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub mtime_ns: i64,
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum NodeKind {
    /// A regular file: its size and the blobs of its content, in order.
    File { size: u64, content: Vec<ObjectId> },
    /// A directory: the id of its tree.
    Dir { tree: ObjectId },
    /// A symbolic link, stored as its target (never followed).
    Symlink { target: Vec<u8> },
}

impl NodeKind {
    /// `file`, `dir` or `symlink`.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            NodeKind::File { .. } => "file",
            NodeKind::Dir { .. } => "dir",
            NodeKind::Symlink { .. } => "symlink",
        }
    }
}

/// A directory's entries, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
}

/// The root document of a directory snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DirRoot {
    /// The top directory's own entry (its mode, owner, mtime and tree).
    pub top: Node,
    /// Groups of paths (relative, sorted) that are hard links of one file.
    pub hardlinks: Vec<Vec<Vec<u8>>>,
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(|e| Error::corrupt(format!("could not encode a tree: {e}")))
}

pub(crate) fn decode<T: for<'de> Deserialize<'de>>(id: &ObjectId, bytes: &[u8]) -> Result<T> {
    postcard::from_bytes(bytes).map_err(|e| {
        Error::corrupt(format!("object {id} is not a valid tree ({e})"))
            .hint(crate::error::Hint::Run(crate::error::Operation::Check))
    })
}

/// Stores a tree (or any encodable document) and returns its id.
pub(crate) fn write<T: Serialize>(writer: &BlobWriter<'_>, value: &T) -> Result<ObjectId> {
    writer.write(BlobKind::Tree, &encode(value)?)
}

/// Reads a tree back.
pub(crate) fn read_tree(store: &Store, id: &ObjectId) -> Result<Tree> {
    decode(id, &store.read_blob(id)?)
}

/// Reads a directory snapshot's root document.
pub(crate) fn read_root(store: &Store, id: &ObjectId) -> Result<DirRoot> {
    decode(id, &store.read_blob(id)?)
}
