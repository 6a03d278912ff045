//! Unchanged regions of a file diff, folded: around each change a few unchanged lines stay in
//! view, and a longer run of unchanged lines between (or before, or after) changes becomes one
//! fold the page shows as "N unchanged lines" and opens in place. The folded rows are sent
//! with it, so opening one costs no request.

use serde::Serialize;

/// Unchanged lines kept in view on each side of a change.
pub(crate) const CONTEXT: usize = 3;
/// Fewer hidden lines than this are not worth a fold: its button would take about as much room.
const MIN_FOLDED: usize = 2;

/// A row, or a run of unchanged rows folded away.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Folded<T> {
    Row(T),
    Fold(Fold<T>),
}

/// Unchanged rows out of view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Fold<T> {
    /// Always `fold`, so the page tells it from a row.
    pub tag: &'static str,
    pub count: usize,
    pub rows: Vec<T>,
}

/// `rows` with each long enough run of unchanged ones (as `unchanged` says) folded, keeping
/// `CONTEXT` rows next to each change.
pub(crate) fn fold<T>(rows: Vec<T>, unchanged: impl Fn(&T) -> bool) -> Vec<Folded<T>> {
    let total = rows.len();
    let mut out = Vec::new();
    let mut run: Vec<T> = Vec::new();
    let mut run_start = 0;
    let flush = |run: &mut Vec<T>, out: &mut Vec<Folded<T>>, start: usize, end: usize| {
        // A run that begins the file needs no context above it; one that ends it none below.
        let keep_before = if start == 0 { 0 } else { CONTEXT };
        let keep_after = if end == total { 0 } else { CONTEXT };
        let len = run.len();
        if len < keep_before + keep_after + MIN_FOLDED {
            out.extend(run.drain(..).map(Folded::Row));
            return;
        }
        let mut rest = run.split_off(keep_before);
        let after = rest.split_off(len - keep_before - keep_after);
        out.extend(run.drain(..).map(Folded::Row));
        out.push(Folded::Fold(Fold { tag: "fold", count: rest.len(), rows: rest }));
        out.extend(after.into_iter().map(Folded::Row));
    };
    for (i, row) in rows.into_iter().enumerate() {
        if unchanged(&row) {
            if run.is_empty() {
                run_start = i;
            }
            run.push(row);
            continue;
        }
        if !run.is_empty() {
            flush(&mut run, &mut out, run_start, i);
        }
        out.push(Folded::Row(row));
    }
    if !run.is_empty() {
        flush(&mut run, &mut out, run_start, total);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `=` for an unchanged row, anything else for a change; a fold drawn as `[N]`.
    fn shape(rows: &str) -> String {
        let folded = fold(rows.chars().collect(), |c| *c == '=');
        folded
            .iter()
            .map(|f| match f {
                Folded::Row(c) => c.to_string(),
                Folded::Fold(f) => format!("[{}]", f.count),
            })
            .collect()
    }

    #[test]
    fn long_unchanged_runs_fold_around_three_lines_of_context() {
        assert_eq!(shape("==========~=========="), "[7]===~===[7]");
        assert_eq!(shape("~============~"), "~===[6]===~");
        assert_eq!(shape("~=~"), "~=~");
    }

    #[test]
    fn short_runs_stay_open_and_the_fold_keeps_its_rows() {
        // Seven between two changes: three, three and one left over, not worth a fold.
        assert_eq!(shape("~=======~"), "~=======~");
        assert_eq!(shape("~========~"), "~===[2]===~");
        assert_eq!(shape("====~"), "====~");
        let folded = fold((0..12).collect(), |n| *n != 11);
        let Folded::Fold(f) = &folded[0] else { panic!("a fold first: {folded:?}") };
        assert_eq!(f.rows, (0..8).collect::<Vec<_>>());
        assert_eq!(folded.len(), 1 + 3 + 1);
    }

    #[test]
    fn a_file_without_changes_is_one_fold_and_an_empty_one_nothing() {
        assert_eq!(shape("====="), "[5]");
        assert_eq!(shape(""), "");
    }
}
