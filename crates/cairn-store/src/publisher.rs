//! Publishes a local store's packs on a thread of its own, so the capture's threads go on
//! hashing and compressing while a full pack is written and flushed. A pack's flush waited
//! 15 to 70 ms on disk, and a first save of 50,000 files flushes about ten: with the thread
//! that filled the pack publishing it, one of two cores stood idle for a third of a second.
//!
//! It starts with the first full pack: a writer that fills none writes its one pack itself at
//! its finish (`BlobWriter::finish`), with nothing left to overlap. Only the writing is moved:
//! the pack is marked pending in the catalog before it is handed over, as before, and the
//! writer indexes it only once [`Publisher::written`] counts it. At most [`QUEUED`] packs wait
//! behind the one being written, so memory stays bounded when the disk is slower than the
//! compression.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::backend::Backend;
use super::fault::{self, FaultPoint};
use crate::error::{Error, ErrorKind, Result};

/// Packs that may wait to be written: each is about 16 MiB.
const QUEUED: usize = 1;

/// What the publishing thread has done so far.
#[derive(Default)]
struct Progress {
    /// Packs handed over, numbered from 1 in the order they were.
    sent: u64,
    /// Packs written (or skipped after a failure): the first `done` handed over.
    done: u64,
    /// The first failure, told to every later caller; later packs are not written.
    failed: Option<Error>,
    /// The buffer of the last pack written, for the next pack to fill: a fresh 16 MiB buffer
    /// costs a page fault per page as it fills.
    spare: Option<Vec<u8>>,
}

/// A thread that writes the packs handed to it, one after another.
pub struct Publisher {
    sender: Option<SyncSender<(String, Vec<u8>)>>,
    /// Held while a pack is numbered and queued.
    order: Mutex<()>,
    progress: Arc<(Mutex<Progress>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Publisher {
    /// Starts the thread; `None` if it could not be started (the caller then writes itself).
    pub fn start(backend: Arc<dyn Backend>) -> Option<Self> {
        let (sender, receiver) = sync_channel(QUEUED);
        let progress: Arc<(Mutex<Progress>, Condvar)> = Arc::default();
        let shared = Arc::clone(&progress);
        let thread = std::thread::Builder::new()
            .name("cairn-publish".into())
            .spawn(move || publish_all(backend.as_ref(), receiver, &shared))
            .ok()?;
        Some(Self { sender: Some(sender), order: Mutex::new(()), progress, thread: Some(thread) })
    }

    /// Hands pack `key` over to be written and returns its number (see [`Self::written`]);
    /// waits only while [`QUEUED`] packs are waiting already. Fails at once if an earlier pack
    /// failed.
    pub fn send(&self, key: String, bytes: Vec<u8>) -> Result<u64> {
        let stopped = || Error::new(ErrorKind::Io, "the thread that writes packs stopped");
        let Some(sender) = &self.sender else { return Err(stopped()) };
        // Numbered and queued under one lock, so the thread writes them in number order; the
        // thread reports under the other lock, so a sender waiting for room does not stop it.
        let _order = self.order.lock().unwrap_or_else(|p| p.into_inner());
        let number = {
            let mut progress = lock(&self.progress.0);
            if let Some(e) = &progress.failed {
                return Err(e.clone());
            }
            progress.sent += 1;
            progress.sent
        };
        if sender.send((key, bytes)).is_err() {
            let e = stopped();
            lock(&self.progress.0).failed.get_or_insert(e.clone());
            self.progress.1.notify_all();
            return Err(e);
        }
        Ok(number)
    }

    /// How many packs, in the order handed over, are written now; the first failure, if any.
    pub fn written(&self) -> Result<u64> {
        let progress = lock(&self.progress.0);
        match &progress.failed {
            Some(e) => Err(e.clone()),
            None => Ok(progress.done),
        }
    }

    /// A written pack's buffer, if one is spare.
    pub fn spare(&self) -> Option<Vec<u8>> {
        lock(&self.progress.0).spare.take()
    }

    /// Waits until every pack handed over is written; the first failure, if any.
    pub fn wait(&self) -> Result<()> {
        let (progress, written) = &*self.progress;
        let mut progress = lock(progress);
        while progress.done < progress.sent && progress.failed.is_none() {
            progress = written.wait(progress).unwrap_or_else(|p| p.into_inner());
        }
        match &progress.failed {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

impl Drop for Publisher {
    /// Lets the thread finish what it was handed, so nothing is written after the command.
    fn drop(&mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn publish_all(
    backend: &dyn Backend,
    packs: Receiver<(String, Vec<u8>)>,
    progress: &(Mutex<Progress>, Condvar),
) {
    for (key, bytes) in packs {
        if lock(&progress.0).failed.is_none() {
            // A panic must not leave the writer waiting for a pack that will never be written.
            let put = std::panic::catch_unwind(AssertUnwindSafe(|| backend.put_if_absent(&key, &bytes)));
            let failure = match put {
                Ok(Ok(_)) => {
                    fault::kill_at(FaultPoint::PackPublished);
                    None
                }
                Ok(Err(e)) => Some(e),
                Err(_) => Some(Error::new(ErrorKind::Io, format!("writing pack {key} failed unexpectedly"))),
            };
            if let Some(e) = failure {
                lock(&progress.0).failed.get_or_insert(e);
            }
        }
        let mut state = lock(&progress.0);
        state.spare = Some(bytes);
        state.done += 1;
        drop(state);
        progress.1.notify_all();
    }
}

fn lock(m: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LocalBackend;

    fn backend(dir: &std::path::Path) -> Arc<dyn Backend> {
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        Arc::new(LocalBackend::new(dir.join("objects"), dir.join("tmp")))
    }

    #[test]
    fn packs_handed_over_are_written_in_order_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path());
        let publisher = Publisher::start(Arc::clone(&backend)).unwrap();
        let keys: Vec<String> = (0..5).map(|i| format!("packs/0{i}/pack-{i}.pack")).collect();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(publisher.send(key.clone(), vec![i as u8; 1 << 20]).unwrap(), i as u64 + 1);
        }
        publisher.wait().unwrap();
        assert_eq!(publisher.written().unwrap(), 5);
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(backend.get(key).unwrap(), vec![i as u8; 1 << 20]);
        }
        // A written pack's buffer comes back for the next pack to fill.
        assert!(publisher.spare().is_some_and(|b| b.capacity() >= 1 << 20));
    }

    #[test]
    fn a_failed_write_is_told_to_the_waiter_and_to_later_senders() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path());
        // A file where the packs' directory should be: every pack write fails.
        std::fs::create_dir_all(dir.path().join("objects")).unwrap();
        std::fs::write(dir.path().join("objects/packs"), b"in the way").unwrap();
        let publisher = Publisher::start(backend).unwrap();
        publisher.send("packs/aa/one.pack".into(), vec![1; 1000]).unwrap();
        let err = publisher.wait().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io, "{err}");
        assert!(publisher.written().is_err());
        assert!(publisher.send("packs/bb/two.pack".into(), vec![2; 1000]).is_err());
        drop(publisher);
        assert!(!dir.path().join("objects/packs").is_dir());
    }

    #[test]
    fn dropping_it_finishes_what_it_was_handed() {
        let dir = tempfile::tempdir().unwrap();
        let backend = backend(dir.path());
        let publisher = Publisher::start(Arc::clone(&backend)).unwrap();
        publisher.send("packs/cc/three.pack".into(), vec![3; 4 << 20]).unwrap();
        drop(publisher);
        assert_eq!(backend.size("packs/cc/three.pack").unwrap(), Some(4 << 20));
    }
}
