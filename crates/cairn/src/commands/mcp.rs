//! `cairn mcp`: run the MCP server agents use, on stdio or streamable HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;

use cairn_lib::ops::permissions::Capability;
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::opener;
use crate::error::{CommandError, CommandResult};
use crate::printer::Printer;

/// Flags of `cairn mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio, e.g. 127.0.0.1:8765.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// A secret HTTP clients must send as `Authorization: Bearer SECRET`.
    #[arg(long, requires = "http", value_name = "SECRET")]
    pub token: Option<String>,
    /// Also accept requests whose Host header is HOST[:PORT] (repeatable), e.g. the name other
    /// machines use to reach this one. Loopback names and the --http address are always accepted.
    #[arg(long = "allowed-host", requires = "http", value_name = "HOST[:PORT]")]
    pub allowed_hosts: Vec<String>,
    /// The tool set: cairn (the default), codecalc, arcave, pi or debug.
    #[arg(long, default_value = "cairn", value_name = "NAME")]
    pub profile: String,
    /// Pin the server to this session; session_set and session_unset are then refused. Under
    /// the arcave profile, ARCAVE_SESSION pins it too.
    #[arg(long, env = "CAIRN_SESSION", value_name = "SESSION")]
    pub session: Option<String>,
    #[arg(long, value_delimiter = ',', value_name = "CAPABILITY", help = allow_help())]
    pub allow: Vec<String>,
    /// Refuse these to agents for this server's lifetime (comma-separated), whatever the store's
    /// settings or the profile allow; e.g. --deny restore,remove under --profile arcave.
    #[arg(long, value_delimiter = ',', value_name = "CAPABILITY")]
    pub deny: Vec<String>,
    /// The folder holding codecalc session workspaces (codecalc profile).
    #[arg(long, value_name = "DIR")]
    pub workspace_root: Option<PathBuf>,
}

/// The session the server is pinned to: `--session` (or `CAIRN_SESSION`), else, under the arcave
/// profile, `ARCAVE_SESSION`, which pins arcave's own server and which its refusals name.
fn pinned_session(session: Option<String>, profile: &str) -> Option<String> {
    let arcave = || (profile == "arcave").then(|| std::env::var("ARCAVE_SESSION").ok()).flatten();
    session.filter(|s| !s.is_empty()).or_else(|| arcave().filter(|s| !s.is_empty()))
}

/// The help of `--allow`, built from the capability list so a new capability is never missing.
fn allow_help() -> String {
    let words: Vec<&str> = Capability::ALL.iter().map(|c| c.as_str()).collect();
    format!(
        "Allow these to agents for this server's lifetime (comma-separated): {}, or all",
        words.join(", ")
    )
}

/// Starts `cairn watch` in the background for a directory the server saved (or hands the
/// directory to the store's running watcher), as the agent hooks do.
fn watch_starter(global: &GlobalArgs) -> cairn_mcp::WatchStarter {
    let global = GlobalArgs { store: global.store.clone(), json: false, open_mode: global.open_mode };
    cairn_mcp::WatchStarter(std::sync::Arc::new(
        move |store: &cairn_lib::Repository, dir: &std::path::Path| {
            let options = cairn_lib::ops::watch::WatchOptions { dirs: vec![dir.to_path_buf()] };
            super::watch::ensure_detached(&global, store, &options).map_err(|e| crate::error::render(&e))
        },
    ))
}

/// Runs the server until its client leaves (stdio) or the process is interrupted (HTTP).
pub fn run(global: &GlobalArgs, args: McpArgs, _printer: &Printer) -> CommandResult {
    let opener = opener(global)?;
    let options = cairn_mcp::ServeOptions {
        store: opener.address,
        unlock: opener.unlock,
        transport: match args.http {
            Some(addr) => {
                cairn_mcp::Transport::Http { addr, token: args.token, allowed_hosts: args.allowed_hosts }
            }
            None => cairn_mcp::Transport::Stdio,
        },
        profile: args.profile.clone(),
        pinned_session: pinned_session(args.session, &args.profile),
        allow: args.allow,
        deny: args.deny,
        workspace_root: args.workspace_root,
        watch: Some(watch_starter(global)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| {
        CommandError::new(cairn_lib::ErrorKind::Io, format!("could not start the async runtime: {e}"))
    })?;
    runtime.block_on(cairn_mcp::serve(options)).map_err(|err| match err {
        cairn_mcp::ServeError::Store(e) => CommandError::from(e),
        e @ (cairn_mcp::ServeError::UnknownProfile { .. } | cairn_mcp::ServeError::Usage(_)) => {
            crate::error::usage(e.to_string())
        }
        e => CommandError::new(cairn_lib::ErrorKind::Io, e.to_string()),
    })
}
