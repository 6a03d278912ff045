//! Target kinds: what can be captured, and how a target is named.
//!
//! A target is written `dir:<path>` or as a bare path, `compose:<project>`, `transcript:<file>`
//! or `debug:<id>`. Its key (how the catalog names it) is the canonical form.

pub(crate) mod compose;
pub(crate) mod dir;
pub(crate) mod document;

use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
pub use crate::store::model::target_kind::TargetKind;

/// A parsed target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A directory tree, by its canonical absolute path.
    Dir(PathBuf),
    /// A running Docker Compose project, by name.
    Compose(String),
    /// An agent transcript file.
    Transcript(PathBuf),
    /// A debug session's captures.
    Debug(String),
}

impl Target {
    /// Parses a target as the user wrote it; directories and transcript files are resolved to
    /// canonical paths (relative ones against the process's working directory), so that every
    /// spelling of one target finds the same snapshots.
    pub fn parse(text: &str) -> Result<Self> {
        if let Some(rest) = text.strip_prefix("compose:") {
            return Ok(Target::Compose(rest.to_owned()));
        }
        if let Some(rest) = text.strip_prefix("transcript:") {
            return Ok(Target::Transcript(transcript_path(rest)?));
        }
        if let Some(rest) = text.strip_prefix("debug:") {
            return Ok(Target::Debug(rest.to_owned()));
        }
        let path = text.strip_prefix("dir:").unwrap_or(text);
        Ok(Target::Dir(canonical_dir(Path::new(path))?))
    }

    /// The catalog key: a bare absolute path for directories, `kind:name` otherwise.
    pub fn key(&self) -> String {
        match self {
            Target::Dir(p) => p.to_string_lossy().into_owned(),
            Target::Compose(p) => format!("compose:{p}"),
            Target::Transcript(p) => format!("transcript:{}", p.display()),
            Target::Debug(id) => format!("debug:{id}"),
        }
    }

    /// What kind of target it is.
    pub fn kind(&self) -> TargetKind {
        match self {
            Target::Dir(_) => TargetKind::Dir,
            Target::Compose(_) => TargetKind::Compose,
            Target::Transcript(_) => TargetKind::Transcript,
            Target::Debug(_) => TargetKind::Debug,
        }
    }
}

/// Adds every object a snapshot of `kind` (as the catalog stores it) with root `root` refers
/// to into `live`: the one place gc, check and repair learn what each kind's root holds.
pub(crate) fn referenced_objects(
    store: &crate::store::Store,
    kind: &str,
    root: &crate::id::ObjectId,
    live: &mut std::collections::HashSet<crate::id::ObjectId>,
) -> Result<()> {
    match kind.parse::<TargetKind>() {
        Ok(TargetKind::Dir) => dir::restore::referenced(store, root, live),
        Ok(TargetKind::Compose) => compose::referenced(store, root, live),
        // Transcripts and debug captures store one document as their root (a blob, or a list
        // of chunks), and so does any kind a later version adds.
        Ok(TargetKind::Transcript | TargetKind::Debug) | Err(_) => {
            document::document_objects(store, root, live)
        }
    }
}

/// The path a `transcript:` target names, as the catalog keys it: canonical when the file
/// exists (transcript snapshots are saved under the canonical path), otherwise absolute, so a
/// session file deleted since it was saved still finds its snapshots.
fn transcript_path(text: &str) -> Result<PathBuf> {
    if text.is_empty() {
        return Err(Error::invalid("the transcript target names no file; write transcript:<session file>"));
    }
    let path = Path::new(text);
    match std::fs::canonicalize(path) {
        Ok(canonical) => Ok(canonical),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::path::absolute(path).map_err(|e| Error::io("resolve", path, e))
        }
        Err(e) => Err(Error::io("resolve", path, e)),
    }
}

/// The canonical path of an existing directory, with a clear error otherwise.
pub(crate) fn canonical_dir(path: &Path) -> Result<PathBuf> {
    let canonical = std::fs::canonicalize(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(format!("{} does not exist; pass an existing directory", path.display()))
        } else {
            Error::io("resolve", path, e)
        }
    })?;
    let meta = std::fs::metadata(&canonical).at("inspect", &canonical)?;
    if !meta.is_dir() {
        return Err(Error::invalid(format!("{} is not a directory; pass a directory", path.display())));
    }
    if canonical.to_str().is_none() {
        return Err(Error::invalid(format!(
            "{} is not valid UTF-8; cairn names targets by UTF-8 paths",
            canonical.display()
        )));
    }
    Ok(canonical)
}
