//! A real S3-compatible server for tests: `moto_server` on a free loopback port, one per test,
//! stopped when the handle drops. Missing moto fails the test with the command that installs
//! it: no S3 test is ever skipped. Public (and hidden) so the CLI's and the MCP server's tests
//! start their servers the same way as the library's.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::store::s3::{S3Backend, S3Settings};

/// A running `moto_server`.
#[allow(missing_docs)]
pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Moto {
    /// Starts a server and waits until it answers.
    pub fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start moto_server ({e}): install it with `bash scripts/deps/s3-server.sh`")
            });
        let moto = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not listen on port {port} within 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// The settings a client of this server needs, as `object_store` names them.
    pub fn options(&self) -> Vec<(String, String)> {
        [
            ("aws_endpoint", format!("http://127.0.0.1:{}", self.port)),
            ("aws_allow_http", "true".to_owned()),
            ("aws_access_key_id", "test".to_owned()),
            ("aws_secret_access_key", "test".to_owned()),
            ("aws_region", "us-east-1".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Settings for `s3://BUCKET/PREFIX` on this server; the bucket is created first.
    pub fn settings(&self, bucket: &str, prefix: &str) -> S3Settings {
        self.create_bucket(bucket);
        S3Settings { bucket: bucket.to_owned(), prefix: prefix.to_owned(), options: self.options() }
    }

    /// A backend on `s3://BUCKET/PREFIX` of this server.
    pub fn backend(&self, bucket: &str, prefix: &str) -> S3Backend {
        S3Backend::new(&self.settings(bucket, prefix)).expect("an S3 client for moto")
    }

    /// `PUT /BUCKET`: moto takes unsigned requests, so no client library is needed for it.
    pub fn create_bucket(&self, bucket: &str) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("moto answers");
        let request = format!(
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        );
        stream.write_all(request.as_bytes()).expect("moto takes the request");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "moto refused to create bucket {bucket}: {answer}");
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
