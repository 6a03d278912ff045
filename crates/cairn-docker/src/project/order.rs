//! The order services start in: dependencies first when compose recorded them,
//! otherwise by name, so the order is the same on every run.

use std::collections::{BTreeMap, BTreeSet};

use super::model::Service;

/// Service names, each after the services it depends on. A dependency cycle or a
/// dependency on an unknown service does not fail: the rest falls back to name order.
pub(crate) fn start_order(services: &[Service]) -> Vec<String> {
    let known: BTreeSet<&str> = services.iter().map(|s| s.name.as_str()).collect();
    let mut pending: BTreeMap<&str, BTreeSet<&str>> = services
        .iter()
        .map(|s| {
            let deps = s
                .depends_on
                .iter()
                .map(String::as_str)
                .filter(|d| known.contains(d) && *d != s.name)
                .collect();
            (s.name.as_str(), deps)
        })
        .collect();
    let mut order = Vec::with_capacity(services.len());
    while !pending.is_empty() {
        let ready: Vec<&str> =
            pending.iter().filter(|(_, deps)| deps.is_empty()).map(|(name, _)| *name).collect();
        // A cycle: take the first remaining service by name to make progress.
        let batch = if ready.is_empty() { pending.keys().take(1).copied().collect() } else { ready };
        for name in batch {
            pending.remove(name);
            for deps in pending.values_mut() {
                deps.remove(name);
            }
            order.push(name.to_string());
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(name: &str, deps: &[&str]) -> Service {
        Service {
            name: name.into(),
            replicas: 1,
            container_numbers: vec![1],
            depends_on: deps.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn dependencies_come_first() {
        let order = start_order(&[svc("app", &["db", "cache"]), svc("cache", &[]), svc("db", &[])]);
        assert_eq!(order, ["cache", "db", "app"]);
    }

    #[test]
    fn a_cycle_still_yields_every_service() {
        let order = start_order(&[svc("a", &["b"]), svc("b", &["a"]), svc("c", &[])]);
        assert_eq!(order, ["c", "a", "b"]);
    }
}
