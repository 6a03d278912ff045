//! Writing files the way cairn writes everything: private, complete or not at all.

use std::io::Write;
use std::path::Path;

use crate::error::{Result, TranscriptError};

/// Writes `text` to `dest` through a temporary file in the same directory, synced and then
/// renamed, so a reader sees the old file or the whole new one. The file is 0600; missing
/// directories are created 0700. Unless `overwrite`, an existing `dest` is left alone.
pub(crate) fn write_atomic(dest: &Path, text: &str, overwrite: bool) -> Result<()> {
    let dir = match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    create_private_dir(dir)?;
    if !overwrite && dest.exists() {
        return Err(TranscriptError::Exists { path: dest.to_path_buf() });
    }
    let mut temp = tempfile::Builder::new()
        .prefix(".cairn-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| TranscriptError::io("create a temporary file in", dir, e))?;
    temp.write_all(text.as_bytes())
        .and_then(|()| set_private(temp.as_file()))
        .and_then(|()| temp.as_file().sync_data())
        .map_err(|e| TranscriptError::io("write", temp.path().to_path_buf(), e))?;
    let persisted =
        if overwrite { temp.persist(dest).map(drop) } else { temp.persist_noclobber(dest).map(drop) };
    persisted.map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            TranscriptError::Exists { path: dest.to_path_buf() }
        } else {
            TranscriptError::io("write", dest, e.error)
        }
    })
}

pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| TranscriptError::io("create directory", dir, e))
}

fn set_private(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}
