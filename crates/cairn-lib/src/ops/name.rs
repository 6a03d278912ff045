//! Naming a snapshot after the fact: give it a name, move a name to it, or take its name
//! away. A name is the snapshot's within its session and target (the catalog's membership
//! row), so the record object, which is write-once, is not rewritten.

use serde::Deserialize;

use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, Hint, Result};
use crate::name::validate_name;
use crate::snapshot::Snapshot;

/// Which snapshot to name, and the name.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct NameOptions {
    /// The snapshot: an id, a unique id prefix, a name, or `latest`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The new name; omit it to take the snapshot's name away.
    pub name: Option<String>,
    /// Move the name from the snapshot of the same target that holds it.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub force: bool,
    /// The target the reference is resolved among.
    #[cfg_attr(feature = "clap", arg(long))]
    pub target: Option<String>,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

impl Repository {
    /// Names a snapshot (or takes its name away); returns its record as it is now.
    pub fn name(&self, options: &NameOptions, context: &CallContext) -> Result<Snapshot> {
        let session = self.call_session(options.session.as_deref(), context)?;
        let target = options.target.as_deref().map(super::list::list_target_key).transpose()?;
        let snapshot = self.resolve_snapshot(&session, &options.reference, target.as_deref())?;
        let name = options.name.as_deref().map(str::trim).filter(|n| !n.is_empty());
        if let Some(name) = name {
            validate_name("snapshot", name)?;
        }
        if self.catalog().is_shared() {
            return Err(Error::invalid(
                "a snapshot of a shared store keeps the name it was saved with; save it again with a name instead",
            ));
        }
        if let Some(holder) = self.catalog().rename_membership(session.id, &snapshot, name, options.force)? {
            return Err(Error::conflict(format!(
                "a snapshot named {:?} already exists for {} ({holder}); pick another name",
                name.unwrap_or_default(),
                snapshot.target
            ))
            .or_hint(Hint::SetOption("force"))
            .purpose("to move the name to this snapshot"));
        }
        self.catalog()
            .get_snapshot(session.id, snapshot.id)?
            .ok_or_else(|| Error::not_found(format!("snapshot {} was removed meanwhile", snapshot.id)))
    }
}
