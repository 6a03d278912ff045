//! The bytes of a sparse file node: its `content` holds only the data extents, back to back;
//! these helpers map that stream onto file offsets (holes read as zeros).

use std::io::Read;

/// Reads a sparse file's logical bytes from `data` (its extents' bytes back to back): zeros in
/// the holes, up to `size`.
pub struct Expand<R> {
    data: R,
    extents: Vec<(u64, u64)>,
    size: u64,
    /// The logical offset reached.
    pos: u64,
    /// The extent `pos` is in or before.
    next: usize,
}

impl<R: Read> Expand<R> {
    /// Reads `data` as the file of these `extents`, `size` bytes long.
    pub fn new(data: R, extents: &[(u64, u64)], size: u64) -> Self {
        Self { data, extents: extents.to_vec(), size, pos: 0, next: 0 }
    }
}

impl<R: Read> Read for Expand<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(&(off, len)) = self.extents.get(self.next) {
            if self.pos < off + len {
                break;
            }
            self.next += 1;
        }
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let (hole_end, data_end) = match self.extents.get(self.next) {
            Some(&(off, len)) => (off.min(self.size), (off + len).min(self.size)),
            None => (self.size, self.size),
        };
        if self.pos < hole_end {
            let n = (hole_end - self.pos).min(buf.len() as u64) as usize;
            buf[..n].fill(0);
            self.pos += n as u64;
            return Ok(n);
        }
        let want = (data_end - self.pos).min(buf.len() as u64) as usize;
        let n = self.data.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "a sparse file's stored data is shorter than its extents",
            ));
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// Places a stream of extent bytes (back to back) at their offsets: yields, for each piece of
/// `chunk`, the file offset it goes to.
#[derive(Debug, Default)]
pub struct Placer {
    next: usize,
    /// Bytes of extent `next` already placed.
    done: u64,
}

impl Placer {
    /// Splits `chunk` over `extents` from where the last call stopped; calls `put(offset, bytes)`
    /// for each piece. Bytes past the last extent are refused (the node is damaged).
    pub fn place<E>(
        &mut self,
        extents: &[(u64, u64)],
        mut chunk: &[u8],
        mut put: impl FnMut(u64, &[u8]) -> Result<(), E>,
        overflow: impl Fn() -> E,
    ) -> Result<(), E> {
        while !chunk.is_empty() {
            let Some(&(off, len)) = extents.get(self.next) else {
                return Err(overflow());
            };
            let room = (len - self.done).min(chunk.len() as u64) as usize;
            if room > 0 {
                put(off + self.done, &chunk[..room])?;
            }
            self.done += room as u64;
            chunk = &chunk[room..];
            if self.done == len {
                self.next += 1;
                self.done = 0;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_read_as_zeros_and_data_lands_at_its_offsets() {
        let extents = [(2, 3), (8, 2)];
        let mut out = Vec::new();
        Expand::new(&b"abcde"[..], &extents, 12).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"\0\0abc\0\0\0de\0\0");

        let mut file = vec![0u8; 12];
        let mut placer = Placer::default();
        for piece in [&b"ab"[..], b"cd", b"e"] {
            placer
                .place(
                    &extents,
                    piece,
                    |off, bytes| {
                        file[off as usize..off as usize + bytes.len()].copy_from_slice(bytes);
                        Ok::<(), ()>(())
                    },
                    || (),
                )
                .unwrap();
        }
        assert_eq!(file, out);
        assert!(placer.place(&extents, b"x", |_, _| Ok(()), || ()).is_err());
    }
}
