//! Settings that keep an agent from running the hooks of a settings file, so that install and
//! status can say so rather than report hooks that never fire.
//!
//! - Claude Code: `"disableAllHooks": true` in a user, project or local file leaves only the
//!   managed (policy) hooks running.
//! - Gemini CLI, by version: `hooksConfig.enabled: false` (0.26 and later; the default is true
//!   from 0.27), `hooks.enabled: false` (0.24 and 0.25), `tools.enableHooks: false` (0.13 to
//!   0.27; removed in 0.28), and a `hooksConfig.disabled` (or, 0.21 to 0.25,
//!   `hooks.disabled`) list naming cairn's hook by its name or command.
//!
//! Only a value written in the file counts: a default cannot be told apart from another
//! version's default without knowing the version.

use std::path::Path;

use serde_json::Value;

use super::Agent;
use super::entries;

/// One sentence per setting of `value` (the file at `path`) that stops cairn's hooks.
pub(crate) fn warnings(agent: Agent, path: &Path, value: &Value) -> Vec<String> {
    let file = path.display();
    let is_false = |pointer: &str| value.pointer(pointer) == Some(&Value::Bool(false));
    let mut out = Vec::new();
    match agent {
        Agent::ClaudeCode => {
            if value.get("disableAllHooks") == Some(&Value::Bool(true)) {
                out.push(format!(
                    "{file} sets \"disableAllHooks\": true, so Claude Code runs none of its hooks (cairn's included); remove that key for checkpoints to be taken"
                ));
            }
        }
        Agent::GeminiCli => {
            for (pointer, key, versions) in [
                ("/hooksConfig/enabled", "hooksConfig.enabled", "0.26 and later"),
                ("/hooks/enabled", "hooks.enabled", "0.24 and 0.25"),
                ("/tools/enableHooks", "tools.enableHooks", "0.13 to 0.27"),
            ] {
                if is_false(pointer) {
                    out.push(format!(
                        "{file} sets {key} to false, so Gemini CLI {versions} runs no hooks (cairn's included); set it to true for checkpoints to be taken"
                    ));
                }
            }
            for (pointer, key) in
                [("/hooksConfig/disabled", "hooksConfig.disabled"), ("/hooks/disabled", "hooks.disabled")]
            {
                let names = value.pointer(pointer).and_then(Value::as_array).into_iter().flatten();
                if names
                    .filter_map(Value::as_str)
                    .any(|n| n == "cairn" || entries::is_cairn_command(agent, n))
                {
                    out.push(format!(
                        "{file} lists cairn's hook in {key}, so Gemini CLI skips it; take it out for checkpoints to be taken"
                    ));
                }
            }
        }
    }
    out
}
