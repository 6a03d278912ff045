//! An in-place restore of a directory snapshot, made by the store's watcher
//! ([`super::perform`]) instead of opening the store in a process of the command's own. Its
//! safety snapshot asks the tree's journal in the watcher's own process.
//!
//! Only a restore that needs nothing of the command's environment is handed over: a snapshot
//! of a directory put back in place. A moment, a restore into a new directory, a dry run, and
//! `--continue` or `--abort` are the command's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::perform::{Done, Job, hand_over};
use crate::Repository;
use crate::ops::resolve::CallContext;
use crate::ops::restore::{RestoreOptions, RestoreResult};
use crate::targets::Target;

/// A restore the command hands the watcher.
#[derive(Serialize, Deserialize)]
pub(super) struct RestoreJob {
    /// The options; a target the reference is looked up among is named by its whole path (the
    /// watcher runs in another directory).
    options: RestoreOptions,
    context: CallContext,
    /// The directory the command runs in, which references are scoped to
    /// ([`Repository::set_scope`]).
    scope: Option<PathBuf>,
}

/// A restore the watcher made: the result, as [`Repository::restore`] returns it, and the
/// notices it gave.
pub type WatcherRestore = Done<RestoreResult>;

/// Hands an in-place restore of a directory snapshot to the watcher of the store at
/// `store_dir`, its references scoped to `scope` as the command's own store would be. `None`
/// when the command must restore itself: no watcher runs for the store, the options ask for
/// something other than putting a snapshot back in place, the reference names a moment or a
/// snapshot of something other than a directory, the watcher declined, or it went away before
/// answering.
pub fn restore_by_watcher(
    store_dir: &Path,
    options: &RestoreOptions,
    context: &CallContext,
    scope: Option<PathBuf>,
) -> Option<WatcherRestore> {
    let in_place = options.reference.is_some()
        && options.to.is_none()
        && !options.dry_run
        && !options.continue_interrupted
        && !options.abort_interrupted
        && options.only.is_empty()
        && options.rule.is_none();
    if !in_place {
        return None;
    }
    let target = match options.target.as_deref().map(Target::parse) {
        None => None,
        Some(Ok(Target::Dir(dir))) => Some(dir.to_str()?.to_owned()),
        Some(_) => return None,
    };
    let job =
        RestoreJob { options: RestoreOptions { target, ..options.clone() }, context: context.clone(), scope };
    hand_over(store_dir, Job::Restore(job))
}

impl RestoreJob {
    /// Makes the restore in the watcher; `None` when it is not the watcher's to make or it
    /// failed, for the command to make and word.
    pub(super) fn perform(self, store: &mut Repository) -> Option<RestoreResult> {
        let RestoreJob { options, context, scope } = self;
        let own = store.scope().map(Path::to_path_buf);
        store.set_scope(scope);
        let restored = Self::restore(store, &options, &context);
        store.set_scope(own);
        restored
    }

    fn restore(store: &Repository, options: &RestoreOptions, context: &CallContext) -> Option<RestoreResult> {
        let reference = options.reference.as_deref()?;
        let session = store.call_session(options.session.as_deref(), context).ok()?;
        // A moment is the command's; a snapshot of anything but a directory the restore refuses
        // before it writes, and the command words that refusal.
        if store.moment_for_snapshot_ref(&session, reference).ok()?.is_some() {
            return None;
        }
        store.restore(options, context).ok()
    }
}
