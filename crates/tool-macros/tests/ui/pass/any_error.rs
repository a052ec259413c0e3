//! Builds without warnings: a body that uses `?` on any error through a boxed error type, in
//! an async and a sync tool, and behind an alias.
#![deny(warnings)]

use std::error::Error;

use actuator_tool_macros::tool;

type BoxResult<T> = Result<T, Box<dyn Error + Send + Sync>>;

#[derive(Debug, thiserror::Error)]
#[error("no such user")]
pub struct NoSuchUser;

/// Reads a user's file.
///
/// # Arguments
/// * `path` - The file.
#[tool]
pub async fn read_user(path: String) -> Result<String, Box<dyn Error + Send + Sync>> {
    let text = std::fs::read_to_string(path)?;
    let value: serde_json::Value = serde_json::from_str(&text)?;
    let name = value["name"].as_str().ok_or(NoSuchUser)?;
    Ok(name.to_owned())
}

/// Reads a file, synchronously.
///
/// # Arguments
/// * `path` - The file.
#[tool]
pub fn read_sync(path: String) -> BoxResult<String> {
    Ok(std::fs::read_to_string(path)?)
}

fn main() {
    let _ = (read_user_tool(), read_sync_tool());
}
