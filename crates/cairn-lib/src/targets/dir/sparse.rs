//! Sparse files on disk: finding a file's data extents (SEEK_DATA / SEEK_HOLE) so only they are
//! read and stored, and reading those extents back to back.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileExt, MetadataExt};

use rustix::fs::SeekFrom;
use rustix::io::Errno;

/// The data extents of `file` as (offset, length), or `None` when it has no holes. A file with
/// as many blocks as its size needs is taken as dense without a syscall, so ordinary files cost
/// nothing more than before.
pub(crate) fn data_extents(
    file: &File,
    meta: &std::fs::Metadata,
) -> std::io::Result<Option<Vec<(u64, u64)>>> {
    let size = meta.size();
    if size == 0 || meta.blocks().saturating_mul(512) >= size {
        return Ok(None);
    }
    let mut extents = Vec::new();
    let mut pos = 0;
    while pos < size {
        let start = match rustix::fs::seek(file, SeekFrom::Data(pos)) {
            Ok(start) => start,
            // No data past `pos`: the rest is a hole.
            Err(Errno::NXIO) => break,
            // A file system without SEEK_DATA: read the file whole, as before.
            Err(Errno::INVAL | Errno::OPNOTSUPP) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if start >= size {
            break;
        }
        let end = rustix::fs::seek(file, SeekFrom::Hole(start))?.min(size);
        extents.push((start, end - start));
        pos = end;
    }
    rustix::fs::seek(file, SeekFrom::Start(0))?;
    if extents == [(0, size)] {
        return Ok(None);
    }
    Ok(Some(extents))
}

/// Reads the given extents of a file back to back (what a sparse node's content holds).
pub(crate) struct ExtentReader<'a> {
    file: &'a File,
    extents: &'a [(u64, u64)],
    next: usize,
    /// Bytes of extent `next` read so far.
    done: u64,
}

impl<'a> ExtentReader<'a> {
    pub(crate) fn new(file: &'a File, extents: &'a [(u64, u64)]) -> Self {
        Self { file, extents, next: 0, done: 0 }
    }
}

impl Read for ExtentReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(&(off, len)) = self.extents.get(self.next) {
            if self.done < len {
                let want = (len - self.done).min(buf.len() as u64) as usize;
                let n = self.file.read_at(&mut buf[..want], off + self.done)?;
                if n == 0 {
                    // The file shrank while it was read; the caller's stat check notices.
                    return Ok(0);
                }
                self.done += n as u64;
                return Ok(n);
            }
            self.next += 1;
            self.done = 0;
        }
        Ok(0)
    }
}
