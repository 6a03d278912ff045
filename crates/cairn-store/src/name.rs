//! The one naming rule shared by snapshots, sessions and transcript snapshots.

use crate::error::{Error, Result};

/// The longest name accepted.
pub const MAX_NAME_LEN: usize = 100;

/// The rule, as stated in every refusal.
pub const NAME_RULE: &str = "names use letters, digits, '.', '_' and '-', begin and end with a letter or digit, and have at most 100 characters";

/// Checks `name` against the naming rule; `what` says what is being named ("snapshot", "session").
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.chars().all(ok_char)
        && ends_ok(name.chars().next())
        && ends_ok(name.chars().last());
    if valid { Ok(()) } else { Err(Error::invalid(format!("invalid {what} name {name:?}: {NAME_RULE}"))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_rule() {
        for ok in ["a", "before-migration", "v1.2_rc3", "A9", &"x".repeat(100)] {
            validate_name("snapshot", ok).unwrap();
        }
    }

    #[test]
    fn refuses_paths_spaces_traversal_and_bad_ends() {
        for bad in ["", "../x", "a b", "-x", "x-", ".hidden", "a/b", "é", &"x".repeat(101)] {
            let err = validate_name("snapshot", bad).unwrap_err();
            assert!(err.to_string().contains(NAME_RULE), "{err}");
        }
    }
}
