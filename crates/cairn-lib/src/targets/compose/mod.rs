//! The `compose:<project>` target: a running Docker Compose project.
//!
//! A compose snapshot's root is one JSON document ([`record::ComposeRoot`]) that refers to a
//! directory-engine Merkle root per volume and bind mount, and to the chunks of each
//! container's writable-layer tar, of stored images and of the compose files. Volumes are
//! captured and restored by the same machinery as directories, with one stat cache per volume,
//! so a second savepoint reads (and a rollback writes) only what changed.

pub(crate) mod apply;
pub(crate) mod blobs;
pub(crate) mod capture;
pub(crate) mod docker;
pub(crate) mod mounts;
pub(crate) mod record;
pub(crate) mod recreate;
pub(crate) mod snapshot;

use std::collections::HashSet;

use record::{ComposeRoot, MountContent};

use crate::error::{Error, Result};
use crate::id::ObjectId;
use crate::store::Store;

/// Reads a compose snapshot's root document.
pub(crate) fn read_root(store: &Store, id: &ObjectId) -> Result<ComposeRoot> {
    let bytes = store.read_blob(id)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::corrupt(format!("object {id} is not a valid compose savepoint ({e})"))
            .hint(crate::error::Hint::Run(crate::error::Operation::Check))
    })
}

/// Adds every object a compose snapshot refers to into `live` (for gc and check).
pub(crate) fn referenced(store: &Store, root: &ObjectId, live: &mut HashSet<ObjectId>) -> Result<()> {
    if !live.insert(*root) {
        return Ok(());
    }
    let doc = read_root(store, root)?;
    for m in &doc.mounts {
        match &m.content {
            MountContent::Dir { root } => crate::targets::dir::restore::referenced(store, root, live)?,
            MountContent::File { content, .. } => live.extend(content.iter().copied()),
        }
    }
    for l in &doc.layers {
        live.extend(l.tar.iter().copied());
    }
    for i in &doc.images {
        live.extend(i.tar.iter().copied());
    }
    live.extend(doc.spec_files.iter().filter_map(|f| f.content));
    Ok(())
}
