//! The `riffpe` command (work in progress).

fn main() {}
