//! A save of a watched directory, made by the store's watcher ([`super::perform`]) instead of
//! opening the store in a process of the command's own.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::perform::{Done, Job, hand_over};
use crate::Repository;
use crate::ops::resolve::CallContext;
use crate::ops::save::{SaveOptions, SaveResult};
use crate::targets::Target;

/// A save the command hands the watcher.
#[derive(Serialize, Deserialize)]
pub(super) struct SaveJob {
    /// The options, the target an absolute path (the watcher runs in another directory).
    options: SaveOptions,
    /// Not part of the options' encoding (an agent cannot set it), so carried beside them.
    include_secrets: bool,
    context: CallContext,
}

/// A save the watcher made: the snapshot, as [`Repository::save`] returns it, and the notices
/// it gave.
pub type WatcherSave = Done<SaveResult>;

/// Hands a save of one directory to the watcher of the store at `store_dir`. `None` when the
/// command must save itself: no watcher runs for the store, the options name something other
/// than one directory, the watcher declined, or it went away before answering (a snapshot it
/// committed just before is then followed by the command's own, with the same content).
pub fn save_by_watcher(
    store_dir: &Path,
    options: &SaveOptions,
    context: &CallContext,
) -> Option<WatcherSave> {
    if !options.targets.is_empty() {
        return None;
    }
    let Ok(Target::Dir(dir)) = Target::parse(&options.target) else { return None };
    let job = SaveJob {
        options: SaveOptions { target: dir.to_str()?.to_owned(), ..options.clone() },
        include_secrets: options.include_secrets,
        context: context.clone(),
    };
    hand_over(store_dir, Job::Save(job))
}

impl SaveJob {
    /// Makes the save in the watcher; `None` when it failed, for the command to try and word.
    pub(super) fn perform(self, store: &mut Repository) -> Option<SaveResult> {
        let SaveJob { mut options, include_secrets, context } = self;
        options.include_secrets = include_secrets;
        store.save(&options, &context).ok()
    }
}
