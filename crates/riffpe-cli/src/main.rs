//! `riffpe`: format-preserving encryption of integers and files of integers.
//!
//! Everything happens in the `riffpe_cli` library; this only reports its error as one line
//! (`error: …`, exit status 1). Usage errors are clap's (exit status 2). A reader that closes
//! the output early (`riffpe … | head`) ends the run quietly with status 0.

use std::io::{self, ErrorKind};
use std::process::ExitCode;

use riffpe_cli::args::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse_with_backend();
    match riffpe_cli::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the run stopped because whoever read the output went away: not a failure.
fn broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|cause| cause.kind() == ErrorKind::BrokenPipe)
}
