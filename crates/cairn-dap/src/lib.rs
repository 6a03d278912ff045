//! A Debug Adapter Protocol client for cairn's debug targets.
//!
//! It starts a debug adapter (debugpy over stdio, lldb-dap over stdio, or a debugpy server
//! over TCP), launches or attaches to a program with breakpoints, controls it (continue,
//! step, pause, wait for a stop), captures the variables of a paused frame into a
//! [`FrameCapture`], and compares two captures with [`diff_captures`]. It knows nothing of
//! cairn's store: the engine persists captures and exposes them as tools.
//!
//! ```no_run
//! # async fn demo() -> cairn_dap::Result<()> {
//! use std::time::Duration;
//! use cairn_dap::*;
//! let adapter = AdapterCommand::debugpy()?;
//! let program = LaunchOptions { program: "loop.py".into(), ..LaunchOptions::default() };
//! let breakpoints = [SourceBreakpoints { path: "loop.py".into(), lines: vec![4] }];
//! let session =
//!     DebugSession::launch(&adapter, &program, &breakpoints, SessionOptions::default()).await?;
//! session.wait_until_stopped(Duration::from_secs(10)).await?;
//! let before = session.capture_frame(None, 0, 1, Duration::from_secs(10)).await?;
//! session.resume(None).await?;
//! session.wait_until_stopped(Duration::from_secs(10)).await?;
//! let after = session.capture_frame(None, 0, 1, Duration::from_secs(10)).await?;
//! let changes = diff_captures(&before, &after, false);
//! session.stop().await?;
//! # let _ = changes; Ok(()) }
//! ```

#![warn(missing_docs)]

mod adapter;
mod capture;
mod connection;
mod control;
mod diff;
mod error;
#[doc(hidden)]
pub mod fuzz;
mod mask;
mod paths;
mod process_tree;
mod protocol;
mod session;
mod transport;

pub use adapter::{AdapterCommand, AdapterKind, LaunchOptions, SourceBreakpoints};
pub use capture::{CapturedVariable, FrameCapture};
pub use control::{BreakpointStatus, FrameInfo, StepKind, ThreadInfo};
pub use diff::{CaptureDiff, DiffEntry, DiffSummary, ModifiedEntry, diff_captures};
pub use error::{Error, RefusalCode, Result};
pub use session::{DebugSession, SessionOptions, SessionState};
