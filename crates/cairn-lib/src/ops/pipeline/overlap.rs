//! The overlap check every operation that reads or writes a directory makes first: a snapshot
//! never lives inside the tree it captures, and no tree is written inside the store.

use crate::Repository;
use crate::error::{Error, Hint, Result};

impl Repository {
    /// Refuses a directory that holds the store, or lies inside it.
    pub(crate) fn refuse_overlap(&self, path: &std::path::Path) -> Result<()> {
        let store = std::fs::canonicalize(self.root()).unwrap_or_else(|_| self.root().to_path_buf());
        if store.starts_with(path) {
            // Best effort: a store left behind is clutter in the tree, never a loss.
            let _ = self.discard_if_new();
            return Err(Error::invalid(format!(
                "the store {} lies inside {}; a snapshot must never live inside the tree it captures",
                store.display(),
                path.display()
            ))
            .hint(Hint::ChooseStore)
            .purpose("outside it"));
        }
        if path.starts_with(&store) {
            return Err(Error::invalid(format!(
                "{} is inside the store {}; pick a directory outside it",
                path.display(),
                store.display()
            )));
        }
        Ok(())
    }
}
