//! The `cairn` command: parses arguments, opens the store, runs one command, prints its result.
//! All logic lives in `cairn-lib`; this crate only resolves settings and formats output.

mod aws;
mod commands;
mod context;
mod error;
mod format;
mod printer;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    let printer = printer::Printer::new(cli.global.json);
    match commands::run(cli, &printer) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            printer.error(&err);
            ExitCode::from(error::exit_code(&err))
        }
    }
}
