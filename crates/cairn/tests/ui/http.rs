//! A small blocking HTTP/1.1 client over a TCP stream: enough for chromedriver's WebDriver
//! API and for sending the UI requests with exactly the headers a test chooses (a foreign
//! `Host`, no token), which a full client would rewrite.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A response: its status code, headers (lowercased names) and body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Sends one request to `addr` (`host:port`) and reads the whole response (`Connection: close`).
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    // Read up to the end of the body its length gives: chromedriver keeps the connection open.
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let response = parse(&raw);
            let length = response.header("content-length").and_then(|l| l.parse::<usize>().ok());
            let chunked_done = response.header("transfer-encoding").is_some() && raw.ends_with(b"0\r\n\r\n");
            if length.is_some_and(|l| raw.len() >= split + 4 + l) || chunked_done {
                return response;
            }
        }
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            return parse(&raw);
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

fn parse(raw: &[u8]) -> Response {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status =
        lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("a status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked")) {
        body = unchunk(&body);
    }
    Response { status, headers, body }
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
    out
}
