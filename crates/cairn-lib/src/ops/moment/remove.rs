//! Removing moments, by reference or by retention rules: each part's snapshot leaves the
//! session with it, unless another moment still holds that snapshot (an agent checkpoint
//! reuses the last snapshot of a directory that did not change).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Moment;
use crate::Repository;
use crate::error::{Error, Result};
use crate::ops::resolve::CallContext;
use crate::session::SessionRef;

/// Which moments to remove.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MomentRemoveOptions {
    /// The moments: ids, unique id prefixes or names.
    pub refs: Vec<String>,
    /// Keep the newest this many moments, remove the others.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "refs"))]
    pub retain_recent: Option<u64>,
    /// Keep the moments younger than this (`7d`, `12h`), remove the others.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with = "refs"))]
    pub retain_for: Option<String>,
    /// Only the checkpoints agent hooks take (with retention rules).
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub auto: bool,
    /// Say what would be removed, remove nothing.
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub dry_run: bool,
    /// The session (name or id).
    #[cfg_attr(feature = "clap", arg(long))]
    pub session: Option<String>,
}

/// The moments removed (or, with `dry_run`, that would be).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MomentRemoveResult {
    /// True when nothing was removed.
    pub dry_run: bool,
    /// The moments.
    pub removed: Vec<Moment>,
}

impl Repository {
    /// Removes moments and their parts' snapshots.
    pub fn moment_remove(
        &self,
        options: &MomentRemoveOptions,
        context: &CallContext,
    ) -> Result<MomentRemoveResult> {
        let session = self.resolve_session(&context.choice(options.session.clone()))?;
        let has_rules = options.retain_recent.is_some() || options.retain_for.is_some();
        if has_rules != options.refs.is_empty() {
            return Err(Error::invalid(
                "name the moments to remove, or give retention rules (recent count, age), not both",
            ));
        }
        let chosen = if has_rules {
            let within = options
                .retain_for
                .as_deref()
                .map(|d| crate::duration::parse_duration("retain_for", d))
                .transpose()?;
            let mut all = self.moments_of(&session)?;
            if options.auto {
                all.retain(|m| m.auto);
            }
            select(&all, options.retain_recent, within, jiff::Timestamp::now())
        } else {
            let mut chosen: Vec<Moment> = Vec::new();
            for r in &options.refs {
                let m = self.resolve_moment(&session, r)?;
                if !chosen.iter().any(|c| c.id == m.id) {
                    chosen.push(m);
                }
            }
            chosen
        };
        if !options.dry_run {
            self.drop_moments(&session, &chosen)?;
        }
        Ok(MomentRemoveResult { dry_run: options.dry_run, removed: chosen })
    }

    /// Removes `moments` and the part snapshots no other moment holds.
    pub(crate) fn drop_moments(&self, session: &SessionRef, moments: &[Moment]) -> Result<()> {
        let targets: Vec<String> =
            moments.iter().flat_map(|m| m.parts.iter().map(|p| p.target.clone())).collect();
        let _locks = self.lock_targets(&targets, "a remove")?;
        for moment in moments {
            self.catalog().delete_moment(moment.id)?;
            for part in &moment.parts {
                if self.catalog().moments_holding(part.snapshot)? == 0 {
                    self.catalog().remove_membership(session.id, part.snapshot)?;
                    self.forget_target_if_empty(&part.target)?;
                }
            }
        }
        Ok(())
    }
}

/// The moments (oldest first) that fall outside both rules: past the newest `recent` and
/// older than `within`. A rule not given selects everything on its own.
fn select(
    moments: &[Moment],
    recent: Option<u64>,
    within: Option<Duration>,
    now: jiff::Timestamp,
) -> Vec<Moment> {
    let keep_from = recent.map_or(moments.len(), |n| moments.len().saturating_sub(n as usize));
    moments
        .iter()
        .enumerate()
        .filter(|(i, m)| {
            let past_recent = recent.is_none() || *i < keep_from;
            let too_old = within.is_none_or(|d| {
                m.created_at
                    .parse::<jiff::Timestamp>()
                    .ok()
                    .and_then(|t| jiff::SignedDuration::try_from(d).ok().map(|d| t + d < now))
                    .unwrap_or(false)
            });
            past_recent && too_old
        })
        .map(|(_, m)| m.clone())
        .collect()
}
