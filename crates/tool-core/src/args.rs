//! Argument deserialization: a call's JSON arguments become typed parameters via serde.

use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::validate::py_repr;

/// The arguments of one call, taken apart parameter by parameter into typed values.
///
/// Every failure is a `parsing` [`ToolError`] that names the parameter, never a panic:
/// a missing required parameter gives `Required parameter {name} not provided to tool call.`
///
/// ```
/// use actuator_tool_core::ToolArgs;
/// use serde_json::json;
///
/// let mut args = ToolArgs::from_value(json!({"x": 2, "y": 3.0})).unwrap();
/// let x: i64 = args.required("x").unwrap();
/// let y: i64 = args.required("y").unwrap(); // 3.0 has no fraction: accepted as an integer
/// let z: Option<String> = args.required("z").unwrap(); // missing Option → None
/// let w: u8 = args.or_else("w", || 7).unwrap();
/// assert_eq!((x, y, z, w), (2, 3, None, 7));
/// let err = args.required::<i64>("q").unwrap_err();
/// assert_eq!(err.message(), "Required parameter q not provided to tool call.");
/// ```
#[derive(Clone, Default)]
pub struct ToolArgs {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    /// The arguments; a parameter is removed when taken.
    Owned(Map<String, Value>),
    /// Arguments shared with the caller (the executor keeps them for the call's events), read
    /// in place: bit `i` of `taken` marks the `i`-th entry as taken, and `rest` caches what
    /// [`ToolArgs::as_map`] returns once something was taken.
    Shared {
        /// Always a `Value::Object` ([`ToolArgs::shared`] checks).
        map: Arc<Value>,
        taken: u64,
        rest: OnceLock<Box<Map<String, Value>>>,
    },
}

impl Default for Inner {
    fn default() -> Self {
        Inner::Owned(Map::new())
    }
}

/// The most entries [`ToolArgs::shared`] reads in place (one bit each); more are copied.
const MAX_SHARED: usize = u64::BITS as usize;

impl PartialEq for ToolArgs {
    fn eq(&self, other: &Self) -> bool {
        self.as_map() == other.as_map()
    }
}

impl std::fmt::Debug for ToolArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolArgs")
            .field("map", self.as_map())
            .finish()
    }
}

impl ToolArgs {
    /// Wraps an arguments object.
    pub fn new(map: Map<String, Value>) -> Self {
        ToolArgs {
            inner: Inner::Owned(map),
        }
    }

    /// Wraps an arguments object (a `Value::Object`; anything else is no arguments) shared
    /// with others, without copying it: parameters are deserialized from it in place. (The
    /// executor shares a call's arguments between the tool and the call's events.)
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_tool_core::ToolArgs;
    /// let shared = Arc::new(serde_json::json!({"x": 2, "y": 3}));
    /// let mut args = ToolArgs::shared(Arc::clone(&shared));
    /// assert_eq!(args.required::<i64>("x").unwrap(), 2);
    /// assert_eq!(args.as_map().len(), 1); // `y` is left
    /// assert_eq!(shared.as_object().unwrap().len(), 2); // the shared map is untouched
    /// ```
    pub fn shared(map: Arc<Value>) -> Self {
        match map.as_object() {
            None => return ToolArgs::default(),
            Some(object) if object.len() > MAX_SHARED => return ToolArgs::new(object.clone()),
            Some(_) => {}
        }
        ToolArgs {
            inner: Inner::Shared {
                map,
                taken: 0,
                rest: OnceLock::new(),
            },
        }
    }

    /// Wraps an arguments value, which must be a JSON object (or `null`, read as no arguments).
    pub fn from_value(value: Value) -> Result<Self, ToolError> {
        match value {
            Value::Object(map) => Ok(ToolArgs::new(map)),
            Value::Null => Ok(ToolArgs::default()),
            other => Err(ToolError::parsing(format!(
                "Tool call arguments must be a JSON object, found {}",
                py_repr(&other)
            ))),
        }
    }

    /// The arguments not yet taken.
    pub fn as_map(&self) -> &Map<String, Value> {
        match &self.inner {
            Inner::Owned(map) => map,
            Inner::Shared { map, taken: 0, .. } => object(map),
            Inner::Shared { map, taken, rest } => {
                rest.get_or_init(|| Box::new(left(object(map), *taken)))
            }
        }
    }

    /// The arguments not yet taken, by value.
    pub fn into_map(self) -> Map<String, Value> {
        match self.inner {
            Inner::Owned(map) => map,
            Inner::Shared { map, taken: 0, .. } => match Arc::unwrap_or_clone(map) {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            Inner::Shared { map, taken, .. } => left(object(&map), taken),
        }
    }

    /// Takes the parameter `name` out of the arguments not yet taken and hands it to `read`
    /// (`None` when it is missing).
    #[inline]
    fn take<R>(&mut self, name: &str, read: impl FnOnce(Option<&Value>) -> R) -> R {
        match &mut self.inner {
            Inner::Owned(map) => read(map.remove(name).as_ref()),
            Inner::Shared { map, taken, rest } => {
                // A linear scan: tools take a few parameters, and comparing a few short keys
                // costs less than hashing one.
                let found = object(map)
                    .iter()
                    .enumerate()
                    .find(|(i, (key, _))| *taken & (1 << i) == 0 && key.as_str() == name);
                match found {
                    None => read(None),
                    Some((i, (_, value))) => {
                        *taken |= 1 << i;
                        if rest.get().is_some() {
                            rest.take();
                        }
                        read(Some(value))
                    }
                }
            }
        }
    }

    /// Takes a parameter. When it is missing, a type that accepts `null` (such as `Option<T>`)
    /// gets that value; any other type is an error.
    pub fn required<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, ToolError> {
        self.take(name, |value| match value {
            Some(value) => convert(name, value),
            None => T::deserialize(Value::Null).map_err(|_| {
                ToolError::parsing(format!(
                    "Required parameter {name} not provided to tool call."
                ))
            }),
        })
    }

    /// Takes a parameter, or `None` when it is missing or `null`.
    pub fn optional<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, ToolError> {
        self.take(name, |value| match value {
            None | Some(Value::Null) => Ok(None),
            Some(value) => convert(name, value).map(Some),
        })
    }

    /// Takes a parameter, or computes its default when it is missing.
    pub fn or_else<T: DeserializeOwned>(
        &mut self,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ToolError> {
        self.take(name, |value| match value {
            Some(value) => convert(name, value),
            None => Ok(default()),
        })
    }

    /// Takes a parameter, or `T::default()` when it is missing.
    pub fn or_default<T: DeserializeOwned + Default>(
        &mut self,
        name: &str,
    ) -> Result<T, ToolError> {
        self.or_else(name, T::default)
    }

    /// Deserializes all the arguments as one struct whose fields are the parameters.
    pub fn into_struct<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        let value = Value::Object(self.into_map());
        deserialize_lenient(&value).map_err(|e| struct_error::<T>(&e))
    }
}

/// The entries of `map` whose bit in `taken` is clear.
/// The map of a shared arguments value (always an object; an empty map otherwise).
fn object(value: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    value.as_object().unwrap_or(&EMPTY)
}

fn left(map: &Map<String, Value>, taken: u64) -> Map<String, Value> {
    map.iter()
        .enumerate()
        .filter(|(i, _)| taken & (1 << i) == 0)
        .map(|(_, (k, v))| (k.clone(), v.clone()))
        .collect()
}

type PathError = serde_path_to_error::Error<serde_json::Error>;

/// Deserializes `value`; when that fails and the value holds floats with a zero fraction, tries
/// again with those read as integers, so that what the schema accepts as an integer (D14) the
/// deserializer accepts too.
fn deserialize_lenient<T: DeserializeOwned>(value: &Value) -> Result<T, PathError> {
    // Most values fit: read them without tracking the path, which only an error needs.
    if let Ok(v) = T::deserialize(crate::strict::Strict(value)) {
        return Ok(v);
    }
    let first = match serde_path_to_error::deserialize(crate::strict::Strict(value)) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let mut normalized = value.clone();
    if normalize_integral_floats(&mut normalized)
        && let Ok(v) = serde_path_to_error::deserialize(crate::strict::Strict(&normalized))
    {
        return Ok(v);
    }
    Err(first)
}

/// Converts one parameter's value.
fn convert<T: DeserializeOwned>(name: &str, value: &Value) -> Result<T, ToolError> {
    deserialize_lenient(value).map_err(|e| param_error::<T>(name, &e))
}

fn param_error<T>(name: &str, err: &PathError) -> ToolError {
    let path = err.path().to_string();
    let location = if path == "." || path.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{path}")
    };
    ToolError::parsing(format!(
        "Unable to convert argument '{location}' to {}: {}",
        short_type_name::<T>(),
        err.inner()
    ))
}

fn struct_error<T>(err: &PathError) -> ToolError {
    let message = err.inner().to_string();
    if let Some(rest) = message.strip_prefix("missing field `")
        && let Some(field) = rest.split('`').next()
    {
        {
            let path = err.path().to_string();
            let location = if path == "." || path.is_empty() {
                field.to_owned()
            } else {
                format!("{path}.{field}")
            };
            return ToolError::parsing(format!(
                "Required parameter {location} not provided to tool call."
            ));
        }
    }
    let path = err.path().to_string();
    if path == "." || path.is_empty() {
        ToolError::parsing(format!(
            "Unable to convert arguments to {}: {message}",
            short_type_name::<T>()
        ))
    } else {
        ToolError::parsing(format!("Unable to convert argument '{path}': {message}"))
    }
}

/// `alloc::vec::Vec<my_crate::Foo>` → `Vec<Foo>`.
fn short_type_name<T>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    for ch in full.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == ':' {
            segment.push(ch);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
            segment.clear();
            out.push(ch);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
    out
}

/// Rewrites every float with a zero fraction (within `i64`/`u64` range) as an integer; returns
/// whether anything changed. Iterative, so deep values cannot overflow the stack.
pub(crate) fn normalize_integral_floats(value: &mut Value) -> bool {
    let mut changed = false;
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if n.is_f64() => {
                if let Some(f) = n.as_f64()
                    && f.fract() == 0.0
                    && f.is_finite()
                {
                    if f >= i64::MIN as f64 && f < i64::MAX as f64 {
                        *v = Value::from(f as i64);
                        changed = true;
                    } else if f >= 0.0 && f < u64::MAX as f64 {
                        *v = Value::from(f as u64);
                        changed = true;
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    changed
}
