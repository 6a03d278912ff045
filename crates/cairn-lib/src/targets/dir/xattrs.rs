//! Extended attributes: which are captured (`user.*` and the POSIX ACLs, which Linux keeps as
//! `system.posix_acl_access` / `system.posix_acl_default`), reading them from an open file or a
//! path, and putting them back on an open file.
//!
//! `security.*` (SELinux labels, file capabilities) and `trusted.*` belong to the machine's
//! policy, not to the tree: restoring them would need privileges and could grant some. They
//! are listed in `not_covered` instead.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use xattr::FileExt;

/// Attributes a snapshot holds, sorted by name, and the names it leaves out.
pub(crate) type Read = (Vec<(Vec<u8>, Vec<u8>)>, Vec<String>);

/// True for the attributes a snapshot captures.
pub(crate) fn captured(name: &[u8]) -> bool {
    name.starts_with(b"user.") || name == b"system.posix_acl_access" || name == b"system.posix_acl_default"
}

fn unsupported(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::ENODATA))
}

fn collect(
    names: impl Iterator<Item = std::ffi::OsString>,
    get: impl Fn(&OsStr) -> std::io::Result<Option<Vec<u8>>>,
) -> std::io::Result<Read> {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    for name in names {
        let bytes = name.as_bytes();
        if !captured(bytes) {
            left_out.push(String::from_utf8_lossy(bytes).into_owned());
            continue;
        }
        // An attribute removed between the listing and the read is simply gone.
        if let Some(value) = get(&name)? {
            kept.push((bytes.to_vec(), value));
        }
    }
    kept.sort();
    left_out.sort();
    Ok((kept, left_out))
}

/// The attributes of an open file.
pub(crate) fn of_file(file: &File) -> std::io::Result<Read> {
    match file.list_xattr() {
        Ok(names) => collect(names, |n| file.get_xattr(n)),
        Err(e) if unsupported(&e) => Ok(Default::default()),
        Err(e) => Err(e),
    }
}

/// The attributes of `path` itself (a directory; links are not followed).
pub(crate) fn of_path(path: &Path) -> std::io::Result<Read> {
    match xattr::list(path) {
        Ok(names) => collect(names, |n| xattr::get(path, n)),
        Err(e) if unsupported(&e) => Ok(Default::default()),
        Err(e) => Err(e),
    }
}

/// Gives `file` exactly the captured attributes `want`: sets each, and removes captured ones
/// it has that `want` lacks (an in-place restore, or an ACL inherited from a default ACL).
/// Attributes that are not captured are left as they are.
pub(crate) fn apply(file: &File, want: &[(Vec<u8>, Vec<u8>)], remove_others: bool) -> std::io::Result<()> {
    if remove_others {
        let names = match file.list_xattr() {
            Ok(names) => names.collect::<Vec<_>>(),
            Err(e) if unsupported(&e) => Vec::new(),
            Err(e) => return Err(e),
        };
        for name in names {
            let bytes = name.as_bytes();
            if captured(bytes) && !want.iter().any(|(n, _)| n == bytes) {
                match file.remove_xattr(&name) {
                    Err(e) if !unsupported(&e) => return Err(e),
                    _ => {}
                }
            }
        }
    }
    for (name, value) in want {
        file.set_xattr(OsStr::from_bytes(name), value)?;
    }
    Ok(())
}
