//! Putting a saved directory back: emptied first, then directories and files created anew
//! (never through a link), links last, owners and modes as they were.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::OFlags;

use super::entry::{Entry, io, relative, unescape_name};

/// Empties `root` and writes `entries` into it: directories and files first (each created
/// anew, never through a link), links last, so that no path is resolved through one.
pub(super) fn put_back(
    root: &Path,
    entries: &[Entry],
    contents: &HashMap<String, Vec<u8>>,
) -> Result<(), String> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let listing = std::fs::read_dir(root).map_err(|e| io(e, "cannot list the directory"))?;
    for entry in listing {
        let entry = entry.map_err(|e| io(e, "cannot list the directory"))?;
        let path = entry.path();
        // symlink_metadata: a link is removed, never followed.
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(e) => Err(e),
        };
        removed.map_err(|e| io(e, &format!("cannot empty '{}'", path.display())))?;
    }
    let mut links = Vec::new();
    for entry in entries {
        match entry {
            Entry::Dir { path, mode, .. } => {
                let rel = relative(path).ok_or_else(|| format!("'{path}' is not a plain path"))?;
                let at = root.join(rel);
                std::fs::create_dir(&at).map_err(|e| io(e, &format!("cannot make '{path}'")))?;
                // Its mode once its contents are in (a read-only directory stays writable
                // until then).
                let _ = std::fs::set_permissions(
                    &at,
                    std::fs::Permissions::from_mode((mode & 0o777) | 0o700),
                );
            }
            Entry::File {
                path, mode, sha256, ..
            } => {
                let rel = relative(path).ok_or_else(|| format!("'{path}' is not a plain path"))?;
                let bytes = contents
                    .get(sha256)
                    .ok_or_else(|| format!("no content for '{path}'"))?;
                // create_new: O_EXCL, which never follows a link.
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(mode & 0o777)
                    .custom_flags(OFlags::NOFOLLOW.bits() as i32)
                    .open(root.join(rel))
                    .map_err(|e| io(e, &format!("cannot write '{path}'")))?;
                std::io::Write::write_all(&mut f, bytes)
                    .map_err(|e| io(e, &format!("cannot write '{path}'")))?;
            }
            Entry::Link { path, target, .. } => links.push((path, target)),
        }
    }
    for (path, target) in links {
        let rel = relative(path).ok_or_else(|| format!("'{path}' is not a plain path"))?;
        let target =
            unescape_name(target).ok_or_else(|| format!("the link '{path}' is malformed"))?;
        std::os::unix::fs::symlink(OsStr::from_bytes(&target), root.join(rel))
            .map_err(|e| io(e, &format!("cannot make the link '{path}'")))?;
    }
    // Owners as they were (only root can give a file away; others own what they write).
    if rustix::process::geteuid().is_root() {
        for entry in entries {
            let (Entry::Dir { path, owner, .. }
            | Entry::File { path, owner, .. }
            | Entry::Link { path, owner, .. }) = entry;
            if let Some(rel) = relative(path) {
                std::os::unix::fs::lchown(root.join(rel), Some(owner.uid), Some(owner.gid))
                    .map_err(|e| io(e, &format!("cannot give '{path}' its owner")))?;
            }
        }
    }
    for entry in entries.iter().rev() {
        if let Entry::Dir { path, mode, .. } = entry
            && let Some(rel) = relative(path)
        {
            let _ = std::fs::set_permissions(
                root.join(rel),
                std::fs::Permissions::from_mode(mode & 0o777),
            );
        }
    }
    Ok(())
}
