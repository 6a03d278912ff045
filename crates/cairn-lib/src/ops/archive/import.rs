//! `cairn import FILE`: a tar archive (plain, gzip or zstd) as a new directory snapshot.
//!
//! Pipeline: take the store lock alone → sniff the compression → read the archive's members
//! one by one (raw, so that GNU long names and pax records are read only up to a bound) →
//! check each ([`super::entries`]) before reading its data → stream file data through the blob
//! writer (a GNU sparse file's data extents only, [`super::sparse`]) → build the Merkle tree
//! bottom-up → commit the record. Nothing is extracted to disk.
//! A refused or failed import takes back the packs it wrote, so the store is as it was.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::entries::{Checker, Seen, normalize, shown};
use super::sparse;
use crate::Repository;
use crate::error::{Error, IoContext, Result};
use crate::id::{ObjectId, SnapshotId};
use crate::ops::resolve::CallContext;
use crate::snapshot::{Snapshot, SnapshotStats};
use crate::store::chunker::{WHOLE_FILE_LIMIT, store_chunks};
use crate::store::pack::BlobKind;
use crate::store::writer::BlobWriter;
use crate::tree::{self, DirRoot, Extra, Node, NodeKind, Tree};

/// GNU long names and pax records longer than this are refused: real ones are a few hundred
/// bytes, and the tar reader holds them in memory.
const MAX_EXTENSION: u64 = 1024 * 1024;

/// What to import.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ImportOptions {
    /// The archive: `.tar`, `.tar.gz`/`.tgz` or `.tar.zst` (the compression is read from its
    /// first bytes, not its name).
    #[cfg_attr(feature = "clap", arg(value_name = "FILE"))]
    pub file: PathBuf,
    /// The directory the snapshot is of: an in-place restore of it writes there. It need not
    /// exist. Empty: the archive's name without its extensions, in the current directory.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DIR", default_value = "", hide_default_value = true)
    )]
    #[serde(default)]
    pub target: String,
    /// A name for the snapshot, unique per session and target.
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub name: Option<String>,
    /// Refuse the archive once its entries declare more bytes than this (default: the
    /// `import.max_bytes` setting, 8 GiB).
    #[cfg_attr(feature = "clap", arg(long, value_name = "BYTES"))]
    pub max_bytes: Option<u64>,
    /// Refuse the archive once it holds more entries than this (default: the
    /// `import.max_entries` setting, 500000).
    #[cfg_attr(feature = "clap", arg(long, value_name = "COUNT"))]
    pub max_entries: Option<u64>,
    /// The session to import into (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// The snapshot an import made.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ImportResult {
    /// The snapshot record.
    #[serde(flatten)]
    pub snapshot: Snapshot,
    /// The archive that was read.
    pub file: PathBuf,
    /// `none`, `gzip` or `zstd`.
    pub compression: String,
}

/// One accepted non-directory entry, or a directory's own metadata.
struct Item {
    kind: NodeKind,
    mode: u32,
    uid: u32,
    gid: u32,
    mtime_ns: i64,
    /// A sparse file's data extents (its content holds only their bytes).
    extents: Option<Vec<(u64, u64)>>,
}

/// The archive's byte stream, shared by the tar reader and the import: an old GNU sparse
/// entry's extension blocks sit between its header and its data, where the tar reader (in raw
/// mode) expects data, so the import takes them from the stream itself before the tar reader
/// reads on. The tar reader keeps its own count of what it read and reads nothing ahead.
struct Shared<'a>(RefCell<Box<dyn Read + 'a>>);

impl Read for &Shared<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().read(buf)
    }
}

/// Opens `file` with the decompressor its first bytes call for.
pub(crate) fn open_archive(file: &Path) -> Result<(Box<dyn Read>, &'static str)> {
    let mut f = std::fs::File::open(file).at("open", file)?;
    let mut magic = [0u8; 4];
    let n = f.read(&mut magic).at("read", file)?;
    let head = std::io::Cursor::new(magic[..n].to_vec()).chain(f);
    Ok(match magic {
        [0x1f, 0x8b, ..] => (Box::new(flate2::read::MultiGzDecoder::new(head)), "gzip"),
        [0x28, 0xb5, 0x2f, 0xfd] => (Box::new(zstd::Decoder::new(head).at("read", file)?), "zstd"),
        _ => (Box::new(head), "none"),
    })
}

fn parent_and_name(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (b"", path),
    }
}

/// An owner id: the pax record's (which holds ids too large for the header, whose own field
/// is then not read), else the header's.
fn owner(pax: Option<&[u8]>, header: impl FnOnce() -> Result<u64>, raw: &[u8], what: &str) -> Result<u32> {
    let id = match pax {
        Some(v) => std::str::from_utf8(v).ok().and_then(|v| v.parse::<u64>().ok()),
        None => Some(header()?),
    };
    id.and_then(|id| u32::try_from(id).ok()).ok_or_else(|| {
        Error::invalid(format!(
            "archive entry {:?} has a {what} that is not a number below 2^32; refusing the archive",
            shown(raw)
        ))
    })
}

fn mtime_ns(pax_mtime: Option<&[u8]>, header_secs: u64) -> i64 {
    let parsed = pax_mtime.and_then(|v| std::str::from_utf8(v).ok()).and_then(|v| {
        let (secs, frac) = v.split_once('.').unwrap_or((v, "0"));
        let digits: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
        Some(secs.parse::<i64>().ok()?.checked_mul(1_000_000_000)? + digits.parse::<i64>().ok()?)
    });
    parsed.unwrap_or_else(|| (header_secs as i64).saturating_mul(1_000_000_000))
}

impl ImportOptions {
    /// The directory the snapshot is of: the target given, or by default one named after the
    /// archive (`proj.tar.gz` → `proj`, in the current directory), so that an in-place restore
    /// of it extracts the archive as `tar xf` would into that directory.
    pub fn target_or_default(&self) -> String {
        if !self.target.is_empty() {
            return self.target.clone();
        }
        let name = self.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let lower = name.to_ascii_lowercase();
        let stem_len = [".tar.gz", ".tar.zst", ".tgz", ".tzst", ".tar"]
            .iter()
            .find(|ext| lower.ends_with(*ext) && lower.len() > ext.len())
            .map(|ext| name.len() - ext.len())
            .unwrap_or(name.len());
        name[..stem_len].to_owned()
    }
}

impl Repository {
    /// Imports a tar archive as a new directory snapshot of `options.target` (see
    /// [`ImportOptions::target_or_default`]).
    pub fn import(&self, options: &ImportOptions, context: &CallContext) -> Result<ImportResult> {
        if let Some(name) = &options.name {
            crate::name::validate_name("snapshot", name)?;
        }
        let key = target_key(&options.target_or_default())?;
        let session = self.call_session(options.session.as_deref(), context)?;
        let max_bytes = options.max_bytes.unwrap_or(self.config().import_max_bytes());
        let max_entries = options.max_entries.unwrap_or(self.config().import_max_entries());
        let (reader, compression) = open_archive(&options.file)?;
        // Alone in the store: a refused import deletes its packs, and no other writer may have
        // deduplicated against them meanwhile.
        let _lock = self.lock_store_exclusive("cairn import")?;
        let started = std::time::Instant::now();
        let writer = BlobWriter::new(self);
        let built = read_into(&writer, reader, &options.file, Checker::new(max_bytes, max_entries))
            .and_then(|(root, stats)| writer.finish().map(|()| (root, stats)));
        let (root, mut stats) = match built {
            Ok(done) => done,
            Err(e) => {
                writer.discard()?;
                return Err(e);
            }
        };
        (stats.new_bytes, stats.stored_bytes) = writer.totals();
        stats.duration_ms = started.elapsed().as_millis() as u64;
        let snapshot = Snapshot {
            id: SnapshotId::new(),
            name: options.name.clone(),
            description: Some(format!("imported from {}", options.file.display())),
            target: key,
            kind: crate::targets::TargetKind::Dir,
            session: session.id,
            created_at: crate::time::now_rfc3339(),
            safety: false,
            stats,
            not_covered: Default::default(),
            details: serde_json::json!({ "imported_from": options.file, "no_ignore": true, "include_secrets": true }),
            root: Some(root),
        };
        if let Err(e) = self.commit_snapshot(&snapshot, false) {
            writer.discard()?;
            return Err(e);
        }
        Ok(ImportResult { snapshot, file: options.file.clone(), compression: compression.into() })
    }
}

/// The absolute path of an import's target directory, which need not exist (its parent must).
fn target_key(target: &str) -> Result<String> {
    let path = Path::new(target.strip_prefix("dir:").unwrap_or(target));
    if target.is_empty() {
        return Err(Error::invalid(
            "no target directory for the import; pass the directory it is a snapshot of",
        ));
    }
    if path.exists() {
        return Ok(crate::targets::canonical_dir(path)?.to_string_lossy().into_owned());
    }
    let absolute = std::path::absolute(path).at("resolve", path)?;
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(Error::invalid(format!("{} cannot be a target directory; pass another", path.display())));
    };
    Ok(crate::targets::canonical_dir(parent)?.join(name).to_string_lossy().into_owned())
}

/// Reads every member of the archive, storing file data, and writes the tree.
pub(crate) fn read_into(
    writer: &BlobWriter<'_>,
    reader: Box<dyn Read + '_>,
    file: &Path,
    mut check: Checker,
) -> Result<(ObjectId, SnapshotStats)> {
    let shared = Shared(RefCell::new(reader));
    let mut archive = tar::Archive::new(&shared);
    let mut items: BTreeMap<Vec<u8>, Item> = BTreeMap::new();
    let mut links: HashMap<Vec<u8>, Vec<Vec<u8>>> = HashMap::new();
    let mut stats = SnapshotStats::default();
    // What the extension members before an entry said about it.
    let (mut long_name, mut long_link): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
    let mut pax: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let bad = |e: std::io::Error| {
        Error::invalid(format!(
            "{} is not a readable tar archive ({e}); pass a .tar, .tar.gz or .tar.zst",
            file.display()
        ))
    };
    for entry in archive.entries().map_err(bad)?.raw(true) {
        let mut entry = entry.map_err(bad)?;
        let header = entry.header().clone();
        let kind = header.entry_type();
        let header_name = header.path_bytes().into_owned();
        check.count(&header_name)?;
        let size = header.entry_size().map_err(bad)?;
        if matches!(kind.as_byte(), b'L' | b'K' | b'x' | b'g') {
            if size > MAX_EXTENSION {
                return Err(Error::invalid(format!(
                    "archive member {:?} is a {size}-byte name or pax record; refusing the archive (real ones are far smaller)",
                    shown(&header_name)
                )));
            }
            let mut data = Vec::with_capacity(size as usize);
            entry.read_to_end(&mut data).map_err(bad)?;
            match kind.as_byte() {
                b'L' => long_name = Some(data.strip_suffix(b"\0").unwrap_or(&data).to_vec()),
                b'K' => long_link = Some(data.strip_suffix(b"\0").unwrap_or(&data).to_vec()),
                b'x' => {
                    for ext in tar::PaxExtensions::new(&data) {
                        let ext = ext.map_err(bad)?;
                        pax.push((ext.key_bytes().to_vec(), ext.value_bytes().to_vec()));
                    }
                }
                _ => {} // a global pax header sets defaults cairn does not use
            }
            continue;
        }
        let pax_value = |key: &[u8]| pax.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let raw = sparse::pax_name(&pax).or(pax_value(b"path")).or(long_name.take()).unwrap_or(header_name);
        let link = pax_value(b"linkpath")
            .or(long_link.take())
            .or_else(|| header.link_name_bytes().map(|l| l.into_owned()));
        if pax_value(b"size").is_some_and(|s| s != size.to_string().as_bytes()) {
            return Err(Error::invalid(format!(
                "archive entry {:?} gives its size in a pax record; refusing the archive (cairn imports entries whose header holds their size)",
                shown(&raw)
            )));
        }
        let path = normalize(&raw)?;
        // A V7 archive has no directory type: a file entry whose name ends in `/` is one.
        let v7_dir = matches!(kind.as_byte(), b'0' | b'\0' | b'7') && raw.ends_with(b"/");
        if path.is_empty() && kind.as_byte() != b'5' && !v7_dir {
            return Err(Error::invalid(format!(
                "archive entry {:?} names the top directory but is not a directory; refusing the archive",
                shown(&raw)
            )));
        }
        let mode = header.mode().map_err(bad)? & 0o7777;
        let mtime = mtime_ns(pax_value(b"mtime").as_deref(), header.mtime().map_err(bad)?);
        let uid = owner(pax_value(b"uid").as_deref(), || header.uid().map_err(bad), &raw, "uid")?;
        let gid = owner(pax_value(b"gid").as_deref(), || header.gid().map_err(bad), &raw, "gid")?;
        let layout = sparse::from_pax(&pax, &raw, size)?;
        pax.clear();
        let item = |kind| Item { kind, mode, uid, gid, mtime_ns: mtime, extents: None };
        let node = match kind.as_byte() {
            b'0' | b'\0' | b'7' | b'S' if !v7_dir => {
                let layout = match kind.as_byte() {
                    b'S' => sparse::old_gnu(&header, &raw, || {
                        let mut block = [0u8; 512];
                        (&shared).read_exact(&mut block).map(|()| block)
                    })?,
                    _ => layout,
                };
                check.declare(&raw, layout.size)?;
                check.accept(&raw, &path, Seen::File)?;
                let mut input = BufReader::new(&mut entry);
                let (extents, stored) = match layout.format {
                    None => (None, size),
                    Some(format) => {
                        let (extents, map_bytes) = match layout.extents {
                            Some(extents) => (extents, 0),
                            None => sparse::read_map(&mut input, &raw)?,
                        };
                        let stored = size.checked_sub(map_bytes).ok_or_else(|| {
                            Error::invalid(format!(
                                "archive entry {:?} is a GNU sparse file (format {format}) whose map is longer than the entry; refusing the archive",
                                shown(&raw)
                            ))
                        })?;
                        (sparse::checked(extents, layout.size, stored, &raw, format)?, stored)
                    }
                };
                let content = store_data(writer, &mut input, stored).map_err(|e| match e {
                    Some(e) => e,
                    None => bad(std::io::Error::other(format!("entry {:?} is cut short", shown(&raw)))),
                })?;
                stats.files += 1;
                stats.bytes += layout.size;
                Item { extents, ..item(NodeKind::File { size: layout.size, content }) }
            }
            b'0' | b'\0' | b'7' | b'5' => {
                check.accept(&raw, &path, Seen::Dir)?;
                item(NodeKind::Dir { tree: ObjectId::of(b"") })
            }
            b'2' => {
                let target = link.unwrap_or_default();
                check.accept(&raw, &path, Seen::Symlink)?;
                stats.symlinks += 1;
                item(NodeKind::Symlink { target })
            }
            b'1' => {
                let target_raw = link.unwrap_or_default();
                // A target that is absolute or climbs out is no file of the archive.
                let target = normalize(&target_raw).unwrap_or_else(|_| b"/".to_vec());
                check.link_target(&raw, &target_raw, &target)?;
                check.accept(&raw, &path, Seen::File)?;
                let Some(Item { kind: NodeKind::File { size, content }, extents, .. }) = items.get(&target)
                else {
                    return Err(Error::corrupt("a hard link's target vanished from the import"));
                };
                stats.files += 1;
                stats.bytes += size;
                links.entry(target.clone()).or_insert_with(|| vec![target.clone()]).push(path.clone());
                Item {
                    extents: extents.clone(),
                    ..item(NodeKind::File { size: *size, content: content.clone() })
                }
            }
            b'3' | b'4' | b'6' => {
                let what = match kind.as_byte() {
                    b'3' => "character device",
                    b'4' => "block device",
                    _ => "fifo",
                };
                return Err(Error::invalid(format!(
                    "archive entry {:?} is a {what}; refusing the archive (cairn stores no special files)",
                    shown(&raw)
                )));
            }
            other => {
                return Err(Error::invalid(format!(
                    "archive entry {:?} has type {:?}, which cairn does not import; refusing the archive",
                    shown(&raw),
                    char::from(other)
                )));
            }
        };
        items.insert(path, node);
    }
    let mut hardlinks: Vec<Vec<Vec<u8>>> = links.into_values().collect();
    for group in &mut hardlinks {
        group.sort();
    }
    hardlinks.sort();
    let (top, dirs) = build_tree(writer, items)?;
    stats.dirs = dirs;
    Ok((tree::write_root(writer, &DirRoot { top, hardlinks })?, stats))
}

/// Stores the data of one entry: `Err(None)` when the archive ends before `size` bytes.
fn store_data(
    writer: &BlobWriter<'_>,
    entry: &mut impl Read,
    size: u64,
) -> std::result::Result<Vec<ObjectId>, Option<Error>> {
    let mut reader = entry.take(size);
    if size <= WHOLE_FILE_LIMIT {
        let mut data = Vec::with_capacity(size as usize);
        reader.read_to_end(&mut data).map_err(|_| None)?;
        if data.len() as u64 != size {
            return Err(None);
        }
        return writer.write(BlobKind::Data, &data).map(|id| vec![id]).map_err(Some);
    }
    let (ids, total) = store_chunks(writer, &mut reader).map_err(|_| None)?.map_err(Some)?;
    if total != size {
        return Err(None);
    }
    Ok(ids)
}

/// Writes every directory's tree, deepest first; returns the top node and the directory count.
fn build_tree(writer: &BlobWriter<'_>, items: BTreeMap<Vec<u8>, Item>) -> Result<(Node, u64)> {
    let mut dirs: BTreeMap<Vec<u8>, Option<Item>> = BTreeMap::new();
    let mut children: HashMap<Vec<u8>, Vec<Node>> = HashMap::new();
    for (path, item) in items {
        // Every parent is a directory, listed or not.
        let mut parent = parent_and_name(&path).0.to_vec();
        loop {
            dirs.entry(parent.clone()).or_insert(None);
            if parent.is_empty() {
                break;
            }
            parent = parent_and_name(&parent).0.to_vec();
        }
        if matches!(item.kind, NodeKind::Dir { .. }) {
            dirs.insert(path, Some(item));
        } else {
            let (parent, name) = parent_and_name(&path);
            let node = Node {
                name: name.to_vec(),
                kind: item.kind,
                mode: item.mode,
                uid: item.uid,
                gid: item.gid,
                mtime_ns: item.mtime_ns,
                extra: Extra { extents: item.extents, xattrs: Vec::new() },
            };
            children.entry(parent.to_vec()).or_default().push(node);
        }
    }
    let now = jiff::Timestamp::now().as_nanosecond() as i64;
    let mut order: Vec<(Vec<u8>, Option<Item>)> = dirs.into_iter().collect();
    order.sort_by_key(|(p, _)| {
        std::cmp::Reverse(if p.is_empty() { 0 } else { p.iter().filter(|&&b| b == b'/').count() + 1 })
    });
    let count = order.len() as u64;
    for (path, meta) in order {
        let mut nodes = children.remove(&path).unwrap_or_default();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        let tree = tree::write(writer, &Tree { nodes })?;
        let (parent, name) = parent_and_name(&path);
        let (mode, uid, gid, mtime_ns) =
            meta.map(|m| (m.mode, m.uid, m.gid, m.mtime_ns)).unwrap_or((0o755, 0, 0, now));
        let node = Node {
            name: name.to_vec(),
            kind: NodeKind::Dir { tree },
            mode,
            uid,
            gid,
            mtime_ns,
            extra: Default::default(),
        };
        if path.is_empty() {
            return Ok((Node { name: Vec::new(), ..node }, count));
        }
        children.entry(parent.to_vec()).or_default().push(node);
    }
    Err(Error::corrupt("an import built no top directory"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_target_is_the_archive_name_without_its_extensions() {
        let of = |file: &str, target: &str| {
            ImportOptions { file: file.into(), target: target.into(), ..ImportOptions::default() }
                .target_or_default()
        };
        assert_eq!(of("/tmp/proj.tar.gz", ""), "proj");
        assert_eq!(of("Proj.TGZ", ""), "Proj");
        assert_eq!(of("a.b.tar.zst", ""), "a.b");
        assert_eq!(of("plain", ""), "plain");
        assert_eq!(of(".tar", ""), ".tar");
        assert_eq!(of("proj.tar", "elsewhere"), "elsewhere");
    }
}
