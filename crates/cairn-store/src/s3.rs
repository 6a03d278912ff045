//! S3-compatible object storage as a [`Backend`], through the `object_store` crate.
//!
//! The engine is synchronous and `object_store` is async: every call is sent to a small
//! runtime of the backend's own and waited for on a channel, which works from any thread, a
//! runtime's worker included (the MCP server calls the store from async handlers, where a
//! `block_on` would panic). Requests retry with exponential backoff (the crate's retry
//! policy, [`retry_config`]), so a dropped connection or a 500 costs time, not the command.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{
    ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig, UpdateVersion,
};

use super::backend::{Backend, Versioned};
use crate::error::{Error, ErrorKind, Result};

/// Where an S3 store is and how to reach it: the bucket and prefix of an `s3://BUCKET/PREFIX`
/// address, and `object_store` configuration pairs (`aws_region`, `aws_endpoint`,
/// `aws_access_key_id`, `aws_allow_http`, …) that the front read from its environment.
#[derive(Debug, Clone, Default)]
pub struct S3Settings {
    /// The bucket.
    pub bucket: String,
    /// The key prefix inside the bucket, without leading or trailing `/` (may be empty).
    pub prefix: String,
    /// Configuration pairs, as `object_store`'s `AmazonS3ConfigKey` names them.
    pub options: Vec<(String, String)>,
}

impl S3Settings {
    /// Parses `s3://BUCKET/PREFIX`; `None` when `address` is not an S3 address.
    pub fn parse(address: &str) -> Option<Result<Self>> {
        let rest = address.strip_prefix("s3://")?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Some(Err(Error::invalid(format!(
                "{address:?} names no bucket; an S3 store is s3://BUCKET or s3://BUCKET/PREFIX"
            ))));
        }
        let prefix = prefix.trim_matches('/').to_owned();
        Some(Ok(Self { bucket: bucket.to_owned(), prefix, options: Vec::new() }))
    }

    /// `s3://BUCKET/PREFIX`.
    pub fn address(&self) -> String {
        if self.prefix.is_empty() {
            format!("s3://{}", self.bucket)
        } else {
            format!("s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

/// Retries of a failed request (a dropped connection, a 5xx answer, a timeout): exponential
/// backoff from 100 ms to 5 s, up to 8 retries within 2 minutes. `aws_max_attempts` (the AWS
/// tools' `AWS_MAX_ATTEMPTS`, which counts the first try) lowers or raises the count.
fn retry_config(settings: &S3Settings) -> RetryConfig {
    let attempts = settings
        .options
        .iter()
        .find(|(k, _)| k == "aws_max_attempts")
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .filter(|n| *n >= 1);
    RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: attempts.map_or(8, |n| n - 1),
        retry_timeout: Duration::from_secs(120),
    }
}

/// What this process sent to and received from S3 stores, for a front's progress line: a
/// count over the whole process, since one command may open two stores (a copy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Requests made (retries not counted).
    pub requests: u64,
    /// Bytes of object data sent.
    pub sent: u64,
    /// Bytes of object data received.
    pub received: u64,
}

static REQUESTS: AtomicU64 = AtomicU64::new(0);
static SENT: AtomicU64 = AtomicU64::new(0);
static RECEIVED: AtomicU64 = AtomicU64::new(0);

impl Traffic {
    /// The counts so far.
    pub fn now() -> Self {
        Self {
            requests: REQUESTS.load(Ordering::Relaxed),
            sent: SENT.load(Ordering::Relaxed),
            received: RECEIVED.load(Ordering::Relaxed),
        }
    }
}

fn count(sent: usize, received: usize) {
    REQUESTS.fetch_add(1, Ordering::Relaxed);
    SENT.fetch_add(sent as u64, Ordering::Relaxed);
    RECEIVED.fetch_add(received as u64, Ordering::Relaxed);
}

/// Objects in an S3 bucket below a prefix.
pub struct S3Backend {
    client: Arc<AmazonS3>,
    prefix: String,
    address: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl S3Backend {
    /// A backend for the store `settings` describe. Nothing is sent yet.
    pub fn new(settings: &S3Settings) -> Result<Self> {
        let mut builder = AmazonS3Builder::new().with_bucket_name(&settings.bucket);
        // The front passes what its environment holds; names the client does not know (a
        // profile name, a CA bundle path) are not settings of its own and are left out.
        for (key, value) in &settings.options {
            if let Ok(key) = key.parse::<AmazonS3ConfigKey>() {
                builder = builder.with_config(key, value);
            }
        }
        let client = builder
            .with_retry(retry_config(settings))
            .build()
            .map_err(|e| remote_error(&settings.address(), e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .thread_name("cairn-s3")
            .enable_all()
            .build()
            .map_err(|e| Error::new(ErrorKind::Io, format!("could not start the S3 client: {e}")))?;
        Ok(Self {
            client: Arc::new(client),
            prefix: settings.prefix.clone(),
            address: settings.address(),
            runtime: Some(runtime),
        })
    }

    fn path(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }

    fn key_of(&self, path: &ObjectPath) -> String {
        let full = path.as_ref();
        if self.prefix.is_empty() {
            return full.to_owned();
        }
        full.strip_prefix(&self.prefix).map(|k| k.trim_start_matches('/')).unwrap_or(full).to_owned()
    }

    /// Runs `work` on the backend's runtime and waits for it.
    fn run<T: Send + 'static>(
        &self,
        work: impl std::future::Future<Output = object_store::Result<T>> + Send + 'static,
    ) -> object_store::Result<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let runtime = self.runtime.as_ref().expect("the runtime lives as long as the backend");
        runtime.spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(object_store::Error::Generic { store: "S3", source: "the S3 client stopped".into() })
        })
    }

    fn fail(&self, key: &str, e: object_store::Error) -> Error {
        remote_error(&format!("{}/{key}", self.address), e)
    }

    fn list_meta(&self, prefix: &str) -> Result<Vec<object_store::ObjectMeta>> {
        count(0, 0);
        let client = self.client.clone();
        let path =
            if prefix.is_empty() && self.prefix.is_empty() { None } else { Some(self.list_prefix(prefix)) };
        self.run(async move { client.list(path.as_ref()).try_collect::<Vec<_>>().await })
            .map_err(|e| self.fail(prefix, e))
    }

    /// `object_store` lists by whole path segments: `packs/` lists everything below `packs`,
    /// and a prefix that ends mid-segment is listed from its parent and filtered.
    fn list_prefix(&self, prefix: &str) -> ObjectPath {
        let dir = match prefix.rfind('/') {
            Some(at) => &prefix[..at],
            None => "",
        };
        match (self.prefix.is_empty(), dir.is_empty()) {
            (true, _) => ObjectPath::from(dir),
            (false, true) => ObjectPath::from(self.prefix.as_str()),
            (false, false) => ObjectPath::from(format!("{}/{dir}", self.prefix)),
        }
    }
}

impl Drop for S3Backend {
    fn drop(&mut self) {
        // Dropping a runtime blocks until its threads stop, which panics inside another
        // runtime (the MCP server's); nothing is in flight once the store is dropped.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// One line for a failed request, naming what was asked for.
fn remote_error(what: &str, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => Error::not_found(format!("{what} does not exist")),
        object_store::Error::Unauthenticated { .. } | object_store::Error::PermissionDenied { .. } => {
            Error::new(
                ErrorKind::PermissionDenied,
                format!("the object store refused access to {what}: {}", first_line(&e)),
            )
        }
        other => Error::new(ErrorKind::Io, format!("could not reach {what}: {}", first_line(&other))),
    }
}

fn first_line(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    text.lines().next().unwrap_or("").to_owned()
}

impl Backend for S3Backend {
    fn put_if_absent(&self, key: &str, data: &[u8]) -> Result<bool> {
        count(data.len(), 0);
        let client = self.client.clone();
        let path = self.path(key);
        let payload = PutPayload::from(data.to_vec());
        let opts = PutOptions { mode: PutMode::Create, ..Default::default() };
        match self.run(async move { client.put_opts(&path, payload, opts).await }) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(self.fail(key, e)),
        }
    }

    fn get(&self, key: &str) -> Result<Vec<u8>> {
        let client = self.client.clone();
        let path = self.path(key);
        let bytes =
            self.run(async move { client.get(&path).await?.bytes().await }).map_err(|e| self.fail(key, e))?;
        count(0, bytes.len());
        Ok(bytes.to_vec())
    }

    fn get_range(&self, key: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let client = self.client.clone();
        let path = self.path(key);
        let bytes = self
            .run(async move { client.get_range(&path, offset..offset + len).await })
            .map_err(|e| self.fail(key, e))?;
        count(0, bytes.len());
        if bytes.len() as u64 != len {
            return Err(Error::corrupt(format!("object {key} is shorter than {} bytes", offset + len)));
        }
        Ok(bytes.to_vec())
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(self.list_sizes(prefix)?.into_iter().map(|(k, _)| k).collect())
    }

    fn list_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        let mut out: Vec<(String, u64)> = self
            .list_meta(prefix)?
            .into_iter()
            .map(|m| (self.key_of(&m.location), m.size))
            .filter(|(k, _)| k.starts_with(prefix))
            .collect();
        out.sort();
        Ok(out)
    }

    fn delete(&self, key: &str) -> Result<()> {
        count(0, 0);
        let client = self.client.clone();
        let path = self.path(key);
        match self.run(async move { client.delete(&path).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.fail(key, e)),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>> {
        count(0, 0);
        let client = self.client.clone();
        let path = self.path(key);
        match self.run(async move { client.head(&path).await }) {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.fail(key, e)),
        }
    }

    fn get_versioned(&self, key: &str) -> Result<Option<Versioned>> {
        count(0, 0);
        let client = self.client.clone();
        let path = self.path(key);
        let got = self.run(async move {
            let result = client.get(&path).await?;
            let tag = result.meta.e_tag.clone().unwrap_or_default();
            Ok((result.bytes().await?, tag))
        });
        match got {
            Ok((bytes, tag)) => Ok(Some(Versioned { data: bytes.to_vec(), tag })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.fail(key, e)),
        }
    }

    fn put_versioned(&self, key: &str, data: &[u8], expected: Option<&str>) -> Result<bool> {
        count(data.len(), 0);
        let client = self.client.clone();
        let path = self.path(key);
        let payload = PutPayload::from(data.to_vec());
        let mode = match expected {
            None => PutMode::Create,
            Some(tag) => PutMode::Update(UpdateVersion { e_tag: Some(tag.to_owned()), version: None }),
        };
        let opts = PutOptions { mode, ..Default::default() };
        match self.run(async move { client.put_opts(&path, payload, opts).await }) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(self.fail(key, e)),
        }
    }

    fn describe(&self) -> String {
        self.address.clone()
    }
}
