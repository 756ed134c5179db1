//! What the xtask needs to know about the workspace: where it is, where cargo builds, which
//! packages have which targets (from `cargo metadata`, so nothing is hard-coded twice).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::shell::{self, Result};

/// The workspace root: the parent of `xtask/`.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
}

/// `cargo metadata --no-deps` of the workspace.
#[derive(Debug)]
pub struct Metadata(Value);

impl Metadata {
    pub fn load() -> Result<Self> {
        let json =
            shell::read(shell::cargo().args(["metadata", "--format-version", "1", "--no-deps"]))?;
        Ok(Metadata(serde_json::from_str(&json)?))
    }

    /// The target directory cargo uses (honours `CARGO_TARGET_DIR` and `build.target-dir`).
    pub fn target_dir(&self) -> Result<PathBuf> {
        self.0["target_directory"]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| "cargo metadata: no target_directory".into())
    }

    /// Names of `package`'s targets of `kind` (`bench`, `example`, `test`, …).
    pub fn targets(&self, package: &str, kind: &str) -> Vec<String> {
        let packages = self.0["packages"].as_array().map(Vec::as_slice);
        packages
            .unwrap_or_default()
            .iter()
            .filter(|p| p["name"] == package)
            .flat_map(|p| {
                p["targets"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
            })
            .filter(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|k| k == kind))
            })
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }
}
