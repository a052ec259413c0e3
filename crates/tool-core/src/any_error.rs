//! `?` on any error in a tool's body: a body that returns `Box<dyn Error + Send + Sync>` (which
//! every `std::error::Error + Send + Sync + 'static` converts into with `?`), or propagates a
//! `serde_json::Error`, fails with the [`ToolFailure`] a model can act on. The box is looked
//! into, so each error reads as the reference words its exception: an I/O error as the
//! `io::Error` mapping (`File '…' was not found.`), a UTF-8 error as `unicode_decode`, our own
//! [`ToolError`] / [`FatalToolError`] as themselves, anything else as an `unknown` error whose
//! message is the error's text (the reference's `ToolError(message)`).

use std::error::Error;
use std::io;

use crate::error::{FatalToolError, ToolError, ToolFailure};

/// Moves an error of type `$ty` out of the box `$err` and returns its failure, or gives the
/// box back. (One body for both boxes: `downcast` is inherent to each `dyn Error` type.)
macro_rules! take {
    ($err:ident, $ty:ty, $to_failure:expr) => {
        let $err = match $err.downcast::<$ty>() {
            Ok(inner) => return $to_failure(*inner),
            Err(err) => err,
        };
    };
}

/// The failure a boxed error stands for (see the module doc).
fn from_boxed(err: Box<dyn Error + Send + Sync + 'static>) -> ToolFailure {
    take!(err, ToolFailure, |f| f);
    take!(err, ToolError, ToolFailure::Recoverable);
    take!(err, FatalToolError, ToolFailure::Fatal);
    take!(err, io::Error, ToolFailure::from);
    take!(err, serde_json::Error, ToolFailure::from);
    from_other(&*err)
}

/// As [`from_boxed`], for a box that is not `Send`.
fn from_local_box(err: Box<dyn Error + 'static>) -> ToolFailure {
    take!(err, ToolFailure, |f| f);
    take!(err, ToolError, ToolFailure::Recoverable);
    take!(err, FatalToolError, ToolFailure::Fatal);
    take!(err, io::Error, ToolFailure::from);
    take!(err, serde_json::Error, ToolFailure::from);
    from_other(&*err)
}

/// The failure of an error that is not one of ours: UTF-8 errors are `unicode_decode`,
/// anything else `unknown` with the error's text.
fn from_other(err: &(dyn Error + 'static)) -> ToolFailure {
    let utf8 = err
        .downcast_ref::<std::str::Utf8Error>()
        .copied()
        .or_else(|| {
            err.downcast_ref::<std::string::FromUtf8Error>()
                .map(std::string::FromUtf8Error::utf8_error)
        });
    match utf8 {
        // Python's wording for the two cases a UTF-8 decoder distinguishes.
        Some(e) if e.error_len().is_none() => {
            ToolError::unicode_decode("utf-8", "unexpected end of data").into()
        }
        Some(_) => ToolError::unicode_decode("utf-8", "invalid start byte").into(),
        None => ToolError::new(crate::ErrorChain(err).to_string()).into(),
    }
}

impl From<Box<dyn Error + Send + Sync + 'static>> for ToolFailure {
    /// A boxed error: recoverable, worded by what it holds (see [`ToolFailure`]).
    fn from(err: Box<dyn Error + Send + Sync + 'static>) -> Self {
        from_boxed(err)
    }
}

impl From<Box<dyn Error + 'static>> for ToolFailure {
    /// A boxed error that is not `Send`: as a `Send + Sync` one.
    fn from(err: Box<dyn Error + 'static>) -> Self {
        from_local_box(err)
    }
}

impl From<serde_json::Error> for ToolFailure {
    /// A JSON error in a tool's body (not in its arguments, which the executor reports as
    /// `parsing`): an I/O failure while reading JSON maps as an [`io::Error`]; a syntax or
    /// data error is `unknown` with serde_json's text (`expected value at line 1 column 1`).
    fn from(err: serde_json::Error) -> Self {
        if err.is_io() {
            return io::Error::from(err).into();
        }
        ToolError::new(err.to_string()).into()
    }
}
