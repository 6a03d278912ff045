//! Locks: one writer per target, and a store-wide lock that gc takes alone.
//!
//! Locks are `flock`s on files in `<store>/locks/`: the kernel drops them when their process
//! dies, so a lock is never left stale. The file also holds who took it, for the refusal message.

use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, IoContext, Result};

/// Who holds a lock, written into the lock file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Holder {
    command: String,
    pid: u32,
    since: String,
}

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct LockGuard {
    _file: std::fs::File,
}

fn open_lock_file(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .at("open the lock", path)
}

fn describe_holder(file: &mut std::fs::File) -> String {
    let mut text = String::new();
    let _ = file.rewind();
    let _ = file.read_to_string(&mut text);
    match serde_json::from_str::<Holder>(&text) {
        Ok(h) => format!("{} (pid {}, since {})", h.command, h.pid, h.since),
        Err(_) => "another cairn process".to_owned(),
    }
}

/// Takes the exclusive lock named `name` for `command`, or refuses saying who holds it.
pub(crate) fn lock_exclusive(dir: &Path, name: &str, what: &str, command: &str) -> Result<LockGuard> {
    let path: PathBuf = dir.join(format!("{name}.lock"));
    let mut file = open_lock_file(&path)?;
    if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        let holder = describe_holder(&mut file);
        // A compose project is a place people work in, and arcave's wording says so.
        let place =
            if what.starts_with("compose:") { "in this project".to_owned() } else { format!("on {what}") };
        return Err(Error::new(
            ErrorKind::Locked,
            format!(
                "another cairn command is already running {place}: {holder} holds its lock; retry when it finishes"
            ),
        ));
    }
    let holder =
        Holder { command: command.to_owned(), pid: std::process::id(), since: crate::time::now_rfc3339() };
    let text = serde_json::to_string(&holder).unwrap_or_default();
    file.set_len(0).at("write", &path)?;
    file.rewind().at("write", &path)?;
    file.write_all(text.as_bytes()).at("write", &path)?;
    Ok(LockGuard { _file: file })
}

/// Takes the store lock shared (writers) or exclusive (gc), without waiting.
pub(crate) fn lock_store(dir: &Path, exclusive: bool, command: &str) -> Result<LockGuard> {
    let path = dir.join("store.lock");
    let mut file = open_lock_file(&path)?;
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    if rustix::fs::flock(&file, op).is_err() {
        let holder = describe_holder(&mut file);
        let message = if exclusive {
            format!(
                "another cairn command is writing to this store (last taken by {holder}); gc needs the store alone: retry when it finishes"
            )
        } else {
            format!("garbage collection is running on this store ({holder}); retry when it finishes")
        };
        return Err(Error::new(ErrorKind::Locked, message));
    }
    if exclusive {
        let holder = Holder {
            command: command.to_owned(),
            pid: std::process::id(),
            since: crate::time::now_rfc3339(),
        };
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = file.write_all(serde_json::to_string(&holder).unwrap_or_default().as_bytes());
    }
    Ok(LockGuard { _file: file })
}

/// Takes the exclusive lock named `name` in `dir`, waiting for it: for the short critical
/// sections (a compare-and-swap of one file) that every holder leaves at once.
pub(crate) fn lock_waiting(dir: &Path, name: &str) -> Result<LockGuard> {
    let path = dir.join(format!("{name}.lock"));
    let file = open_lock_file(&path)?;
    rustix::fs::flock(&file, FlockOperation::LockExclusive)
        .map_err(|e| Error::io("take the lock", &path, e.into()))?;
    Ok(LockGuard { _file: file })
}
