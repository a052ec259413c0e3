//! Strict deserialization: a struct is read only from a JSON object, never from an array.
//!
//! serde's derived `Deserialize` for a struct also accepts the struct's sequence form
//! (`visit_seq`), so `[10]` deserializes as a one-field struct, while the JSON Schema generated
//! for that struct says `"type": "object"`. [`Strict`] wraps a deserializer (in practice
//! `&serde_json::Value`) and forwards every call to it unchanged, except that a visitor handed
//! to `deserialize_struct` (or to a struct variant) no longer accepts a sequence: an array there
//! is the usual `invalid type: sequence, expected struct X` error.
//!
//! The wrapper applies recursively: every visitor, seed, sequence, map, enum and variant access
//! the inner deserializer hands out is wrapped too, so options, newtypes, sequence elements, map
//! keys and values and enum payloads are strict as well. Because everything else is forwarded,
//! numbers, strings, bytes, map keys, error messages and `is_human_readable` are exactly those
//! of the inner deserializer.
//!
//! One limit: values that serde buffers before deserializing them (internally tagged and
//! untagged enums, `#[serde(flatten)]`) are read with `deserialize_any` into serde's private
//! `Content` and then deserialized again from that buffer by serde's own deserializer, which this
//! wrapper cannot reach. Such a type still gets exactly the inner deserializer's behaviour.

use std::fmt;

use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};

/// A deserializer that behaves like the one it wraps, except that structs are read only from
/// maps (JSON objects), at every depth.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strict<D>(pub(crate) D);

/// Forwards `deserialize_*` methods that take only a visitor.
macro_rules! forward_deserialize {
    ($($method:ident)*) => {
        $(
            fn $method<V>(self, visitor: V) -> Result<V::Value, Self::Error>
            where
                V: Visitor<'de>,
            {
                self.0.$method(Wrap::new(visitor))
            }
        )*
    };
}

impl<'de, D> Deserializer<'de> for Strict<D>
where
    D: Deserializer<'de>,
{
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit
        deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0.deserialize_unit_struct(name, Wrap::new(visitor))
    }

    fn deserialize_newtype_struct<V>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0.deserialize_newtype_struct(name, Wrap::new(visitor))
    }

    fn deserialize_tuple<V>(self, len: usize, visitor: V) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0.deserialize_tuple(len, Wrap::new(visitor))
    }

    fn deserialize_tuple_struct<V>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0
            .deserialize_tuple_struct(name, len, Wrap::new(visitor))
    }

    /// The one change: the visitor rejects a sequence.
    fn deserialize_struct<V>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0
            .deserialize_struct(name, fields, Wrap::struct_only(visitor, fields))
    }

    fn deserialize_enum<V>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0.deserialize_enum(name, variants, Wrap::new(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor that forwards to `visitor`, wrapping whatever it is handed in the strict types.
/// With `fields` (a struct's), a sequence is an `invalid type` error instead, and a map key
/// that names no field is an `unknown field` error: a struct's schema is closed
/// (`additionalProperties: false`), and its deserializer agrees.
struct Wrap<V> {
    visitor: V,
    fields: Option<&'static [&'static str]>,
}

impl<V> Wrap<V> {
    fn new(visitor: V) -> Self {
        Wrap {
            visitor,
            fields: None,
        }
    }

    fn struct_only(visitor: V, fields: &'static [&'static str]) -> Self {
        Wrap {
            visitor,
            fields: Some(fields),
        }
    }
}

/// Forwards `visit_*` methods that take one plain value.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {
        $(
            fn $method<E>(self, v: $ty) -> Result<Self::Value, E>
            where
                E: de::Error,
            {
                self.visitor.$method(v)
            }
        )*
    };
}

impl<'de, V> Visitor<'de> for Wrap<V>
where
    V: Visitor<'de>,
{
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(formatter)
    }

    forward_visit! {
        visit_bool(bool)
        visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64) visit_i128(i128)
        visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64) visit_u128(u128)
        visit_f32(f32) visit_f64(f64) visit_char(char)
        visit_str(&str) visit_borrowed_str(&'de str) visit_string(String)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E>
    where
        E: de::Error,
    {
        self.visitor.visit_none()
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E>
    where
        E: de::Error,
    {
        self.visitor.visit_unit()
    }

    fn visit_some<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        self.visitor.visit_some(Strict(deserializer))
    }

    fn visit_newtype_struct<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        self.visitor.visit_newtype_struct(Strict(deserializer))
    }

    fn visit_seq<A>(self, seq: A) -> Result<Self::Value, A::Error>
    where
        A: SeqAccess<'de>,
    {
        if self.fields.is_some() {
            Err(de::Error::invalid_type(Unexpected::Seq, &self))
        } else {
            self.visitor.visit_seq(StrictSeq(seq))
        }
    }

    fn visit_map<A>(self, map: A) -> Result<Self::Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        self.visitor.visit_map(StrictMap {
            map,
            fields: self.fields,
        })
    }

    fn visit_enum<A>(self, data: A) -> Result<Self::Value, A::Error>
    where
        A: EnumAccess<'de>,
    {
        self.visitor.visit_enum(StrictEnum(data))
    }
}

/// A seed that deserializes from a [`Strict`]-wrapped deserializer.
struct StrictSeed<S>(S);

impl<'de, S> DeserializeSeed<'de> for StrictSeed<S>
where
    S: DeserializeSeed<'de>,
{
    type Value = S::Value;

    fn deserialize<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        self.0.deserialize(Strict(deserializer))
    }
}

/// Sequence elements, each read strictly.
struct StrictSeq<A>(A);

impl<'de, A> SeqAccess<'de> for StrictSeq<A>
where
    A: SeqAccess<'de>,
{
    type Error = A::Error;

    fn next_element_seed<T>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        self.0.next_element_seed(StrictSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// Map keys and values, each read strictly (keys keep the inner deserializer's key rules); for
/// a struct, keys must name its fields.
struct StrictMap<A> {
    map: A,
    fields: Option<&'static [&'static str]>,
}

/// A struct's field key: read as a string, checked against the fields, then handed to the
/// struct's own field visitor.
struct KnownField<S> {
    seed: S,
    fields: &'static [&'static str],
}

impl<'de, S> DeserializeSeed<'de> for KnownField<S>
where
    S: DeserializeSeed<'de>,
{
    type Value = S::Value;

    fn deserialize<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        let key = String::deserialize(deserializer)?;
        if !self.fields.contains(&key.as_str()) {
            return Err(de::Error::unknown_field(&key, self.fields));
        }
        self.seed.deserialize(key.into_deserializer())
    }
}

impl<'de, A> MapAccess<'de> for StrictMap<A>
where
    A: MapAccess<'de>,
{
    type Error = A::Error;

    fn next_key_seed<K>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error>
    where
        K: DeserializeSeed<'de>,
    {
        match self.fields {
            Some(fields) => self.map.next_key_seed(KnownField { seed, fields }),
            None => self.map.next_key_seed(StrictSeed(seed)),
        }
    }

    fn next_value_seed<T>(&mut self, seed: T) -> Result<T::Value, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        self.map.next_value_seed(StrictSeed(seed))
    }

    fn next_entry_seed<K, T>(
        &mut self,
        key: K,
        value: T,
    ) -> Result<Option<(K::Value, T::Value)>, Self::Error>
    where
        K: DeserializeSeed<'de>,
        T: DeserializeSeed<'de>,
    {
        match self.fields {
            Some(fields) => self
                .map
                .next_entry_seed(KnownField { seed: key, fields }, StrictSeed(value)),
            None => self.map.next_entry_seed(StrictSeed(key), StrictSeed(value)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// An enum whose variant name and payload are read strictly.
struct StrictEnum<A>(A);

impl<'de, A> EnumAccess<'de> for StrictEnum<A>
where
    A: EnumAccess<'de>,
{
    type Error = A::Error;
    type Variant = StrictVariant<A::Variant>;

    fn variant_seed<T>(self, seed: T) -> Result<(T::Value, Self::Variant), Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        self.0
            .variant_seed(StrictSeed(seed))
            .map(|(value, variant)| (value, StrictVariant(variant)))
    }
}

/// A variant payload, read strictly; a struct variant, like a struct, only from a map.
struct StrictVariant<A>(A);

impl<'de, A> VariantAccess<'de> for StrictVariant<A>
where
    A: VariantAccess<'de>,
{
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T>(self, seed: T) -> Result<T::Value, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        self.0.newtype_variant_seed(StrictSeed(seed))
    }

    fn tuple_variant<V>(self, len: usize, visitor: V) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0.tuple_variant(len, Wrap::new(visitor))
    }

    fn struct_variant<V>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        self.0
            .struct_variant(fields, Wrap::struct_only(visitor, fields))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;
    use std::path::PathBuf;
    use std::time::Duration;

    use serde::Deserialize;
    use serde::de::IgnoredAny;
    use serde_json::{Value, json};

    use super::*;

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Point {
        x: i32,
        y: i32,
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        page_size: u32,
        #[serde(default)]
        include_archived: bool,
        #[serde(rename = "orderBy", default = "default_order")]
        sort_key: String,
    }

    fn default_order() -> String {
        "name".to_owned()
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Closed {
        a: u8,
        b: Option<Point>,
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Outer {
        name: String,
        point: Point,
        #[serde(default)]
        more: Vec<Point>,
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Unit;

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Newtype(i64);

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct NewtypePoint(Point);

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct TupleStruct(u8, String);

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum External {
        Plain,
        Num(f64),
        Pair(i32, i32),
        Shape { radius: f64 },
        Wrapped(Point),
        Boxed(Box<External>),
        Both(Point, u8),
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Internal {
        Click { x: i32, y: i32 },
        Key { key: String },
        Nothing,
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(tag = "t", content = "c")]
    enum Adjacent {
        A(u8),
        B { s: String },
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Untagged {
        Id(u64),
        Name(String),
        Many(Vec<u8>),
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct Flattened {
        a: u8,
        #[serde(flatten)]
        rest: HashMap<String, Value>,
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    struct FlattenedStruct {
        name: String,
        #[serde(flatten)]
        point: Point,
    }

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Expr {
        Num(f64),
        Add(Box<Expr>, Box<Expr>),
        Neg(Box<Expr>),
    }

    /// Reads bytes through `deserialize_bytes` (strings and arrays of bytes, as serde_json does).
    #[derive(Debug, Clone, PartialEq)]
    struct Bytes(Vec<u8>);

    impl<'de> Deserialize<'de> for Bytes {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct BytesVisitor;
            impl<'de> Visitor<'de> for BytesVisitor {
                type Value = Bytes;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                    Ok(Bytes(v.as_bytes().to_vec()))
                }
                fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes(v.to_vec()))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
                    let mut out = Vec::new();
                    while let Some(b) = seq.next_element::<u8>()? {
                        out.push(b);
                    }
                    Ok(Bytes(out))
                }
            }
            deserializer.deserialize_bytes(BytesVisitor)
        }
    }

    /// Records whether the deserializer says it is human-readable.
    #[derive(Debug, Clone, PartialEq)]
    struct HumanReadable(bool);

    impl<'de> Deserialize<'de> for HumanReadable {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let readable = deserializer.is_human_readable();
            IgnoredAny::deserialize(deserializer)?;
            Ok(HumanReadable(readable))
        }
    }

    fn strict<'de, T: Deserialize<'de>>(value: &'de Value) -> Result<T, serde_json::Error> {
        T::deserialize(Strict(value))
    }

    /// Values every type of the table is read from.
    fn pool() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.0),
            json!(1.5),
            json!(-2.5),
            json!(127),
            json!(128),
            json!(-129),
            json!(255),
            json!(256),
            json!(65_536),
            json!(4_294_967_296_u64),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(1e300),
            json!(""),
            json!("a"),
            json!("é"),
            json!("ab"),
            json!("1"),
            json!("plain"),
            json!("num"),
            json!("Plain"),
            json!("/tmp/x"),
            json!([]),
            json!([1]),
            json!([1, 2]),
            json!([1, 2, 3]),
            json!([1.5, 2.5]),
            json!([1, null]),
            json!(["a", "b"]),
            json!([1, "a"]),
            json!(["click", 1, 2]),
            json!(["key", "k"]),
            json!(["A", 1]),
            json!([[1, 2], [3, 4]]),
            json!([{"x": 1, "y": 2}]),
            json!([{"x": 1, "y": 2}, [3, 4]]),
            json!([null, {"x": 1, "y": 2}]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 1, "b": null}),
            json!({"a": 1, "b": {"x": 1, "y": 2}}),
            json!({"a": 1, "b": [1, 2]}),
            json!({"a": 1, "c": 2}),
            json!({"a": "b"}),
            json!({"1": 2, "-3": 4}),
            json!({"1.5": 2}),
            json!({"x": 1, "y": 2}),
            json!({"x": 1, "y": 2, "z": 3}),
            json!({"x": 1}),
            json!({"x": [1], "y": 2}),
            json!({"p": {"x": 1, "y": 2}, "q": [1, 2]}),
            json!({"p": {"x": 1, "y": 2}}),
            json!({"true": 1, "false": 2}),
            json!({"secs": 1, "nanos": 2}),
            json!({"pageSize": 10}),
            json!({"pageSize": 10, "includeArchived": true, "orderBy": "date"}),
            json!({"page_size": 10}),
            json!({"name": "n", "point": {"x": 1, "y": 2}}),
            json!({"name": "n", "point": [1, 2]}),
            json!({"name": "n", "point": {"x": 1, "y": 2}, "more": [[1, 2]]}),
            json!({"name": "n", "x": 1, "y": 2}),
            json!({"plain": null}),
            json!({"plain": []}),
            json!({"num": 1}),
            json!({"num": 1, "pair": [1, 2]}),
            json!({"pair": [1, 2]}),
            json!({"pair": []}),
            json!({"pair": [1]}),
            json!({"shape": {"radius": 1}}),
            json!({"shape": [1]}),
            json!({"wrapped": {"x": 1, "y": 2}}),
            json!({"wrapped": [1, 2]}),
            json!({"boxed": {"wrapped": [1, 2]}}),
            json!({"boxed": {"num": 2}}),
            json!({"both": [{"x": 1, "y": 2}, 3]}),
            json!({"both": [[1, 2], 3]}),
            json!({"type": "click", "x": 1, "y": 2}),
            json!({"type": "key", "key": "k"}),
            json!({"type": "nothing"}),
            json!({"type": "scroll"}),
            json!({"t": "A", "c": 1}),
            json!({"t": "B", "c": {"s": "x"}}),
            json!({"t": "B", "c": ["x"]}),
            json!({"add": [{"num": 1}, {"neg": {"num": 2}}]}),
            json!({"neg": {"add": [{"num": 1}, {"num": 2}]}}),
        ]
    }

    /// Compares `Strict` with `&Value`'s own deserializer on every value of the pool. With
    /// `has_struct`, the strict side may also fail differently, but only with a
    /// struct-from-sequence or unknown-field error; otherwise both must agree exactly (values
    /// and messages).
    fn check<T>(type_name: &str, has_struct: bool)
    where
        T: for<'de> Deserialize<'de> + PartialEq + Debug,
    {
        for value in pool() {
            let plain = T::deserialize(&value);
            let strict_result = strict::<T>(&value);
            match (&plain, &strict_result) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{type_name} on {value}"),
                (_, Err(e)) if has_struct && (from_sequence(e) || unknown_field(e)) => {}
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{type_name} on {value}");
                }
                _ => panic!("{type_name} on {value}: plain {plain:?}, strict {strict_result:?}"),
            }
        }
    }

    /// The error `Strict` gives for a struct (or adjacently tagged enum) whose map has a key
    /// that names no field: its schema is closed.
    fn unknown_field(err: &serde_json::Error) -> bool {
        err.to_string().starts_with("unknown field `")
    }

    /// The error `Strict` gives for a struct (or adjacently tagged enum, which serde also reads
    /// with `deserialize_struct`) read from a sequence.
    fn from_sequence(err: &serde_json::Error) -> bool {
        err.to_string()
            .starts_with("invalid type: sequence, expected ")
    }

    macro_rules! table {
        ($($t:ty => $has_struct:expr,)*) => {
            $( check::<$t>(stringify!($t), $has_struct); )*
        };
    }

    #[test]
    fn behaves_like_value_except_for_structs_from_arrays() {
        table! {
            () => false,
            bool => false,
            i8 => false,
            i16 => false,
            i32 => false,
            i64 => false,
            i128 => false,
            u8 => false,
            u16 => false,
            u32 => false,
            u64 => false,
            u128 => false,
            usize => false,
            f32 => false,
            f64 => false,
            char => false,
            String => false,
            PathBuf => false,
            Bytes => false,
            Option<bool> => false,
            Option<u8> => false,
            Option<String> => false,
            Option<Option<i32>> => false,
            Option<Vec<Option<i32>>> => false,
            Vec<u8> => false,
            Vec<f64> => false,
            Vec<String> => false,
            Vec<Vec<i64>> => false,
            Vec<Value> => false,
            Box<i32> => false,
            (f64, f64) => false,
            (u8, String) => false,
            (i32,) => false,
            HashMap<String, u32> => false,
            HashMap<i32, i32> => false,
            HashMap<bool, i32> => false,
            BTreeMap<String, String> => false,
            BTreeMap<String, Value> => false,
            Value => false,
            Unit => false,
            Newtype => false,
            TupleStruct => false,
            Adjacent => true,
            Internal => false,
            Untagged => false,
            Flattened => false,
            Expr => false,
            Point => true,
            Renamed => true,
            Closed => true,
            Outer => true,
            NewtypePoint => true,
            External => true,
            FlattenedStruct => true,
            Duration => true,
            Option<Point> => true,
            Vec<Point> => true,
            Vec<Option<Point>> => true,
            HashMap<String, Point> => true,
            BTreeMap<String, Vec<Point>> => true,
            (Point, u8) => true,
            Box<Point> => true,
            HumanReadable => false,
        }
    }

    #[test]
    fn borrowed_strings_and_ignored_values_pass_through() {
        let value = json!("borrowed");
        let s: &str = strict(&value).unwrap();
        assert_eq!(s, "borrowed");
        let value = json!({"a": [1, {"b": [2]}]});
        strict::<IgnoredAny>(&value).unwrap();
        assert_eq!(
            strict::<HumanReadable>(&value).unwrap(),
            HumanReadable(true)
        );
    }

    #[test]
    fn struct_from_array_is_rejected_at_top_level() {
        let value = json!([1, 2]);
        assert_eq!(Point::deserialize(&value).unwrap(), Point { x: 1, y: 2 });
        let err = strict::<Point>(&value).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid type: sequence, expected struct Point"
        );
        let value = json!([1]);
        assert!(Renamed::deserialize(&value).is_ok());
        assert_eq!(
            strict::<Renamed>(&value).unwrap_err().to_string(),
            "invalid type: sequence, expected struct Renamed"
        );
        let value = json!([]);
        assert!(strict::<Renamed>(&value).is_err());
    }

    #[test]
    fn struct_from_array_is_rejected_when_nested() {
        let cases = [
            ("Vec", json!([{"x": 1, "y": 2}, [3, 4]])),
            ("Option", json!([1, 2])),
            ("map value", json!({"k": [1, 2]})),
            ("field", json!({"name": "n", "point": [1, 2]})),
            ("newtype variant", json!({"wrapped": [1, 2]})),
            ("tuple variant", json!({"both": [[1, 2], 3]})),
            ("boxed variant", json!({"boxed": {"wrapped": [1, 2]}})),
            ("newtype struct", json!([1, 2])),
            ("tuple", json!([[1, 2], 3])),
        ];
        for (what, value) in cases {
            let (plain, strict_result) = match what {
                "Vec" => (
                    Vec::<Point>::deserialize(&value).is_ok(),
                    strict::<Vec<Point>>(&value).map(drop),
                ),
                "Option" => (
                    Option::<Point>::deserialize(&value).is_ok(),
                    strict::<Option<Point>>(&value).map(drop),
                ),
                "map value" => (
                    HashMap::<String, Point>::deserialize(&value).is_ok(),
                    strict::<HashMap<String, Point>>(&value).map(drop),
                ),
                "field" => (
                    Outer::deserialize(&value).is_ok(),
                    strict::<Outer>(&value).map(drop),
                ),
                "newtype variant" | "tuple variant" | "boxed variant" => (
                    External::deserialize(&value).is_ok(),
                    strict::<External>(&value).map(drop),
                ),
                "newtype struct" => (
                    NewtypePoint::deserialize(&value).is_ok(),
                    strict::<NewtypePoint>(&value).map(drop),
                ),
                _ => (
                    <(Point, u8)>::deserialize(&value).is_ok(),
                    strict::<(Point, u8)>(&value).map(drop),
                ),
            };
            assert!(plain, "{what}: serde_json itself should accept {value}");
            let err = strict_result.unwrap_err();
            assert_eq!(
                err.to_string(),
                "invalid type: sequence, expected struct Point",
                "{what}"
            );
        }
    }

    #[test]
    fn struct_variant_and_std_structs_need_objects() {
        let value = json!({"shape": [1.0]});
        assert!(strict::<External>(&value).is_err());
        let value = json!({"secs": 1, "nanos": 5});
        assert_eq!(strict::<Duration>(&value).unwrap(), Duration::new(1, 5));
        let value = json!([1, 5]);
        assert!(Duration::deserialize(&value).is_ok());
        assert_eq!(
            strict::<Duration>(&value).unwrap_err().to_string(),
            "invalid type: sequence, expected struct Duration"
        );
    }

    #[test]
    fn objects_still_work_everywhere() {
        let value = json!({
            "name": "n",
            "point": {"x": 1, "y": 2},
            "more": [{"x": 3, "y": 4}]
        });
        assert_eq!(
            strict::<Outer>(&value).unwrap(),
            Outer {
                name: "n".to_owned(),
                point: Point { x: 1, y: 2 },
                more: vec![Point { x: 3, y: 4 }],
            }
        );
        let value = json!({"pageSize": 10});
        assert_eq!(
            strict::<Renamed>(&value).unwrap(),
            Renamed {
                page_size: 10,
                include_archived: false,
                sort_key: "name".to_owned(),
            }
        );
        let value = json!({"type": "click", "x": 1, "y": 2});
        assert_eq!(
            strict::<Internal>(&value).unwrap(),
            Internal::Click { x: 1, y: 2 }
        );
        let value = json!({"name": "n", "x": 1, "y": 2});
        assert_eq!(
            strict::<FlattenedStruct>(&value).unwrap(),
            FlattenedStruct {
                name: "n".to_owned(),
                point: Point { x: 1, y: 2 },
            }
        );
        let value = json!({"add": [{"num": 1}, {"neg": {"num": 2}}]});
        assert_eq!(strict::<Expr>(&value).unwrap(), {
            Expr::Add(
                Box::new(Expr::Num(1.0)),
                Box::new(Expr::Neg(Box::new(Expr::Num(2.0)))),
            )
        });
    }

    #[test]
    fn path_to_error_sees_the_nested_rejection() {
        let value =
            json!({"name": "n", "point": {"x": 1, "y": 2}, "more": [{"x": 1, "y": 2}, [3, 4]]});
        let err = serde_path_to_error::deserialize::<_, Outer>(Strict(&value)).unwrap_err();
        assert_eq!(err.path().to_string(), "more[1]");
        assert_eq!(
            err.inner().to_string(),
            "invalid type: sequence, expected struct Point"
        );
    }

    #[test]
    fn tool_args_reject_structs_from_arrays() {
        let mut args =
            crate::ToolArgs::from_value(json!({"p": [1, 2], "q": {"x": 1, "y": 2}})).unwrap();
        let err = args.required::<Point>("p").unwrap_err();
        assert!(
            err.message()
                .contains("invalid type: sequence, expected struct Point"),
            "{}",
            err.message()
        );
        assert_eq!(args.required::<Point>("q").unwrap(), Point { x: 1, y: 2 });
        let args = crate::ToolArgs::from_value(json!({"x": 1.0, "y": 2})).unwrap();
        assert_eq!(args.into_struct::<Point>().unwrap(), Point { x: 1, y: 2 });
    }
}
