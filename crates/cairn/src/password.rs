//! The secrets of encrypted stores, as the command line gives them: `CAIRN_PASSWORD`, else
//! `CAIRN_PASSWORD_FILE` (a file holding the password), else `CAIRN_KEY_FILE` (a key file's
//! bytes), else a prompt on the terminal. Without a terminal nothing is asked, and the
//! engine's refusal says what to set. A new key (`cairn key add`) is read the same way from
//! `CAIRN_NEW_PASSWORD` or `CAIRN_NEW_PASSWORD_FILE`, or `--key-file`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use cairn_lib::{Error, Result, Secret, SecretUse};

/// The secret that unlocks the store at `location`, if the environment or the user gives one.
pub fn store_secret(purpose: SecretUse, location: &str) -> Result<Option<Secret>> {
    if let Some(secret) = from_env("CAIRN_PASSWORD", "CAIRN_PASSWORD_FILE")? {
        return Ok(Some(secret));
    }
    if let Some(path) = env_path("CAIRN_KEY_FILE") {
        return key_file(&path).map(Some);
    }
    match purpose {
        SecretUse::Unlock => prompt(&format!("password for {location}: "), false),
        SecretUse::Create => prompt(&format!("new password for {location}: "), true),
    }
}

/// The secret of a key to add: `key_file`, else `CAIRN_NEW_PASSWORD(_FILE)`, else a prompt.
pub fn new_key_secret(key_file_path: Option<&Path>) -> Result<Secret> {
    if let Some(path) = key_file_path {
        return key_file(path);
    }
    if let Some(secret) = from_env("CAIRN_NEW_PASSWORD", "CAIRN_NEW_PASSWORD_FILE")? {
        return Ok(secret);
    }
    prompt("password of the new key: ", true)?.ok_or_else(|| {
        Error::invalid(
            "no secret for the new key: set CAIRN_NEW_PASSWORD or CAIRN_NEW_PASSWORD_FILE, pass --key-file, or run it on a terminal",
        )
    })
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn from_env(password: &str, password_file: &str) -> Result<Option<Secret>> {
    if let Some(text) = std::env::var_os(password).filter(|v| !v.is_empty()) {
        let text = text.into_string().map_err(|_| Error::invalid(format!("{password} is not UTF-8")))?;
        return Ok(Some(Secret::password(text)));
    }
    let Some(path) = env_path(password_file) else { return Ok(None) };
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read the password file", &path, e))?;
    // A file written by `echo` ends with a newline that is not part of the password.
    let text = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text);
    Ok(Some(Secret::password(text)))
}

fn key_file(path: &Path) -> Result<Secret> {
    let bytes = std::fs::read(path).map_err(|e| Error::io("read the key file", path, e))?;
    Ok(Secret::key_file(bytes))
}

/// Asks on the terminal (twice, to confirm, for a new secret); `None` without a terminal.
fn prompt(question: &str, confirm: bool) -> Result<Option<Secret>> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(None);
    }
    let read = |q: &str| {
        rpassword::prompt_password(q).map_err(|e| Error::io("read a password from", Path::new("/dev/tty"), e))
    };
    let first = read(question)?;
    if confirm && read("the same password again: ")? != first {
        return Err(Error::invalid("the two passwords differ; nothing was changed"));
    }
    Ok(Some(Secret::password(first)))
}
