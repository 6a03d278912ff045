//! Comparing two frame captures: which variables appeared, disappeared or changed.
//!
//! Variables are matched by path in one pass. The result has the shape (and camelCase
//! keys) of the debugger snapshot tool's `snapshot_diff` response, which agents already
//! know; cairn's other results use snake_case.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::capture::{CapturedVariable, FrameCapture};
use crate::mask::mask_volatile;

/// What changed between two captures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureDiff {
    /// Id of the first (baseline) capture; empty until the caller sets it with
    /// [`CaptureDiff::with_snapshot_ids`], as captures do not carry ids.
    pub snapshot_id_a: String,
    /// Id of the second capture; see `snapshot_id_a`.
    pub snapshot_id_b: String,
    /// The captures come from different threads, so differences may not be changes.
    pub thread_mismatch: bool,
    /// Time from the first capture to the second, as `hh:mm:ss.fffffff` (negative with a
    /// leading `-`).
    pub time_delta: String,
    /// Counts of each kind of difference.
    pub summary: DiffSummary,
    /// Variables only in the second capture.
    pub added: Vec<DiffEntry>,
    /// Variables only in the first capture.
    pub removed: Vec<DiffEntry>,
    /// Variables in both whose value or type differs.
    pub modified: Vec<ModifiedEntry>,
}

/// Counts of added, removed, modified and unchanged variables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffSummary {
    /// Variables only in the second capture.
    pub added: usize,
    /// Variables only in the first capture.
    pub removed: usize,
    /// Variables whose value or type changed.
    pub modified: usize,
    /// Variables that are the same in both.
    pub unchanged: usize,
}

/// A variable present in only one of the captures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffEntry {
    /// Its name.
    pub name: String,
    /// Its path (see [`CapturedVariable::path`]).
    pub path: String,
    /// Its type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its value.
    pub value: String,
}

/// A variable whose value or type differs between the captures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModifiedEntry {
    /// Its name.
    pub name: String,
    /// Its path.
    pub path: String,
    /// Its type in the second capture.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its value in the first capture, as captured.
    pub old_value: String,
    /// Its value in the second capture, as captured.
    pub new_value: String,
}

impl CaptureDiff {
    /// Sets the ids the caller knows the two captures by.
    pub fn with_snapshot_ids(mut self, a: impl Into<String>, b: impl Into<String>) -> Self {
        self.snapshot_id_a = a.into();
        self.snapshot_id_b = b.into();
        self
    }
}

/// Compares capture `a` (baseline) with capture `b`. Unless `exact`, values that differ
/// from run to run without meaning (object addresses, pointer values) are masked before
/// comparing; the entries still show the values as captured. Results follow `b`'s order
/// for added and modified variables and `a`'s for removed ones.
pub fn diff_captures(a: &FrameCapture, b: &FrameCapture, exact: bool) -> CaptureDiff {
    let comparable = |v: &CapturedVariable| {
        if exact {
            (v.type_name.clone(), v.value.clone())
        } else {
            (mask_volatile(&v.type_name), mask_volatile(&v.value))
        }
    };
    let old_by_path = first_by_path(&a.variables);
    let new_by_path = first_by_path(&b.variables);

    let mut diff = CaptureDiff {
        snapshot_id_a: String::new(),
        snapshot_id_b: String::new(),
        thread_mismatch: a.thread_id != b.thread_id,
        time_delta: format_time_delta(a.captured_at, b.captured_at),
        summary: DiffSummary::default(),
        added: Vec::new(),
        removed: Vec::new(),
        modified: Vec::new(),
    };
    for (path, new) in ordered(&b.variables, &new_by_path) {
        match old_by_path.get(path) {
            None => diff.added.push(entry(new)),
            Some(old) if comparable(old) != comparable(new) => {
                diff.modified.push(ModifiedEntry {
                    name: new.name.clone(),
                    path: new.path.clone(),
                    type_name: new.type_name.clone(),
                    old_value: old.value.clone(),
                    new_value: new.value.clone(),
                });
            }
            Some(_) => diff.summary.unchanged += 1,
        }
    }
    for (path, old) in ordered(&a.variables, &old_by_path) {
        if !new_by_path.contains_key(path) {
            diff.removed.push(entry(old));
        }
    }
    diff.summary.added = diff.added.len();
    diff.summary.removed = diff.removed.len();
    diff.summary.modified = diff.modified.len();
    diff
}

/// Indexes variables by path; if an adapter shows two variables with one path (a shadowed
/// local, say), the first one, the innermost, stands for it.
fn first_by_path(variables: &[CapturedVariable]) -> HashMap<&str, &CapturedVariable> {
    let mut map = HashMap::with_capacity(variables.len());
    for variable in variables {
        map.entry(variable.path.as_str()).or_insert(variable);
    }
    map
}

/// The distinct paths of `variables` in capture order, each with its indexed variable.
fn ordered<'a>(
    variables: &'a [CapturedVariable],
    by_path: &HashMap<&'a str, &'a CapturedVariable>,
) -> Vec<(&'a str, &'a CapturedVariable)> {
    let mut seen = HashSet::with_capacity(by_path.len());
    variables
        .iter()
        .map(|v| v.path.as_str())
        .filter(|path| seen.insert(*path))
        .filter_map(|path| by_path.get(path).map(|v| (path, *v)))
        .collect()
}

fn entry(v: &CapturedVariable) -> DiffEntry {
    DiffEntry {
        name: v.name.clone(),
        path: v.path.clone(),
        type_name: v.type_name.clone(),
        value: v.value.clone(),
    }
}

/// `b - a` as `hh:mm:ss.fffffff` (100 ns ticks), the format the snapshot tool uses.
fn format_time_delta(a: jiff::Timestamp, b: jiff::Timestamp) -> String {
    let nanos = b.as_nanosecond() - a.as_nanosecond();
    let sign = if nanos < 0 { "-" } else { "" };
    let nanos = nanos.unsigned_abs();
    let ticks = (nanos / 100) % 10_000_000;
    let seconds = nanos / 1_000_000_000;
    format!("{sign}{:02}:{:02}:{:02}.{ticks:07}", seconds / 3600, (seconds / 60) % 60, seconds % 60)
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
