//! GNU sparse files in an imported archive: where a file entry's stored bytes go in the file.
//!
//! GNU tar (and bsdtar) store a sparse file's data extents back to back and describe where each
//! lies in one of four ways: pax records (`GNU.sparse.offset`/`numbytes` pairs, format 0.0, or
//! one `GNU.sparse.map`, 0.1), a map at the head of the entry's data (1.0, the default of
//! `tar --format=posix --sparse`), or the old GNU header's own table (type `S`, continued in
//! extension blocks). Each becomes the extents of a sparse node, whose content is exactly those
//! bytes back to back, so nothing is expanded and holes stay holes. A map that does not add up
//! (overlaps, runs past the file, or lists more or fewer bytes than the entry holds) refuses
//! the archive in one line naming the entry and the format.

use std::io::{BufRead, Read};

use super::entries::shown;
use crate::error::{Error, Result};

/// Longer sparse maps are refused: they are held in memory, and a real one lists a few
/// extents per hole (as the pax records that carry the other formats are bounded too).
pub(crate) const MAX_MAP: u64 = 1024 * 1024;

/// What a file entry's data is: the file's bytes, or the data extents of a sparse file.
pub(crate) struct Layout {
    /// `0.0`, `0.1`, `1.0` or `old GNU` (for messages); `None` for an ordinary file.
    pub format: Option<&'static str>,
    /// The file's size (a sparse file's size with its holes).
    pub size: u64,
    /// The data extents as (offset, length); `None` until read for format 1.0, whose map is at
    /// the head of the data, and for an ordinary file.
    pub extents: Option<Vec<(u64, u64)>>,
}

/// The name a sparse file's pax records give it (formats 0.1 and 1.0 put a made-up
/// `GNUSparseFile.PID/NAME` in the header).
pub(crate) fn pax_name(pax: &[(Vec<u8>, Vec<u8>)]) -> Option<Vec<u8>> {
    value(pax, b"GNU.sparse.name").map(<[u8]>::to_vec)
}

fn value<'a>(pax: &'a [(Vec<u8>, Vec<u8>)], key: &[u8]) -> Option<&'a [u8]> {
    pax.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
}

fn refuse(raw: &[u8], format: &str, what: &str) -> Error {
    Error::invalid(format!(
        "archive entry {:?} is a GNU sparse file (format {format}) whose {what}; refusing the archive (it is damaged or made to mislead)",
        shown(raw)
    ))
}

fn number(raw: &[u8], format: &str, text: &[u8]) -> Result<u64> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| refuse(raw, format, &format!("map holds {:?}, not a number", shown(text))))
}

/// The layout the pax records of a file entry of `size` stored bytes give it.
pub(crate) fn from_pax(pax: &[(Vec<u8>, Vec<u8>)], raw: &[u8], size: u64) -> Result<Layout> {
    let plain = Layout { format: None, size, extents: None };
    if !pax.iter().any(|(k, _)| k.starts_with(b"GNU.sparse.")) {
        return Ok(plain);
    }
    if let Some(major) = value(pax, b"GNU.sparse.major") {
        let minor = value(pax, b"GNU.sparse.minor").unwrap_or(b"0");
        if (major, minor) != (&b"1"[..], &b"0"[..]) {
            return Err(Error::invalid(format!(
                "archive entry {:?} is a GNU sparse file in format {}.{}, which cairn does not read; refusing the archive (cairn reads GNU sparse formats 0.0, 0.1 and 1.0)",
                shown(raw),
                shown(major),
                shown(minor)
            )));
        }
        let Some(real) = value(pax, b"GNU.sparse.realsize") else {
            return Err(refuse(raw, "1.0", "size is missing (no GNU.sparse.realsize record)"));
        };
        return Ok(Layout { format: Some("1.0"), size: number(raw, "1.0", real)?, extents: None });
    }
    let (format, numbers) = match value(pax, b"GNU.sparse.map") {
        Some(map) => ("0.1", map.split(|&b| b == b',').filter(|n| !n.is_empty()).collect::<Vec<_>>()),
        // Format 0.0 repeats the two keys once per extent, in order.
        None => (
            "0.0",
            pax.iter()
                .filter(|(k, _)| k == b"GNU.sparse.offset" || k == b"GNU.sparse.numbytes")
                .map(|(_, v)| v.as_slice())
                .collect(),
        ),
    };
    let Some(real) = value(pax, b"GNU.sparse.size").or(value(pax, b"GNU.sparse.realsize")) else {
        return Err(refuse(raw, format, "size is missing (no GNU.sparse.size record)"));
    };
    if numbers.len() % 2 != 0 {
        return Err(refuse(raw, format, "map has an offset without a length"));
    }
    let numbers: Vec<u64> = numbers.into_iter().map(|n| number(raw, format, n)).collect::<Result<_>>()?;
    let extents = numbers.chunks(2).map(|pair| (pair[0], pair[1])).collect();
    Ok(Layout { format: Some(format), size: number(raw, format, real)?, extents: Some(extents) })
}

/// The layout of an old GNU sparse entry (type `S`): the header's table of four extents, then
/// as many extension blocks of 21 as it says follow, each read by `next_block`.
pub(crate) fn old_gnu(
    header: &tar::Header,
    raw: &[u8],
    mut next_block: impl FnMut() -> std::io::Result<[u8; 512]>,
) -> Result<Layout> {
    let format = "old GNU";
    let gnu = header.as_gnu().ok_or_else(|| refuse(raw, format, "header is not a GNU header"))?;
    let bad = |what: &str| refuse(raw, format, what);
    let size = gnu.real_size().map_err(|_| bad("real size is not a number"))?;
    let mut extents = Vec::new();
    let mut add = |entry: &tar::GnuSparseHeader| -> Result<()> {
        if !entry.is_empty() {
            let offset = entry.offset().map_err(|_| bad("map holds an offset that is not a number"))?;
            let length = entry.length().map_err(|_| bad("map holds a length that is not a number"))?;
            if extents.len() as u64 >= MAX_MAP / 24 {
                return Err(bad("map is longer than cairn reads"));
            }
            extents.push((offset, length));
        }
        Ok(())
    };
    for entry in &gnu.sparse {
        add(entry)?;
    }
    let mut more = gnu.is_extended();
    while more {
        let block = next_block().map_err(|_| bad("map's extension blocks are cut short"))?;
        for field in block[..504].chunks(24) {
            let mut entry = tar::GnuSparseHeader { offset: [0; 12], numbytes: [0; 12] };
            entry.offset.copy_from_slice(&field[..12]);
            entry.numbytes.copy_from_slice(&field[12..]);
            add(&entry)?;
        }
        more = block[504] != 0;
    }
    Ok(Layout { format: Some(format), size, extents: Some(extents) })
}

/// Reads the map at the head of a format 1.0 entry's data: the number of extents, then an
/// offset and a length per extent, one decimal number a line, padded to a 512-byte block.
/// Returns the extents and the bytes the map took (padding included).
pub(crate) fn read_map(input: &mut impl BufRead, raw: &[u8]) -> Result<(Vec<(u64, u64)>, u64)> {
    let mut taken = 0u64;
    let mut line = Vec::new();
    let mut next = |taken: &mut u64| -> Result<u64> {
        line.clear();
        let n = input
            .by_ref()
            .take(MAX_MAP.saturating_sub(*taken))
            .read_until(b'\n', &mut line)
            .map_err(|e| refuse(raw, "1.0", &format!("map could not be read ({e})")))?;
        *taken += n as u64;
        if line.pop() != Some(b'\n') {
            return Err(refuse(raw, "1.0", "map is cut short or longer than cairn reads"));
        }
        number(raw, "1.0", &line)
    };
    let count = next(&mut taken)?;
    if count > MAX_MAP / 4 {
        return Err(refuse(raw, "1.0", "map is longer than cairn reads"));
    }
    let mut extents = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let offset = next(&mut taken)?;
        extents.push((offset, next(&mut taken)?));
    }
    let padding = (512 - taken % 512) % 512;
    let skipped = std::io::copy(&mut input.by_ref().take(padding), &mut std::io::sink())
        .map_err(|e| refuse(raw, "1.0", &format!("map could not be read ({e})")))?;
    if skipped != padding {
        return Err(refuse(raw, "1.0", "map is cut short"));
    }
    Ok((extents, taken + padding))
}

/// Checks that `extents` lie in order inside a file of `size` bytes and hold `stored` bytes
/// in all; returns them without empty extents, or `None` when they cover the whole file.
pub(crate) fn checked(
    extents: Vec<(u64, u64)>,
    size: u64,
    stored: u64,
    raw: &[u8],
    format: &str,
) -> Result<Option<Vec<(u64, u64)>>> {
    let mut end = 0u64;
    let mut total = 0u64;
    let mut kept = Vec::with_capacity(extents.len());
    for (offset, length) in extents {
        let stop = offset.checked_add(length).filter(|&stop| offset >= end && stop <= size);
        let Some(stop) = stop else {
            return Err(refuse(
                raw,
                format,
                "map has extents that overlap, are out of order or run past the file's end",
            ));
        };
        end = stop;
        total += length;
        if length > 0 {
            kept.push((offset, length));
        }
    }
    if total != stored {
        return Err(refuse(
            raw,
            format,
            &format!("map lists {total} bytes of data but the entry holds {stored}"),
        ));
    }
    Ok(if kept == [(0, size)] { None } else { Some(kept) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pax(records: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        records.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
    }

    #[test]
    fn the_pax_formats_give_the_same_extents() {
        let v00 = pax(&[
            ("GNU.sparse.size", "100"),
            ("GNU.sparse.offset", "0"),
            ("GNU.sparse.numbytes", "5"),
            ("GNU.sparse.offset", "50"),
            ("GNU.sparse.numbytes", "5"),
        ]);
        let v01 = pax(&[("GNU.sparse.size", "100"), ("GNU.sparse.map", "0,5,50,5")]);
        for records in [v00, v01] {
            let layout = from_pax(&records, b"f", 10).unwrap();
            assert_eq!((layout.size, layout.extents), (100, Some(vec![(0, 5), (50, 5)])));
        }
        let v10 = pax(&[("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.realsize", "9")]);
        let layout = from_pax(&v10, b"f", 512).unwrap();
        assert_eq!((layout.format, layout.size, layout.extents), (Some("1.0"), 9, None));
        let v20 = pax(&[("GNU.sparse.major", "2"), ("GNU.sparse.minor", "0")]);
        let err = from_pax(&v20, b"f", 0).err().unwrap().to_string();
        assert!(err.contains("format 2.0, which cairn does not read"), "{err}");
    }

    #[test]
    fn a_format_1_map_is_read_with_its_padding() {
        let mut data = b"2\n0\n3\n10\n2\n".to_vec();
        data.resize(512, 0);
        data.extend_from_slice(b"abcde");
        let mut input = &data[..];
        let (extents, taken) = read_map(&mut input, b"f").unwrap();
        assert_eq!((extents, taken), (vec![(0, 3), (10, 2)], 512));
        assert_eq!(input, b"abcde");
        assert!(read_map(&mut &b"1\n0\n"[..], b"f").is_err());
    }

    #[test]
    fn a_map_that_does_not_add_up_is_refused() {
        assert_eq!(
            checked(vec![(0, 3), (10, 2), (12, 0)], 12, 5, b"f", "0.1").unwrap(),
            Some(vec![(0, 3), (10, 2)])
        );
        assert_eq!(checked(vec![(0, 12)], 12, 12, b"f", "0.1").unwrap(), None);
        assert_eq!(checked(vec![], 12, 0, b"f", "0.1").unwrap(), Some(vec![]));
        for (extents, stored) in [(vec![(0, 3), (2, 2)], 5), (vec![(10, 5)], 5), (vec![(0, 3)], 4)] {
            assert!(checked(extents, 12, stored, b"f", "0.1").is_err());
        }
        assert!(checked(vec![(u64::MAX, 2)], 12, 2, b"f", "0.1").is_err());
    }
}
