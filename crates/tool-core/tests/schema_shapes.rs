//! The shapes of the schemas a model reads, as the reference renders the same parameters
//! (checked against inspect_ai 0.3.285's `ToolDef(...).parameters` for the Python
//! equivalents: `Optional[T]`, dataclasses, `list[Any]`, `dict[str, Any]`).

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;

use actuator_tool_core::{ArgumentValidator, ParamsBuilder, ToolArgs};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// An address.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    /// The street.
    street: String,
    /// The postcode.
    #[serde(default)]
    postcode: Option<String>,
}

/// A number or a word.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum NumberOrWord {
    /// A number.
    Number(i32),
    /// A word.
    Word(String),
}

/// Nothing can be this.
#[derive(Debug, Deserialize, JsonSchema)]
enum Never {}

/// A type no value is, whose schema is the boolean schema `false` itself.
#[derive(Debug, Deserialize)]
struct Impossible;

impl JsonSchema for Impossible {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Impossible".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::from(false)
    }
}

fn schema<T: actuator_tool_core::ToolParam>() -> Value {
    let params = ParamsBuilder::new()
        .param::<T>("v", Some("The value."))
        .build();
    params.properties["v"].clone()
}

#[test]
fn option_is_any_of_with_null_beside_its_description() {
    assert_eq!(
        schema::<Option<f64>>(),
        json!({"anyOf": [{"type": "number"}, {"type": "null"}], "description": "The value."})
    );
    // An Option of an untagged union is one flat anyOf.
    assert_eq!(
        schema::<Option<NumberOrWord>>()["anyOf"],
        json!([
            {"type": "integer", "minimum": -2147483648, "maximum": 2147483647, "description": "A number."},
            {"type": "string", "description": "A word."},
            {"type": "null"}
        ])
    );
}

#[test]
fn structs_are_closed_and_optional_defaults_hidden() {
    let address = schema::<Address>();
    assert_eq!(address["additionalProperties"], json!(false));
    assert!(address["properties"]["postcode"].get("default").is_none());
    // The deserializer agrees with the closed schema.
    let params = ParamsBuilder::new()
        .param::<Address>("v", Some("The value."))
        .build();
    let args = json!({"v": {"street": "Main", "floor": 3}});
    assert!(
        ArgumentValidator::new("t", &params)
            .unwrap()
            .validate(&args)
            .is_err()
    );
    let err = ToolArgs::from_value(args)
        .unwrap()
        .required::<Address>("v")
        .unwrap_err();
    assert!(
        err.message().contains("unknown field `floor`"),
        "{}",
        err.message()
    );
}

#[test]
fn no_boolean_schemas_where_a_model_reads_one() {
    assert_eq!(schema::<Vec<Value>>()["items"], json!({}));
    assert_eq!(
        schema::<HashMap<String, Value>>()["additionalProperties"],
        json!({})
    );
    assert_eq!(schema::<Vec<Never>>()["items"]["enum"], json!([]));
    // A parameter whose whole schema is `false`: no value, not "any value".
    assert_eq!(
        schema::<Impossible>(),
        json!({"enum": [], "description": "The value."})
    );
}

#[test]
fn sixty_four_bit_integers_show_no_noise_bounds() {
    assert_eq!(
        schema::<i64>(),
        json!({"type": "integer", "description": "The value."})
    );
    assert_eq!(
        schema::<u64>(),
        json!({"type": "integer", "minimum": 0, "description": "The value."})
    );
    // Narrower integers keep theirs.
    assert_eq!(schema::<u8>()["maximum"], json!(255));
}
