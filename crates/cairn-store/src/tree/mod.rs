//! Merkle trees: a directory is the hash of its sorted entries, so an unchanged subtree has the
//! same id in every snapshot and costs nothing to save, diff or restore.
//!
//! A tree is stored as the postcard encoding of its nodes, followed, only when some node has
//! one, by a section of [`Extra`]s (sparse layout, extended attributes) keyed by node index.
//! Snapshots made before that section existed simply end after the nodes, so they read as they
//! always did, and a tree with no extras keeps the bytes (and id) it always had. A large
//! directory's tree is stored in parts, each such a tree of a run of its nodes (`parts.rs`), and a
//! capture that changed a few of them stores it again without reading the others (`rewrite.rs`).

pub mod diff;
pub mod graft;
pub mod memo;
pub mod parts;
pub mod rewrite;
pub mod sparse;

use serde::{Deserialize, Serialize};

use crate::Store;
use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::pack::BlobKind;
use crate::writer::BlobWriter;

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// File name as raw bytes (Unix names need not be UTF-8).
    pub name: Vec<u8>,
    /// File, directory or symlink, with what it holds.
    pub kind: NodeKind,
    /// Permission bits (`0o7777` mask).
    pub mode: u32,
    /// Owner user id.
    pub uid: u32,
    /// Owner group id.
    pub gid: u32,
    /// Modification time, in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Sparse layout and extended attributes, stored in the tree's trailing section.
    #[serde(skip)]
    pub extra: Extra,
}

/// What an entry holds beyond the fields every snapshot has had.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extra {
    /// For a sparse file, its data extents as (offset, length), in order: the file's `content`
    /// holds their bytes back to back and everything else reads as zeros. `None` for a file
    /// without holes (its content is its bytes).
    pub extents: Option<Vec<(u64, u64)>>,
    /// Extended attributes (`user.*`, and the POSIX ACLs `system.posix_acl_access` /
    /// `system.posix_acl_default`) as (name, value), sorted by name.
    pub xattrs: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Extra {
    /// Whether it holds nothing (no extents, no xattrs).
    pub fn is_empty(&self) -> bool {
        self.extents.is_none() && self.xattrs.is_empty()
    }
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    /// A regular file: its size and the blobs of its content, in order.
    File {
        /// Length in bytes.
        size: u64,
        /// The blobs of its content, in order.
        content: Vec<ObjectId>,
    },
    /// A directory: the id of its tree.
    Dir {
        /// The id of its tree.
        tree: ObjectId,
    },
    /// A symbolic link, stored as its target (never followed).
    Symlink {
        /// The link's target, as raw bytes.
        target: Vec<u8>,
    },
}

impl NodeKind {
    /// `file`, `dir` or `symlink`.
    pub fn label(&self) -> &'static str {
        match self {
            NodeKind::File { .. } => "file",
            NodeKind::Dir { .. } => "dir",
            NodeKind::Symlink { .. } => "symlink",
        }
    }
}

/// A directory's entries, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// Its entries, sorted by name.
    pub nodes: Vec<Node>,
}

/// The root document of a directory snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirRoot {
    /// The top directory's own entry (its mode, owner, mtime and tree).
    pub top: Node,
    /// Groups of paths (relative, sorted) that are hard links of one file.
    pub hardlinks: Vec<Vec<Vec<u8>>>,
}

/// A stored tree document: a [`Tree`] or a [`DirRoot`], each with its trailing extras.
pub trait Document: Sized {
    /// Its stored bytes.
    fn to_bytes(&self) -> std::result::Result<Vec<u8>, postcard::Error>;
    /// Decodes stored bytes.
    fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, postcard::Error>;
}

impl Document for Tree {
    fn to_bytes(&self) -> std::result::Result<Vec<u8>, postcard::Error> {
        nodes_to_bytes(&self.nodes)
    }

    fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, postcard::Error> {
        let (mut tree, rest): (Tree, _) = postcard::take_from_bytes(bytes)?;
        if !rest.is_empty() {
            for (i, extra) in postcard::from_bytes::<Vec<(u32, Extra)>>(rest)? {
                let node = tree.nodes.get_mut(i as usize).ok_or(postcard::Error::DeserializeBadEncoding)?;
                node.extra = extra;
            }
        }
        Ok(tree)
    }
}

/// A tree of `nodes`: postcard encodes a one-field struct as its field, and a slice as a `Vec`.
fn nodes_to_bytes(nodes: &[Node]) -> std::result::Result<Vec<u8>, postcard::Error> {
    let mut out = postcard::to_allocvec(nodes)?;
    let extras: Vec<(u32, &Extra)> =
        (0u32..).zip(nodes).filter(|(_, n)| !n.extra.is_empty()).map(|(i, n)| (i, &n.extra)).collect();
    if !extras.is_empty() {
        out.extend(postcard::to_allocvec(&extras)?);
    }
    Ok(out)
}

impl Document for DirRoot {
    fn to_bytes(&self) -> std::result::Result<Vec<u8>, postcard::Error> {
        let mut out = postcard::to_allocvec(self)?;
        if !self.top.extra.is_empty() {
            out.extend(postcard::to_allocvec(&self.top.extra)?);
        }
        Ok(out)
    }

    fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, postcard::Error> {
        let (mut root, rest): (DirRoot, _) = postcard::take_from_bytes(bytes)?;
        if !rest.is_empty() {
            root.top.extra = postcard::from_bytes(rest)?;
        }
        Ok(root)
    }
}

pub(crate) fn encode<T: Document>(value: &T) -> Result<Vec<u8>> {
    value.to_bytes().map_err(unencodable)
}

/// The bytes of a tree of `nodes` (sorted by name), stored whole.
pub fn encode_nodes(nodes: &[Node]) -> Result<Vec<u8>> {
    nodes_to_bytes(nodes).map_err(unencodable)
}

fn unencodable(e: postcard::Error) -> Error {
    Error::corrupt(format!("could not encode a tree: {e}"))
}

/// Decodes a document stored whole (a parted tree's index is read by [`parts::assemble`]).
pub fn decode<T: Document>(id: &ObjectId, bytes: &[u8]) -> Result<T> {
    T::from_bytes(bytes).map_err(|e| invalid(id, e))
}

/// Object `id` does not read as a tree, for the reason `why`.
fn invalid(id: &ObjectId, why: impl std::fmt::Display) -> Error {
    Error::corrupt(format!("object {id} is not a valid tree ({why})"))
        .hint(crate::error::Hint::Run(crate::error::Operation::Check))
}

/// Stores a tree (in parts when it is large) and returns its id.
pub fn write(writer: &BlobWriter<'_>, tree: &Tree) -> Result<ObjectId> {
    parts::write(writer, tree)
}

/// Stores a directory snapshot's root document and returns its id.
pub fn write_root(writer: &BlobWriter<'_>, root: &DirRoot) -> Result<ObjectId> {
    writer.write(BlobKind::Tree, &encode(root)?)
}

/// Reads a tree back, with its parts.
pub fn read_tree(store: &Store, id: &ObjectId) -> Result<Tree> {
    parts::assemble(id, &store.read_blob(id)?, |part| store.read_blob(part))
}

/// Reads a directory snapshot's root document.
pub fn read_root(store: &Store, id: &ObjectId) -> Result<DirRoot> {
    decode(id, &store.read_blob(id)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &[u8], extra: Extra) -> Node {
        Node {
            name: name.to_vec(),
            kind: NodeKind::File { size: 3, content: vec![ObjectId::of(b"abc")] },
            mode: 0o644,
            uid: 1,
            gid: 2,
            mtime_ns: 3,
            extra,
        }
    }

    #[test]
    fn a_tree_without_extras_keeps_the_bytes_old_snapshots_have() {
        let tree = Tree { nodes: vec![node(b"a", Extra::default())] };
        let plain = postcard::to_allocvec(&tree).unwrap();
        assert_eq!(encode(&tree).unwrap(), plain);
        assert_eq!(decode::<Tree>(&ObjectId::of(&plain), &plain).unwrap(), tree);
    }

    #[test]
    fn extras_round_trip_and_are_attached_to_their_nodes() {
        let sparse = Extra { extents: Some(vec![(0, 1), (10, 2)]), xattrs: Vec::new() };
        let attrs = Extra { extents: None, xattrs: vec![(b"user.a".to_vec(), b"1".to_vec())] };
        let tree =
            Tree { nodes: vec![node(b"a", sparse), node(b"b", Extra::default()), node(b"c", attrs.clone())] };
        let bytes = encode(&tree).unwrap();
        assert_eq!(decode::<Tree>(&ObjectId::of(&bytes), &bytes).unwrap(), tree);
        let root = DirRoot { top: node(b"", attrs), hardlinks: Vec::new() };
        let bytes = encode(&root).unwrap();
        assert_eq!(decode::<DirRoot>(&ObjectId::of(&bytes), &bytes).unwrap(), root);
        // An extra for a node the tree does not have is damage, not something to ignore.
        let mut bad = postcard::to_allocvec(&Tree { nodes: vec![node(b"a", Extra::default())] }).unwrap();
        bad.extend(postcard::to_allocvec(&vec![(5u32, Extra::default())]).unwrap());
        assert!(decode::<Tree>(&ObjectId::of(&bad), &bad).is_err());
    }
}
