//! Compose projects: discovery, listing, and the records describing them.

mod discover;
mod labels;
mod list;
pub(crate) mod model;
mod order;
