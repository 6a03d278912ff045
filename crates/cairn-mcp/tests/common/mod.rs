//! The test harness: a real store in a temp dir, a real server, and the rmcp client talking to
//! it over an in-memory duplex pipe.

#![allow(dead_code)]

// The CLI harness's normalizer, so both fronts' snapshots use the same tokens.
#[path = "../../../cairn/tests/common/normalize.rs"]
mod normalize;

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
    normalizer: normalize::Normalizer,
}

/// Options for a server on a fresh store under `dir`.
pub fn options(dir: &tempfile::TempDir) -> ServeOptions {
    ServeOptions {
        store: dir.path().join("store").into(),
        transport: Transport::Stdio,
        profile: "cairn".into(),
        pinned_session: None,
        allow: Vec::new(),
        deny: Vec::new(),
        workspace_root: None,
        unlock: Default::default(),
        watch: None,
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
        let normalizer = normalize::Normalizer::new(&dir.path().canonicalize().unwrap());
        Self { dir, client, normalizer }
    }

    /// A directory with a couple of files, to snapshot.
    pub fn tree(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.join("src")).unwrap();
        std::fs::write(path.join("README"), "hello\n").unwrap();
        std::fs::write(path.join("src/main.rs"), "fn main() {}\n").unwrap();
        // Files stamped within the clock tick a save starts in are read again by every save
        // (the stat cache's racy rule), which would make `read_bytes` depend on timing.
        std::thread::sleep(std::time::Duration::from_millis(30));
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

impl Harness {
    /// Calls each tool in turn and renders the exchanges for a snapshot: the request's
    /// arguments, then `ok` with the structured result or `error` with the message (checking
    /// that the text content says the same), with temp paths, ids and times replaced by stable
    /// tokens.
    pub async fn exchanges(&self, calls: &[(&str, Value)]) -> String {
        let mut out = String::new();
        // The temp dir as the server sees it may be spelled without resolving symlinks.
        let (dir, canonical) = (
            self.dir.path().display().to_string(),
            self.dir.path().canonicalize().unwrap().display().to_string(),
        );
        for (tool, args) in calls {
            let result = self.call(tool, args.clone()).await;
            let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
            let mut block = format!(">>> {tool} {}\n", serde_json::to_string(args).unwrap());
            if result.is_error == Some(true) {
                block.push_str(&format!("<<< error\n{}\n\n", text(&result)));
            } else {
                let structured = result.structured_content.clone().unwrap_or(Value::Null);
                let as_text: Value = serde_json::from_str(&text(&result)).unwrap_or(Value::Null);
                assert_eq!(as_text, structured, "{tool}: the text content differs from structuredContent");
                block.push_str(&format!("<<< ok\n{}\n\n", pretty(&structured)));
            }
            out.push_str(&self.normalizer.normalize(&block.replace(&dir, &canonical)));
        }
        out
    }
}

/// Snapshots the tool calls' whole exchanges (see [`Harness::exchanges`]) under `name`.
#[macro_export]
macro_rules! assert_exchanges {
    ($h:expr, $name:expr, [$(($tool:expr, $args:expr)),+ $(,)?]) => {
        let text = $h.exchanges(&[$(($tool, $args)),+]).await;
        insta::with_settings!({omit_expression => true}, {
            insta::assert_snapshot!($name, text)
        })
    };
}

/// The first text content of a result.
pub fn text(result: &CallToolResult) -> String {
    result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default()
}
