//! The `dir` target: any directory tree, `.git` included.

pub(crate) mod capture;
pub(crate) mod fsops;
pub(crate) mod materialize;
pub(crate) mod restore;
pub(crate) mod statcache;
