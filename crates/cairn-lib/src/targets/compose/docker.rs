//! The bridge to `cairn-docker`: the engine is asynchronous and the store is not, so each
//! compose operation owns a small runtime and blocks on one Docker call at a time.

use std::future::Future;
use std::time::Duration;

use cairn_docker::{DockerEngine, DockerError, Project};

use crate::error::{Error, ErrorKind, Result};

/// A connection to the Docker engine with the runtime that drives it.
pub(crate) struct Docker {
    runtime: tokio::runtime::Runtime,
    pub engine: DockerEngine,
}

impl Docker {
    /// Connects to the local engine (`DOCKER_HOST`, else the default socket).
    pub(crate) fn connect() -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
            Error::new(ErrorKind::External, format!("could not start the Docker client: {e}; retry"))
        })?;
        let engine = block(&runtime, DockerEngine::connect())?;
        Ok(Self { runtime, engine })
    }

    /// Runs one Docker call to completion.
    pub(crate) fn run<T: Send>(
        &self,
        call: impl Future<Output = cairn_docker::Result<T>> + Send,
    ) -> Result<T> {
        block(&self.runtime, call)
    }

    /// Runs one call of the engine API that `cairn-docker` does not wrap; `action` says what
    /// it does, for the error message.
    pub(crate) fn api<T: Send>(
        &self,
        action: &str,
        call: impl Future<Output = std::result::Result<T, bollard::errors::Error>> + Send,
    ) -> Result<T> {
        let action = action.to_owned();
        self.run(async move { call.await.map_err(|source| DockerError::Api { action, source }) })
    }
}

/// Blocks on `call`; from inside another runtime (an async server calling the engine), it runs
/// on a scoped thread, since a runtime cannot block the thread of another one.
fn block<T: Send>(
    runtime: &tokio::runtime::Runtime,
    call: impl Future<Output = cairn_docker::Result<T>> + Send,
) -> Result<T> {
    let out = if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(|| runtime.block_on(call)).join()).map_err(|_| {
            Error::new(ErrorKind::External, "the Docker client failed unexpectedly; retry the command")
        })?
    } else {
        runtime.block_on(call)
    };
    out.map_err(docker_error)
}

/// Maps a Docker error onto the engine's error kinds; the message is the Docker crate's own
/// one-sentence message.
pub(crate) fn docker_error(err: DockerError) -> Error {
    let kind = match &err {
        DockerError::ProjectNotFound { .. } => ErrorKind::NotFound,
        DockerError::Io { .. } => ErrorKind::Io,
        _ => ErrorKind::External,
    };
    Error::new(kind, err.to_string())
}

/// The project's own bound on how long its services take to become ready: the longest a
/// healthcheck may take to pass (start period + retries × (interval + timeout)), at least 60s.
pub(crate) fn project_wait_bound(project: &Project) -> Duration {
    const SECOND_NS: i64 = 1_000_000_000;
    let mut bound = Duration::from_secs(60);
    for c in &project.containers {
        let Some(hc) = c.spec.config.as_ref().and_then(|c| c.healthcheck.as_ref()) else { continue };
        let or_default = |v: Option<i64>, default: i64| v.filter(|n| *n > 0).unwrap_or(default);
        let interval = or_default(hc.interval, 30 * SECOND_NS);
        let timeout = or_default(hc.timeout, 30 * SECOND_NS);
        let retries = or_default(hc.retries, 3);
        let start = or_default(hc.start_period, 0);
        let total = start.saturating_add(retries.saturating_mul(interval.saturating_add(timeout)));
        bound = bound.max(Duration::from_nanos(u64::try_from(total).unwrap_or(0)));
    }
    bound
}
