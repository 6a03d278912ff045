//! The settings table, its typed accessors, and config.toml read and written back.

use std::time::Duration;

use super::table::{LeftoverVolumes, TABLE, accessors};
use super::*;

#[test]
fn every_setting_has_a_typed_accessor_named_after_its_key_and_a_valid_default() {
    let config = Config::default();
    let read = accessors(&config);
    assert_eq!(read.len(), TABLE.len());
    for (spec, (name, value)) in TABLE.iter().zip(&read) {
        assert_eq!(*name, spec.key.replace(['.', '-'], "_"), "accessor of {}", spec.key);
        if spec.default.is_empty() {
            assert_eq!(value, "None", "{} has no default, so reads as unset", spec.key);
        } else {
            assert!((spec.accepts)(spec.default), "the default of {} is not valid", spec.key);
        }
        assert_eq!(config.get(spec.key).unwrap(), spec.default);
        assert!(!spec.about().is_empty() && !spec.about().contains('\n'), "{} says what it is for", spec.key);
    }
    let mut keys: Vec<&str> = TABLE.iter().map(|s| s.key).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), TABLE.len(), "a key is declared twice");
}

#[test]
fn typed_accessors_read_what_is_set_else_the_default() {
    let mut c = Config::default();
    assert_eq!(c.gc_grace(), Duration::from_secs(3600));
    assert_eq!(c.keep_recent(), None);
    assert_eq!(c.rollback_leftover_volumes(), LeftoverVolumes::Replace);
    assert!(!c.secrets_include());
    c.set("gc.grace", "2h").unwrap();
    c.set("keep.recent", "3").unwrap();
    c.set("rollback.leftover_volumes", "refuse").unwrap();
    c.set("secrets.include", "true").unwrap();
    assert_eq!(c.gc_grace(), Duration::from_secs(7200));
    assert_eq!(c.keep_recent(), Some(3));
    assert_eq!(c.rollback_leftover_volumes(), LeftoverVolumes::Refuse);
    assert_eq!(c.rollback_leftover_volumes().word(), "refuse");
    assert!(c.secrets_include());
    c.unset("gc.grace").unwrap();
    assert_eq!(c.gc_grace(), Duration::from_secs(3600));
}

#[test]
fn an_unknown_key_from_the_user_is_refused_in_one_line_naming_the_nearest_key() {
    let mut c = Config::default();
    let said = |e: Error| e.to_string();
    assert_eq!(
        said(c.set("gc.grac", "0s").unwrap_err()),
        "unknown setting \"gc.grac\"; did you mean gc.grace?"
    );
    assert_eq!(
        said(c.get("agent.transcript_save").unwrap_err()),
        "unknown setting \"agent.transcript_save\"; did you mean agent.transcript-save?"
    );
    assert_eq!(said(c.unset("grace").unwrap_err()), "unknown setting \"grace\"; did you mean gc.grace?");
    // Nothing near: every known key, still on one line.
    let far = said(c.set("nope.key", "1").unwrap_err());
    assert!(far.starts_with("unknown setting \"nope.key\"; known settings: keep.recent, "), "{far}");
    for err in [far, said(c.get("").unwrap_err())] {
        assert!(!err.contains('\n'), "{err}");
    }
    // The same from config.toml, with the file named.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[gc]\ngrase = \"1h\"\n").unwrap();
    let err = said(Config::load(&path).unwrap_err());
    assert!(err.ends_with("unknown setting \"gc.grase\"; did you mean gc.grace?"), "{err}");
}

#[test]
fn refuses_invalid_values_with_key_and_accepted_values() {
    let mut c = Config::default();
    let err = c.set("keep.recent", "many").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value \"many\" for keep.recent: want a whole number from 0 to 9223372036854775807"
    );
    let err = c.set("keep.within", "120").unwrap_err();
    assert!(err.to_string().contains("unit-bearing duration"), "{err}");
    let err = c.set("rollback.leftover_volumes", "maybe").unwrap_err();
    assert!(err.to_string().contains("one of reuse, replace, refuse"), "{err}");
    assert!(c.set("nope.key", "1").unwrap_err().to_string().contains("known settings"));
}

#[test]
fn round_trips_through_toml_and_refuses_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let mut c = Config::default();
    c.set("keep.recent", "3").unwrap();
    c.set("keep.within", "7d").unwrap();
    c.set("agent.restore", "true").unwrap();
    c.save(&path, dir.path()).unwrap();
    let back = Config::load(&path).unwrap();
    assert_eq!(back.keep_recent(), Some(3));
    assert!(back.agent_restore());
    assert_eq!(back.get("gc.grace").unwrap(), "1h");
    std::fs::write(&path, "[keep]\nrecent = \"lots\"\n").unwrap();
    let err = Config::load(&path).unwrap_err();
    assert!(err.to_string().contains("keep.recent"), "{err}");
}

#[test]
fn sizes_beyond_what_toml_holds_are_refused_not_written_as_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let mut c = Config::default();
    let err = c.set("keep.max_bytes", "18446744073709551615").unwrap_err();
    assert!(err.to_string().contains("from 0 to 9223372036854775807"), "{err}");
    c.set("keep.max_bytes", "9223372036854775807").unwrap();
    c.save(&path, dir.path()).unwrap();
    assert_eq!(Config::load(&path).unwrap().keep_max_bytes(), Some(i64::MAX as u64));
}

#[test]
fn an_invalid_agent_value_is_set_aside_and_replaced_by_set_or_unset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[agent]\nrestore = \"yes\"\nremove = 1\n[keep]\nrecent = 2\n").unwrap();
    let mut c = Config::load(&path).unwrap();
    let bad = c.invalid_agent_settings();
    assert_eq!(
        bad.iter().map(|b| (b.key.as_str(), b.value.as_str())).collect::<Vec<_>>(),
        [("agent.remove", "1"), ("agent.restore", "yes")]
    );
    assert_eq!(bad[0].accepted, "true or false");
    assert_eq!(c.keep_recent(), Some(2));
    // The set-aside value is not read: the accessor gives the default.
    assert!(!c.agent_restore());
    // Saving keeps the bad text for the user to see; set and unset replace it.
    c.save(&path, dir.path()).unwrap();
    assert_eq!(Config::load(&path).unwrap().invalid_agent_settings().len(), 2);
    c.set("agent.restore", "false").unwrap();
    c.unset("agent.remove").unwrap();
    c.save(&path, dir.path()).unwrap();
    assert!(Config::load(&path).unwrap().invalid_agent_settings().is_empty());
    // Other keys still refuse at load.
    std::fs::write(&path, "[agent]\nrestore = \"yes\"\n[gc]\ngrace = \"10\"\n").unwrap();
    assert!(Config::load(&path).unwrap_err().to_string().contains("gc.grace"));
}
