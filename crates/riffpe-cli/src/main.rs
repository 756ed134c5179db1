//! `riffpe`: format-preserving encryption of integers and files of integers.
//!
//! Everything happens in the `riffpe_cli` library; this only reports its error as one line
//! (`error: …`, exit status 1). Usage errors are clap's (exit status 2).

use std::process::ExitCode;

use clap::Parser;
use riffpe_cli::args::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match riffpe_cli::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
