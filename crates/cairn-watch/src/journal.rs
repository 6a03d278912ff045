//! The journal of one watched tree: which directories changed, and since when it can vouch for
//! that. Pure bookkeeping; the events come from `watcher.rs`.
//!
//! Every mark carries the sequence number current when it was made. An answer hands out the
//! current number as its token and moves on to the next, so a mark made after an answer has a
//! larger number than that answer's token. Anything that may have lost events (queue overflow,
//! a watch that could not be added, too many marks) raises the floor: a token below it is
//! answered with "walk the whole tree".
//!
//! A mark also keeps the names of the entries that changed in its directory, each with its own
//! sequence number, up to [`MAX_NAMES`]; past that, or for a change no name describes, the
//! directory is marked whole, and an answer for a token before that says "any entry".

use std::collections::HashMap;

use crate::protocol::{Answer, DirtyDir};

/// More changed directories than this and the journal gives up until the next answer: a save
/// that would look at that many directories gains little over a walk.
pub const MAX_DIRTY: usize = 1 << 20;

/// More changed entries than this in one directory and the directory is marked whole: a save
/// then lists it, which costs little more than looking at that many names.
pub const MAX_NAMES: usize = 256;

#[derive(Debug, Clone, Default)]
struct Mark {
    /// The newest change of any kind.
    seq: u64,
    subtree: bool,
    /// The newest change that named no entry (0: none yet).
    whole: u64,
    /// Entries changed since `whole`, with the newest change of each.
    names: HashMap<Vec<u8>, u64>,
}

/// The marks of one tree.
#[derive(Debug)]
pub struct Journal {
    seq: u64,
    /// Tokens below this are answered with a walk, for `doubt`.
    floor: u64,
    doubt: String,
    /// A reason every answer is a walk, for as long as it holds (a watch limit reached).
    degraded: Option<String>,
    dirty: HashMap<Vec<u8>, Mark>,
    max_dirty: usize,
}

impl Default for Journal {
    fn default() -> Self {
        Self::new(MAX_DIRTY)
    }
}

impl Journal {
    /// An empty journal that gives up after `max_dirty` changed directories.
    pub fn new(max_dirty: usize) -> Self {
        Self {
            seq: 1,
            floor: 1,
            doubt: "the watcher started after the last save".to_owned(),
            degraded: None,
            dirty: HashMap::new(),
            max_dirty,
        }
    }

    /// Records that any entry of `dir` may have changed (and, with `subtree`, everything
    /// below it).
    pub fn mark(&mut self, dir: &[u8], subtree: bool) {
        let seq = self.seq;
        let mark = self.dirty.entry(dir.to_vec()).or_default();
        mark.seq = seq;
        mark.subtree |= subtree;
        mark.whole = seq;
        mark.names = HashMap::new();
        self.check_size();
    }

    /// Records that the entry `name` of `dir` changed: created, written, removed, renamed, or
    /// its metadata.
    pub fn mark_name(&mut self, dir: &[u8], name: &[u8]) {
        let seq = self.seq;
        let mark = self.dirty.entry(dir.to_vec()).or_default();
        mark.seq = seq;
        if mark.names.len() >= MAX_NAMES && !mark.names.contains_key(name) {
            mark.whole = seq;
            mark.names = HashMap::new();
        } else if mark.whole != seq {
            mark.names.insert(name.to_vec(), seq);
        }
        self.check_size();
    }

    fn check_size(&mut self) {
        if self.dirty.len() > self.max_dirty {
            let n = self.max_dirty;
            self.doubt(format!("more than {n} directories changed since the last save"));
        }
    }

    /// Events may have been lost: every token handed out so far is answered with a walk.
    pub fn doubt(&mut self, reason: impl Into<String>) {
        self.floor = self.seq;
        self.doubt = reason.into();
        self.dirty.clear();
    }

    /// From now on every answer is a walk, for `reason`, until [`Journal::recover`].
    pub fn degrade(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        self.doubt(reason.clone());
        self.degraded = Some(reason);
    }

    /// The cause of [`Journal::degrade`] is gone; answers resume for tokens handed out from now
    /// on (the ones given while degraded vouch for nothing).
    pub fn recover(&mut self) {
        if let Some(reason) = self.degraded.take() {
            self.doubt(reason);
        }
    }

    /// The answer to "what changed since `since`", and the token to ask with next.
    pub fn answer(&mut self, since: Option<u64>) -> (u64, Answer) {
        let token = self.seq;
        self.seq += 1;
        let answer = match (since, &self.degraded) {
            (_, Some(reason)) => Answer::Walk { reason: reason.clone() },
            (None, None) => Answer::Walk { reason: "no earlier answer to compare with".to_owned() },
            (Some(s), None) if s < self.floor || s >= token => Answer::Walk { reason: self.doubt.clone() },
            (Some(s), None) => {
                let mut dirs: Vec<DirtyDir> = self
                    .dirty
                    .iter()
                    .filter(|(_, m)| m.seq > s)
                    .map(|(path, m)| DirtyDir {
                        path: path.clone(),
                        subtree: m.subtree,
                        names: (!m.subtree && m.whole <= s).then(|| {
                            let mut names: Vec<Vec<u8>> =
                                m.names.iter().filter(|(_, at)| **at > s).map(|(n, _)| n.clone()).collect();
                            names.sort();
                            names
                        }),
                    })
                    .collect();
                dirs.sort_by(|a, b| a.path.cmp(&b.path));
                Answer::Dirs(dirs)
            }
        };
        (token, answer)
    }

    /// Directories marked since the floor.
    pub fn dirty_len(&self) -> usize {
        self.dirty.len()
    }

    /// Bytes held for the marks, roughly.
    pub fn memory_bytes(&self) -> usize {
        self.dirty
            .iter()
            .map(|(k, m)| k.len() + 96 + m.names.keys().map(|n| n.len() + 40).sum::<usize>())
            .sum()
    }

    /// Why the next answer would be a walk for a token from the last answer, if it would.
    pub fn walk_reason(&self) -> Option<String> {
        self.degraded.clone().or_else(|| (self.floor >= self.seq).then(|| self.doubt.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(answer: Answer) -> Vec<(String, bool)> {
        match answer {
            Answer::Dirs(d) => {
                d.into_iter().map(|d| (String::from_utf8(d.path).unwrap(), d.subtree)).collect()
            }
            Answer::Walk { reason } => panic!("walk: {reason}"),
        }
    }

    #[test]
    fn the_first_answer_is_a_walk_and_later_ones_list_what_changed_since() {
        let mut j = Journal::default();
        j.mark(b"a", false);
        let (t1, first) = j.answer(None);
        assert!(matches!(first, Answer::Walk { .. }));
        j.mark(b"b", false);
        j.mark(b"c/d", true);
        let (t2, second) = j.answer(Some(t1));
        assert_eq!(dirs(second), [("b".into(), false), ("c/d".into(), true)]);
        let (_, third) = j.answer(Some(t2));
        assert_eq!(dirs(third), []);
    }

    #[test]
    fn a_mark_made_again_after_an_answer_is_reported_again() {
        let mut j = Journal::default();
        let (t1, _) = j.answer(None);
        j.mark(b"a", false);
        let (t2, _) = j.answer(Some(t1));
        j.mark(b"a", false);
        assert_eq!(dirs(j.answer(Some(t2)).1), [("a".into(), false)]);
    }

    #[test]
    fn an_old_token_still_sees_everything_since_it() {
        let mut j = Journal::default();
        let (t1, _) = j.answer(None);
        j.mark(b"a", false);
        let (_t2, _) = j.answer(Some(t1));
        j.mark(b"b", false);
        assert_eq!(dirs(j.answer(Some(t1)).1), [("a".into(), false), ("b".into(), false)]);
    }

    #[test]
    fn a_doubt_turns_every_earlier_token_into_a_walk_but_not_later_ones() {
        let mut j = Journal::default();
        let (t1, _) = j.answer(None);
        j.doubt("the queue overflowed");
        let (t2, after) = j.answer(Some(t1));
        assert_eq!(after, Answer::Walk { reason: "the queue overflowed".into() });
        j.mark(b"x", false);
        assert_eq!(dirs(j.answer(Some(t2)).1), [("x".into(), false)]);
    }

    fn names(answer: Answer) -> Vec<(String, Option<Vec<String>>)> {
        let Answer::Dirs(d) = answer else { panic!("a walk") };
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        d.into_iter().map(|d| (text(d.path), d.names.map(|n| n.into_iter().map(text).collect()))).collect()
    }

    #[test]
    fn an_answer_names_the_entries_changed_since_its_token_until_a_whole_mark() {
        let mut j = Journal::default();
        let (t1, _) = j.answer(None);
        j.mark_name(b"a", b"x.rs");
        j.mark_name(b"a", b"y.rs");
        let (t2, second) = j.answer(Some(t1));
        assert_eq!(names(second), [("a".into(), Some(vec!["x.rs".into(), "y.rs".into()]))]);
        j.mark_name(b"a", b"z.rs");
        assert_eq!(names(j.answer(Some(t2)).1), [("a".into(), Some(vec!["z.rs".into()]))]);
        // An older token still sees every name since it.
        assert_eq!(
            names(j.answer(Some(t1)).1),
            [("a".into(), Some(vec!["x.rs".into(), "y.rs".into(), "z.rs".into()]))]
        );
        let (t5, _) = j.answer(Some(t1));
        j.mark(b"a", false);
        j.mark_name(b"a", b"w.rs");
        let (t6, whole) = j.answer(Some(t5));
        assert_eq!(names(whole), [("a".into(), None)]);
        j.mark_name(b"a", b"v.rs");
        assert_eq!(names(j.answer(Some(t6)).1), [("a".into(), Some(vec!["v.rs".into()]))]);
        assert_eq!(names(j.answer(Some(t5)).1), [("a".into(), None)], "the whole mark is after t5");
    }

    #[test]
    fn too_many_names_in_one_directory_mark_it_whole() {
        let mut j = Journal::default();
        let (t1, _) = j.answer(None);
        for i in 0..=MAX_NAMES {
            j.mark_name(b"big", format!("f{i}").as_bytes());
        }
        assert_eq!(names(j.answer(Some(t1)).1), [("big".into(), None)]);
    }

    #[test]
    fn too_many_marks_are_a_doubt() {
        let mut j = Journal::new(2);
        let (t1, _) = j.answer(None);
        for d in [b"a", b"b", b"c"] {
            j.mark(d, false);
        }
        assert!(matches!(j.answer(Some(t1)).1, Answer::Walk { reason } if reason.contains("more than 2")));
    }

    #[test]
    fn a_degraded_journal_walks_until_it_recovers_and_a_token_from_the_future_walks() {
        let mut j = Journal::default();
        let (t1, _) = j.answer(None);
        j.degrade("the watch limit is reached");
        let (t2, a) = j.answer(Some(t1));
        assert!(matches!(a, Answer::Walk { .. }));
        assert!(matches!(j.answer(Some(t2)).1, Answer::Walk { .. }));
        j.recover();
        let (t4, _) = j.answer(Some(t2));
        assert!(matches!(j.answer(Some(t4)).1, Answer::Dirs(_)));
        assert!(matches!(j.answer(Some(t4 + 100)).1, Answer::Walk { .. }));
    }
}
