//! The streamable HTTP transport as the official SDKs see it: a client that ends its session
//! with `DELETE` gets `200 OK` (the Python SDK logs "Session termination failed: 202" for
//! anything but 200 or 204), checked with raw HTTP so the status is the server's own.

mod common;

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends one HTTP/1.1 request and returns the response head (status line and headers).
async fn send(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

#[tokio::test]
async fn a_session_ending_delete_is_answered_200_as_the_sdks_expect() {
    let dir = tempfile::tempdir().unwrap();
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut options = common::options(&dir);
    options.transport = cairn_mcp::Transport::Http { addr, token: None, allowed_hosts: Vec::new() };
    tokio::spawn(cairn_mcp::serve(options));
    for _ in 0..100 {
        if TcpStream::connect(addr).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sdk-shaped","version":"1"}}}"#;
    let json = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let head = send(addr, "POST", &json, initialize).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let session = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_else(|| panic!("no session id in {head}"));

    let end = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
    let head = send(addr, "DELETE", &end, "").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
}
