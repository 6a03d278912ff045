//! Starting a server: resolve the options into a handler, then run it over stdio or
//! streamable HTTP until the client leaves (stdio) or the process is interrupted (HTTP).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use cairn_lib::Store;
use cairn_lib::ops::agent::parse_capabilities;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::error::ServeError;
use crate::profiles;
use crate::server::CairnServer;
use crate::state::ServerState;

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
    /// The folder holding codecalc session workspaces (`--workspace-root`).
    pub workspace_root: Option<PathBuf>,
    /// How to unlock the store when it is encrypted.
    pub unlock: cairn_lib::Unlock,
}

impl CairnServer {
    /// Opens the store and builds the handler `options` describe, refusing unknown profiles,
    /// capabilities and pinned sessions before any client connects.
    pub fn from_options(options: &ServeOptions) -> Result<Self, ServeError> {
        let profile = profiles::find(&options.profile)?;
        let allow = if options.allow.is_empty() { Vec::new() } else { parse_capabilities(&options.allow)? };
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
        let store =
            Store::open_address_with(&options.store, cairn_lib::OpenMode::CreateIfMissing, &options.unlock)?;
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
            workspace_root: options.workspace_root.clone(),
            debug: Default::default(),
            pi: Default::default(),
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

/// The `Host` header values an HTTP server at `addr` accepts: loopback names, the address it
/// listens on (unless that is 0.0.0.0 or ::, which names no host a client can use), and
/// `extra` (`--allowed-host`). Checking Host defeats DNS rebinding from a browser.
fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Result<Vec<String>, ServeError> {
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    if !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    for host in extra {
        let host = host.trim();
        // A bare IPv6 address is no authority (its colons read as a port), so it is let in as an
        // address; the Host check strips brackets before comparing.
        let valid = host.parse::<std::net::IpAddr>().is_ok()
            || (!host.is_empty()
                && !host.contains('/')
                && host.parse::<axum::http::uri::Authority>().is_ok_and(|a| {
                    !a.as_str().contains('@') && (a.port_u16().is_some() || a.host() == a.as_str())
                }));
        if !valid {
            return Err(ServeError::Usage(format!(
                "--allowed-host {host:?} is not a host name or address with an optional port; pass e.g. --allowed-host myhost.lan or --allowed-host 192.0.2.7:8765"
            )));
        }
        hosts.push(host.to_owned());
    }
    Ok(hosts)
}

async fn serve_http(
    server: CairnServer,
    addr: SocketAddr,
    token: Option<String>,
    extra_hosts: Vec<String>,
) -> Result<(), ServeError> {
    if token.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ServeError::Usage(
            "--token is empty, and no client could authenticate with an empty secret; pass a secret, e.g. --token \"$(openssl rand -hex 16)\"".into(),
        ));
    }
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(ServeError::Usage(format!(
            "{addr} is reachable from other machines; listen on 127.0.0.1, or pass --token SECRET so only clients holding it get in"
        )));
    }
    let hosts = allowed_hosts(addr, &extra_hosts)?;
    if addr.ip().is_unspecified() && extra_hosts.is_empty() {
        crate::state::warn(&format!(
            "listening on {addr} accepts only loopback Host headers; pass --allowed-host NAME for each name or address other machines use to reach this one"
        ));
    }
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    let factory = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(factory.connection()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(token) = token {
        let expected: Arc<str> = Arc::from(token);
        router = router.layer(axum::middleware::from_fn(move |req, next| {
            crate::http_auth::require_bearer(expected.clone(), req, next)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_hosts_add_the_bound_address_and_valid_extras_only() {
        let specific: SocketAddr = "192.0.2.7:8765".parse().unwrap();
        let hosts =
            allowed_hosts(specific, &["devbox.lan".into(), "fe80::1".into(), "[fe80::2]:80".into()]).unwrap();
        assert_eq!(hosts[3..], ["192.0.2.7", "devbox.lan", "fe80::1", "[fe80::2]:80"]);
        let any: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        assert_eq!(allowed_hosts(any, &[]).unwrap(), ["localhost", "127.0.0.1", "::1"]);
        for bad in ["", "a/b", "user@host", "host:port"] {
            let err = allowed_hosts(any, &[bad.into()]).unwrap_err().to_string();
            assert!(err.contains("is not a host name or address"), "{bad}: {err}");
        }
    }
}
