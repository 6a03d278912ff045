//! The crate's error type.
//!
//! Rules: every message is one sentence that says what is wrong and what to do
//! next; an I/O error names its path; a container is named by its name when known.

use std::path::PathBuf;

/// Everything that can go wrong while talking to the Docker engine or a compose CLI.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DockerError {
    /// The Docker daemon did not answer at all.
    #[error(
        "no Docker engine answers ({source}); start the Docker daemon, or set DOCKER_HOST to one that runs"
    )]
    Unreachable {
        /// What the client reported.
        source: bollard::errors::Error,
    },
    /// No container carries the compose project label asked for.
    #[error(
        "no compose project named {project:?} has containers on this Docker engine; check the name with `docker compose ls -a`"
    )]
    ProjectNotFound {
        /// The project name that matched nothing.
        project: String,
    },
    /// A Docker API call failed.
    #[error("the Docker engine could not {action}: {source}; check the engine's state and retry")]
    Api {
        /// What was being done, e.g. "stop container app-1".
        action: String,
        /// What the engine reported.
        source: bollard::errors::Error,
    },
    /// A container did not reach its wanted state before the deadline.
    #[error(
        "container {container} is {state} after waiting {waited_secs}s; read `docker logs {container}`, or allow a longer wait"
    )]
    NotReady {
        /// The container's name.
        container: String,
        /// Its last observed state, e.g. "running, health starting".
        state: String,
        /// How long was waited, in seconds.
        waited_secs: u64,
    },
    /// A container stopped with a failure while it was expected to come up.
    #[error(
        "container {container} exited with code {code} while it was starting; read `docker logs {container}` and fix the service"
    )]
    Exited {
        /// The container's name.
        container: String,
        /// Its exit code.
        code: i64,
    },
    /// A file on the host could not be read or written.
    #[error("cannot access {path}: {source}; check that the path exists and is accessible to this user")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A tar stream was malformed or could not be written.
    #[error("the archive for {what} could not be processed: {source}; take the capture again")]
    Archive {
        /// Which archive, e.g. "the writable layer of app-1".
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A path inside a container could not be deleted.
    #[error("cannot delete {path} in container {container}: {reason}")]
    Delete {
        /// The container's name.
        container: String,
        /// The path inside the container.
        path: String,
        /// Why, ending with what to do.
        reason: String,
    },
    /// Neither compose CLI is installed.
    #[error(
        "neither `docker compose` nor `docker-compose` is installed; install one of them to recreate the project"
    )]
    NoComposeCli,
    /// The project records no compose files to recreate it from.
    #[error(
        "compose project {project:?} records no config files, so it cannot be recreated; start it with docker compose yourself"
    )]
    NoConfigFiles {
        /// The project name.
        project: String,
    },
    /// The compose CLI ran and failed.
    #[error("`{command}` failed ({status}): {stderr}; fix the compose setup and retry")]
    ComposeFailed {
        /// The command line that was run.
        command: String,
        /// Its exit status.
        status: String,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = DockerError> = std::result::Result<T, E>;

/// Wraps a bollard error with what was being attempted; an unreachable daemon
/// gets its own message since that is the one thing a user can fix right away.
pub(crate) fn api(action: impl Into<String>) -> impl FnOnce(bollard::errors::Error) -> DockerError {
    let action = action.into();
    move |source| match source {
        bollard::errors::Error::SocketNotFoundError(_) => DockerError::Unreachable { source },
        source => DockerError::Api { action, source },
    }
}

/// True when the engine answered 404 for the thing asked about.
pub(crate) fn is_not_found(err: &bollard::errors::Error) -> bool {
    matches!(err, bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })
}
