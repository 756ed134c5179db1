//! A progress bar on stderr for large inputs: bytes read out of the input file's size.
//!
//! Shown only when stderr is a terminal, the input is a regular file of at least
//! [`MIN_BYTES`], and `--quiet` was not given; otherwise every call is a no-op.

use std::io::{self, IsTerminal};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this finish too fast for a bar to help.
pub const MIN_BYTES: u64 = 8 << 20;

const TEMPLATE: &str = "{spinner} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} \
     ({binary_bytes_per_sec}, eta {eta})";

/// The bar, or nothing.
#[derive(Debug)]
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// No bar.
    pub fn none() -> Self {
        Progress(None)
    }

    /// A bar for an input of `total` bytes (`None`: size unknown, as for a pipe), if one is wanted.
    pub fn for_input(total: Option<u64>, quiet: bool) -> Self {
        match total {
            Some(total) if !quiet && total >= MIN_BYTES && io::stderr().is_terminal() => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
                    bar.set_style(style);
                }
                Progress(Some(bar))
            }
            _ => Progress::none(),
        }
    }

    /// Records `bytes` more of the input as done.
    pub fn advance(&self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
        }
    }
}

impl Drop for Progress {
    /// Clears the bar, so an error message that follows starts on a clean line.
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
