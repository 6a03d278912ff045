//! What the page changes: restore, rewind, fork, name, remove. Each is one library operation
//! called as the CLI calls it, so it takes the same safety snapshots (an in-place restore or
//! rewind saves the live tree first) and follows the same rules; the page asks for
//! confirmation before it sends any of these.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use cairn_lib::ops::moment::{MomentRemoveOptions, RewindOptions};
use cairn_lib::ops::name::NameOptions;
use cairn_lib::ops::remove::RemoveOptions;
use cairn_lib::ops::restore::{RestoreOptions, Restored};
use cairn_lib::ops::save::Progress;
use cairn_lib::ops::session::SessionCreateOptions;
use serde::Deserialize;

use crate::api::{Reply, blocking};
use crate::error::{ApiError, bad_request};
use crate::serve::AppState;

/// A restore: of a moment (every part, or `only` some kinds) or of a snapshot (in place, or
/// into the new or empty directory `to`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RestoreBody {
    #[serde(rename = "ref")]
    reference: String,
    to: Option<String>,
    #[serde(default)]
    only: Vec<String>,
    session: Option<String>,
}

pub(crate) async fn restore(State(state): State<Arc<AppState>>, Json(body): Json<RestoreBody>) -> Reply {
    blocking(state, move |state, store, context| {
        let RestoreBody { reference, to, only, session } = body;
        let options = RestoreOptions {
            reference: Some(reference),
            to: restore_to(to)?,
            only,
            session,
            ..RestoreOptions::default()
        };
        // The engine decides whether the reference is a moment or a snapshot.
        let restored =
            store.restore_ref(&options, Ok(state.places.clone()), context, &Progress::default())?;
        Ok(match restored {
            Restored::Snapshot(r) => serde_json::to_value(r).unwrap_or_default(),
            Restored::Moment(r) => serde_json::to_value(r).unwrap_or_default(),
        })
    })
    .await
}

/// The directory "restore to" names. The server's working directory means nothing to the
/// person at the page, so a relative path is refused rather than resolved against it.
pub(crate) fn restore_to(to: Option<String>) -> Result<Option<std::path::PathBuf>, ApiError> {
    let Some(to) = to.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()) else { return Ok(None) };
    let path = std::path::PathBuf::from(&to);
    if path.is_absolute() {
        return Ok(Some(path));
    }
    Err(bad_request(format!(
        "\"restore to\" {to:?} is a relative path, and the server cannot know which directory it is relative to; give the whole path, e.g. /home/you/restored"
    )))
}

/// A rewind to turn `turn` of workspace `workspace`, as `cairn rewind` run there: the body is
/// the library's [`RewindOptions`], so the page can ask for everything the CLI can.
pub(crate) async fn rewind(State(state): State<Arc<AppState>>, Json(body): Json<RewindOptions>) -> Reply {
    blocking(state, move |state, store, context| {
        // The CLI runs in the workspace: new conversation files go where its agent looks.
        let mut places = state.places.clone();
        places.cwd = body.workspace.clone();
        let options = RewindOptions { places, ..body };
        Ok(store.rewind(&options, context)?)
    })
    .await
}

pub(crate) async fn fork(
    State(state): State<Arc<AppState>>,
    Json(options): Json<SessionCreateOptions>,
) -> Reply {
    blocking(state, move |_, store, context| Ok(store.session_create(&options, context)?)).await
}

pub(crate) async fn name(State(state): State<Arc<AppState>>, Json(options): Json<NameOptions>) -> Reply {
    blocking(state, move |_, store, context| Ok(store.name(&options, context)?)).await
}

/// Removing timeline entries: moments (with the parts no other moment holds) or snapshots.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RemoveBody {
    #[serde(default)]
    moments: Vec<String>,
    #[serde(default)]
    snapshots: Vec<String>,
    session: Option<String>,
}

pub(crate) async fn remove(State(state): State<Arc<AppState>>, Json(body): Json<RemoveBody>) -> Reply {
    blocking(state, move |_, store, context| {
        let mut removed = serde_json::Map::new();
        if !body.moments.is_empty() {
            let options = MomentRemoveOptions {
                refs: body.moments,
                session: body.session.clone(),
                ..Default::default()
            };
            removed.insert(
                "moments".into(),
                serde_json::to_value(store.moment_remove(&options, context)?).unwrap_or_default(),
            );
        }
        if !body.snapshots.is_empty() {
            let options =
                RemoveOptions { refs: body.snapshots, session: body.session, ..RemoveOptions::default() };
            removed.insert(
                "snapshots".into(),
                serde_json::to_value(store.remove(&options, context)?).unwrap_or_default(),
            );
        }
        Ok(serde_json::Value::Object(removed))
    })
    .await
}
