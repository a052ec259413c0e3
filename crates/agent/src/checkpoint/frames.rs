//! Journals as logs of framed entries: each `{crc32:08x} {len}\n` then its bytes, so that a
//! log cut short by a crash reads back as its whole entries.

use std::io::{Read, Seek, Write};
use std::path::Path;

/// Appends `entry`, framed, to `log`.
pub(crate) fn frame(log: &mut Vec<u8>, entry: &[u8]) {
    log.extend_from_slice(format!("{:08x} {}\n", crc32fast::hash(entry), entry.len()).as_bytes());
    log.extend_from_slice(entry);
}

/// The whole entries of `log`, and the length they take: reading stops at the first entry
/// that is torn or corrupted (what follows it cannot be trusted either).
pub(crate) fn unframe(log: &[u8]) -> (Vec<Vec<u8>>, usize) {
    let mut entries = Vec::new();
    let mut at = 0;
    while let Some((entry, next)) = next_entry(log, at) {
        entries.push(entry.to_vec());
        at = next;
    }
    (entries, at)
}

fn next_entry(log: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = log.get(at..)?;
    // A header is 8 hex digits, a space, at most 20 digits and a newline.
    let end = rest.iter().take(32).position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&rest[..end]).ok()?;
    let (crc, len) = header.split_once(' ')?;
    let crc = u32::from_str_radix(crc, 16).ok()?;
    let len: usize = len.parse().ok()?;
    let body = rest.get(end + 1..end + 1 + len)?;
    (crc32fast::hash(body) == crc).then_some((body, at + end + 1 + len))
}

/// Appends `entry` to the log file `path` (made if missing), synced when `sync`. When
/// `trim` (the first append to the file in this process), a torn tail a crash left is cut
/// off first, so that the new entry follows whole ones.
pub(crate) fn append_file(
    path: &Path,
    entry: &[u8],
    sync: bool,
    trim: bool,
) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)?;
    if trim {
        let mut log = Vec::new();
        file.rewind()?;
        file.read_to_end(&mut log)?;
        let (_, whole) = unframe(&log);
        if whole < log.len() {
            file.set_len(whole as u64)?;
        }
    }
    let mut framed = Vec::with_capacity(entry.len() + 32);
    frame(&mut framed, entry);
    file.write_all(&framed)?;
    if sync {
        file.sync_data()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_cut_anywhere_reads_as_its_whole_entries() {
        let mut log = Vec::new();
        for e in [&b"one"[..], b"", b"three\nlines"] {
            frame(&mut log, e);
        }
        let (all, len) = unframe(&log);
        assert_eq!(all, [b"one".to_vec(), Vec::new(), b"three\nlines".to_vec()]);
        assert_eq!(len, log.len());
        for cut in 0..log.len() {
            let (some, whole) = unframe(&log[..cut]);
            assert!(some.len() < 3 && whole <= cut);
            assert_eq!(some[..], all[..some.len()]);
        }
        // A flipped byte ends the log there.
        let mut bad = log.clone();
        bad[14] ^= 1;
        assert_eq!(unframe(&bad).0, [b"one".to_vec()]);
    }
}
