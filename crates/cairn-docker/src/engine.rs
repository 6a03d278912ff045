//! The connection to the Docker engine that every operation goes through.

use bollard::Docker;

use crate::error::{DockerError, Result};

/// A connection to the local Docker engine, with the API version agreed with the
/// daemon (older daemons such as 20.10 refuse requests newer than they know).
#[derive(Debug, Clone)]
pub struct DockerEngine {
    pub(crate) docker: Docker,
}

impl DockerEngine {
    /// Connects to the engine named by `DOCKER_HOST`, else the local socket, and
    /// checks that it answers.
    pub async fn connect() -> Result<Self> {
        let docker =
            Docker::connect_with_local_defaults().map_err(|source| DockerError::Unreachable { source })?;
        Self::from_client(docker).await
    }

    /// Wraps an existing bollard client, negotiating the API version with the daemon.
    pub async fn from_client(docker: Docker) -> Result<Self> {
        let docker =
            docker.negotiate_version().await.map_err(|source| DockerError::Unreachable { source })?;
        docker.ping().await.map_err(|source| DockerError::Unreachable { source })?;
        Ok(Self { docker })
    }

    /// The underlying bollard client, for calls this crate does not wrap.
    pub fn client(&self) -> &Docker {
        &self.docker
    }
}
