//! Word-level changes inside a changed line: the two lines are cut into words (runs of
//! letters, digits and `_`), runs of spaces and single other characters, compared as
//! sequences, and what differs is given as byte ranges of each line. Lines that share little
//! are left unmarked: a whole line in colour says more than a line of scattered marks.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffTag};

/// Longer lines are not compared word by word (a minified file's one line).
const MAX_LINE: usize = 4000;
/// Below this share of unchanged bytes, the line is left unmarked.
const MIN_KEPT: f64 = 0.4;

/// The changed byte ranges of `old` and of `new`; both empty when the lines share too little.
pub(crate) fn changed_words(old: &str, new: &str) -> (Vec<Range<usize>>, Vec<Range<usize>>) {
    if old.len() > MAX_LINE || new.len() > MAX_LINE || old == new {
        return (Vec::new(), Vec::new());
    }
    let (a, b) = (tokens(old), tokens(new));
    let ops = similar::capture_diff_deadline(
        Algorithm::Myers,
        &a,
        0..a.len(),
        &b,
        0..b.len(),
        Some(Instant::now() + Duration::from_millis(20)),
    );
    let (mut old_ranges, mut new_ranges) = (Vec::new(), Vec::new());
    let mut kept = 0;
    let span = |t: &[&str], r: Range<usize>, line: &str| {
        if r.is_empty() {
            return None;
        }
        let start = t[r.start].as_ptr() as usize - line.as_ptr() as usize;
        let last = t[r.end - 1];
        Some(start..last.as_ptr() as usize - line.as_ptr() as usize + last.len())
    };
    for op in ops {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            kept += a[o].iter().map(|t| t.len()).sum::<usize>();
            continue;
        }
        push(&mut old_ranges, span(&a, o, old));
        push(&mut new_ranges, span(&b, n, new));
    }
    if (kept as f64) < MIN_KEPT * old.len().max(new.len()) as f64 {
        return (Vec::new(), Vec::new());
    }
    (old_ranges, new_ranges)
}

/// Appends `r`, joined to the last range when they touch.
fn push(ranges: &mut Vec<Range<usize>>, r: Option<Range<usize>>) {
    let Some(r) = r else { return };
    match ranges.last_mut() {
        Some(last) if last.end == r.start => last.end = r.end,
        _ => ranges.push(r),
    }
}

/// `line` cut into words, runs of white space and single other characters.
fn tokens(line: &str) -> Vec<&str> {
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut last = None;
    for (i, c) in line.char_indices() {
        let k = class(c);
        if i > start && (last != Some(k) || k == 2) {
            out.push(&line[start..i]);
            start = i;
        }
        last = Some(k);
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked<'a>(line: &'a str, ranges: &[Range<usize>]) -> Vec<&'a str> {
        ranges.iter().map(|r| &line[r.clone()]).collect()
    }

    #[test]
    fn only_the_changed_words_are_marked() {
        let (old, new) = ("let total = price * count;", "let total = price * quantity + tax;");
        let (o, n) = changed_words(old, new);
        assert_eq!(marked(old, &o), ["count"]);
        assert_eq!(marked(new, &n), ["quantity + tax"]);
    }

    #[test]
    fn a_removed_brace_is_marked_on_the_old_side_only() {
        let (o, n) = changed_words("fn main() {}", "fn main() {");
        assert_eq!(marked("fn main() {}", &o), ["}"]);
        assert!(n.is_empty());
    }

    #[test]
    fn words_keep_non_ascii_letters_whole() {
        let (old, new) = ("naïve café", "naïve crème");
        let (o, n) = changed_words(old, new);
        assert_eq!((marked(old, &o), marked(new, &n)), (vec!["café"], vec!["crème"]));
    }

    #[test]
    fn lines_that_share_little_are_left_unmarked() {
        assert_eq!(changed_words("alpha beta gamma", "one two three"), (vec![], vec![]));
        assert_eq!(changed_words("same", "same"), (vec![], vec![]));
    }
}
