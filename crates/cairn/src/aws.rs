//! The AWS settings of a remote store, read as the AWS tools read them: `AWS_*` variables
//! (region, `AWS_ENDPOINT_URL`, keys, `AWS_ALLOW_HTTP`, `AWS_VIRTUAL_HOSTED_STYLE_REQUEST`),
//! and, for keys and region the environment lacks, the profile `AWS_PROFILE` (else `default`)
//! of the shared credentials and config files.

use std::path::PathBuf;

/// `object_store` setting pairs from the environment and the profile files.
pub fn settings_from_env() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::env::vars()
        .filter(|(k, v)| k.starts_with("AWS_") && !v.is_empty())
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let has = |out: &[(String, String)], key: &str| out.iter().any(|(k, _)| k == key);
    let profile =
        std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "default".into());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = |var: &str, rel: &str| {
        std::env::var_os(var).map(PathBuf::from).or_else(|| home.as_ref().map(|h| h.join(rel)))
    };
    if !has(&out, "aws_access_key_id")
        && let Some(path) = file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials")
    {
        for (k, v) in profile_section(&path, &profile) {
            if matches!(k.as_str(), "aws_access_key_id" | "aws_secret_access_key" | "aws_session_token") {
                out.push((k, v));
            }
        }
    }
    if !has(&out, "aws_region")
        && !has(&out, "aws_default_region")
        && let Some(path) = file("AWS_CONFIG_FILE", ".aws/config")
    {
        // The config file names a profile's section `[profile NAME]`, except `[default]`.
        let section = if profile == "default" { profile.clone() } else { format!("profile {profile}") };
        for (k, v) in profile_section(&path, &section) {
            match k.as_str() {
                "region" => out.push(("aws_region".into(), v)),
                "endpoint_url" if !has(&out, "aws_endpoint_url") => out.push(("aws_endpoint_url".into(), v)),
                _ => {}
            }
        }
    }
    out
}

/// The `key = value` lines of section `[name]` of an INI file; nothing when it is missing.
fn profile_section(path: &std::path::Path, name: &str) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = section.trim() == name;
            continue;
        }
        if inside && let Some((k, v)) = line.split_once('=') {
            out.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_section_is_read_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials");
        std::fs::write(
            &path,
            "[default]\naws_access_key_id = A\n\n[work]\n# a comment\naws_access_key_id=B\naws_secret_access_key = S\n",
        )
        .unwrap();
        assert_eq!(profile_section(&path, "default"), vec![("aws_access_key_id".into(), "A".into())]);
        assert_eq!(
            profile_section(&path, "work"),
            vec![("aws_access_key_id".into(), "B".into()), ("aws_secret_access_key".into(), "S".into())]
        );
        assert!(profile_section(&path, "none").is_empty());
    }
}
