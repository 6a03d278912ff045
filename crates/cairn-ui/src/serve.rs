//! Starting the UI: check the address and token (the rules of `cairn mcp --http`), open the
//! store, bind, hand the URL to the front, and serve until interrupted.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use cairn_lib::ops::resolve::CallContext;
use cairn_lib::ops::transcript::AgentPlaces;
use cairn_lib::{OpenMode, Repository, StoreAddress, StoreOpener, Unlock};

use crate::diffs::DiffCache;
use crate::error::UiError;
use crate::guard::TokenGuard;

/// Everything `cairn ui` resolved from its flags and environment.
#[derive(Debug, Clone)]
pub struct UiOptions {
    /// The store.
    pub store: StoreAddress,
    /// How to unlock the store when it is encrypted (see [`StoreOpener::from_env`]).
    pub unlock: Unlock,
    /// Where to listen; loopback unless a token is given.
    pub addr: SocketAddr,
    /// A secret every request must carry (the printed URL carries it once).
    pub token: Option<String>,
    /// Extra `Host` header values to accept (`HOST` or `HOST:PORT`).
    pub allowed_hosts: Vec<String>,
    /// The session calls are pinned to (`CAIRN_SESSION`), as for the CLI.
    pub pinned_session: Option<String>,
    /// Where the agents keep their sessions, for restoring and rewinding conversations.
    pub places: AgentPlaces,
}

/// What every request handler shares.
pub(crate) struct AppState {
    pub store: Repository,
    pub context: CallContext,
    pub places: AgentPlaces,
    pub diffs: DiffCache,
}

/// Runs the UI until the process is interrupted. `ready` gets the URL to open (with the token
/// in it, when there is one) once the server is listening.
pub async fn serve(options: UiOptions, ready: impl FnOnce(&str)) -> Result<(), UiError> {
    let UiOptions { store, unlock, addr, token, allowed_hosts, pinned_session, places } = options;
    let hosts = cairn_http::listen_policy(addr, token.as_deref(), &allowed_hosts).map_err(UiError::Usage)?;
    let store = Repository::open_located(&StoreOpener { address: store, unlock }, OpenMode::Existing)?;
    if let Some(pinned) = &pinned_session {
        store.find_session(pinned)?;
    }
    let state = Arc::new(AppState {
        store,
        context: CallContext { pinned_session },
        places,
        diffs: DiffCache::default(),
    });
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|source| UiError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(|source| UiError::Bind { addr, source })?;
    let mut router = routes(state);
    if let Some(token) = &token {
        let guard = TokenGuard {
            token: Arc::from(token.as_str()),
            cookie: Arc::from(format!("cairn_ui_{}", bound.port())),
        };
        router = router.layer(axum::middleware::from_fn(move |req, next| {
            crate::guard::require_token(guard.clone(), req, next)
        }));
    }
    // The Host check runs first: a rebinding page is refused before anything else is said.
    let hosts: Arc<[String]> = hosts.into();
    let router = router.layer(axum::middleware::from_fn(move |req, next| {
        cairn_http::require_host(hosts.clone(), req, next)
    }));
    let host = if bound.ip().is_unspecified() { "127.0.0.1".to_owned() } else { bound.ip().to_string() };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    let url = match &token {
        Some(t) => format!("http://{host}:{}/?token={t}", bound.port()),
        None => format!("http://{host}:{}/", bound.port()),
    };
    // The syntax stylesheet blocks the page's first paint: work it out before the first load.
    std::thread::spawn(|| {
        crate::diffs::stylesheet();
    });
    ready(&url);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| UiError::Serve(e.to_string()))
}

fn routes(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(crate::assets::index))
        .route("/app.js", get(crate::assets::script))
        .route("/diff.js", get(crate::assets::diff_script))
        .route("/layout.js", get(crate::assets::layout_script))
        .route("/timeline.js", get(crate::assets::timeline_script))
        .route("/app.css", get(crate::assets::style))
        .route("/syntax.css", get(crate::assets::syntax_style))
        .route("/favicon.ico", get(crate::assets::favicon))
        .route("/favicon.svg", get(crate::assets::favicon))
        .route("/api/sessions", get(crate::api::sessions))
        .route("/api/timeline", get(crate::api::timeline))
        .route("/api/show", get(crate::api::show))
        .route("/api/diff", get(crate::api::diff))
        .route("/api/diff/entries", get(crate::api::diff_entries))
        .route("/api/file-diff", get(crate::api::file_diff))
        .route("/api/file-raw", get(crate::api::file_raw))
        .route("/api/plan", get(crate::api::plan))
        .route("/api/stats", get(crate::api::stats))
        .route("/api/restore", post(crate::act::restore))
        .route("/api/rewind", post(crate::act::rewind))
        .route("/api/fork", post(crate::act::fork))
        .route("/api/name", post(crate::act::name))
        .route("/api/remove", post(crate::act::remove))
        .layer(axum::middleware::from_fn(crate::guard::same_origin))
        .with_state(state)
}
