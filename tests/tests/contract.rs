//! The contract "the schema accepts exactly what the deserializer accepts", checked for every
//! parameter type of the catalogue on a pool of sample values (schemars' own test style), and
//! on random JSON values with proptest.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use actuator_tests::types::{Address, Event, Expr, Key, Mode, NewUser, RenameOptions, Shape};
use actuator_tool_core::{ArgumentValidator, ParamsBuilder, ToolArgs, ToolParam};
use chrono::{DateTime, NaiveDate, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Sample values every type is checked against.
fn pool() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(1.0),
        json!(2.0),
        json!(1.5),
        json!(127),
        json!(128),
        json!(-128),
        json!(-129),
        json!(255),
        json!(256),
        json!(65_536),
        json!(4_294_967_296_u64),
        json!(-4_294_967_296_i64),
        json!(9_007_199_254_740_993_u64),
        json!(1e300),
        json!(-1e300),
        json!(""),
        json!("a"),
        json!("é"),
        json!("ab"),
        json!("fast"),
        json!("Fast"),
        json!("point"),
        json!("2026-11-30"),
        json!("2026-13-45"),
        json!("2026-11-30T10:00:00Z"),
        json!("2026-11-30T10:00:00+02:00"),
        json!("yesterday"),
        json!([]),
        json!([1]),
        json!([1, 2]),
        json!([1.5, 2.5]),
        json!([1, null]),
        json!(["a", "b"]),
        json!(["a", "a"]),
        json!([[1, 2], [3, 4]]),
        json!({}),
        json!({"a": 1}),
        json!({"a": "b"}),
        json!({"a": -1}),
        json!({"circle": {"radius": 2}}),
        json!({"square": {"side": 1.5}}),
        json!({"circle": {"radius": "big"}}),
        json!({"type": "click", "x": 1, "y": 2}),
        json!({"type": "click", "x": 1.0, "y": 2}),
        json!({"type": "key", "key": "a"}),
        json!({"type": "scroll"}),
        json!({"num": 1}),
        json!({"add": [{"num": 1}, {"neg": {"num": 2}}]}),
        json!({"add": [{"num": 1}]}),
        json!({"street": "1 Main St", "city": "Springfield"}),
        json!({"street": "1 Main St", "city": "Springfield", "postcode": null}),
        json!({"name": "Ann", "age": 30, "address": {"street": "s", "city": "c"}}),
        json!({"name": "Ann", "age": 300, "address": {"street": "s", "city": "c"}}),
        json!({"name": "Ann", "age": 30, "address": {"street": "s"}}),
        json!({"pageSize": 10}),
        json!({"pageSize": 10, "includeArchived": true, "orderBy": "date"}),
        json!({"page_size": 10}),
    ]
}

/// A decision (issue 10): 64-bit integers show no bounds to a model, so the schema accepts an
/// integer beyond the type's range that the deserializer then refuses with a `parsing` error.
/// Such a call still fails, with the deserializer's message: the only allowed disagreement.
fn beyond_64_bits(v: &Value) -> bool {
    v.as_f64().is_some_and(|f| f.fract() == 0.0) && (v.as_i64().is_none() || v.as_u64().is_none())
}

/// serde reads internally tagged enums through its private buffering, which no deserializer
/// wrapper reaches: it accepts them from arrays (`["key", "a"]`) and with keys their closed
/// schema does not list. A known leniency, guarded by validation running first (see
/// `validation_guards_serdes_lenient_forms` in catalogue_calls.rs).
fn buffered_leniency(type_name: &str, v: &Value) -> bool {
    const EVENT_KEYS: [&str; 4] = ["type", "x", "y", "key"];
    type_name == "Event"
        && (v.is_array()
            || v.as_object()
                .is_some_and(|o| o.keys().any(|k| !EVENT_KEYS.contains(&k.as_str()))))
}

/// Checks one type against the pool, extra samples, and a missing argument.
fn check<T: ToolParam>(type_name: &str, extra: &[Value]) {
    let params = ParamsBuilder::new().param::<T>("v", Some("v")).build();
    let validator = ArgumentValidator::new("t", &params).expect("schema compiles");
    let mut samples: Vec<Option<Value>> = pool().into_iter().map(Some).collect();
    samples.extend(extra.iter().cloned().map(Some));
    samples.push(None);
    let mut accepted = 0;
    for sample in samples {
        let args = match &sample {
            Some(v) => json!({ "v": v }),
            None => json!({}),
        };
        let schema_ok = validator.validate(&args).is_ok();
        let mut taken = ToolArgs::from_value(args).expect("object");
        let de = taken.required::<T>("v");
        if schema_ok && de.is_err() && sample.as_ref().is_some_and(beyond_64_bits) {
            continue;
        }
        if !schema_ok
            && de.is_ok()
            && sample
                .as_ref()
                .is_some_and(|v| buffered_leniency(type_name, v))
        {
            continue;
        }
        assert_eq!(
            schema_ok,
            de.is_ok(),
            "{type_name}: schema {} but deserializer {} for {sample:?} (schema: {}, deserializer: {:?})",
            if schema_ok { "accepts" } else { "rejects" },
            if de.is_ok() { "accepts" } else { "rejects" },
            serde_json::to_string(&params).unwrap_or_default(),
            de.err(),
        );
        accepted += usize::from(schema_ok);
    }
    assert!(accepted > 0, "{type_name}: no sample was accepted; add one");
}

macro_rules! contract {
    ($($name:ident: $t:ty => [$($extra:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                check::<$t>(stringify!($t), &[$($extra),*]);
            }
        )*

        /// Every contract type on random JSON.
        fn check_random(value: &Value) {
            $(
                check_value::<$t>(stringify!($t), value);
            )*
        }
    };
}

contract! {
    i64_: i64 => [json!(i64::MAX), json!(i64::MIN)];
    u8_: u8 => [];
    i8_: i8 => [];
    u16_: u16 => [];
    u64_: u64 => [json!(u64::MAX)];
    i32_: i32 => [];
    usize_: usize => [];
    f64_: f64 => [];
    f32_: f32 => [];
    bool_: bool => [];
    char_: char => [];
    string: String => [];
    option_string: Option<String> => [];
    option_u8: Option<u8> => [];
    vec_f64: Vec<f64> => [];
    vec_string: Vec<String> => [];
    hashmap_u32: HashMap<String, u32> => [];
    btreemap_string: BTreeMap<String, String> => [];
    tuple_f64: (f64, f64) => [json!([1, 2, 3])];
    mode: Mode => [json!("exact"), json!("fuzzy")];
    shape: Shape => [];
    event: Event => [json!({"type": "click", "x": 1, "y": 2, "extra": 1})];
    key: Key => [];
    address: Address => [];
    new_user: NewUser => [];
    expr: Expr => [json!({"neg": {"add": [{"num": 1}, {"num": 2}]}})];
    rename_options: RenameOptions => [];
    value: Value => [];
    path: PathBuf => [json!("/tmp/x")];
    datetime: DateTime<Utc> => [json!("2026-11-30T10:00:00.123Z")];
    date: NaiveDate => [];
    hashset: HashSet<String> => [];
    nested_option: Option<Vec<Option<i32>>> => [];
}

fn check_value<T: ToolParam>(type_name: &str, value: &Value) {
    if buffered_leniency(type_name, value) {
        return;
    }
    let params = ParamsBuilder::new().param::<T>("v", Some("v")).build();
    let validator = ArgumentValidator::new("t", &params).expect("schema compiles");
    let args = json!({ "v": value });
    let schema_ok = validator.validate(&args).is_ok();
    let de_ok = ToolArgs::from_value(args)
        .expect("object")
        .required::<T>("v")
        .is_ok();
    if schema_ok && !de_ok && beyond_64_bits(value) {
        return;
    }
    assert_eq!(schema_ok, de_ok, "{type_name}: disagreement on {value}");
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-300_i64..300).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1000.0_f64..1000.0).prop_map(Value::from),
        (0_i32..5).prop_map(|i| Value::from(f64::from(i))),
        prop_oneof![
            Just("fast"),
            Just("exact"),
            Just("point"),
            Just("circle"),
            Just("num"),
            Just("a"),
            Just("2026-11-30"),
            Just("2026-11-30T10:00:00Z"),
            Just(""),
            Just("xy")
        ]
        .prop_map(Value::from),
        "[a-z]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("radius".to_owned()),
                        Just("side".to_owned()),
                        Just("type".to_owned()),
                        Just("x".to_owned()),
                        Just("y".to_owned()),
                        Just("key".to_owned()),
                        Just("num".to_owned()),
                        Just("neg".to_owned()),
                        Just("add".to_owned()),
                        Just("circle".to_owned()),
                        Just("square".to_owned()),
                        Just("city".to_owned()),
                        Just("street".to_owned()),
                        Just("pageSize".to_owned()),
                        "[a-z]{1,3}".prop_map(|s| s),
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn schema_and_deserializer_agree_on_random_json(value in arb_json()) {
        check_random(&value);
    }
}
