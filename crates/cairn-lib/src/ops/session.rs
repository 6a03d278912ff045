//! `cairn session …`: named lines of snapshots. A fork copies records, never data.

use serde::Serialize;

use super::list::parse_sort;
use super::resolve::SessionChoice;
use crate::error::{Error, ErrorKind, Hint, Result};
use crate::id::SessionId;
use crate::name::validate_name;
use crate::session::Session;
use crate::store::{LockGuard, Store};

/// Every session, wrapped in an object.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SessionList {
    /// The sessions, in the order asked for.
    pub sessions: Vec<Session>,
}

/// What deleting a session did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SessionDeleted {
    /// The deleted session's id.
    pub session: SessionId,
    /// Always true on success.
    pub deleted: bool,
    /// Logical bytes of the snapshot records that no session holds any more (`cairn gc`
    /// reclaims their data).
    pub freed_bytes: u64,
}

impl Store {
    fn mark_current(&self, mut session: Session, choice: &SessionChoice) -> Result<Session> {
        let current =
            self.resolve_session(&SessionChoice { session: None, pinned: choice.pinned.clone() }).ok();
        session.current = current.is_some_and(|c| c.id == session.id);
        Ok(session)
    }

    /// Lists sessions (`desc`: newest first, the default).
    pub fn session_list(&self, sort: Option<&str>, choice: &SessionChoice) -> Result<SessionList> {
        let newest_first = parse_sort(sort)?;
        let current =
            self.resolve_session(&SessionChoice { session: None, pinned: choice.pinned.clone() }).ok();
        let mut sessions = self.catalog.list_sessions()?;
        for s in &mut sessions {
            s.current = current.as_ref().is_some_and(|c| c.id == s.id);
        }
        if newest_first {
            sessions.reverse();
        }
        Ok(SessionList { sessions })
    }

    /// Creates a session, empty or forked from `from` (records only: it costs the same for any
    /// amount of data). Without a name, one is made from the time.
    pub fn session_create(
        &self,
        name: Option<&str>,
        from: Option<&str>,
        choice: &SessionChoice,
    ) -> Result<Session> {
        let name = match name {
            Some(n) => {
                validate_name("session", n)?;
                n.to_owned()
            }
            None => format!("session-{}", jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S-%f")),
        };
        let from = from.map(|f| self.find_session(f)).transpose()?;
        // A fork is a writer of every target its source holds: it must not copy a session while
        // a save, restore or remove of one of them is running.
        let _locks = match &from {
            Some(f) => self.lock_targets(&f.targets, "a session fork")?,
            None => Vec::new(),
        };
        let id = self.catalog.create_session(&name, from.map(|f| f.id))?;
        self.mark_current(self.find_session(&id.to_string())?, choice)
    }

    /// Deletes a session and its snapshot records. `baseline` cannot be deleted; the current
    /// or pinned session only with `force` (which clears the pointer).
    pub fn session_delete(
        &self,
        session: &str,
        force: bool,
        choice: &SessionChoice,
    ) -> Result<SessionDeleted> {
        let target = self.find_session(session)?;
        if target.id == SessionId::BASELINE {
            return Err(Error::invalid("baseline cannot be deleted"));
        }
        if let Some(pinned) = &choice.pinned
            && self.find_session(pinned).is_ok_and(|p| p.id == target.id)
            && !force
        {
            return Err(Error::conflict(format!("session {:?} is the pinned session", target.name))
                .hint(Hint::SetOption("force"))
                .purpose("to delete it anyway"));
        }
        let pointer = self.current_session_pointer()?;
        let is_current = pointer.as_deref() == Some(&target.id.to_string());
        if is_current && !force {
            return Err(Error::conflict(format!("session {:?} is the current session", target.name))
                .hint(Hint::SetOption("force"))
                .purpose("to delete it and clear the pointer (later calls then work in baseline)"));
        }
        let _locks = self.lock_targets(&target.targets, "a session delete")?;
        let freed_bytes = self.catalog.delete_session(target.id)?;
        if is_current {
            self.set_current_session_pointer(None)?;
        }
        // A target no session holds any more keeps no stat cache: the cache references the
        // target's data, and gc could not reclaim it otherwise.
        for t in &target.targets {
            self.forget_target_if_empty(t)?;
        }
        Ok(SessionDeleted { session: target.id, deleted: true, freed_bytes })
    }

    /// Takes the writer locks of `targets` (sorted, so two commands never wait on each other in
    /// opposite orders), refusing as soon as one is held elsewhere.
    pub(crate) fn lock_targets(
        &self,
        targets: &[String],
        command: &str,
    ) -> Result<Vec<(LockGuard, LockGuard)>> {
        let mut sorted: Vec<&String> = targets.iter().collect();
        sorted.sort();
        sorted.dedup();
        sorted.into_iter().map(|t| self.lock_target(t, command)).collect()
    }

    /// The session a command given no `--session` works in.
    pub fn session_current(&self, choice: &SessionChoice) -> Result<Session> {
        let mut s = self.resolve_session(&SessionChoice { session: None, pinned: choice.pinned.clone() })?;
        s.current = true;
        Ok(s)
    }

    /// Makes `session` the current one (refused when pinned).
    pub fn session_set(&self, session: &str, choice: &SessionChoice) -> Result<Session> {
        refuse_pinned(choice)?;
        let s = self.find_session(session)?;
        self.set_current_session_pointer(Some(s.id))?;
        self.session_current(choice)
    }

    /// Clears the current session, so commands work in baseline again (refused when pinned).
    pub fn session_unset(&self, choice: &SessionChoice) -> Result<Session> {
        refuse_pinned(choice)?;
        self.set_current_session_pointer(None)?;
        self.session_current(choice)
    }
}

fn refuse_pinned(choice: &SessionChoice) -> Result<()> {
    match &choice.pinned {
        Some(p) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!("these calls are pinned to session {p:?}, which outranks the current session"),
        )
        .hint(Hint::GiveOption("session"))
        .hint(Hint::Unpin)),
        None => Ok(()),
    }
}
