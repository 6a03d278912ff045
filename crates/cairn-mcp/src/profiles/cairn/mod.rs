//! cairn's own tool set (the default profile): snapshots and sessions of any target, and the
//! `cairn://snapshots` resources.

mod moments;
mod sessions;
mod snapshots;

use crate::error::ServeError;
use crate::registry::ToolSpec;

/// Every tool of the profile, in the order `tools/list` shows them.
pub fn tools() -> Result<Vec<ToolSpec>, ServeError> {
    let mut all = snapshots::tools()?;
    all.extend(sessions::tools()?);
    Ok(all)
}

/// What the server tells an agent when it connects.
pub const INSTRUCTIONS: &str = "cairn takes snapshots of directories and puts them back exactly. Save before risky changes (snapshot_save), compare with snapshot_diff, and restore with snapshot_restore. Always report a snapshot's not_covered to the user. Restoring and removing need the user's permission; a refusal names the command that grants it.";
