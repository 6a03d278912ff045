//! Locks: one writer per target, and a store-wide lock that gc takes alone.
//!
//! Locks are `flock`s on files in `<store>/locks/`: the kernel drops them when their process
//! dies, so a lock is never left stale. The file also holds who took it, for the refusal message.

use std::io::{Read, Seek};
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

/// Who holds the lock on `file` now. The recorded holder is named only while its process still
/// holds the lock: a shared lock's takers do not record themselves, so the file may still name
/// a gc that has long exited. The kernel's lock table (`/proc/locks`) says which processes hold
/// it; one of them is named when the record is stale.
fn describe_holder(file: &mut std::fs::File) -> String {
    let mut text = String::new();
    let _ = file.rewind();
    let _ = file.read_to_string(&mut text);
    let recorded = serde_json::from_str::<Holder>(&text).ok();
    let holders = lock_holders(file);
    match recorded {
        Some(h) if holders.as_ref().is_none_or(|pids| pids.contains(&h.pid)) && pid_alive(h.pid) => {
            format!("{} (pid {}, since {})", h.command, h.pid, h.since)
        }
        _ => match holders.as_deref() {
            Some([pid, ..]) => format!("{} (pid {pid})", process_name(*pid)),
            _ => "another cairn process".to_owned(),
        },
    }
}

fn pid_alive(pid: u32) -> bool {
    std::path::Path::new("/proc").join(pid.to_string()).exists()
}

/// The processes holding an flock on `file`, from the kernel's lock table; `None` where the
/// table cannot be read (then the record is trusted as it is).
fn lock_holders(file: &std::fs::File) -> Option<Vec<u32>> {
    use std::os::unix::fs::MetadataExt;
    let ino = file.metadata().ok()?.ino();
    let table = std::fs::read_to_string("/proc/locks").ok()?;
    Some(holders_in_table(&table, ino))
}

/// The pids of the `/proc/locks` lines that hold (not wait for) a lock on inode `ino`. A line
/// reads `1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF`; a waiter's has `->` after its number.
fn holders_in_table(table: &str, ino: u64) -> Vec<u32> {
    let mut pids = Vec::new();
    for line in table.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) == Some(&"->") || fields.get(1) != Some(&"FLOCK") {
            continue;
        }
        let (Some(pid), Some(dev_ino)) = (fields.get(4), fields.get(5)) else { continue };
        let same = dev_ino.rsplit(':').next().and_then(|i| i.parse::<u64>().ok()) == Some(ino);
        if let (true, Ok(pid)) = (same, pid.parse::<u32>())
            && pid != 0
            && !pids.contains(&pid)
        {
            pids.push(pid);
        }
    }
    pids
}

/// A process's command line, for a refusal (`cairn save` rather than a bare pid).
fn process_name(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .take(3)
        .enumerate()
        .map(|(i, w)| {
            let w = String::from_utf8_lossy(w).into_owned();
            // The program by its name, not its install path.
            if i == 0 { w.rsplit('/').next().unwrap_or(&w).to_owned() } else { w }
        })
        .collect();
    if words.is_empty() { "a process".to_owned() } else { words.join(" ") }
}

/// Writes who holds the lock over the start of its file, and cuts what a longer record left
/// after it. Not emptied first: truncating a file to nothing frees its block, and ext4 then
/// writes the next contents back as the file is closed (`auto_da_alloc`), which cost every
/// save and restore a fifth of a millisecond here; a record as long as the last one (the usual
/// case: same command, pid of the same width) leaves the file's size alone.
fn record_holder(file: &std::fs::File, command: &str) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let holder =
        Holder { command: command.to_owned(), pid: std::process::id(), since: crate::time::now_rfc3339() };
    let text = serde_json::to_vec(&holder).unwrap_or_default();
    file.write_all_at(&text, 0)?;
    if file.metadata()?.len() > text.len() as u64 {
        file.set_len(text.len() as u64)?;
    }
    Ok(())
}

/// Takes the exclusive lock named `name` for `command`, or refuses saying who holds it.
pub fn lock_exclusive(dir: &Path, name: &str, what: &str, command: &str) -> Result<LockGuard> {
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
    record_holder(&file, command).at("write", &path)?;
    Ok(LockGuard { _file: file })
}

/// Takes the store lock shared (writers) or exclusive (gc), without waiting.
pub fn lock_store(dir: &Path, exclusive: bool, command: &str) -> Result<LockGuard> {
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
                "another cairn command is writing to this store ({holder}); gc needs the store alone: retry when it finishes"
            )
        } else {
            format!("garbage collection is running on this store ({holder}); retry when it finishes")
        };
        return Err(Error::new(ErrorKind::Locked, message));
    }
    if exclusive {
        let _ = record_holder(&file, command);
    }
    Ok(LockGuard { _file: file })
}

/// Takes the exclusive lock named `name` in `dir`, waiting for it: for the short critical
/// sections (a compare-and-swap of one file) that every holder leaves at once.
pub fn lock_waiting(dir: &Path, name: &str) -> Result<LockGuard> {
    let path = dir.join(format!("{name}.lock"));
    let file = open_lock_file(&path)?;
    rustix::fs::flock(&file, FlockOperation::LockExclusive)
        .map_err(|e| Error::io("take the lock", &path, e.into()))?;
    Ok(LockGuard { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_gc_names_a_live_holder_not_a_gc_that_has_exited() {
        let dir = tempfile::tempdir().unwrap();
        // A gc ran and exited: its record stays in the lock file.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        drop(lock_store(dir.path(), true, "a gc").unwrap());
        let stale = Holder { command: "a gc".into(), pid: gone_pid, since: "2026-01-01T00:00:00Z".into() };
        std::fs::write(dir.path().join("store.lock"), serde_json::to_string(&stale).unwrap()).unwrap();
        // A writer holds the store shared now; a gc is refused.
        let _writer = lock_store(dir.path(), false, "a save").unwrap();
        let err = lock_store(dir.path(), true, "a gc").unwrap_err().to_string();
        assert!(!err.contains(&format!("pid {gone_pid}")), "{err}");
        assert!(err.contains(&format!("pid {}", std::process::id())), "{err}");
    }

    #[test]
    fn a_holder_is_written_over_a_longer_record_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target.lock");
        let long = format!("{{\"command\":\"{}\",\"pid\":1,\"since\":\"x\"}}", "a".repeat(200));
        std::fs::write(&path, long).unwrap();
        let _held = lock_exclusive(dir.path(), "target", "/work", "a save").unwrap();
        let written: Holder = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!((written.command.as_str(), written.pid), ("a save", std::process::id()));
        let refused = lock_exclusive(dir.path(), "target", "/work", "a restore").unwrap_err().to_string();
        assert!(refused.contains(&format!("a save (pid {}", std::process::id())), "{refused}");
    }

    #[test]
    fn the_lock_table_is_read_for_holders_not_waiters() {
        let table = "1: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 5151 fd:01:77 0 EOF\n\
                     2: POSIX  ADVISORY  READ 6161 fd:01:77 0 EOF\n\
                     3: FLOCK  ADVISORY  READ 7171 fd:01:78 0 EOF\n";
        assert_eq!(holders_in_table(table, 77), vec![4242]);
    }
}
