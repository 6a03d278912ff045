//! The checks every entry of an imported archive passes before any of its bytes are stored:
//! a safe relative path, a kind cairn holds, a hard link to an earlier file of the archive, no
//! parent that the archive itself made a symlink, and the archive's size and entry limits.
//!
//! Each refusal is one sentence naming the entry, so a user can find it with `tar tvf`.

use std::collections::HashMap;

use crate::error::{Error, Result};

/// What an accepted path is in the tree being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    Dir,
    File,
    Symlink,
}

/// A path as printed in a refusal: lossy UTF-8 (quoted and escaped by the message).
pub(crate) fn shown(raw: &[u8]) -> String {
    // Messages quote it with `{:?}`, which escapes control characters once.
    String::from_utf8_lossy(raw).into_owned()
}

/// `raw` as a relative path of components, or a refusal that names it. An empty result is
/// the archive's top directory (`./`).
pub(crate) fn normalize(raw: &[u8]) -> Result<Vec<u8>> {
    if raw.contains(&0) {
        return Err(Error::invalid(format!(
            "archive entry {:?} has a NUL byte in its name; refusing the archive",
            shown(raw)
        )));
    }
    if raw.first() == Some(&b'/') {
        return Err(Error::invalid(format!(
            "archive entry {:?} has an absolute path; refusing the archive (entries must be relative)",
            shown(raw)
        )));
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in raw.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                return Err(Error::invalid(format!(
                    "archive entry {:?} has a `..` component; refusing the archive (it could land outside its directory)",
                    shown(raw)
                )));
            }
            _ => parts.push(part),
        }
    }
    Ok(parts.join(&b'/'))
}

/// The limits of one import, and what has been accepted so far.
pub(crate) struct Checker {
    pub max_bytes: u64,
    pub max_entries: u64,
    bytes: u64,
    entries: u64,
    seen: HashMap<Vec<u8>, Seen>,
}

impl Checker {
    pub(crate) fn new(max_bytes: u64, max_entries: u64) -> Self {
        Self { max_bytes, max_entries, bytes: 0, entries: 0, seen: HashMap::new() }
    }

    /// Counts one more archive member (extension headers included) against the entry limit.
    pub(crate) fn count(&mut self, raw: &[u8]) -> Result<()> {
        self.entries += 1;
        if self.entries > self.max_entries {
            return Err(Error::invalid(format!(
                "archive entry {:?} is past the limit of {} entries; refusing the archive (raise the import.max_entries setting or the max entries option to import it)",
                shown(raw),
                self.max_entries
            )));
        }
        Ok(())
    }

    /// Counts `size` declared bytes against the size limit, before any of them is read.
    pub(crate) fn declare(&mut self, raw: &[u8], size: u64) -> Result<()> {
        self.bytes = self.bytes.saturating_add(size);
        if self.bytes > self.max_bytes {
            return Err(Error::invalid(format!(
                "archive entry {:?} declares {size} bytes, past the limit of {} bytes for the whole archive; refusing the archive (raise the import.max_bytes setting or the max bytes option to import it)",
                shown(raw),
                self.max_bytes
            )));
        }
        Ok(())
    }

    /// Accepts `path` (normalized) as a new entry of kind `kind`.
    pub(crate) fn accept(&mut self, raw: &[u8], path: &[u8], kind: Seen) -> Result<()> {
        let mut at = 0;
        while let Some(slash) = path[at..].iter().position(|&b| b == b'/') {
            let parent = &path[..at + slash];
            match self.seen.get(parent) {
                Some(Seen::Symlink) => {
                    return Err(Error::invalid(format!(
                        "archive entry {:?} lies under {:?}, which the archive made a symlink; refusing the archive (it could write through the link)",
                        shown(raw),
                        shown(parent)
                    )));
                }
                Some(Seen::File) => {
                    return Err(Error::invalid(format!(
                        "archive entry {:?} lies under {:?}, which the archive made a file; refusing the archive",
                        shown(raw),
                        shown(parent)
                    )));
                }
                Some(Seen::Dir) => {}
                None => {
                    self.seen.insert(parent.to_vec(), Seen::Dir);
                }
            }
            at += slash + 1;
        }
        match self.seen.get(path) {
            // A directory named again (GNU tar lists one before its contents) changes nothing.
            Some(Seen::Dir) if kind == Seen::Dir => Ok(()),
            Some(_) => Err(Error::invalid(format!(
                "archive entry {:?} appears twice; refusing the archive (cairn will not guess which one is meant)",
                shown(raw)
            ))),
            None => {
                self.seen.insert(path.to_vec(), kind);
                Ok(())
            }
        }
    }

    /// Checks that a hard link at `raw` points to `target` (normalized), a file seen earlier.
    pub(crate) fn link_target(&self, raw: &[u8], target_raw: &[u8], target: &[u8]) -> Result<()> {
        if self.seen.get(target) == Some(&Seen::File) {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "archive entry {:?} is a hard link to {:?}, which is not a file earlier in the archive; refusing the archive (a hard link must not reach outside it)",
            shown(raw),
            shown(target_raw)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_or_refused_with_the_entry_named() {
        assert_eq!(normalize(b"./a//b/./c/").unwrap(), b"a/b/c");
        assert_eq!(normalize(b"./").unwrap(), b"");
        for bad in [&b"/etc/passwd"[..], b"a/../../x", b"..", b"a\0b"] {
            let err = normalize(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("{:?}", shown(bad))), "{err}");
        }
    }

    #[test]
    fn an_entry_under_a_symlink_of_the_archive_is_refused() {
        let mut c = Checker::new(10, 10);
        c.accept(b"link", b"link", Seen::Symlink).unwrap();
        let err = c.accept(b"link/x", b"link/x", Seen::File).unwrap_err().to_string();
        assert!(err.contains("which the archive made a symlink"), "{err}");
        c.accept(b"d/", b"d", Seen::Dir).unwrap();
        c.accept(b"d/f", b"d/f", Seen::File).unwrap();
        c.accept(b"d/", b"d", Seen::Dir).unwrap();
        assert!(c.accept(b"d/f", b"d/f", Seen::File).is_err());
    }
}
