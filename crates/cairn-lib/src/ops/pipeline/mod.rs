//! The pieces of the pipeline several operations share, each in its own module: capture and
//! commit, the overlap check, plan application and replay, and the restore journal. The
//! operations compose them; the targets below never call back into `ops/`.

pub(crate) mod apply;
pub(crate) mod capture;
pub(crate) mod journal;
pub(crate) mod overlap;
