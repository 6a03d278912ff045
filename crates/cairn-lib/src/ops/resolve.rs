//! Resolving what a command acts on: the session, and a snapshot reference within it.

use crate::Repository;
use crate::error::{Error, Hint, Operation, Result, echo};
use crate::id::{SessionId, SnapshotId};
use crate::session::Session;
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;

/// Which session a command works in, in order of precedence: the command's own `--session`,
/// a pinned session (`CAIRN_SESSION`, a pinned MCP server), the store's current-session pointer,
/// then `baseline`.
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct SessionChoice {
    /// The session named on this call (name or id).
    pub session: Option<String>,
    /// The session the caller is pinned to (environment or server flag).
    pub pinned: Option<String>,
}

/// What a front knows about a call beyond its options: the session it is pinned to
/// (`CAIRN_SESSION` for the CLI, `--session` / `CAIRN_SESSION` for a server). No option field
/// is the pin, so an operation's options read the same from every front.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The session the caller is pinned to, outranking the current session.
    pub pinned_session: Option<String>,
}

impl CallContext {
    /// The session choice of a call that named `session` (or none).
    pub fn choice(&self, session: Option<String>) -> SessionChoice {
        SessionChoice { session, pinned: self.pinned_session.clone() }
    }
}

impl SessionChoice {
    /// A choice with only the per-call session.
    pub fn call(session: Option<String>) -> Self {
        Self { session, pinned: None }
    }
}

impl Repository {
    /// Finds a session by name or id.
    pub fn find_session(&self, name_or_id: &str) -> Result<Session> {
        self.catalog().find_session(name_or_id)?.ok_or_else(|| {
            Error::not_found(format!("no session {:?}", echo(name_or_id)))
                .hint(Hint::Run(Operation::ListSessions))
        })
    }

    /// The session a call works in: `session`, named on the call, else the pin of `context`,
    /// else the current session, else `baseline`.
    pub fn call_session(&self, session: Option<&str>, context: &CallContext) -> Result<Session> {
        self.resolve_session(&context.choice(session.map(str::to_owned)))
    }

    /// The session a command with `choice` works in.
    pub fn resolve_session(&self, choice: &SessionChoice) -> Result<Session> {
        if let Some(s) = choice.session.as_deref().or(choice.pinned.as_deref()) {
            return self.find_session(s);
        }
        match self.current_session_pointer()? {
            Some(id) => self.catalog().find_session(&id)?.ok_or_else(|| {
                Error::not_found(format!("the current session {id} no longer exists"))
                    .hint(Hint::Run(Operation::UnsetSession))
                    .hint(Hint::Run(Operation::SetSession))
            }),
            None => self.find_session(&SessionId::BASELINE.to_string()),
        }
    }

    /// Resolves `reference` (an id, a unique id prefix, a name, or `latest`) among the snapshots
    /// of `session`, optionally of one target. Safety snapshots are found by id only.
    pub fn resolve_snapshot(
        &self,
        session: &Session,
        reference: &str,
        target: Option<&str>,
    ) -> Result<Snapshot> {
        let reference = reference.trim();
        if reference.is_empty() {
            return Err(Error::invalid("the snapshot reference is empty; pass an id, a name or `latest`"));
        }
        if let Ok(id) = reference.parse::<SnapshotId>() {
            return self.catalog().get_snapshot(session.id, id)?.ok_or_else(|| not_found(reference, session));
        }
        let filter = SnapshotFilter { target: target.map(str::to_owned), include_safety: false };
        let all = self.catalog().list_snapshots(session.id, &filter)?;
        if reference == "latest" {
            return all.into_iter().last().ok_or_else(|| {
                Error::not_found(format!(
                    "session {:?} has no snapshots{}",
                    session.name,
                    target.map(|t| format!(" of {t}")).unwrap_or_default()
                ))
                .hint(Hint::Run(Operation::Save))
            });
        }
        let named: Vec<&Snapshot> = all.iter().filter(|s| s.name.as_deref() == Some(reference)).collect();
        match named.as_slice() {
            [one] => return Ok((*one).clone()),
            [] => {}
            many => {
                let targets: Vec<&str> = many.iter().map(|s| s.target.as_str()).collect();
                return Err(Error::invalid(format!(
                    "{reference:?} names snapshots of several targets ({})",
                    targets.join(", ")
                ))
                .hint(Hint::GiveOption("target"))
                .purpose("too"));
            }
        }
        let prefix = reference.to_ascii_lowercase();
        let include_safety = SnapshotFilter { target: target.map(str::to_owned), include_safety: true };
        let mut matches: Vec<Snapshot> = self
            .catalog()
            .list_snapshots(session.id, &include_safety)?
            .into_iter()
            .filter(|s| prefix.len() >= 4 && s.id.to_string().starts_with(&prefix))
            .collect();
        if matches.len() > 1 {
            return Err(Error::invalid(format!(
                "{:?} matches {} snapshot ids; give more of the id",
                echo(reference),
                matches.len()
            )));
        }
        matches.pop().ok_or_else(|| not_found(reference, session))
    }
}

fn not_found(reference: &str, session: &Session) -> Error {
    Error::not_found(format!("no snapshot {:?} in session {:?}", echo(reference), session.name))
        .hint(Hint::Run(Operation::ListSnapshots))
        .with_code("SNAPSHOT_NOT_FOUND")
}
