//! Saves the running watcher performs. A save of a watched tree hands its options to the
//! store's watcher, which has the store open and the tree's journal at hand, instead of opening
//! the store in a process of its own and asking the journal over the socket: what is left for
//! the saving command is to start, connect and print.
//!
//! The watcher makes the same snapshot the command would ([`Repository::save`] with the same
//! options and session pin), under the same target lock, with the settings read again for
//! each save. Whatever it does not do, it declines and the command saves as before: a store it
//! would need a secret for (encrypted or shared), and any save that fails, so every refusal a
//! user sees is worded by the command that would have made the save itself.

use std::path::Path;
use std::sync::{Arc, Mutex};

use cairn_watch::protocol::Response;
use cairn_watch::server::{Performed, Performer};
use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::ops::resolve::CallContext;
use crate::ops::save::{SaveOptions, SaveResult};
use crate::targets::Target;

/// What the command hands the watcher.
#[derive(Serialize, Deserialize)]
struct SaveJob {
    /// The options, the target an absolute path (the watcher runs in another directory).
    options: SaveOptions,
    /// Not part of the options' encoding (an agent cannot set it), so carried beside them.
    include_secrets: bool,
    context: CallContext,
}

/// What the watcher answers. A declined save's reason is the command's to find and word: it
/// makes the save itself.
#[derive(Serialize, Deserialize)]
enum SaveOutcome {
    Saved { result: Box<SaveResult>, notices: Vec<String> },
    Declined,
}

/// A save the watcher made.
#[derive(Debug)]
pub struct WatcherSave {
    /// The snapshot, as [`Repository::save`] returns it.
    pub result: SaveResult,
    /// The notices the save gave, in order, for the command to show.
    pub notices: Vec<String>,
}

/// Hands a save of one directory to the watcher of the store at `store_dir`. `None` when the
/// command must save itself: no watcher runs for the store, the options name something other
/// than one directory, the watcher declined, or it went away before answering (a snapshot it
/// committed just before is then followed by the command's own, with the same content).
pub fn save_by_watcher(
    store_dir: &Path,
    options: &SaveOptions,
    context: &CallContext,
) -> Option<WatcherSave> {
    let socket = cairn_watch::server::socket_path(store_dir);
    // A fault point or a boot set by a test belongs to this process.
    if !options.targets.is_empty() || crate::store::fault::armed() || !socket.exists() {
        return None;
    }
    let Ok(Target::Dir(dir)) = Target::parse(&options.target) else { return None };
    let job = SaveJob {
        options: SaveOptions { target: dir.to_str()?.to_owned(), ..options.clone() },
        include_secrets: options.include_secrets,
        context: context.clone(),
    };
    let job = serde_json::to_vec(&job).ok()?;
    let Ok(Some(Response::Performed { outcome })) = cairn_watch::client::perform(&socket, job) else {
        return None;
    };
    match serde_json::from_slice(&outcome).ok()? {
        SaveOutcome::Saved { result, notices } => Some(WatcherSave { result: *result, notices }),
        SaveOutcome::Declined => None,
    }
}

/// Runs the saves handed to a watcher, on the store the watcher was started with.
pub(crate) struct SavePerformer {
    store: Repository,
    /// What the store's notifier was given during the save under way.
    notices: Arc<Mutex<Vec<String>>>,
}

impl SavePerformer {
    pub(crate) fn new(mut store: Repository) -> Self {
        let notices = Arc::new(Mutex::new(Vec::new()));
        let heard = notices.clone();
        store.set_notifier(move |line| heard.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_owned()));
        Self { store, notices }
    }

    fn save(&mut self, job: &[u8]) -> SaveOutcome {
        // Only into a store on this machine without a secret; only a job this version reads.
        if self.store.is_encrypted() || self.store.is_shared() {
            return SaveOutcome::Declined;
        }
        let Ok(SaveJob { mut options, include_secrets, context }) = serde_json::from_slice(job) else {
            return SaveOutcome::Declined;
        };
        options.include_secrets = include_secrets;
        if self.store.refresh_config().is_err() {
            return SaveOutcome::Declined;
        }
        self.notices.lock().unwrap_or_else(|p| p.into_inner()).clear();
        match self.store.save(&options, &context) {
            Ok(result) => {
                let notices = std::mem::take(&mut *self.notices.lock().unwrap_or_else(|p| p.into_inner()));
                SaveOutcome::Saved { result: Box::new(result), notices }
            }
            Err(_) => SaveOutcome::Declined,
        }
    }
}

impl Performer for SavePerformer {
    fn perform(&mut self, job: &[u8]) -> Performed {
        let outcome = self.save(job);
        let ran = matches!(outcome, SaveOutcome::Saved { .. });
        let outcome = serde_json::to_vec(&outcome).unwrap_or_default();
        Performed { outcome, ran }
    }

    /// The catalog's WAL is checkpointed here, not as a command closes the catalog: the
    /// watcher never closes it.
    fn after(&mut self) {
        self.store.catalog().checkpoint_if_grown();
    }
}
