//! S3-compatible object storage as a [`Backend`], through the `object_store` crate.
//!
//! The engine is synchronous and `object_store` is async: every call is sent to a small
//! runtime of the backend's own and waited for on a channel, which works from any thread, a
//! runtime's worker included (the MCP server calls the store from async handlers, where a
//! `block_on` would panic). Requests retry with exponential backoff (the crate's retry
//! policy, [`retry_config`]), so a dropped connection or a 500 costs time, not the command.
//! An object larger than [`MULTIPART_ABOVE`] (twice a full pack) is uploaded in parts of
//! [`PART_SIZE`], sent at once and each retried on its own, so a dropped connection costs one
//! part, not the whole object ([`Multipart`]); a full pack goes up in one PUT, as restic's do.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
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

/// Objects larger than this are uploaded in parts. Twice the pack target, so a full pack (the
/// target and at most one blob more) goes up in one PUT: in 8 MiB parts, with the create, the
/// completion and the HEAD a completion needs, a first save made 2.7× restic's requests.
pub const MULTIPART_ABOVE: u64 = 2 * crate::pack::TARGET_PACK_SIZE as u64;
// A full pack closes at the target plus one blob (a whole file up to `WHOLE_FILE_LIMIT`, or a
// chunk no larger) and its header.
const _: () =
    assert!(MULTIPART_ABOVE >= crate::pack::TARGET_PACK_SIZE as u64 + 2 * crate::chunker::WHOLE_FILE_LIMIT);
/// The size of each part but the last (S3 takes no part below 5 MiB but the last).
pub const PART_SIZE: u64 = 8 * 1024 * 1024;
/// The smallest part S3 takes.
const MIN_PART: u64 = 5 * 1024 * 1024;
/// Parts of one upload in flight at once.
const PARTS_IN_FLIGHT: usize = 4;

/// When and how an upload is split into parts: [`MULTIPART_ABOVE`] and [`PART_SIZE`], or
/// `aws_multipart_threshold` and `aws_multipart_chunksize` (the AWS tools' names for these
/// two settings, as `AWS_MULTIPART_THRESHOLD` and `AWS_MULTIPART_CHUNKSIZE`: a byte count, or
/// one with `KB`, `MB`, `KiB` or `MiB`); a part is never below S3's 5 MiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Multipart {
    /// Objects larger than this many bytes are uploaded in parts.
    pub above: u64,
    /// Bytes in each part but the last.
    pub part_size: u64,
}

impl Multipart {
    fn from_settings(settings: &S3Settings) -> Self {
        let setting =
            |name: &str| settings.options.iter().find(|(k, _)| k == name).and_then(|(_, v)| parse_size(v));
        Self {
            above: setting("aws_multipart_threshold").unwrap_or(MULTIPART_ABOVE),
            part_size: setting("aws_multipart_chunksize").unwrap_or(PART_SIZE).max(MIN_PART),
        }
    }
}

/// `8388608`, `8MB`, `8MiB`, `512KB`: a size as the AWS tools write it (their MB is 2^20 bytes).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "kib" => 1 << 10,
        "mb" | "mib" => 1 << 20,
        "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    number.parse::<u64>().ok().map(|n| n * scale)
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
    multipart: Multipart,
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
            multipart: Multipart::from_settings(settings),
        })
    }

    /// When uploads are split into parts.
    pub fn multipart(&self) -> Multipart {
        self.multipart
    }

    /// Uploads `data` to `key` in parts ([`Multipart`]), [`PARTS_IN_FLIGHT`] at a time, each
    /// retried on its own by the client's retry policy; an upload that fails is aborted, so no
    /// parts are left behind to be billed.
    fn put_multipart(&self, key: &str, data: &[u8]) -> Result<()> {
        let client = self.client.clone();
        let path = self.path(key);
        let parts: Vec<PutPayload> =
            data.chunks(self.multipart.part_size as usize).map(|c| PutPayload::from(c.to_vec())).collect();
        // The create and the completion, then each part.
        count(0, 0);
        count(0, 0);
        for part in &parts {
            count(part.content_length(), 0);
        }
        self.run(async move {
            let mut upload = client.put_multipart(&path).await?;
            let sending: Vec<_> = parts.into_iter().map(|part| upload.put_part(part)).collect();
            let sent = futures_util::stream::iter(sending)
                .buffer_unordered(PARTS_IN_FLIGHT)
                .try_collect::<Vec<()>>()
                .await;
            let done = match sent {
                Ok(_) => upload.complete().await.map(|_| ()),
                Err(e) => Err(e),
            };
            if done.is_err() {
                let _ = upload.abort().await;
            }
            done
        })
        .map_err(|e| self.fail(key, e))
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
        if data.len() as u64 > self.multipart.above {
            // A completed multipart upload takes no `If-None-Match` in `object_store`, so
            // "only if absent" is a look first. What is uploaded this large is a pack, named
            // by the hash of its (salted) header, so a pack written between the look and the
            // completion holds the same bytes, and writing it again changes nothing.
            if self.size(key)?.is_some() {
                return Ok(false);
            }
            self.put_multipart(key, data)?;
            return Ok(true);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipart_sizes_read_as_the_aws_tools_write_them_and_a_part_is_never_below_5_mib() {
        assert_eq!(parse_size("8388608"), Some(8 << 20));
        assert_eq!(parse_size("8MB"), Some(8 << 20));
        assert_eq!(parse_size("512 KiB"), Some(512 << 10));
        assert_eq!(parse_size("lots"), None);
        let settings = |pairs: &[(&str, &str)]| S3Settings {
            options: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..S3Settings::default()
        };
        let defaults = Multipart::from_settings(&settings(&[]));
        assert_eq!(defaults, Multipart { above: MULTIPART_ABOVE, part_size: PART_SIZE });
        let small = Multipart::from_settings(&settings(&[
            ("aws_multipart_threshold", "1MB"),
            ("aws_multipart_chunksize", "1MB"),
        ]));
        assert_eq!(small, Multipart { above: 1 << 20, part_size: MIN_PART });
    }
}
