//! I/O errors as a model reads them: the kinds it can act on, the file named ([`IoErrorExt`]),
//! Python's wording for UTF-8 failures.

use std::fmt;
use std::io;

use super::ToolError;

/// The operating system's reason for an I/O error without Rust's ` (os error N)` suffix.
fn io_reason(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error ") {
        Some(pos) => text[..pos].to_owned(),
        None => text,
    }
}

impl From<io::Error> for ToolError {
    /// Maps I/O errors to the kinds a model can act on: `NotFound` → `file_not_found`,
    /// `PermissionDenied` → `permission`, `IsADirectory` → `is_a_directory`, `TimedOut` →
    /// `timeout`, `InvalidData` from UTF-8 decoding → `unicode_decode`; anything else →
    /// `unknown` with the error's text. Use [`IoErrorExt::with_path`] to name the file.
    fn from(err: io::Error) -> Self {
        let (path, inner) = match err.get_ref().and_then(|e| e.downcast_ref::<PathIoError>()) {
            Some(p) => (Some(p.path.clone()), &p.source),
            None => (None, &err),
        };
        let reason = io_reason(inner);
        let path = path.as_deref();
        match inner.kind() {
            io::ErrorKind::NotFound => ToolError::file_not_found(&reason, path),
            io::ErrorKind::PermissionDenied => ToolError::permission(&reason, path),
            io::ErrorKind::IsADirectory => ToolError::is_a_directory(&reason, path),
            io::ErrorKind::TimedOut => ToolError::timeout(),
            io::ErrorKind::InvalidData if is_utf8_error(inner) => {
                ToolError::unicode_decode("utf-8", &utf8_reason(inner))
            }
            _ => ToolError::new(reason),
        }
    }
}

fn utf8_source(err: &io::Error) -> Option<&(dyn std::error::Error + 'static)> {
    let inner = err.get_ref()?;
    if inner.is::<std::str::Utf8Error>() || inner.is::<std::string::FromUtf8Error>() {
        return Some(inner);
    }
    None
}

fn is_utf8_error(err: &io::Error) -> bool {
    utf8_source(err).is_some() || err.to_string().contains("valid UTF-8")
}

fn utf8_reason(err: &io::Error) -> String {
    let utf8 = utf8_source(err)
        .and_then(|e| e.downcast_ref::<std::str::Utf8Error>().copied())
        .or_else(|| {
            utf8_source(err)
                .and_then(|e| e.downcast_ref::<std::string::FromUtf8Error>())
                .map(|e| e.utf8_error())
        });
    match utf8 {
        // Python's wording for the two cases a UTF-8 decoder distinguishes.
        Some(e) if e.error_len().is_none() => "unexpected end of data".to_owned(),
        Some(_) => "invalid start byte".to_owned(),
        None => "invalid utf-8".to_owned(),
    }
}

/// An I/O error that knows which path it was about, so the model is told the file name.
#[derive(Debug)]
struct PathIoError {
    path: String,
    source: io::Error,
}

impl fmt::Display for PathIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.source)
    }
}

impl std::error::Error for PathIoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Attaches a path to an [`io::Error`] so that its [`ToolError`] names the file.
///
/// ```
/// use actuator_tool_core::{IoErrorExt, ToolError};
/// let err = std::fs::read_to_string("/no/such/file").with_path("/no/such/file").unwrap_err();
/// assert_eq!(ToolError::from(err).message(), "File '/no/such/file' was not found.");
/// ```
pub trait IoErrorExt<T> {
    /// Records `path` on the error, keeping its kind.
    fn with_path(self, path: impl AsRef<std::path::Path>) -> Result<T, io::Error>;
}

impl<T> IoErrorExt<T> for Result<T, io::Error> {
    fn with_path(self, path: impl AsRef<std::path::Path>) -> Result<T, io::Error> {
        self.map_err(|source| {
            let kind = source.kind();
            io::Error::new(
                kind,
                PathIoError {
                    path: path.as_ref().display().to_string(),
                    source,
                },
            )
        })
    }
}
