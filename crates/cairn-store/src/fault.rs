//! Fault points for crash tests: named places in the store's write path where a debug build
//! kills itself with SIGKILL when `CAIRN_FAULT_KILL_AT` names them.
//!
//! A test that kills a save after a fixed delay almost never lands mid-write; these points make
//! "killed between the pack and the catalog commit" a case the tests run every time. These
//! and the boot a test says the machine is in are the engine's only environment access, and
//! exist in debug builds only: release builds compile every point to nothing.

/// A named place in the write path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultPoint {
    /// Half of a pack's temp file is written; the rest is not.
    PackHalfWritten,
    /// A pack is renamed into place but not indexed in the catalog yet.
    PackPublished,
    /// A snapshot's record object is written but its catalog row is not committed.
    RecordWritten,
    /// A snapshot's catalog row is committed; its stat cache is not written yet.
    SnapshotCommitted,
    /// Half of the changes of an in-place restore's plan are applied.
    RestoreHalfApplied,
    /// An interrupted restore's recovery snapshot is committed; the tree is not changed yet.
    RecoverySaved,
    /// A restore into a new directory has written two files and half of a third's content.
    RestoreToHalfWritten,
}

impl FaultPoint {
    /// The name `CAIRN_FAULT_KILL_AT` uses for this point.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub fn name(self) -> &'static str {
        match self {
            Self::PackHalfWritten => "pack-half-written",
            Self::PackPublished => "pack-published",
            Self::RecordWritten => "record-written",
            Self::SnapshotCommitted => "snapshot-committed",
            Self::RestoreHalfApplied => "restore-half-applied",
            Self::RecoverySaved => "recovery-saved",
            Self::RestoreToHalfWritten => "restore-to-half-written",
        }
    }
}

/// Kills this process at `point` when `CAIRN_FAULT_KILL_AT` names it (debug builds only).
#[cfg(debug_assertions)]
pub fn kill_at(point: FaultPoint) {
    static WANTED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let wanted = WANTED.get_or_init(|| std::env::var("CAIRN_FAULT_KILL_AT").ok());
    if wanted.as_deref() == Some(point.name()) {
        // SIGKILL, not exit or abort: nothing may run after this point, as after a power cut
        // or `kill -9`. If the signal could not be sent, carrying on is the safe fallback.
        let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// Release builds have no fault points.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn kill_at(_point: FaultPoint) {}

/// True when a test set a fault point or a boot for this process: the work must then happen
/// in this process, not be handed to another (a save to the running watcher).
#[cfg(debug_assertions)]
pub fn armed() -> bool {
    std::env::var_os("CAIRN_FAULT_KILL_AT").is_some() || std::env::var_os("CAIRN_FAULT_BOOT_ID").is_some()
}

/// Release builds are never armed.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn armed() -> bool {
    false
}

/// The boot this machine is in as a test says it is (`CAIRN_FAULT_BOOT_ID`, debug builds only):
/// a power cut is a reboot, and a test cannot reboot the machine it runs on.
#[cfg(debug_assertions)]
pub fn boot_id() -> Option<String> {
    std::env::var("CAIRN_FAULT_BOOT_ID").ok()
}

/// Release builds take the boot from the kernel alone.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn boot_id() -> Option<String> {
    None
}
