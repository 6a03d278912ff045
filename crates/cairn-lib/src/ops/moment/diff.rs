//! Comparing two moments: every layer in one result. Parts are paired by target; each pair
//! is compared as its kind compares (files for directories, entries added and dropped for
//! conversations, volumes, layers, images and compose files for Compose projects).

use serde::{Deserialize, Serialize};

use super::{Moment, MomentPart};
use crate::Repository;
use crate::error::Result;
use crate::id::SnapshotId;
use crate::ops::diff::{DiffOptions, DiffResult};
use crate::ops::resolve::CallContext;
use crate::session::SessionRef;

/// Which moments to compare.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MomentDiffOptions {
    /// The older moment: an id, a unique id prefix, a name, or `latest`.
    pub from: String,
    /// The newer moment.
    pub to: String,
    /// Add unified diffs of text files.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub patch: bool,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// Two moments compared.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentDiffResult {
    /// The older moment.
    pub from: Moment,
    /// The newer moment.
    pub to: Moment,
    /// One comparison per target, in the older moment's order, then targets only the newer has.
    pub parts: Vec<MomentDiffPart>,
}

/// One target compared across two moments.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentDiffPart {
    /// `dir`, `transcript` or `compose`.
    pub kind: String,
    /// The target.
    pub target: String,
    /// `changed`, `unchanged`, `added` (only the newer moment has it) or `removed`.
    pub change: String,
    /// The older moment's snapshot.
    pub from: Option<SnapshotId>,
    /// The newer moment's snapshot.
    pub to: Option<SnapshotId>,
    /// The comparison of the two snapshots (directories and conversations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffResult>,
    /// The comparison of two Compose snapshots: volumes and their files, writable layers,
    /// images and compose files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compose: Option<super::ComposeDiff>,
}

impl Repository {
    /// Compares two moments layer by layer.
    pub fn moment_diff(
        &self,
        options: &MomentDiffOptions,
        context: &CallContext,
    ) -> Result<MomentDiffResult> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let from = self.resolve_moment(&session, &options.from)?;
        let to = self.resolve_moment(&session, &options.to)?;
        let mut parts = Vec::new();
        for a in &from.parts {
            let b = to.parts.iter().find(|b| b.target == a.target);
            parts.push(self.diff_part(&session, a, b, options.patch)?);
        }
        for b in to.parts.iter().filter(|b| !from.parts.iter().any(|a| a.target == b.target)) {
            parts.push(MomentDiffPart {
                kind: b.kind.clone(),
                target: b.target.clone(),
                change: "added".into(),
                from: None,
                to: Some(b.snapshot),
                diff: None,
                compose: None,
            });
        }
        Ok(MomentDiffResult { from, to, parts })
    }

    fn diff_part(
        &self,
        session: &SessionRef,
        a: &MomentPart,
        b: Option<&MomentPart>,
        patch: bool,
    ) -> Result<MomentDiffPart> {
        let mut out = MomentDiffPart {
            kind: a.kind.clone(),
            target: a.target.clone(),
            change: "removed".into(),
            from: Some(a.snapshot),
            to: b.map(|b| b.snapshot),
            diff: None,
            compose: None,
        };
        let Some(b) = b else { return Ok(out) };
        if a.kind == "compose" {
            let (x, y) = (self.part_snapshot(session, a)?, self.part_snapshot(session, b)?);
            let diff = self.compose_snapshot_diff(&x, &y)?;
            out.change = if diff.is_empty() { "unchanged" } else { "changed" }.into();
            out.compose = Some(diff);
            return Ok(out);
        }
        let diff = self.diff(
            &DiffOptions {
                from: a.snapshot.to_string(),
                to: Some(b.snapshot.to_string()),
                // By id: a directory that no longer exists is still compared.
                target: None,
                patch,
                stat: false,
                session: Some(session.id.to_string()),
            },
            &CallContext::default(),
        )?;
        let s = &diff.summary;
        out.change = if s.added + s.removed + s.modified == 0 { "unchanged" } else { "changed" }.into();
        out.diff = Some(diff);
        Ok(out)
    }
}
