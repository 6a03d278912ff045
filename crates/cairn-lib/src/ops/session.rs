//! `cairn session …`: named lines of snapshots. A fork copies records, never data.

use serde::{Deserialize, Serialize};

use super::list::SortOrder;
use super::resolve::CallContext;
use crate::Repository;
use crate::error::{Error, ErrorKind, Hint, Result};
use crate::id::SessionId;
use crate::name::validate_name;
use crate::session::Session;
use crate::store::LockGuard;

/// How long a session fork waits for a target's lock held by another command.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// How to list sessions. The CLI's help is the doc comment of each field; the MCP
/// description, written for an agent, is the `schemars` one.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct SessionListOptions {
    /// Sessions are always complete (a fork is one transaction); accepted for arcave parity.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub all: bool,
    /// `desc` (newest first) or `asc`.
    #[schemars(description = "\"desc\" (newest first, the default) or \"asc\" (oldest first).")]
    #[cfg_attr(feature = "clap", arg(long, default_value = "desc"))]
    pub sort: Option<String>,
}

/// The session to create.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct SessionCreateOptions {
    /// Its name (default: made from the time).
    #[schemars(
        description = "A unique name: letters, digits, '.', '_' and '-'. Omit it for a name made from the time."
    )]
    pub name: Option<String>,
    /// The session to fork (name or id).
    #[schemars(
        description = "A session to fork (name or id): the new session starts with its snapshots. Omit it for an empty session."
    )]
    #[cfg_attr(feature = "clap", arg(long))]
    pub from: Option<String>,
}

/// The session to delete.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct SessionDeleteOptions {
    /// The session (name or id).
    #[schemars(description = "The session to delete (name or id). baseline cannot be deleted.")]
    pub session: String,
    /// Also delete the current session (clearing the pointer).
    #[schemars(
        description = "Also delete the current session (clearing the pointer, so calls work in baseline) or the session this server is pinned to."
    )]
    #[serde(default)]
    #[cfg_attr(feature = "clap", arg(long))]
    pub force: bool,
}

/// The session to make current.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct SessionSetOptions {
    /// The session (name or id).
    #[schemars(description = "The session to make current (name or id).")]
    pub session: String,
}

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

impl Repository {
    fn mark_current(&self, mut session: Session, context: &CallContext) -> Result<Session> {
        let current = self.call_session(None, context).ok();
        session.current = current.is_some_and(|c| c.id == session.id);
        Ok(session)
    }

    /// Lists sessions (`desc`: newest first, the default).
    pub fn session_list(&self, options: &SessionListOptions, context: &CallContext) -> Result<SessionList> {
        let order = SortOrder::parse(options.sort.as_deref())?;
        let current = self.call_session(None, context).ok();
        let mut sessions = self.catalog().list_sessions()?;
        for s in &mut sessions {
            s.current = current.as_ref().is_some_and(|c| c.id == s.id);
        }
        order.apply(&mut sessions);
        Ok(SessionList { sessions })
    }

    /// Creates a session, empty or forked from `from` (records only: it costs the same for any
    /// amount of data). Without a name, one is made from the time.
    pub fn session_create(&self, options: &SessionCreateOptions, context: &CallContext) -> Result<Session> {
        let name = match options.name.as_deref() {
            Some(n) => {
                validate_name("session", n)?;
                n.to_owned()
            }
            None => format!("session-{}", jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S-%f")),
        };
        let from = options.from.as_deref().map(|f| self.find_session(f)).transpose()?;
        // A fork is a writer of every target its source holds: it must not copy a session while
        // a save, restore or remove of one of them is running.
        let _locks = match &from {
            Some(f) => self.lock_targets_waiting(&f.targets, "a session fork")?,
            None => Vec::new(),
        };
        let id = self.catalog().create_session(&name, from.map(|f| f.id))?;
        self.mark_current(self.find_session(&id.to_string())?, context)
    }

    /// Deletes a session and its snapshot records. `baseline` cannot be deleted; the current
    /// or pinned session only with `force` (which clears the pointer).
    pub fn session_delete(
        &self,
        options: &SessionDeleteOptions,
        context: &CallContext,
    ) -> Result<SessionDeleted> {
        let force = options.force;
        let target = self.find_session(&options.session)?;
        if target.id == SessionId::BASELINE {
            return Err(Error::invalid("baseline cannot be deleted"));
        }
        if let Some(pinned) = &context.pinned_session
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
        let freed_bytes = self.catalog().delete_session(target.id)?;
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

    /// [`Repository::lock_targets`], waiting up to [`LOCK_PATIENCE`] for a lock held elsewhere,
    /// holding none of the others meanwhile. A fork copies records only, and an agent's save
    /// or checkpoint of one of its targets, which ends well within that, should not make it
    /// fail; a lock still held then refuses as before, naming its holder.
    fn lock_targets_waiting(&self, targets: &[String], command: &str) -> Result<Vec<(LockGuard, LockGuard)>> {
        let deadline = std::time::Instant::now() + LOCK_PATIENCE;
        loop {
            match self.lock_targets(targets, command) {
                Err(e) if e.kind() == ErrorKind::Locked && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                taken => return taken,
            }
        }
    }

    /// The session a command given no `--session` works in.
    pub fn session_current(&self, context: &CallContext) -> Result<Session> {
        let mut s = self.find_session(&self.call_session(None, context)?.id.to_string())?;
        s.current = true;
        Ok(s)
    }

    /// Makes `session` the current one (refused when pinned).
    pub fn session_set(&self, options: &SessionSetOptions, context: &CallContext) -> Result<Session> {
        refuse_pinned(context)?;
        let s = self.find_session(&options.session)?;
        self.set_current_session_pointer(Some(s.id))?;
        self.session_current(context)
    }

    /// Clears the current session, so commands work in baseline again (refused when pinned).
    pub fn session_unset(&self, context: &CallContext) -> Result<Session> {
        refuse_pinned(context)?;
        self.set_current_session_pointer(None)?;
        self.session_current(context)
    }
}

fn refuse_pinned(context: &CallContext) -> Result<()> {
    match &context.pinned_session {
        Some(p) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!("these calls are pinned to session {p:?}, which outranks the current session"),
        )
        .hint(Hint::GiveOption("session"))
        .hint(Hint::Unpin)),
        None => Ok(()),
    }
}
