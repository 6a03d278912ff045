//! The keep policy of agent checkpoints (`hooks.keep_turns`, `hooks.keep_within`), applied to
//! one workspace after each checkpoint. A checkpoint goes only when both rules select it: it
//! belongs to none of the newest `hooks.keep_turns` turns of the workspace, and it is older
//! than `hooks.keep_within`. Moments saved by hand are never touched.

use std::collections::HashSet;

use crate::Repository;
use crate::error::Result;
use crate::id::MomentId;
use crate::session::SessionRef;

impl Repository {
    /// Applies the checkpoint keep policy to `workspace`; `made` is always kept. Returns how
    /// many checkpoints it removed.
    pub(crate) fn apply_hooks_keep_policy(
        &self,
        session: &SessionRef,
        workspace: &str,
        made: MomentId,
    ) -> Result<usize> {
        let cfg = self.config();
        let keep_turns = Some(cfg.hooks_keep_turns());
        let keep_within = Some(cfg.hooks_keep_within());
        let auto: Vec<_> = self
            .moments_of(session)?
            .into_iter()
            .filter(|m| m.auto && m.turn.as_ref().is_some_and(|t| t.workspace == workspace))
            .collect();
        // Turns, newest first: (agent session, number) in the order their last moment was taken.
        let mut turns: Vec<(String, u64)> = Vec::new();
        for m in auto.iter().rev() {
            let t = m.turn.as_ref().expect("filtered on turn");
            let key = (t.agent_session.clone(), t.number);
            if !turns.contains(&key) {
                turns.push(key);
            }
        }
        let kept_turns: HashSet<(String, u64)> =
            turns.into_iter().take(keep_turns.map_or(usize::MAX, |n| n as usize)).collect();
        let now = jiff::Timestamp::now();
        let old = |created: &str| {
            keep_within.is_none_or(|d| {
                created
                    .parse::<jiff::Timestamp>()
                    .ok()
                    .zip(jiff::SignedDuration::try_from(d).ok())
                    .is_some_and(|(t, d)| t + d < now)
            })
        };
        let doomed: Vec<_> = auto
            .into_iter()
            .filter(|m| m.id != made)
            .filter(|m| {
                let t = m.turn.as_ref().expect("filtered on turn");
                !kept_turns.contains(&(t.agent_session.clone(), t.number)) && old(&m.created_at)
            })
            .collect();
        if keep_turns.is_none() && keep_within.is_none() {
            return Ok(0);
        }
        self.drop_moments(session, &doomed)?;
        Ok(doomed.len())
    }
}
