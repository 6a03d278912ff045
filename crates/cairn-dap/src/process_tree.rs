//! Forced cleanup of an adapter and everything it started.
//!
//! Killing the adapter's process group is not enough: debugpy's launcher puts the debuggee
//! in a process group of its own. So before the adapter dies (after which its descendants
//! are reparented and can no longer be told apart) we list its descendants from `/proc` and
//! kill them too. Where `/proc` is not available only the group is killed.

use std::collections::HashMap;

use rustix::process::{Pid, Signal, kill_process, kill_process_group};

/// Kills `root`'s process group and every descendant of `root` found in `/proc`.
/// `root` must not have been reaped yet, so that neither its pid nor its group id can have
/// been reused by an unrelated process.
pub(crate) fn kill_tree(root: u32) {
    let Some(root_pid) = i32::try_from(root).ok().and_then(Pid::from_raw) else {
        return;
    };
    for pid in descendants(root_pid.as_raw_nonzero().get()) {
        if let Some(pid) = Pid::from_raw(pid) {
            // A descendant may have exited meanwhile; nothing to do then.
            let _ = kill_process(pid, Signal::KILL);
        }
    }
    let _ = kill_process_group(root_pid, Signal::KILL);
    let _ = kill_process(root_pid, Signal::KILL);
}

/// Pids of all descendants of `root`, from the parent links in `/proc/*/stat`.
fn descendants(root: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(parent) = parent_of(pid) {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if let Some(kids) = children.get(&pid) {
            for &kid in kids {
                found.push(kid);
                stack.push(kid);
            }
        }
    }
    found
}

/// The parent pid of `pid`: the second field after the parenthesised command name (which
/// may itself contain spaces and parentheses, hence the search from the right).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_kills_grandchildren_in_other_process_groups() {
        // sh starts a grandchild that moves to a process group of its own, as debugpy's
        // launcher does with the debuggee.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 60 & wait"])
            .spawn()
            .expect("start sh");
        let root = i32::try_from(child.id()).expect("pid fits");
        let mut grandchildren = Vec::new();
        for _ in 0..200 {
            grandchildren = descendants(root);
            if !grandchildren.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!grandchildren.is_empty(), "sh never started its child");
        kill_tree(child.id());
        let _ = child.wait();
        // SIGKILL lands asynchronously; give each process a bounded moment to die. A
        // zombie counts as dead: it no longer runs, and in a container nobody may reap it.
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
        };
        for pid in grandchildren {
            let mut tries = 0;
            while alive(pid) && tries < 500 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                tries += 1;
            }
            assert!(!alive(pid), "descendant {pid} survived");
        }
    }
}
