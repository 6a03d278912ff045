//! Listing and showing moments: catalog reads, no lock.

use serde::{Deserialize, Serialize};

use super::Moment;
use crate::Repository;
use crate::error::Result;
use crate::ops::resolve::CallContext;
use crate::snapshot::Snapshot;

/// Which moments to list.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MomentListOptions {
    /// Leave out the checkpoints agent hooks take.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub no_auto: bool,
    /// The session to list (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Which moment to show.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MomentShowOptions {
    /// The moment: an id, a unique id prefix, a name, or `latest`.
    #[serde(rename = "ref")]
    #[schemars(description = "The moment: its id, a unique id prefix, its name, or \"latest\".")]
    pub reference: String,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// The moments of a session, oldest first (never a bare array).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentList {
    /// The moments.
    pub moments: Vec<Moment>,
}

/// A moment with the records of its parts.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentView {
    /// The moment.
    pub moment: Moment,
    /// Each part's snapshot, in the moment's order.
    pub snapshots: Vec<Snapshot>,
}

impl Repository {
    /// The moments of a session, oldest first.
    pub fn moment_list(&self, options: &MomentListOptions, context: &CallContext) -> Result<MomentList> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let mut moments = self.moments_of(&session)?;
        if options.no_auto {
            moments.retain(|m| !m.auto);
        }
        Ok(MomentList { moments })
    }

    /// One moment with its parts' records.
    pub fn moment_show(&self, options: &MomentShowOptions, context: &CallContext) -> Result<MomentView> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let moment = self.resolve_moment(&session, &options.reference)?;
        let snapshots =
            moment.parts.iter().map(|p| self.part_snapshot(&session, p)).collect::<Result<Vec<_>>>()?;
        Ok(MomentView { moment, snapshots })
    }
}
