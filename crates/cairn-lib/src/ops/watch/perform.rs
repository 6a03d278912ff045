//! The jobs a running watcher performs for commands, in its own process: saves
//! ([`save_by_watcher`]) and in-place restores ([`restore_by_watcher`]) of directories. It has
//! the store open, its catalog's pages and its threads warm, and each tree's journal at hand;
//! the command is left to start, connect and print.
//!
//! A job is run with the same options and session pin the command would use, under the same
//! target lock, with the settings read again each time. Whatever the watcher does not do, it
//! declines, and the command does it as before: a job of a command that runs with other rights
//! than the watcher's (another user or groups: the files would be read and written with the
//! watcher's), a store it would need a secret for (encrypted or shared), and any job that fails,
//! so every refusal a user sees is worded by the command that would have done the job itself.
//!
//! [`save_by_watcher`]: super::save_by_watcher
//! [`restore_by_watcher`]: super::restore_by_watcher

use std::path::Path;
use std::sync::{Arc, Mutex};

use cairn_watch::protocol::Response;
use cairn_watch::server::{Performed, Performer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::restore::RestoreJob;
use super::save::SaveJob;
use crate::Repository;

/// A job a command hands the watcher.
#[derive(Serialize, Deserialize)]
pub(super) enum Job {
    Save(SaveJob),
    Restore(RestoreJob),
}

/// What goes over the socket: the job and the rights of the command that handed it. One this
/// version cannot read (a command of another version) is declined, and the command does it.
#[derive(Serialize, Deserialize)]
struct Handed {
    job: Job,
    by: Rights,
}

/// A process's effective user and groups: what the files it reads and writes are checked against.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Rights {
    user: u32,
    group: u32,
    /// The supplementary groups, sorted.
    groups: Vec<u32>,
}

impl Rights {
    /// This process's; `None` when its groups cannot be read.
    fn own() -> Option<Self> {
        use rustix::process::{getegid, geteuid, getgroups};
        let mut groups: Vec<u32> = getgroups().ok()?.into_iter().map(|g| g.as_raw()).collect();
        groups.sort_unstable();
        groups.dedup();
        Some(Self { user: geteuid().as_raw(), group: getegid().as_raw(), groups })
    }
}

/// What the watcher answers. A declined job's reason is the command's to find and word: it
/// does the job itself.
#[derive(Serialize, Deserialize)]
enum Outcome<T> {
    Done { result: Box<T>, notices: Vec<String> },
    Declined,
}

/// A job the watcher did.
#[derive(Debug)]
pub struct Done<T> {
    /// The result, as the library call returns it.
    pub result: T,
    /// The notices the job gave, in order, for the command to show.
    pub notices: Vec<String>,
}

/// Hands `job` to the watcher of the store at `store_dir`; `None` when the command must do it
/// itself: no watcher runs for the store, it declined, or it went away before answering.
pub(super) fn hand_over<T: DeserializeOwned>(store_dir: &Path, job: Job) -> Option<Done<T>> {
    let socket = cairn_watch::server::socket_path(store_dir);
    // A fault point or a boot set by a test belongs to this process.
    if crate::store::fault::armed() || !socket.exists() {
        return None;
    }
    let job = serde_json::to_vec(&Handed { job, by: Rights::own()? }).ok()?;
    let Ok(Some(Response::Performed { outcome })) = cairn_watch::client::perform(&socket, job) else {
        return None;
    };
    match serde_json::from_slice(&outcome).ok()? {
        Outcome::Done { result, notices } => Some(Done { result: *result, notices }),
        Outcome::Declined => None,
    }
}

/// Runs the jobs handed to a watcher, on the store the watcher was started with.
pub(crate) struct JobPerformer {
    store: Repository,
    /// What the store's notifier was given during the job under way.
    notices: Arc<Mutex<Vec<String>>>,
}

impl JobPerformer {
    pub(crate) fn new(mut store: Repository) -> Self {
        let notices = Arc::new(Mutex::new(Vec::new()));
        let heard = notices.clone();
        store.set_notifier(move |line| heard.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_owned()));
        // Its saves then ask the size of only the packs changed since the last one, not of
        // every pack the store's history made. Without inotify they ask every pack.
        let _ = store.store().watch_packs();
        Self { store, notices }
    }

    /// Runs `job` with what `run` makes of it; declined when `run` gives nothing.
    fn run<T: Serialize>(&mut self, run: impl FnOnce(&mut Repository) -> Option<T>) -> Outcome<T> {
        // Only into a store on this machine without a secret, with its settings as they are now.
        if self.store.is_encrypted() || self.store.is_shared() || self.store.refresh_config().is_err() {
            return Outcome::Declined;
        }
        self.notices.lock().unwrap_or_else(|p| p.into_inner()).clear();
        match run(&mut self.store) {
            Some(result) => {
                let notices = std::mem::take(&mut *self.notices.lock().unwrap_or_else(|p| p.into_inner()));
                Outcome::Done { result: Box::new(result), notices }
            }
            None => Outcome::Declined,
        }
    }
}

impl Performer for JobPerformer {
    fn perform(&mut self, job: &[u8]) -> Performed {
        let job = serde_json::from_slice::<Handed>(job)
            .ok()
            .filter(|h| Rights::own().is_some_and(|own| own == h.by));
        let (outcome, ran) = match job.map(|h| h.job) {
            Some(Job::Save(job)) => encode(self.run(|store| job.perform(store))),
            Some(Job::Restore(job)) => encode(self.run(|store| job.perform(store))),
            None => encode(Outcome::<()>::Declined),
        };
        Performed { outcome, ran }
    }

    /// The catalog's WAL is checkpointed here, not as a command closes the catalog: the
    /// watcher never closes it.
    fn after(&mut self) {
        self.store.catalog().checkpoint_if_grown();
    }
}

/// The outcome's bytes, and whether the job was done.
fn encode<T: Serialize>(outcome: Outcome<T>) -> (Vec<u8>, bool) {
    let ran = matches!(outcome, Outcome::Done { .. });
    (serde_json::to_vec(&outcome).unwrap_or_default(), ran)
}
