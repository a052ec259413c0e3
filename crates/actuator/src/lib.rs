//! # Actuator
//!
//! Give language models hands: turn plain Rust functions into tools a model can call, land
//! each call on the real function exactly and safely, and (as the layers above land) run agents
//! that loop over model and tools.
//!
//! This facade re-exports the layers:
//!
//! - [`tool_core`]: tool definitions, validation, results, errors, truncation, dialects.
//! - [`tool`] (feature `macros`, on by default): the `#[tool]` attribute.
//!
//! ```
//! use actuator::prelude::*;
//!
//! /// Add two integers.
//! ///
//! /// # Arguments
//! /// * `x` - First addend.
//! /// * `y` - Second addend.
//! #[tool]
//! async fn add(x: i64, y: i64) -> i64 {
//!     x + y
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let add = add_tool();
//! let args = serde_json::json!({"x": 2, "y": 3});
//! add.validate(&args).unwrap();
//! let out = add.call(args, ToolContext::new("call_1", "add")).await.unwrap();
//! assert_eq!(out.text(), "5");
//! # }
//! ```

pub use actuator_tool_core as tool_core;

#[cfg(feature = "macros")]
pub use actuator_tool_macros::tool;

/// The names most programs need.
pub mod prelude {
    pub use actuator_tool_core::{
        Content, FatalToolError, IntoToolOutput, Json, ToolArgs, ToolChoice, ToolContext, ToolDef,
        ToolError, ToolFailure, ToolInfo, ToolOutput, ToolParams,
    };

    #[cfg(feature = "macros")]
    pub use actuator_tool_macros::tool;
}
