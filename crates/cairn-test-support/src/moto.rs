//! A real S3-compatible server for tests: `moto_server` on a free loopback port, one per test,
//! stopped when the handle drops. A missing or failing moto fails the test with one sentence
//! saying what is wrong and how to fix it: no S3 test is ever skipped, since a skipped test
//! would pass in exactly the setups that cannot check it.

use std::fmt;
use std::io::{Read, Seek, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cairn_lib::{S3Backend, S3Settings};

/// How long a starting server may take to listen; moto imports a large package first.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The command that installs moto, named in every error about it.
const INSTALL: &str = "install it with `bash scripts/deps/s3-server.sh`";

/// A running `moto_server`.
pub struct Moto {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
}

/// Why a moto server could not be started: one sentence, shown as it is by `Display` and by
/// `Debug` alike, so an `unwrap`, an `expect` or a test's `?` prints the sentence, not a dump.
pub struct MotoError(String);

impl fmt::Display for MotoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for MotoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MotoError {}

impl Moto {
    /// Starts a server and waits until it answers. When it cannot, the calling test fails with
    /// [`MotoError`]'s sentence alone, without a panic message or a backtrace around it.
    pub fn start() -> Self {
        match Self::try_start() {
            Ok(moto) => moto,
            Err(e) => fail(&e),
        }
    }

    /// Starts a server and waits until it answers.
    pub fn try_start() -> Result<Self, MotoError> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| {
                MotoError(format!("cannot find a free loopback port for moto_server ({e}); free one"))
            })?
            .port();
        // Its stderr goes to a file rather than a pipe: moto logs every request, and a pipe
        // nobody reads would fill and stall it. Read back only if it dies while starting.
        let log = tempfile::tempfile()
            .map_err(|e| MotoError(format!("cannot make a log file for moto_server ({e}); check TMPDIR")))?;
        let child_log = log
            .try_clone()
            .map_err(|e| MotoError(format!("cannot share moto_server's log file ({e}); check TMPDIR")))?;
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(child_log)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => MotoError(format!("moto_server is not installed; {INSTALL}")),
                _ => MotoError(format!("cannot start moto_server ({e}); {INSTALL}")),
            })?;
        let mut moto = Self { child, port };
        let deadline = Instant::now() + START_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = moto.child.try_wait() {
                return Err(MotoError(format!(
                    "moto_server stopped ({status}) before it listened{}; {INSTALL}",
                    last_line(log)
                )));
            }
            if Instant::now() >= deadline {
                return Err(MotoError(format!(
                    "moto_server did not listen on port {port} within {} s; run it by hand to see why",
                    START_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(moto)
    }

    /// The settings a client of this server needs, as `object_store` names them.
    pub fn options(&self) -> Vec<(String, String)> {
        [
            ("aws_endpoint", self.endpoint()),
            ("aws_allow_http", "true".to_owned()),
            ("aws_access_key_id", "test".to_owned()),
            ("aws_secret_access_key", "test".to_owned()),
            ("aws_region", "us-east-1".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// The environment a process (the `cairn` binary) needs to reach this server.
    pub fn env(&self) -> [(&'static str, String); 5] {
        [
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_ACCESS_KEY_ID", "test".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
        ]
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Settings for `s3://BUCKET/PREFIX` on this server; the bucket is created first.
    pub fn settings(&self, bucket: &str, prefix: &str) -> S3Settings {
        self.create_bucket(bucket);
        S3Settings { bucket: bucket.to_owned(), prefix: prefix.to_owned(), options: self.options() }
    }

    /// A backend on `s3://BUCKET/PREFIX` of this server.
    pub fn backend(&self, bucket: &str, prefix: &str) -> S3Backend {
        S3Backend::new(&self.settings(bucket, prefix))
            .unwrap_or_else(|e| panic!("cannot make an S3 client for moto: {}", e.message()))
    }

    /// `PUT /BUCKET`: moto takes unsigned requests, so no client library is needed for it.
    pub fn create_bucket(&self, bucket: &str) {
        let answer = self.request(&format!(
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        ));
        assert!(answer.starts_with("HTTP/1.1 200"), "moto refused to create bucket {bucket}: {answer}");
    }

    /// Sends one raw HTTP request and returns the whole answer.
    fn request(&self, request: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|e| panic!("moto_server on port {} stopped answering ({e})", self.port));
        stream
            .write_all(request.as_bytes())
            .unwrap_or_else(|e| panic!("moto_server on port {} dropped a request ({e})", self.port));
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    }
}

/// Fails the calling test with `error`'s sentence: `resume_unwind` unwinds without running the
/// panic hook, so the sentence is not buried under a panic message and a backtrace
/// (`RUST_BACKTRACE` is often set), and the test harness still counts the test failed.
fn fail(error: &MotoError) -> ! {
    #[allow(clippy::print_stderr, reason = "the one line a test fails with; the harness shows it")]
    {
        eprintln!("error: {error}");
    }
    std::panic::resume_unwind(Box::new(error.to_string()))
}

/// `: LINE`, the last line moto wrote to `log`, or nothing when it wrote none.
fn last_line(mut log: std::fs::File) -> String {
    let mut text = String::new();
    let _ = log.rewind().and_then(|()| log.read_to_string(&mut text));
    text.lines().rev().find(|l| !l.trim().is_empty()).map(|l| format!(": {}", l.trim())).unwrap_or_default()
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
