//! The pieces of the pipeline several operations share, each in its own module: capture and
//! commit, the overlap check, the restore journal, the goal of a narrowed restore (plan application and replay, which the
//! compose target shares, are `targets/dir/apply.rs`). The operations compose them; the targets
//! below never call back into `ops/`.

pub(crate) mod capture;
pub(crate) mod journal;
pub(crate) mod narrow;
pub(crate) mod overlap;
