//! [`ToolChoice`]: which tools a model may or must call.

use serde::{Deserialize, Serialize};

/// Which tools a model may or must call on a turn.
///
/// Serializes as `"auto"`, `"any"`, `"none"` or `{"name": "…"}`.
///
/// ```
/// use actuator_tool_core::ToolChoice;
/// assert_eq!(ToolChoice::default(), ToolChoice::Auto);
/// assert_eq!(serde_json::to_string(&ToolChoice::function("add")).unwrap(), r#"{"name":"add"}"#);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolChoice {
    /// The model decides whether to call tools (the default).
    #[default]
    #[serde(with = "unit_auto")]
    Auto,
    /// The model must call at least one tool.
    #[serde(with = "unit_any")]
    Any,
    /// The model must not call tools; none are offered.
    #[serde(with = "unit_none")]
    None,
    /// The model must call this tool; only it is offered.
    Function {
        /// The tool's name.
        name: String,
    },
}

impl ToolChoice {
    /// `Function` for the named tool.
    pub fn function(name: impl Into<String>) -> Self {
        ToolChoice::Function { name: name.into() }
    }
}

macro_rules! unit_variant {
    ($module:ident, $text:literal) => {
        mod $module {
            use serde::{Deserialize, Deserializer, Serializer};

            pub(super) fn serialize<S: Serializer>(s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($text)
            }

            pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
                let text = String::deserialize(d)?;
                if text == $text {
                    Ok(())
                } else {
                    Err(serde::de::Error::custom(concat!(
                        "expected \"",
                        $text,
                        "\""
                    )))
                }
            }
        }
    };
}
unit_variant!(unit_auto, "auto");
unit_variant!(unit_any, "any");
unit_variant!(unit_none, "none");
