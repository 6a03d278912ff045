//! `cairn export REF --to FILE`: a directory snapshot as a POSIX pax tar archive.
//!
//! Every entry carries a pax record with its nanosecond mtime (and its path or link target
//! when they do not fit a ustar header), so GNU tar and bsdtar extract the snapshot as it was:
//! modes, owners, mtimes, symlinks, and hard links as links to the group's first path. The
//! archive is written beside `FILE` and renamed into place, so a failed export leaves nothing.
//!
//! The archive gets the mode a new file of the user's gets (0666 less the umask), so it can be
//! shared as any file they make can, unless a file in it is a secret by cairn's rules (a name
//! rule such as `.env` or `id_ed25519`, or a content rule on a file of up to 1 MiB, as a save
//! judges them; such files are in a snapshot only when saved with include-secrets): then it
//! stays 0600. It is 0600 while it is written either way.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
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
    /// The first file in the archive that is a secret by cairn's rules, and the rule it
    /// matched: the archive was left readable by its owner only (mode 0600).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretFile>,
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

/// A file of the archive that is a secret by cairn's rules.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SecretFile {
    /// Its path in the archive.
    pub path: String,
    /// The rule it matched (`dotenv`, `ssh-private-key`, `github-token`, …).
    pub rule: String,
}

/// The most of a file the content rules look at, as a save looks at it (the whole-file limit).
const SCAN_LIMIT: usize = 1 << 20;

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

/// A reader that keeps the first [`SCAN_LIMIT`] bytes it passes on, for the content rules.
struct Kept<'b, R> {
    inner: R,
    kept: &'b mut Vec<u8>,
}

impl<R: Read> Read for Kept<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = SCAN_LIMIT.saturating_sub(self.kept.len()).min(n);
        self.kept.extend_from_slice(&buf[..room]);
        Ok(n)
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
    /// The first file found to be a secret.
    secret: Option<SecretFile>,
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
                let mut kept = Vec::new();
                // A sparse file's content holds only its data extents: the holes read as zeros.
                match &node.extra.extents {
                    Some(extents) => {
                        let reader = crate::tree::sparse::Expand::new(reader, extents, *size);
                        let reader = Kept { inner: reader.take(*size), kept: &mut kept };
                        self.out.append(&header, reader)?;
                    }
                    None => {
                        self.out.append(&header, Kept { inner: reader.take(*size), kept: &mut kept })?;
                    }
                }
                self.judge(path, &node.name, &kept, *size);
                Ok(())
            }
        }
    }

    /// Notes the file at `path` when it is the first secret found: by its name, or by its
    /// content when the whole file was kept (a save reads no more for its content rules).
    fn judge(&mut self, path: &[u8], name: &[u8], kept: &[u8], size: u64) {
        use crate::targets::dir::secrets::{by_content, by_name};
        if self.secret.is_some() {
            return;
        }
        let whole = size <= SCAN_LIMIT as u64;
        let rule = by_name(path, name).or_else(|| whole.then(|| by_content(path, name, kept)).flatten());
        if let Some(rule) = rule {
            self.secret =
                Some(SecretFile { path: String::from_utf8_lossy(path).into_owned(), rule: rule.to_owned() });
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
        // Created as any new file of the user's (0666 less the umask) to learn that mode, then
        // made 0600 before a byte is written; the mode is given back at the end unless a secret
        // went in.
        let tmp = tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .at("create a file beside", &options.to)?;
        let user_mode = tmp.as_file().metadata().at("read the mode of", tmp.path())?.permissions();
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o600)).at("restrict", tmp.path())?;
        let file = tmp.as_file().try_clone().at("write", tmp.path())?;
        let sink: Box<dyn Write> = match compression {
            "gzip" => Box::new(flate2::write::GzEncoder::new(file, flate2::Compression::fast())),
            "zstd" => Box::new(zstd::Encoder::new(file, 3).at("write", tmp.path())?.auto_finish()),
            _ => Box::new(file),
        };
        let mut emit =
            Emit { store: self, out: tar::Builder::new(sink), link_to, entries: 0, bytes: 0, secret: None };
        emit.entry(b"", &root.top, true).at("write", tmp.path())?;
        if let NodeKind::Dir { tree } = &root.top.kind {
            emit.dir(b"", tree)?;
        }
        let (entries, bytes, secret) = (emit.entries, emit.bytes, emit.secret.take());
        let mut sink = emit.out.into_inner().at("write", tmp.path())?;
        sink.flush().at("write", tmp.path())?;
        drop(sink);
        if secret.is_none() {
            tmp.as_file().set_permissions(user_mode).at("set the mode of", tmp.path())?;
        }
        tmp.as_file().sync_data().at("flush", tmp.path())?;
        tmp.persist(&options.to).map_err(|e| Error::io("write", &options.to, e.error))?;
        Ok(ExportResult {
            snapshot,
            file: options.to.clone(),
            compression: compression.into(),
            entries,
            bytes,
            secret,
        })
    }
}
