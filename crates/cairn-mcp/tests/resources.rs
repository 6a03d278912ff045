//! The snapshot resources, and the notifications that they changed: through
//! `resources/subscribe` on 2025-11-25 and through `subscriptions/listen` on 2026-07-28.

mod common;

use std::time::Duration;

use cairn_mcp::CairnServer;
use common::Harness;
use rmcp::model::{
    CallToolRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
    ResourceUpdatedNotificationParam, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn read(h: &Harness, uri: &str) -> Value {
    let result = h.client.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap();
    match &result.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => serde_json::from_str(text).unwrap(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn lists_snapshots_and_one_snapshot_with_not_covered() {
    let h = Harness::start().await;
    assert_eq!(h.client.list_all_resources().await.unwrap()[0].uri, "cairn://snapshots");
    let templates = h.client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "cairn://snapshots/{id}");
    assert_eq!(read(&h, "cairn://snapshots").await, json!({"snapshots": []}));

    let tree = h.tree("work");
    let saved = h.ok("snapshot_save", json!({"target": tree})).await;
    let list = read(&h, "cairn://snapshots").await;
    assert_eq!(list["snapshots"][0]["id"], saved["id"]);
    assert_eq!(list["snapshots"][0]["kind"], "dir");
    let one = read(&h, &format!("cairn://snapshots/{}", saved["id"].as_str().unwrap())).await;
    assert_eq!(one["snapshot"]["id"], saved["id"]);
    assert!(one["not_covered"].is_object());
    assert!(h.client.read_resource(ReadResourceRequestParams::new("cairn://nope")).await.is_err());
}

/// What a legacy (initialize) client heard, in order.
#[derive(Debug, PartialEq)]
enum Heard {
    ListChanged,
    Updated(String),
}

/// A client on the initialize lifecycle that forwards resource notifications to a channel.
#[derive(Clone)]
struct Listening(tokio::sync::mpsc::UnboundedSender<Heard>);

impl rmcp::ClientHandler for Listening {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(Heard::ListChanged);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Updated(params.uri));
    }
}

/// Starts a server of `profile` on a fresh store and returns its duplex end for a client.
fn spawn_server(dir: &tempfile::TempDir, profile: &str) -> tokio::io::DuplexStream {
    let mut opts = common::options(dir);
    opts.profile = profile.into();
    let server = CairnServer::from_options(&opts).unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client_io
}

async fn save(client: &Peer<RoleClient>, target: &std::path::Path) -> String {
    let Value::Object(args) = json!({"target": target}) else { unreachable!() };
    let result =
        client.call_tool(CallToolRequestParams::new("snapshot_save").with_arguments(args)).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{:?}", result.content);
    result.structured_content.unwrap()["id"].as_str().unwrap().to_owned()
}

fn tree(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("work");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("a.txt"), "a\n").unwrap();
    path
}

async fn next_heard(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Heard>) -> Heard {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("no notification in 10s").unwrap()
}

async fn next_on(stream: &mut rmcp::service::Subscription) -> ServerNotification {
    let heard = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
    heard.expect("no notification in 10s").unwrap().expect("the stream ended")
}

#[tokio::test]
async fn on_2025_11_25_subscribe_then_save_sends_list_changed_and_updated() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Listening(tx).serve(spawn_server(&dir, "cairn")).await.unwrap();
    assert_eq!(client.peer_info().unwrap().protocol_version, ProtocolVersion::V_2025_11_25);
    let work = tree(&dir);
    let first = save(client.peer(), &work).await;
    assert_eq!(next_heard(&mut rx).await, Heard::ListChanged);

    let one = format!("cairn://snapshots/{first}");
    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new(one.clone())).await.unwrap();
    save(client.peer(), &work).await;
    assert_eq!(next_heard(&mut rx).await, Heard::ListChanged);
    assert_eq!(next_heard(&mut rx).await, Heard::Updated(one));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn on_2026_07_28_a_listen_stream_gets_list_changed_and_updated_after_a_save() {
    let dir = tempfile::tempdir().unwrap();
    let client = ()
        .serve_with_lifecycle(
            spawn_server(&dir, "cairn"),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .unwrap();
    let work = tree(&dir);
    let first = save(client.peer(), &work).await;
    let one = format!("cairn://snapshots/{first}");
    let mut stream = client
        .listen(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .resource_subscription(one.clone())
                .resource_subscription("cairn://elsewhere")
                .build(),
        )
        .await
        .unwrap();
    // A URI the server does not serve is left out of what it agreed to send.
    assert_eq!(
        stream.acknowledged(),
        &SubscriptionFilter::builder().resources_list_changed().resource_subscription(one.clone()).build()
    );

    save(client.peer(), &work).await;
    let first_heard = next_on(&mut stream).await;
    assert!(matches!(first_heard, ServerNotification::ResourceListChangedNotification(_)), "{first_heard:?}");
    let second = next_on(&mut stream).await;
    let ServerNotification::ResourceUpdatedNotification(updated) = second else {
        panic!("expected resources/updated, got {second:?}")
    };
    assert_eq!(updated.params.uri, one);
    stream.cancel().await.unwrap();
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_debug_profile_accepts_listen_for_its_snapshot_list() {
    let dir = tempfile::tempdir().unwrap();
    let client = ()
        .serve_with_lifecycle(
            spawn_server(&dir, "debug"),
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .unwrap();
    let wanted = SubscriptionFilter::builder()
        .resources_list_changed()
        .resource_subscription("cairn://debug/snapshots")
        .build();
    let stream = client.listen(wanted.clone()).await.unwrap();
    assert_eq!(stream.acknowledged(), &wanted);
    client.cancel().await.unwrap();
}
