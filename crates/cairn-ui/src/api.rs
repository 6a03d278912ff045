//! What the page reads: one handler per library read, its query string mapped onto the
//! operation's options. Each runs on a blocking thread (the store does file and SQLite I/O).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use cairn_lib::Repository;
use cairn_lib::ops::file_diff::FileDiffOptions;
use cairn_lib::ops::list::ShowOptions;
use cairn_lib::ops::moment::MomentShowOptions;
use cairn_lib::ops::resolve::CallContext;
use cairn_lib::ops::restore::RestoreOptions;
use cairn_lib::ops::session::SessionListOptions;
use cairn_lib::ops::store_stats::StoreStatsOptions;
use cairn_lib::ops::timeline::TimelineOptions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diffs::file::{file_view, image_type};
use crate::error::{ApiError, bad_request, internal};
use crate::serve::AppState;

pub(crate) type Reply = Result<Json<Value>, ApiError>;

/// Runs `f` with the store on a blocking thread and sends its result as JSON.
pub(crate) async fn blocking<T: Serialize + Send + 'static>(
    state: Arc<AppState>,
    f: impl FnOnce(&AppState, &Repository, &CallContext) -> Result<T, ApiError> + Send + 'static,
) -> Reply {
    let out = tokio::task::spawn_blocking(move || f(&state, &state.store, &state.context))
        .await
        .map_err(|e| internal(format!("the request's task stopped: {e}")))??;
    serde_json::to_value(out).map(Json).map_err(|e| internal(format!("could not encode the result: {e}")))
}

pub(crate) async fn sessions(State(state): State<Arc<AppState>>) -> Reply {
    blocking(state, |_, store, context| {
        Ok(store.session_list(&SessionListOptions { all: false, sort: Some("asc".into()) }, context)?)
    })
    .await
}

pub(crate) async fn timeline(
    State(state): State<Arc<AppState>>,
    Query(options): Query<TimelineOptions>,
) -> Reply {
    blocking(state, move |_, store, context| Ok(store.timeline(&options, context)?)).await
}

/// A point of the timeline: a moment with its parts' records, or one snapshot's record.
#[derive(Debug, Deserialize)]
pub(crate) struct PointQuery {
    #[serde(rename = "ref")]
    reference: String,
    session: Option<String>,
}

pub(crate) async fn show(State(state): State<Arc<AppState>>, Query(q): Query<PointQuery>) -> Reply {
    blocking(state, move |_, store, context| {
        let moment = MomentShowOptions { reference: q.reference.clone(), session: q.session.clone() };
        if let Ok(view) = store.moment_show(&moment, context) {
            return Ok(serde_json::json!({ "moment": view.moment, "snapshots": view.snapshots }));
        }
        let shown = ShowOptions { reference: q.reference, target: None, session: q.session };
        let snapshot = store.show(&shown, context)?;
        Ok(serde_json::json!({ "moment": null, "snapshots": [snapshot] }))
    })
    .await
}

/// Two points to compare, and how many entries of each directory part to send at first.
#[derive(Debug, Deserialize)]
pub(crate) struct DiffQuery {
    from: String,
    to: String,
    session: Option<String>,
    limit: Option<usize>,
}

pub(crate) async fn diff(State(state): State<Arc<AppState>>, Query(q): Query<DiffQuery>) -> Reply {
    blocking(state, move |state, store, context| {
        let diff = state.diffs.get(store, context, q.session.as_deref(), &q.from, &q.to)?;
        let limit = q.limit.unwrap_or(500).min(5000);
        let mut value = serde_json::to_value(&*diff).map_err(|e| internal(e.to_string()))?;
        for (part, json) in diff.parts.iter().zip(value["parts"].as_array_mut().into_iter().flatten()) {
            json["entries"] = serde_json::to_value(&part.entries[..part.entries.len().min(limit)])
                .map_err(|e| internal(e.to_string()))?;
        }
        Ok(value)
    })
    .await
}

/// A further page of one part's changed entries.
#[derive(Debug, Deserialize)]
pub(crate) struct EntriesQuery {
    from: String,
    to: String,
    session: Option<String>,
    part: usize,
    offset: usize,
    limit: Option<usize>,
}

pub(crate) async fn diff_entries(State(state): State<Arc<AppState>>, Query(q): Query<EntriesQuery>) -> Reply {
    blocking(state, move |state, store, context| {
        let diff = state.diffs.get(store, context, q.session.as_deref(), &q.from, &q.to)?;
        let part = diff.parts.get(q.part).ok_or_else(|| crate::error::bad_request("no such part"))?;
        let start = q.offset.min(part.entries.len());
        let end = (start + q.limit.unwrap_or(500).min(5000)).min(part.entries.len());
        Ok(serde_json::json!({ "offset": start, "total": part.entries.len(), "entries": &part.entries[start..end] }))
    })
    .await
}

/// One file of a directory diff: coloured, word-marked, folded rows (`diffs::file`).
pub(crate) async fn file_diff(
    State(state): State<Arc<AppState>>,
    Query(options): Query<FileDiffOptions>,
) -> Reply {
    blocking(state, move |_, store, context| Ok(file_view(store, context, options)?)).await
}

/// An image of a directory snapshot, whole.
#[derive(Debug, Deserialize)]
pub(crate) struct RawQuery {
    #[serde(rename = "ref")]
    reference: String,
    path: String,
    session: Option<String>,
}

/// The bytes of an image file, for an `<img>` beside its other version. Only images are sent
/// (by the path's extension, which decides the type; the browser is told not to sniff), and
/// with a policy that sandboxes them: an SVG opened on its own runs no script either.
pub(crate) async fn file_raw(State(state): State<Arc<AppState>>, Query(q): Query<RawQuery>) -> Response {
    let Some(media) = image_type(&q.path) else {
        let e = bad_request(format!("{:?} is not an image; only images are sent whole", q.path));
        return e.into_response();
    };
    let read = tokio::task::spawn_blocking(move || {
        state.store.file_bytes(&q.reference, &q.path, q.session.as_deref(), &state.context)
    })
    .await;
    let bytes = match read {
        Ok(Ok(Some(bytes))) => bytes,
        Ok(Ok(None)) => {
            let e = cairn_lib::Error::new(
                cairn_lib::ErrorKind::NotFound,
                "the snapshot has no file at that path",
            );
            return ApiError(e).into_response();
        }
        Ok(Err(e)) => return ApiError(e).into_response(),
        Err(e) => return internal(format!("the request's task stopped: {e}")).into_response(),
    };
    let headers = [
        (header::CONTENT_TYPE, media),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'; sandbox"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (headers, bytes).into_response()
}

/// The dry-run plan of restoring a snapshot (in place, or into `to`).
#[derive(Debug, Deserialize)]
pub(crate) struct PlanQuery {
    #[serde(rename = "ref")]
    reference: String,
    to: Option<String>,
    session: Option<String>,
}

pub(crate) async fn plan(State(state): State<Arc<AppState>>, Query(q): Query<PlanQuery>) -> Reply {
    blocking(state, move |_, store, context| {
        let options = RestoreOptions {
            reference: Some(q.reference),
            to: crate::act::restore_to(q.to)?,
            dry_run: true,
            session: q.session,
            ..RestoreOptions::default()
        };
        Ok(store.restore(&options, context)?)
    })
    .await
}

pub(crate) async fn stats(
    State(state): State<Arc<AppState>>,
    Query(options): Query<StoreStatsOptions>,
) -> Reply {
    blocking(state, move |_, store, context| Ok(store.store_stats(&options, context)?)).await
}
