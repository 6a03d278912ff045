//! The parent links between entries: checking them and walking them.

use std::collections::HashMap;

use crate::error::{Result, TranscriptError};
use crate::model::Entry;

/// Maps each entry id to its index in the entry list.
pub(crate) type IdIndex = HashMap<String, usize>;

/// Refuses a parent link that names an entry not in the file, or, when `tolerate`, makes that
/// entry a root (as the agents' walk from the leaf stops there) and returns its line.
pub(crate) fn check_parents(
    file: &str,
    entries: &mut [Entry],
    ids: &IdIndex,
    tolerate: bool,
) -> Result<Vec<usize>> {
    let mut orphans = Vec::new();
    for entry in entries.iter_mut() {
        if let Some(parent) = &entry.parent_id
            && !ids.contains_key(parent)
        {
            if !tolerate {
                return Err(TranscriptError::UnknownParent {
                    file: file.to_owned(),
                    line: entry.line,
                    parent: parent.clone(),
                });
            }
            entry.parent_id = None;
            orphans.push(entry.line);
        }
    }
    Ok(orphans)
}

/// Refuses parent links that loop back on themselves.
///
/// Each entry is visited once: a chain is followed until it reaches a root or an entry already
/// known to lead to a root; meeting an entry of the chain being followed means a cycle.
pub(crate) fn check_cycles(file: &str, entries: &[Entry], ids: &IdIndex) -> Result<()> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Unseen,
        OnChain,
        Done,
    }
    let mut state = vec![State::Unseen; entries.len()];
    let mut chain = Vec::new();
    for start in 0..entries.len() {
        let mut current = Some(start);
        while let Some(index) = current {
            match state[index] {
                State::Done => break,
                State::OnChain => {
                    let entry = &entries[index];
                    return Err(TranscriptError::Cycle {
                        file: file.to_owned(),
                        line: entry.line,
                        id: entry.id.clone().unwrap_or_default(),
                    });
                }
                State::Unseen => {
                    state[index] = State::OnChain;
                    chain.push(index);
                    current = parent_index(&entries[index], ids);
                }
            }
        }
        for index in chain.drain(..) {
            state[index] = State::Done;
        }
    }
    Ok(())
}

/// The indices of the entries from the root down to `leaf`. The links must have been checked.
pub(crate) fn root_to(entries: &[Entry], ids: &IdIndex, leaf: usize) -> Vec<usize> {
    let mut path = Vec::new();
    let mut current = Some(leaf);
    // Checked links cannot loop, but bounding the walk keeps a logic error from hanging.
    while let Some(index) = current
        && path.len() <= entries.len()
    {
        path.push(index);
        current = parent_index(&entries[index], ids);
    }
    path.reverse();
    path
}

fn parent_index(entry: &Entry, ids: &IdIndex) -> Option<usize> {
    entry.parent_id.as_ref().and_then(|p| ids.get(p).copied())
}
