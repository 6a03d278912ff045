//! Which files of a directory capture are left out as secrets, and what opts one back in.
//!
//! Two kinds of rule. Name rules (`.env`, `id_ed25519`, `.aws/credentials`, …) decide from the
//! path alone, so they cost a few byte comparisons per file and hold on every save, cached or
//! not. Content rules look at the bytes of files that are read anyway (a stat-cache miss, up to
//! the 1 MiB whole-file limit): the token shapes of [`crate::secrets`], plus a few that only mean
//! a credential in a file of a known name (`_authToken=` in `.npmrc`). A content verdict is kept
//! in the stat cache entry, so an unchanged file stays excluded without being read again.
//!
//! A `.cairnignore` negation (`!.env.local`) naming the file, the include-secrets save option, or
//! the `secrets.include` setting captures it anyway.

use std::path::Path;

use ignore::Match;
use ignore::gitignore::Gitignore;

/// Templates that document which variables a project needs; they hold no values by convention.
const ENV_TEMPLATES: &[&[u8]] =
    &[b"example", b"sample", b"template", b"tmpl", b"dist", b"defaults", b"schema"];

/// Private keys of ssh-keygen's default names (the `.pub` halves are public).
const SSH_KEYS: &[&[u8]] =
    &[b"id_rsa", b"id_dsa", b"id_ecdsa", b"id_ed25519", b"id_ecdsa_sk", b"id_ed25519_sk"];

fn parent_is(rel: &[u8], name: &[u8], dir: &[u8]) -> bool {
    let Some(parent) = rel.len().checked_sub(name.len() + 1).map(|end| &rel[..end]) else {
        return false;
    };
    parent == dir || parent.ends_with(&[b"/", dir].concat())
}

fn is_kubeconfig(rel: &[u8], name: &[u8]) -> bool {
    (name == b"config" && parent_is(rel, name, b".kube"))
        || name == b"kubeconfig"
        || name.ends_with(b".kubeconfig")
}

/// The name rule that makes the file at `rel` (whose last component is `name`) a secret.
pub(crate) fn by_name(rel: &[u8], name: &[u8]) -> Option<&'static str> {
    if name == b".env" {
        return Some("dotenv");
    }
    if let Some(variant) = name.strip_prefix(b".env.") {
        let last = variant.rsplit(|&b| b == b'.').next().unwrap_or(variant);
        return (!ENV_TEMPLATES.iter().any(|t| last.eq_ignore_ascii_case(t))).then_some("dotenv");
    }
    if SSH_KEYS.contains(&name) {
        return Some("ssh-private-key");
    }
    if name == b"credentials" && parent_is(rel, name, b".aws") {
        return Some("aws-credentials");
    }
    match name {
        b".netrc" | b"_netrc" => return Some("netrc"),
        b".git-credentials" => return Some("git-credentials"),
        b".pgpass" => return Some("pgpass"),
        _ => {}
    }
    let ext = name.rsplit(|&b| b == b'.').next().filter(|e| e.len() < name.len());
    match ext {
        Some(b"kdbx") => Some("keepass-database"),
        Some(b"p12" | b"pfx") => Some("pkcs12-bundle"),
        _ => None,
    }
}

/// A `.key` or `.pem` file: where a PEM private key is kept.
fn is_key_file(name: &[u8]) -> bool {
    name.ends_with(b".key") || name.ends_with(b".pem")
}

/// The content rule `data` (the whole file at `rel`) matches, if any.
pub(crate) fn by_content(rel: &[u8], name: &[u8], data: &[u8]) -> Option<&'static str> {
    let has = |needle: &[u8]| data.windows(needle.len()).any(|w| w == needle);
    let named = match name {
        b".npmrc" if has(b"_authToken=") || has(b"_auth=") || has(b"_password=") => Some("npmrc-token"),
        b".pypirc" if has(b"password") => Some("pypirc-password"),
        // A file named for a key holds one even where its body is cut short or left out; the
        // content rule, which looks at every file, asks for a body.
        _ if is_key_file(name) && has(b"PRIVATE KEY") && has(b"-----BEGIN ") => Some("private-key"),
        _ if is_kubeconfig(rel, name)
            && (has(b"token:") || has(b"client-key-data:") || has(b"password:")) =>
        {
            Some("kubeconfig-credentials")
        }
        _ => None,
    };
    named.or_else(|| crate::secrets::first_rule(data))
}

/// True when a `.cairnignore` negation (`!pattern`) names the file at `abs`: the user asked for
/// it to be captured. The closest rule wins, as in git; a negation in `.gitignore` only says git
/// should track a file, which is not consent to copy a credential into every checkpoint.
pub(crate) fn opted_in(matchers: &[Gitignore], abs: &Path) -> bool {
    for m in matchers.iter().rev() {
        match m.matched(abs, false) {
            Match::Whitelist(glob) => {
                return glob.from().and_then(|f| f.file_name()).is_some_and(|f| f == ".cairnignore");
            }
            Match::Ignore(_) => return false,
            Match::None => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules_match_credentials_and_spare_templates_and_public_halves() {
        let cases: &[(&str, Option<&str>)] = &[
            (".env", Some("dotenv")),
            ("app/.env.local", Some("dotenv")),
            (".env.production", Some("dotenv")),
            (".env.example", None),
            (".env.local.sample", None),
            (".env.TEMPLATE", None),
            (".envrc", None),
            ("id_ed25519", Some("ssh-private-key")),
            ("id_ed25519.pub", None),
            ("home/.aws/credentials", Some("aws-credentials")),
            ("credentials", None),
            (".netrc", Some("netrc")),
            ("vault.kdbx", Some("keepass-database")),
            ("kdbx", None),
            ("src/main.rs", None),
        ];
        for (rel, want) in cases {
            let name = rel.rsplit('/').next().unwrap();
            assert_eq!(by_name(rel.as_bytes(), name.as_bytes()), *want, "{rel}");
        }
    }

    #[test]
    fn content_rules_for_known_names_need_the_credential_not_just_the_name() {
        assert_eq!(by_content(b".npmrc", b".npmrc", b"registry=https://r.example/\n"), None);
        assert_eq!(by_content(b".npmrc", b".npmrc", b"//r.example/:_authToken=abc\n"), Some("npmrc-token"));
        assert_eq!(by_content(b".kube/config", b"config", b"clusters: []\n"), None);
        assert_eq!(
            by_content(b"h/.kube/config", b"config", b"users:\n- user:\n    token: abc\n"),
            Some("kubeconfig-credentials")
        );
        assert_eq!(by_content(b"app/config", b"config", b"token: abc\n"), None);
    }

    #[test]
    fn a_key_file_with_a_bare_marker_is_a_secret_and_a_document_with_one_is_not() {
        let bare = format!("-----BEGIN RSA {}-----\n", "PRIVATE KEY");
        assert_eq!(by_content(b"tls/server.key", b"server.key", bare.as_bytes()), Some("private-key"));
        assert_eq!(by_content(b"certs/a.pem", b"a.pem", bare.as_bytes()), Some("private-key"));
        assert_eq!(by_content(b"docs/tls.md", b"tls.md", bare.as_bytes()), None);
        // A certificate is public, whatever the file's name.
        assert_eq!(by_content(b"a.pem", b"a.pem", b"-----BEGIN CERTIFICATE-----\nMIIB\n"), None);
    }
}
