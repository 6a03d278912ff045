//! The test harness: a real store in a temp dir, a real server, and the rmcp client talking to
//! it over an in-memory duplex pipe.

#![allow(dead_code)]

use std::path::PathBuf;

use cairn_mcp::{CairnServer, ServeOptions, Transport};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// A running server and a connected client, over one temp store.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub client: RunningService<RoleClient, ()>,
}

/// Options for a server on a fresh store under `dir`.
pub fn options(dir: &tempfile::TempDir) -> ServeOptions {
    ServeOptions {
        store: dir.path().join("store"),
        transport: Transport::Stdio,
        profile: "cairn".into(),
        pinned_session: None,
        allow: Vec::new(),
        workspace_root: None,
    }
}

impl Harness {
    /// A default-profile server on a fresh store.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// A server whose options `adjust` changes first.
    pub async fn start_with(adjust: impl FnOnce(&mut ServeOptions)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options(&dir);
        adjust(&mut opts);
        let server = CairnServer::from_options(&opts).unwrap();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_io).await.unwrap();
        Self { dir, client }
    }

    /// A directory with a couple of files, to snapshot.
    pub fn tree(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.join("src")).unwrap();
        std::fs::write(path.join("README"), "hello\n").unwrap();
        std::fs::write(path.join("src/main.rs"), "fn main() {}\n").unwrap();
        path
    }

    /// Calls a tool and returns the raw result.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else { panic!("arguments must be an object") };
        self.client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map)).await.unwrap()
    }

    /// Calls a tool that must succeed; returns its structured content, checking that the text
    /// content is the same JSON.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(false), "{tool} failed: {:?}", text(&result));
        let structured = result.structured_content.clone().expect("structuredContent");
        assert!(structured.is_object(), "{structured}");
        let as_text: Value = serde_json::from_str(&text(&result)).unwrap();
        assert_eq!(as_text, structured);
        structured
    }

    /// Calls a tool that must fail with `isError`; returns its message.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result.is_error, Some(true), "{tool} succeeded: {:?}", result.structured_content);
        text(&result)
    }
}

/// The first text content of a result.
pub fn text(result: &CallToolResult) -> String {
    result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}
