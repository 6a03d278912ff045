//! The plain types the catalog and the record objects hold, and every front reports: what a
//! snapshot, a session and a moment are, the kinds of target, an agent's capabilities, and what
//! a gc did. They carry data and small helpers only; what is done with them is the engine's.

pub mod capability;
pub mod gc;
pub mod moment;
pub mod session;
pub mod snapshot;
pub mod target_kind;
