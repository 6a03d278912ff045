//! Compose projects: discovery, listing, and the records describing them.

mod discover;
mod labels;
mod list;
pub(crate) mod model;
mod order;

/// Every decoder of compose labels, for the fuzz target.
pub(crate) fn fuzz_labels(labels: &std::collections::HashMap<String, String>) -> (Vec<String>, Vec<String>) {
    (labels::config_files(labels), labels::depends_on(labels))
}
