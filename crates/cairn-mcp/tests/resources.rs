//! The snapshot resources, and the notification that they changed.

mod common;

use common::Harness;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
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
