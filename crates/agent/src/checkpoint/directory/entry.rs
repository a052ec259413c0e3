//! A directory's entries as a checkpoint saves them, and the names in them: kept losslessly,
//! and read back only as plain names under the root.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// An entry as saved: its path relative to the root, `/`-separated, each name escaped
/// losslessly (see [`escape_name`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Entry {
    Dir {
        path: String,
        mode: u32,
        #[serde(flatten)]
        owner: Owner,
    },
    File {
        path: String,
        mode: u32,
        sha256: String,
        #[serde(flatten)]
        owner: Owner,
    },
    Link {
        path: String,
        target: String,
        #[serde(flatten)]
        owner: Owner,
    },
}

/// Who owned an entry: a sandbox run as another user (a local sandbox started by root runs
/// as `nobody`) must own its files again once they are put back.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(super) struct Owner {
    #[serde(default)]
    pub(super) uid: u32,
    #[serde(default)]
    pub(super) gid: u32,
}

impl Owner {
    pub(super) fn of(stat: &rustix::fs::Stat) -> Self {
        Owner {
            uid: stat.st_uid,
            gid: stat.st_gid,
        }
    }
}

/// The description in the record.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Saved {
    pub(super) entries: Vec<Entry>,
    /// Blobs the record before used and this one does not: removed once this one is
    /// written (again on resume, if the process died first).
    #[serde(default)]
    pub(super) obsolete: Vec<String>,
}

pub(super) fn io(e: impl std::fmt::Display, what: &str) -> String {
    format!("{what}: {e}")
}

pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A file name as text, losslessly: `%` and bytes that are not UTF-8 as `%XX`.
pub(super) fn escape_name(name: &[u8]) -> String {
    let mut out = String::new();
    for chunk in name.utf8_chunks() {
        out.push_str(&chunk.valid().replace('%', "%25"));
        for b in chunk.invalid() {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub(super) fn unescape_name(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// `path` (as saved) as a path under the root: plain names only, so that nothing in a
/// record can name a place outside it.
pub(super) fn relative(path: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.split('/') {
        let name = unescape_name(part)?;
        if name.is_empty() || name.contains(&0) || name.contains(&b'/') {
            return None;
        }
        let os = OsStr::from_bytes(&name);
        if !matches!(
            Path::new(os).components().next(),
            Some(Component::Normal(_))
        ) {
            return None;
        }
        out.push(os);
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escape_losslessly_and_paths_stay_under_the_root() {
        for name in [&b"plain"[..], b"50%", b"\xff\xfe bad", b"%41"] {
            assert_eq!(unescape_name(&escape_name(name)).unwrap(), name);
        }
        assert_eq!(relative("a/b%25c"), Some(PathBuf::from("a/b%c")));
        for bad in [
            "", "..", "a/../b", "/etc", "a//b", ".", "a/%2F", "a/%00", "%2E%2E",
        ] {
            assert_eq!(relative(bad), None, "{bad}");
        }
    }
}
