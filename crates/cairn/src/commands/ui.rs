//! `cairn ui`: serve the local web app over the store, print its URL, and optionally open it.

use std::net::SocketAddr;

use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, opener};
use crate::error::{CommandError, CommandResult};
use crate::printer::Printer;

/// Flags of `cairn ui`.
#[derive(Debug, Args)]
pub struct UiArgs {
    /// Where to listen, e.g. 127.0.0.1:8767 or localhost:8767 (a name is resolved, loopback
    /// first); port 0 picks a free one. Other than loopback only with --token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8767", value_parser = cairn_ui::resolve_listen)]
    pub listen: SocketAddr,
    /// A secret every request must carry; the printed URL holds it once, and the browser keeps
    /// it in a cookie.
    #[arg(long, value_name = "SECRET")]
    pub token: Option<String>,
    /// Also accept requests whose Host header is HOST[:PORT] (repeatable). Loopback names and
    /// the --listen address are always accepted.
    #[arg(long = "allowed-host", value_name = "HOST[:PORT]")]
    pub allowed_hosts: Vec<String>,
    /// Open the URL in the browser (xdg-open) once the server listens.
    #[arg(long)]
    pub open: bool,
}

/// Serves the UI until the process is interrupted.
pub fn run(global: &GlobalArgs, args: UiArgs, printer: &Printer) -> CommandResult {
    let opener = opener(global)?;
    let options = cairn_ui::UiOptions {
        store: opener.address,
        unlock: opener.unlock,
        addr: args.listen,
        token: args.token,
        allowed_hosts: args.allowed_hosts,
        pinned_session: call_context().pinned_session,
        places: super::moment::transcript_places()?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| {
        CommandError::new(cairn_lib::ErrorKind::Io, format!("could not start the async runtime: {e}"))
    })?;
    let open = args.open;
    let ready = |url: &str| {
        printer.result(&serde_json::json!({ "url": url }), |_| format!("cairn ui: {url}\n"));
        if open {
            // xdg-open's own complaints (seven lines when no browser is installed) are not
            // cairn's output: one line says what to do instead.
            let opener = std::process::Command::new("xdg-open")
                .arg(url)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            match opener {
                Ok(mut child) => {
                    std::thread::spawn(move || {
                        if !child.wait().is_ok_and(|s| s.success()) {
                            Printer::notice("could not open a browser; open the URL above yourself");
                        }
                    });
                }
                Err(e) => {
                    Printer::notice(&format!("could not open a browser ({e}); open the URL above yourself"))
                }
            }
        }
    };
    runtime.block_on(cairn_ui::serve(options, ready)).map_err(|err| match err {
        cairn_ui::UiError::Store(e) => CommandError::from(e),
        e @ cairn_ui::UiError::Usage(_) => crate::error::usage(e.to_string()),
        e => CommandError::new(cairn_lib::ErrorKind::Io, e.to_string()),
    })
}
