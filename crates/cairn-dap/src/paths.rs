//! Variable paths: how a captured variable is named relative to the frame.
//!
//! Paths are built from the names adapters show, not from their `evaluateName`: that field
//! is optional, language-specific (`self.items[0]` vs `(*order).items[0]`) and missing for
//! synthetic children, while names are always there. The rule:
//! - a child whose name is an identifier joins with a dot: `order.customer.city`;
//! - a child whose name is all digits (debugpy's list elements) becomes an index:
//!   `items[0]`;
//! - a child whose name is already bracketed (lldb's array elements, `[0]`) is appended
//!   as is: `items[0]`;
//! - any other name (dictionary keys such as `'city'`, `*ptr`) is put in brackets:
//!   `d['city']`.
//!
//! So list elements look the same (`items[0]`) whichever adapter produced them.

/// The path of child `name` under the variable at `parent`.
pub(crate) fn child_path(parent: &str, name: &str) -> String {
    if is_identifier(name) {
        format!("{parent}.{name}")
    } else if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
        format!("{parent}[{name}]")
    } else if name.starts_with('[') && name.ends_with(']') {
        format!("{parent}{name}")
    } else {
        format!("{parent}[{name}]")
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_alphabetic() || first == '_' || first == '$' => {}
        _ => return false,
    }
    chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::child_path;

    #[test]
    fn joins_fields_with_dots_and_indexes_with_brackets() {
        assert_eq!(child_path("order", "customer"), "order.customer");
        assert_eq!(child_path("order.customer", "City"), "order.customer.City");
        assert_eq!(child_path("items", "0"), "items[0]");
        assert_eq!(child_path("items", "[3]"), "items[3]");
        assert_eq!(child_path("d", "'city'"), "d['city']");
        assert_eq!(child_path("p", "*p"), "p[*p]");
        assert_eq!(child_path("self", "_count"), "self._count");
    }
}
