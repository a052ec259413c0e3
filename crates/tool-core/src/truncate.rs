//! Output truncation (placeholder until implemented).

/// The default output limit: 16 KiB.
pub const DEFAULT_MAX_OUTPUT: usize = 16 * 1024;

/// A truncated output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The text the model sees.
    pub output: String,
    /// The original size in bytes.
    pub original_bytes: usize,
    /// The limit applied.
    pub limit: usize,
}

/// Truncates `output` to `limit` bytes.
pub fn truncate_tool_output(_tool_name: &str, _output: &str, _limit: usize) -> Option<Truncated> {
    None
}
