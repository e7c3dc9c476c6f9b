//! Writes a rendered package to a folder, or compares one with it.
//!
//! Writing is all-or-nothing as far as a file system allows: every file is
//! first written in full to a temporary file beside its target, and only
//! then are they renamed into place, so a failed or interrupted run never
//! leaves a half-written file.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use similar::TextDiff;
use tempfile::NamedTempFile;

use crate::error::Error;
use crate::render::GeneratedFile;

/// Writes `files` into `dir`, creating it when needed.
pub fn write(dir: &Path, files: &[GeneratedFile]) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|source| Error::Io { action: "create", path: dir.to_owned(), source })?;
    let mut staged = Vec::with_capacity(files.len());
    for file in files {
        let path = dir.join(file.name);
        let temp = stage(dir, &file.contents).map_err(|source| Error::Io {
            action: "write",
            path: path.clone(),
            source,
        })?;
        staged.push((temp, path));
    }
    for (temp, path) in staged {
        temp.persist(&path).map_err(|error| Error::Io { action: "write", path, source: error.error })?;
    }
    Ok(())
}

fn stage(dir: &Path, contents: &str) -> io::Result<NamedTempFile> {
    let mut temp = tempfile::Builder::new().prefix(".slotted-counters-").suffix(".tmp").tempfile_in(dir)?;
    temp.write_all(contents.as_bytes())?;
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// Compares `files` with what `dir` holds. Returns a unified diff from the
/// committed files to the rendered ones, or `None` when they are the same.
/// A missing file counts as empty.
pub fn diff(dir: &Path, files: &[GeneratedFile]) -> Result<Option<String>, Error> {
    let mut report = String::new();
    for file in files {
        let path = dir.join(file.name);
        let current = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(Error::Io { action: "read", path, source });
            }
        };
        if current != file.contents {
            let shown = path.display().to_string();
            let diff = TextDiff::from_lines(&current, &file.contents);
            report.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("{shown} (committed)"), &format!("{shown} (rendered)"))
                    .to_string(),
            );
        }
    }
    Ok((!report.is_empty()).then_some(report))
}
