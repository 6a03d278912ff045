//! `cairn export REF --to FILE`: a directory snapshot as a POSIX pax tar archive.
//!
//! Every entry carries a pax record with its nanosecond mtime (and its path or link target
//! when they do not fit a ustar header), so GNU tar and bsdtar extract the snapshot as it was:
//! modes, owners, mtimes, symlinks, and hard links as links to the group's first path. The
//! archive is written beside `FILE` and renamed into place, so a failed export leaves nothing.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::error::{Error, IoContext, Result};
use crate::id::ObjectId;
use crate::ops::resolve::CallContext;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::tree::{self, Node, NodeKind};

/// What to export, and where.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ExportOptions {
    /// The directory snapshot: an id, a unique id prefix, a name, or `latest`.
    #[cfg_attr(feature = "clap", arg(value_name = "REF"))]
    pub reference: String,
    /// The archive to write; its name picks the compression: `.tar`, `.tar.gz`/`.tgz` or
    /// `.tar.zst`/`.tzst`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub to: PathBuf,
    /// Replace the archive when it exists.
    #[cfg_attr(feature = "clap", arg(long, short))]
    #[serde(default)]
    pub force: bool,
    /// The session to look the snapshot up in (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// The archive an export wrote.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ExportResult {
    /// The snapshot that was exported (unchanged by this).
    pub snapshot: Snapshot,
    /// The archive written.
    pub file: PathBuf,
    /// `none`, `gzip` or `zstd`.
    pub compression: String,
    /// Entries written (the top directory included).
    pub entries: u64,
    /// Bytes of file content written, before compression.
    pub bytes: u64,
}

fn compression_of(file: &std::path::Path) -> Result<&'static str> {
    let name = file.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    match () {
        _ if name.ends_with(".tar") => Ok("none"),
        _ if name.ends_with(".tar.gz") || name.ends_with(".tgz") => Ok("gzip"),
        _ if name.ends_with(".tar.zst") || name.ends_with(".tzst") => Ok("zstd"),
        _ => Err(Error::invalid(format!(
            "{} does not end in .tar, .tar.gz, .tgz, .tar.zst or .tzst; name the archive so its compression is clear",
            file.display()
        ))),
    }
}

/// The content of a file, read blob by blob as the archive asks for it.
struct Content<'a> {
    store: &'a Store,
    ids: std::slice::Iter<'a, ObjectId>,
    current: std::io::Cursor<Vec<u8>>,
}

impl Read for Content<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.current.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let Some(id) = self.ids.next() else { return Ok(0) };
            let blob = self.store.read_blob(id).map_err(|e| std::io::Error::other(e.to_string()))?;
            self.current = std::io::Cursor::new(blob);
        }
    }
}

struct Emit<'a, W: Write> {
    store: &'a Store,
    out: tar::Builder<W>,
    /// For each hard-linked path after the first of its group, that first path.
    link_to: HashMap<Vec<u8>, Vec<u8>>,
    entries: u64,
    bytes: u64,
}

impl<W: Write> Emit<'_, W> {
    fn entry(&mut self, path: &[u8], node: &Node, is_top: bool) -> std::io::Result<()> {
        let mut header = tar::Header::new_ustar();
        header.set_mode(node.mode);
        header.set_uid(u64::from(node.uid));
        header.set_gid(u64::from(node.gid));
        header.set_mtime(node.mtime_ns.div_euclid(1_000_000_000).max(0) as u64);
        let name: Vec<u8> = if is_top { b"./".to_vec() } else { path.to_vec() };
        let mut pax: Vec<(&str, Vec<u8>)> = vec![("mtime", mtime_text(node.mtime_ns).into_bytes())];
        let link = match &node.kind {
            NodeKind::Symlink { target } => Some(target.clone()),
            NodeKind::File { .. } => self.link_to.get(path).cloned(),
            NodeKind::Dir { .. } => None,
        };
        let name = match &node.kind {
            NodeKind::Dir { .. } if !is_top => [&name[..], b"/"].concat(),
            _ => name,
        };
        if header.set_path(std::ffi::OsStr::from_bytes_path(&name)).is_err() || !name.is_ascii() {
            pax.push(("path", name.clone()));
            header.set_path("././@PaxPath")?;
        }
        if let Some(link) = &link
            && (header.set_link_name(std::ffi::OsStr::from_bytes_path(link)).is_err() || !link.is_ascii())
        {
            pax.push(("linkpath", link.clone()));
            header.set_link_name("././@PaxLink")?;
        }
        self.out.append_pax_extensions(pax.iter().map(|(k, v)| (*k, v.as_slice())))?;
        self.entries += 1;
        match (&node.kind, link) {
            (NodeKind::Dir { .. }, _) => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                header.set_cksum();
                self.out.append(&header, std::io::empty())
            }
            (NodeKind::Symlink { .. }, _) => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                header.set_cksum();
                self.out.append(&header, std::io::empty())
            }
            (NodeKind::File { .. }, Some(_)) => {
                header.set_entry_type(tar::EntryType::Link);
                header.set_size(0);
                header.set_cksum();
                self.out.append(&header, std::io::empty())
            }
            (NodeKind::File { size, content }, None) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_size(*size);
                header.set_cksum();
                self.bytes += size;
                let reader = Content {
                    store: self.store,
                    ids: content.iter(),
                    current: std::io::Cursor::new(Vec::new()),
                };
                // A sparse file's content holds only its data extents: the holes read as zeros.
                match &node.extra.extents {
                    Some(extents) => {
                        let reader = crate::tree::sparse::Expand::new(reader, extents, *size);
                        self.out.append(&header, reader.take(*size))
                    }
                    None => self.out.append(&header, reader.take(*size)),
                }
            }
        }
    }

    fn dir(&mut self, prefix: &[u8], tree_id: &ObjectId) -> Result<()> {
        let tree = tree::read_tree(self.store, tree_id)?;
        for node in &tree.nodes {
            let path =
                if prefix.is_empty() { node.name.clone() } else { [prefix, b"/", &node.name].concat() };
            self.entry(&path, node, false).map_err(|e| {
                Error::io(
                    "write the archive entry",
                    std::path::Path::new(&*String::from_utf8_lossy(&path)),
                    e,
                )
            })?;
            if let NodeKind::Dir { tree } = &node.kind {
                self.dir(&path, tree)?;
            }
        }
        Ok(())
    }
}

/// `secs.nanos`, as pax writes times.
fn mtime_text(ns: i64) -> String {
    format!("{}.{:09}", ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000))
}

trait FromBytesPath {
    fn from_bytes_path(bytes: &[u8]) -> &std::path::Path;
}

impl FromBytesPath for std::ffi::OsStr {
    fn from_bytes_path(bytes: &[u8]) -> &std::path::Path {
        use std::os::unix::ffi::OsStrExt;
        std::path::Path::new(std::ffi::OsStr::from_bytes(bytes))
    }
}

impl Repository {
    /// Writes a directory snapshot to `options.to` as a POSIX pax tar archive.
    pub fn export(&self, options: &ExportOptions, context: &CallContext) -> Result<ExportResult> {
        let compression = compression_of(&options.to)?;
        let session = self.call_session(options.session.as_deref(), context)?;
        let snapshot = self.resolve_snapshot(&session, &options.reference, None)?;
        if snapshot.kind != "dir" {
            return Err(Error::invalid(format!(
                "snapshot {} is a {} snapshot; only directory snapshots export as tar archives",
                snapshot.id, snapshot.kind
            )));
        }
        if options.to.exists() && !options.force {
            return Err(Error::conflict(format!(
                "{} already exists; choose another path, or set the force option to replace it",
                options.to.display()
            )));
        }
        let root =
            tree::read_root(self, &snapshot.root.ok_or_else(|| Error::corrupt("snapshot has no root"))?)?;
        let mut link_to = HashMap::new();
        for group in &root.hardlinks {
            if let Some((first, rest)) = group.split_first() {
                for other in rest {
                    link_to.insert(other.clone(), first.clone());
                }
            }
        }
        let dir =
            options.to.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let tmp = tempfile::NamedTempFile::new_in(dir).at("create a file beside", &options.to)?;
        let file = tmp.as_file().try_clone().at("write", tmp.path())?;
        let sink: Box<dyn Write> = match compression {
            "gzip" => Box::new(flate2::write::GzEncoder::new(file, flate2::Compression::fast())),
            "zstd" => Box::new(zstd::Encoder::new(file, 3).at("write", tmp.path())?.auto_finish()),
            _ => Box::new(file),
        };
        let mut emit = Emit { store: self, out: tar::Builder::new(sink), link_to, entries: 0, bytes: 0 };
        emit.entry(b"", &root.top, true).at("write", tmp.path())?;
        if let NodeKind::Dir { tree } = &root.top.kind {
            emit.dir(b"", tree)?;
        }
        let (entries, bytes) = (emit.entries, emit.bytes);
        let mut sink = emit.out.into_inner().at("write", tmp.path())?;
        sink.flush().at("write", tmp.path())?;
        drop(sink);
        tmp.as_file().sync_data().at("flush", tmp.path())?;
        tmp.persist(&options.to).map_err(|e| Error::io("write", &options.to, e.error))?;
        Ok(ExportResult {
            snapshot,
            file: options.to.clone(),
            compression: compression.into(),
            entries,
            bytes,
        })
    }
}
