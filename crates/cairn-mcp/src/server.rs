//! The MCP request handler: lists and dispatches tools through the profile's registry, serves
//! the snapshot resources, and tells clients when this server changed snapshots.
//!
//! Change notifications travel two ways, by protocol revision: up to 2025-11-25 a session
//! subscribes with `resources/subscribe` and the notifications go to that session's peer; from
//! 2026-07-28 on a client opens a `subscriptions/listen` stream and notifications go only through
//! it. Listen streams are kept server-wide because 2026-07-28 HTTP is sessionless: the request
//! that saves is not served by the handler that holds the stream.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    Implementation, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSendError, SubscriptionSink};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::error::{ServeError, ToolError};
use crate::profiles::Profile;
use crate::registry::{ToolOutput, ToolSpec};
use crate::state::ServerState;

/// One MCP connection's handler. Clones share the store and tools; [`CairnServer::connection`]
/// makes one with its own resource subscriptions for each new HTTP session.
#[derive(Debug, Clone)]
pub struct CairnServer {
    state: Arc<ServerState>,
    profile: &'static Profile,
    tools: Arc<Vec<ToolSpec>>,
    subscriptions: Arc<Mutex<BTreeSet<String>>>,
    listeners: Arc<Listeners>,
}

/// The open `subscriptions/listen` streams of every connection of one server.
#[derive(Debug, Default)]
struct Listeners {
    streams: Mutex<(u64, BTreeMap<u64, SubscriptionSink>)>,
}

impl Listeners {
    /// The streams, even after a panic elsewhere poisoned the lock: the map stays consistent
    /// because every change to it is a single insert or remove.
    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, BTreeMap<u64, SubscriptionSink>)> {
        self.streams.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `sink` until [`Listeners::remove`] is called with the returned key.
    fn add(&self, sink: SubscriptionSink) -> u64 {
        let mut guard = self.lock();
        let (next, streams) = &mut *guard;
        *next += 1;
        streams.insert(*next, sink);
        *next
    }

    fn remove(&self, key: u64) {
        self.lock().1.remove(&key);
    }

    /// A copy of the open streams, so no lock is held while sending.
    fn snapshot(&self) -> Vec<(u64, SubscriptionSink)> {
        self.lock().1.iter().map(|(k, s)| (*k, s.clone())).collect()
    }
}

impl CairnServer {
    /// A handler serving `profile` over `state`.
    pub fn new(state: ServerState, profile: &'static Profile) -> Result<Self, ServeError> {
        Ok(Self {
            state: Arc::new(state),
            profile,
            tools: Arc::new((profile.tools)()?),
            subscriptions: Arc::default(),
            listeners: Arc::default(),
        })
    }

    /// A handler for a new connection: same store, tools and listen streams, no legacy
    /// `resources/subscribe` subscriptions yet.
    pub fn connection(&self) -> Self {
        Self { subscriptions: Arc::default(), ..self.clone() }
    }

    async fn run(
        &self,
        name: &str,
        arguments: rmcp::model::JsonObject,
    ) -> Result<(Result<ToolOutput, ToolError>, bool), McpError> {
        let spec = self.tools.iter().find(|t| t.name() == name).ok_or_else(|| {
            let known: Vec<&str> = self.tools.iter().map(ToolSpec::name).collect();
            McpError::invalid_params(
                format!("unknown tool {name:?}; this server's tools are: {}", known.join(", ")),
                None,
            )
        })?;
        Ok((spec.call(self.state.clone(), arguments).await, spec.changes_snapshots))
    }

    /// Tells clients their view of the snapshots is stale: the list changed, and each subscribed
    /// resource may have too. A client that has gone away is not an error.
    async fn announce_change(&self, context: &RequestContext<RoleServer>) {
        if !self.profile.resources.any() {
            return;
        }
        // A request carrying its protocol revision in `_meta` comes from a client on the
        // 2026-07-28 lifecycle, which takes notifications only on listen streams.
        if context.meta.protocol_version().is_none() {
            let _ = context.peer.notify_resource_list_changed().await;
            let subscribed: Vec<String> =
                self.subscriptions.lock().map(|s| s.iter().cloned().collect()).unwrap_or_default();
            for uri in subscribed {
                let _ =
                    context.peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await;
            }
        }
        for (key, sink) in self.listeners.snapshot() {
            if notify_stream(&sink).await.is_err() {
                self.listeners.remove(key);
            }
        }
    }
}

/// Sends one change to a listen stream: list_changed if it asked for it, `updated` for each
/// resource it subscribed to. An error means the stream is gone.
async fn notify_stream(sink: &SubscriptionSink) -> Result<(), SubscriptionSendError> {
    let accepted = sink.accepted().clone();
    if accepted.resources_list_changed == Some(true) {
        sink.notify_resource_list_changed().await?;
    }
    for uri in accepted.resource_subscriptions.unwrap_or_default() {
        sink.notify_resource_updated(uri).await?;
    }
    Ok(())
}

/// A failed call as the agent sees it: `isError` with the one-sentence message, in the
/// profile's words, as text.
fn failure(err: &ToolError, profile: &Profile) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(err.render(profile.words))])
}

impl ServerHandler for CairnServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if self.profile.resources.any() {
            capabilities = ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .build();
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.profile.instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.iter().map(|t| t.tool.clone()).collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = request.arguments.unwrap_or_default();
        let result = match self.run(&request.name, arguments).await? {
            (Ok(map), changed) => {
                if changed {
                    self.announce_change(&context).await;
                }
                CallToolResult::structured(serde_json::Value::Object(map))
            }
            // An invalid agent setting was already reported on stderr by the permission check.
            (Err(err), _) => failure(&err, self.profile),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let items = self.profile.resources.list();
        Ok(ListResourcesResult::with_all_items(items))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let items = self.profile.resources.templates();
        Ok(ListResourceTemplatesResult::with_all_items(items))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        let set = self.profile.resources;
        if !set.serves(&uri) {
            return Err(McpError::resource_not_found(
                format!("no resource {uri:?}; this server serves {}", set.describe()),
                None,
            ));
        }
        let state = self.state.clone();
        let read_uri = uri.clone();
        let read = tokio::task::spawn_blocking(move || set.read(&state, &read_uri)).await.map_err(|e| {
            McpError::internal_error(format!("reading {uri} stopped unexpectedly ({e})"), None)
        })?;
        match read {
            Ok(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            Err(err) => Err(McpError::resource_not_found(err.render(self.profile.words), None)),
        }
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(crate::edges::malformed_request(&request))
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let set = self.profile.resources;
        let mut accepted = requested.supported_by(&self.get_info().capabilities);
        // Only resources this profile serves can change; other URIs are dropped from the ack.
        accepted.resource_subscriptions = accepted
            .resource_subscriptions
            .map(|uris| uris.into_iter().filter(|uri| set.serves(uri)).collect::<Vec<_>>())
            .filter(|uris| !uris.is_empty());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let key = self.listeners.add(context.sink().clone());
        context.cancelled().await;
        self.listeners.remove(key);
        Ok(())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.profile.resources.serves(&request.uri) {
            return Err(McpError::resource_not_found(
                format!("no resource {:?} to subscribe to", request.uri),
                None,
            ));
        }
        if let Ok(mut s) = self.subscriptions.lock() {
            s.insert(request.uri);
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Ok(mut s) = self.subscriptions.lock() {
            s.remove(&request.uri);
        }
        Ok(())
    }
}
