//! A tool with struct, enum and flattened parameters, from a crate whose only dependencies are
//! `actuator` and tokio: its schema and a call.
#![allow(clippy::unwrap_used)]

use actuator::prelude::*;
use actuator_facade_only::search_tool;

#[tokio::test(flavor = "current_thread")]
async fn struct_and_enum_parameters_need_only_the_facade() {
    let def = search_tool();
    let params = def.parameters();
    assert_eq!(params.required, ["query", "filter", "order", "page"]);
    // `Value` is reached through the facade's types only: no `serde_json` here either.
    let schema = params.properties["filter"].to_string();
    assert!(schema.contains("\"max\""), "{schema}");
    assert!(
        schema.contains("Only results in this language."),
        "{schema}"
    );
    let order = params.properties["order"].to_string();
    assert!(
        order.contains("relevance") && order.contains("newest"),
        "{order}"
    );

    let args = r#"{"query": "tokio", "filter": {"language": "en", "max": 3},
                   "order": "newest", "page": 2}"#
        .parse()
        .unwrap();
    def.validate(&args).unwrap();
    let out = def
        .call(args, ToolContext::new("call_1", "search"))
        .await
        .unwrap();
    assert_eq!(out.text(), r#"tokio Some("en") max=3 Newest page=2"#);
}
