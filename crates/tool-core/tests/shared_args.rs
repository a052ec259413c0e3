//! `ToolArgs::shared` reads a map it shares with others in place: every way of taking
//! arguments gives what the owned form gives, and the shared map is never changed.

use std::sync::Arc;

use actuator_tool_core::ToolArgs;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Both forms of the same arguments.
fn both(value: Value) -> (ToolArgs, ToolArgs, Arc<Value>) {
    let map = object(value);
    let shared = Arc::new(Value::Object(map.clone()));
    (
        ToolArgs::new(map),
        ToolArgs::shared(Arc::clone(&shared)),
        shared,
    )
}

#[test]
fn taking_reads_like_the_owned_form_and_leaves_the_shared_map_alone() {
    let args = json!({"x": 2, "y": 3.0, "s": "text", "n": null, "list": [1, 2]});
    let (mut owned, mut shared, map) = both(args.clone());
    assert_eq!(owned, shared);
    assert_eq!(format!("{owned:?}"), format!("{shared:?}"));

    for args in [&mut owned, &mut shared] {
        assert_eq!(args.required::<i64>("x").unwrap(), 2);
        // Taken once: a second take finds nothing.
        assert_eq!(
            args.required::<i64>("x").unwrap_err().message(),
            "Required parameter x not provided to tool call."
        );
        assert_eq!(args.required::<i64>("y").unwrap(), 3);
        assert_eq!(args.optional::<i64>("n").unwrap(), None);
        assert_eq!(args.or_else::<u8>("absent", || 7).unwrap(), 7);
        assert_eq!(
            args.required::<i64>("s").unwrap_err().message(),
            "Unable to convert argument 's' to i64: invalid type: string \"text\", expected i64"
        );
    }
    assert_eq!(owned, shared);
    assert_eq!(format!("{owned:?}"), format!("{shared:?}"));
    assert_eq!(owned.as_map(), shared.as_map());
    assert_eq!(
        shared.as_map().keys().collect::<Vec<_>>(),
        ["list"],
        "what is left"
    );
    // Taking after `as_map` updates what is left.
    let _: Vec<i64> = shared.or_default("list").unwrap();
    assert!(shared.as_map().is_empty());
    assert_eq!(
        *map,
        Value::Object(object(args)),
        "the shared map is untouched"
    );
}

#[test]
fn the_whole_arguments_come_out_as_a_map_or_a_struct() {
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Point {
        x: i64,
        y: i64,
    }
    let (owned, shared, _) = both(json!({"x": 1.0, "y": 2}));
    assert_eq!(
        owned.into_struct::<Point>().unwrap(),
        shared.into_struct::<Point>().unwrap()
    );
    let (mut owned, mut shared, map) = both(json!({"a": 1, "b": 2, "c": 3}));
    let _: i64 = owned.required("b").unwrap();
    let _: i64 = shared.required("b").unwrap();
    let left = shared.clone().into_map();
    assert_eq!(owned.into_map(), left);
    assert_eq!(left.keys().collect::<Vec<_>>(), ["a", "c"]);
    assert_eq!(map.as_object().unwrap().len(), 3);
    // Nothing taken and no other owner: the map itself comes back.
    let (_, shared, map) = both(json!({"a": 1}));
    drop(map);
    assert_eq!(shared.into_map(), object(json!({"a": 1})));
}

#[test]
fn a_shared_value_that_is_not_an_object_is_no_arguments() {
    for value in [json!(null), json!([1, 2]), json!("x")] {
        let mut args = ToolArgs::shared(Arc::new(value));
        assert!(args.as_map().is_empty());
        assert_eq!(args.optional::<i64>("x").unwrap(), None);
        assert!(args.into_map().is_empty());
    }
}

#[test]
fn more_entries_than_shared_bits_are_copied_and_still_work() {
    let wide: Map<String, Value> = (0..100).map(|i| (format!("k{i}"), json!(i))).collect();
    let mut shared = ToolArgs::shared(Arc::new(Value::Object(wide)));
    for i in (0..100).rev() {
        assert_eq!(shared.required::<i64>(&format!("k{i}")).unwrap(), i);
    }
    assert!(shared.as_map().is_empty());
    // At the limit, the last entry is still read in place.
    let edge: Map<String, Value> = (0..64).map(|i| (format!("k{i}"), json!(i))).collect();
    let mut shared = ToolArgs::shared(Arc::new(Value::Object(edge)));
    assert_eq!(shared.required::<i64>("k63").unwrap(), 63);
    assert_eq!(shared.as_map().len(), 63);
}

proptest! {
    /// Any sequence of takes gives the same values and leaves the same rest in both forms.
    #[test]
    fn any_takes_agree(
        keys in proptest::collection::vec("[a-d]", 0..6),
        takes in proptest::collection::vec(("[a-e]", 0..3u8), 0..10),
    ) {
        let map: Map<String, Value> =
            keys.iter().enumerate().map(|(i, k)| (k.clone(), json!(i))).collect();
        let mut owned = ToolArgs::new(map.clone());
        let mut shared = ToolArgs::shared(Arc::new(Value::Object(map)));
        for (name, how) in takes {
            let (a, b) = match how {
                0 => (owned.optional::<i64>(&name).ok(), shared.optional::<i64>(&name).ok()),
                1 => (
                    owned.or_else(&name, || -1).ok().map(Some),
                    shared.or_else(&name, || -1).ok().map(Some),
                ),
                _ => (
                    owned.required::<i64>(&name).ok().map(Some),
                    shared.required::<i64>(&name).ok().map(Some),
                ),
            };
            prop_assert_eq!(a, b);
            prop_assert_eq!(owned.as_map(), shared.as_map());
        }
        prop_assert_eq!(owned.into_map(), shared.into_map());
    }
}
