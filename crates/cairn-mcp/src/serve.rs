//! Starting a server: resolve the options into a handler, then run it over stdio or
//! streamable HTTP until the client leaves (stdio) or the process is interrupted (HTTP).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use cairn_lib::ops::permissions::parse_capabilities;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::error::ServeError;
use crate::profiles;
use crate::server::CairnServer;
use crate::state::{ServerState, WatchStarter};

/// How the server talks to its client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// JSON-RPC lines on stdin and stdout (the default; what MCP clients spawn).
    Stdio,
    /// Streamable HTTP at `http://ADDR/mcp`.
    Http {
        /// Where to listen; loopback unless a token is given.
        addr: SocketAddr,
        /// A bearer secret every request must carry (`Authorization: Bearer …`).
        token: Option<String>,
        /// Extra `Host` header values to accept (`HOST` or `HOST:PORT`), for clients that
        /// reach the server by a name or address other than the one it listens on.
        allowed_hosts: Vec<String>,
    },
}

/// Everything `cairn mcp` resolved from its flags and environment.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The store: a directory, or a remote store with its local catalog cache.
    pub store: cairn_lib::StoreAddress,
    /// Stdio or HTTP.
    pub transport: Transport,
    /// The profile's name (`cairn` by default).
    pub profile: String,
    /// The session the server is pinned to (`--session` / `CAIRN_SESSION`).
    pub pinned_session: Option<String>,
    /// Capabilities allowed for this server's lifetime (`--allow restore,remove`).
    pub allow: Vec<String>,
    /// Capabilities refused for this server's lifetime, whatever the store's settings or the
    /// profile allow (`--deny restore`).
    pub deny: Vec<String>,
    /// The folder holding codecalc session workspaces (`--workspace-root`).
    pub workspace_root: Option<PathBuf>,
    /// How to unlock the store when it is encrypted.
    pub unlock: cairn_lib::Unlock,
    /// Starts a change-journal watcher for a large directory the server saves (`mcp.watch`);
    /// `None` never starts one.
    pub watch: Option<WatchStarter>,
}

impl CairnServer {
    /// Opens the store and builds the handler `options` describe, refusing unknown profiles,
    /// capabilities and pinned sessions before any client connects.
    pub fn from_options(options: &ServeOptions) -> Result<Self, ServeError> {
        let profile = profiles::find(&options.profile)?;
        let allow = if options.allow.is_empty() { Vec::new() } else { parse_capabilities(&options.allow)? };
        let deny = if options.deny.is_empty() { Vec::new() } else { parse_capabilities(&options.deny)? };
        if profile.name == "codecalc" {
            match &options.workspace_root {
                Some(root) if root.is_dir() => {}
                Some(root) => {
                    return Err(ServeError::Usage(format!(
                        "--workspace-root {} is not a directory; pass the folder holding the session workspaces",
                        root.display()
                    )));
                }
                None => {
                    return Err(ServeError::Usage(
                        "the codecalc profile needs --workspace-root DIR, the folder holding the session workspaces".into(),
                    ));
                }
            }
        }
        let opener =
            cairn_lib::StoreOpener { address: options.store.clone(), unlock: options.unlock.clone() };
        let store = cairn_lib::Repository::open_located(&opener, cairn_lib::OpenMode::CreateIfMissing)?;
        // An invalid agent.* value refuses every gated call; say so now, not only on the first
        // refusal, so the user reading the server's log learns the fix.
        for warning in store.agent_warnings()? {
            crate::state::warn(&warning.render(&crate::words::CliWords));
        }
        if let Some(pinned) = &options.pinned_session {
            store.find_session(pinned)?;
        }
        let state = ServerState {
            store: Arc::new(store),
            pinned_session: options.pinned_session.clone(),
            allow,
            deny,
            workspace_root: options.workspace_root.clone(),
            debug: Default::default(),
            pi: Default::default(),
            watch: options.watch.clone(),
            watch_asked: Default::default(),
        };
        CairnServer::new(state, profile)
    }
}

/// Runs the server `options` describe until its client goes away (stdio) or the process is
/// interrupted (HTTP).
pub async fn serve(options: ServeOptions) -> Result<(), ServeError> {
    let server = CairnServer::from_options(&options)?;
    match options.transport {
        Transport::Stdio => crate::edges::serve_stdio(server).await,
        Transport::Http { addr, token, allowed_hosts } => {
            serve_http(server, addr, token, allowed_hosts).await
        }
    }
}

async fn serve_http(
    server: CairnServer,
    addr: SocketAddr,
    token: Option<String>,
    extra_hosts: Vec<String>,
) -> Result<(), ServeError> {
    let hosts = cairn_http::listen_policy(addr, token.as_deref(), &extra_hosts).map_err(ServeError::Usage)?;
    if let Some(warning) = cairn_http::unspecified_warning(addr, &extra_hosts) {
        crate::state::warn(&warning);
    }
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    let factory = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(factory.connection()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router =
        axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(session_ended_ok));
    if let Some(token) = token {
        let expected: Arc<str> = Arc::from(token);
        router = router.layer(axum::middleware::from_fn(move |req, next| {
            cairn_http::require_bearer(expected.clone(), req, next)
        }));
    }
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
    // Announce the address on stderr: with port 0 this is how a caller learns the port.
    let _ = writeln!(std::io::stderr(), "cairn mcp: listening on http://{bound}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))
}

/// Answers a session-ending `DELETE` with `200 OK`. rmcp answers `202 Accepted`, which the
/// official SDKs read as a failure ("Session termination failed: 202", logged by the Python
/// SDK on every close): they accept 200 or 204, as the transport spec's "the server MAY
/// respond … to terminate the session" is read by them. The session is closed either way.
async fn session_ended_ok(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::OK;
    }
    response
}
