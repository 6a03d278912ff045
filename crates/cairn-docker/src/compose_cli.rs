//! Recreating a project that has no containers with the compose CLI installed.

use std::path::Path;
use std::process::Stdio;

use serde::{Deserialize, Serialize};
use tokio::process::Command;

use crate::error::{DockerError, Result};

/// Which compose command line exists on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComposeCli {
    /// The v2 plugin, `docker compose`.
    Plugin,
    /// The standalone `docker-compose`.
    Standalone,
}

impl ComposeCli {
    /// Finds the compose CLI, preferring the plugin.
    pub async fn detect() -> Result<Self> {
        for cli in [Self::Plugin, Self::Standalone] {
            let mut cmd = cli.command();
            cmd.arg("version").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            if matches!(cmd.status().await, Ok(s) if s.success()) {
                return Ok(cli);
            }
        }
        Err(DockerError::NoComposeCli)
    }

    fn command(self) -> Command {
        match self {
            Self::Plugin => {
                let mut c = Command::new("docker");
                c.arg("compose");
                c
            }
            Self::Standalone => Command::new("docker-compose"),
        }
    }

    fn program(self) -> &'static str {
        match self {
            Self::Plugin => "docker compose",
            Self::Standalone => "docker-compose",
        }
    }

    /// Runs `up -d --no-build` for `project` from its recorded compose files and
    /// working directory, so compose creates its containers, networks and volumes.
    pub async fn up(self, project: &str, config_files: &[String], working_dir: Option<&str>) -> Result<()> {
        if config_files.is_empty() {
            return Err(DockerError::NoConfigFiles { project: project.to_string() });
        }
        let mut args: Vec<String> = vec!["-p".into(), project.into()];
        for f in config_files {
            args.push("-f".into());
            args.push(f.clone());
        }
        if let Some(dir) = working_dir {
            args.push("--project-directory".into());
            args.push(dir.into());
        }
        args.extend(["up", "-d", "--no-build"].map(String::from));
        let mut cmd = self.command();
        cmd.args(&args).stdin(Stdio::null());
        if let Some(dir) = working_dir.filter(|d| Path::new(d).is_dir()) {
            cmd.current_dir(dir);
        }
        let command = format!("{} {}", self.program(), args.join(" "));
        let output =
            cmd.output().await.map_err(|source| DockerError::Io { path: self.program().into(), source })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.trim().lines().rev().take(5).collect();
            return Err(DockerError::ComposeFailed {
                command,
                status: output.status.to_string(),
                stderr: tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
            });
        }
        Ok(())
    }
}
