//! The secrets of encrypted stores, as the command line gives them: the engine reads
//! `CAIRN_PASSWORD`, `CAIRN_PASSWORD_FILE` or `CAIRN_KEY_FILE` from the environment the CLI
//! hands it, and asks here, on the terminal, only when none is set. Without a terminal nothing
//! is asked, and the engine's refusal says what to set. A new key (`cairn key add`) is read the same way from
//! `CAIRN_NEW_PASSWORD` or `CAIRN_NEW_PASSWORD_FILE`, or `--key-file`.

use std::io::IsTerminal;
use std::path::Path;

use cairn_lib::{Error, Result, Secret, SecretUse};

/// The secret that unlocks the store at `location`, asked on the terminal; the engine has
/// already looked for it in the environment (`CAIRN_PASSWORD`, `CAIRN_PASSWORD_FILE`,
/// `CAIRN_KEY_FILE`).
pub fn store_secret(purpose: SecretUse, location: &str) -> Result<Option<Secret>> {
    match purpose {
        SecretUse::Unlock => prompt(&format!("password for {location}: "), false),
        SecretUse::Create => prompt(&format!("new password for {location}: "), true),
    }
}

/// The secret of a key to add: `key_file`, else `CAIRN_NEW_PASSWORD(_FILE)`, else a prompt.
pub fn new_key_secret(key_file_path: Option<&Path>) -> Result<Secret> {
    if let Some(path) = key_file_path {
        return cairn_lib::secret_from_key_file(path);
    }
    let env = crate::context::process_env();
    if let Some(secret) = cairn_lib::secret_from_env(&env, "CAIRN_NEW_PASSWORD", "CAIRN_NEW_PASSWORD_FILE")? {
        return Ok(secret);
    }
    prompt("password of the new key: ", true)?.ok_or_else(|| {
        Error::invalid(
            "no secret for the new key: set CAIRN_NEW_PASSWORD or CAIRN_NEW_PASSWORD_FILE, pass --key-file, or run it on a terminal",
        )
    })
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
