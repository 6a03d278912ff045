//! Resolving what a command acts on: the session, and a snapshot reference within it.
//!
//! References are scoped to what the command acts on: with no target given, `latest` and
//! `latest~N` count among the snapshots of the directory the caller stands in (the
//! repository's scope, the CLI's current directory), never another directory's; and an
//! in-place restore of a directory the caller does not stand in (nor above) needs its target
//! named ([`Repository::refuse_out_of_scope`]).

use std::path::Path;

use crate::Repository;
use crate::error::{Error, Hint, Operation, Result, echo};
use crate::id::{SessionId, SnapshotId};
use crate::session::{Session, SessionRef};
use crate::snapshot::Snapshot;
use crate::store::catalog::SnapshotFilter;
use crate::targets::TargetKind;

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
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
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
    pub fn call_session(&self, session: Option<&str>, context: &CallContext) -> Result<SessionRef> {
        self.resolve_session(&context.choice(session.map(str::to_owned)))
    }

    /// The session a command with `choice` works in.
    pub fn resolve_session(&self, choice: &SessionChoice) -> Result<SessionRef> {
        let named = choice.session.as_deref().or(choice.pinned.as_deref());
        let pointer = match named {
            Some(_) => None,
            None => self.current_session_pointer()?,
        };
        let looked_for =
            named.map(str::to_owned).or(pointer.clone()).unwrap_or(SessionId::BASELINE.to_string());
        let found = self.catalog().find_session_ref(&looked_for)?;
        found.ok_or_else(|| match pointer {
            Some(id) => Error::not_found(format!("the current session {id} no longer exists"))
                .hint(Hint::Run(Operation::UnsetSession))
                .hint(Hint::Run(Operation::SetSession)),
            None => Error::not_found(format!("no session {:?}", echo(&looked_for)))
                .hint(Hint::Run(Operation::ListSessions)),
        })
    }

    /// Resolves `reference` (an id, a unique id prefix, a name, `latest` or `latest~N`) among
    /// the snapshots of `session`, optionally of one target. Safety snapshots are found by id
    /// only. With no target and a scope ([`Repository::set_scope`]), `latest~N` counts among
    /// the snapshots of the scope's directory target only.
    pub fn resolve_snapshot(
        &self,
        session: &SessionRef,
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
        if let Some(back) = latest_offset(reference)? {
            return self.resolve_latest(session, back, target);
        }
        let named = self.catalog().named_snapshots(session.id, reference, target)?;
        match named.as_slice() {
            [one] => return Ok(one.clone()),
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

impl Repository {
    /// The snapshot `back` places before the newest of the session's (of `target`'s, when
    /// given), counted among the scope's directory target when no target was given.
    fn resolve_latest(&self, session: &SessionRef, back: usize, target: Option<&str>) -> Result<Snapshot> {
        let scoped = match (target, self.scope()) {
            (None, Some(scope)) => {
                let targets = self.catalog().snapshot_targets(session.id)?;
                let Some(key) = scope_target(targets.iter().map(|(t, kind)| (t.as_str(), *kind)), scope)
                else {
                    return Err(Error::not_found(format!(
                        "session {:?} has no snapshot of {} (the current directory) or of a directory above it; \
                         `latest` means the newest snapshot of the directory you are in",
                        session.name,
                        echo(&scope.display().to_string())
                    ))
                    .hint(Hint::GiveOption("target"))
                    .hint(Hint::Run(Operation::ListSnapshots)));
                };
                Some(key)
            }
            _ => None,
        };
        let target = scoped.as_deref().or(target);
        let of = target.map(|t| format!(" of {t}")).unwrap_or_default();
        match self.catalog().latest_snapshot(session.id, target, back)? {
            Ok(snapshot) => Ok(snapshot),
            Err(0) => Err(Error::not_found(format!("session {:?} has no snapshots{of}", session.name))
                .hint(Hint::Run(Operation::Save))),
            Err(count) => Err(Error::not_found(format!(
                "latest~{back} goes back past the oldest of the {count} snapshot(s){of} in session {:?}",
                session.name
            ))
            .hint(Hint::Run(Operation::ListSnapshots))),
        }
    }

    /// Refuses an in-place restore of `snapshot`'s directory when the caller stands neither in
    /// it nor above it and named no target: a reference such as a name or an id can point at
    /// another directory's snapshot, and writing over a directory the user is not looking at is
    /// never what `restore` in this directory means (a dry run, which changes nothing and names
    /// the directory it would write, is let through). Without a scope (an MCP server, the web
    /// app) every call names what it restores, and nothing is refused.
    pub fn refuse_out_of_scope(&self, snapshot: &Snapshot, target_given: bool) -> Result<()> {
        let Some(scope) = self.scope() else { return Ok(()) };
        if target_given || snapshot.kind != TargetKind::Dir {
            return Ok(());
        }
        let dir = Path::new(&snapshot.target);
        // A directory that is not there has nothing to write over (an import's `./NAME`).
        if scope.starts_with(dir) || dir.starts_with(scope) || !dir.exists() {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "snapshot {} is of {}, not of the current directory {}, and restoring it in place writes over {}",
            snapshot.id,
            echo(&snapshot.target),
            echo(&scope.display().to_string()),
            echo(&snapshot.target),
        ))
        .hint(Hint::GiveOneOf(&["target", "to"]))
        .with_code("OUT_OF_SCOPE"))
    }
}

/// How far back a `latest` reference goes: `latest` is 0, `latest~N` is N; `None` when the
/// reference is not of that form.
fn latest_offset(reference: &str) -> Result<Option<usize>> {
    let Some(rest) = reference.strip_prefix("latest") else { return Ok(None) };
    if rest.is_empty() {
        return Ok(Some(0));
    }
    let Some(n) = rest.strip_prefix('~') else { return Ok(None) };
    n.parse::<usize>().map(Some).map_err(|_| {
        Error::invalid(format!(
            "{:?} counts back from the newest snapshot with a number: `latest~1` is the one before it",
            echo(reference)
        ))
    })
}

/// The directory target the scope belongs to: the deepest directory among `targets` (each
/// with its kind) that is the scope or holds it.
pub(crate) fn scope_target<'a>(
    targets: impl IntoIterator<Item = (&'a str, TargetKind)>,
    scope: &Path,
) -> Option<String> {
    targets
        .into_iter()
        .filter(|(target, kind)| *kind == TargetKind::Dir && scope.starts_with(Path::new(target)))
        .map(|(target, _)| target.to_owned())
        .max_by_key(|t| Path::new(t).components().count())
}

fn not_found(reference: &str, session: &SessionRef) -> Error {
    Error::not_found(format!("no snapshot {:?} in session {:?}", echo(reference), session.name))
        .hint(Hint::Run(Operation::ListSnapshots))
        .with_code("SNAPSHOT_NOT_FOUND")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::restore::RestoreOptions;
    use crate::ops::save::SaveOptions;

    #[test]
    fn latest_counts_back_among_the_targets_snapshots_without_safety_ones_and_says_how_many() {
        let dir = tempfile::tempdir().unwrap();
        let (work, other) = (dir.path().join("work"), dir.path().join("other"));
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let mut repo = Repository::open(&dir.path().join("store")).unwrap();
        let context = CallContext::default();
        let save = |path: &Path, name: Option<&str>| {
            let options = SaveOptions {
                target: path.display().to_string(),
                name: name.map(str::to_owned),
                ..SaveOptions::default()
            };
            repo.save(&options, &context).unwrap().snapshot
        };
        let mut saved = Vec::new();
        for i in 0..3 {
            std::fs::write(work.join("f"), format!("{i}")).unwrap();
            saved.push(save(&work, (i == 1).then_some("middle")));
        }
        let elsewhere = save(&other, Some("middle"));
        // A restore's safety snapshot is never `latest`.
        std::fs::write(work.join("f"), "unsaved").unwrap();
        let restore = RestoreOptions {
            reference: Some(saved[0].id.to_string()),
            target: Some(work.display().to_string()),
            ..RestoreOptions::default()
        };
        let restored = repo.restore(&restore, &context).unwrap();
        assert!(restored.safety_snapshot.is_some());

        let session = repo.call_session(None, &context).unwrap();
        let work_key = work.display().to_string();
        let id = |reference: &str, target: Option<&str>| {
            repo.resolve_snapshot(&session, reference, target).map(|s| s.id)
        };
        assert_eq!(id("latest", Some(&work_key)).unwrap(), saved[2].id);
        assert_eq!(id("latest~2", Some(&work_key)).unwrap(), saved[0].id);
        assert_eq!(id("latest", None).unwrap(), elsewhere.id, "no scope: the session's newest");
        let past = id("latest~3", Some(&work_key)).unwrap_err().to_string();
        assert!(past.contains("past the oldest of the 3 snapshot(s) of"), "{past}");
        assert_eq!(id("middle", Some(&work_key)).unwrap(), saved[1].id);
        let both = id("middle", None).unwrap_err().to_string();
        assert!(both.contains("names snapshots of several targets"), "{both}");

        // Standing in a directory below the target, `latest` is the target's.
        repo.set_scope(Some(work.join("sub")));
        let latest = |repo: &Repository, reference: &str| repo.resolve_snapshot(&session, reference, None);
        assert_eq!(latest(&repo, "latest~1").unwrap().id, saved[1].id);
        repo.set_scope(Some(dir.path().to_owned()));
        let outside = latest(&repo, "latest").unwrap_err().to_string();
        assert!(outside.contains("(the current directory) or of a directory above it"), "{outside}");
    }
}
