//! A tool call's arguments, kept as their JSON text.
//!
//! A conversation keeps every call it ever made, and a parsed `serde_json::Map` of two small
//! arguments takes about 400 bytes of heap in six blocks (an ordered map's entries, its index
//! table, each key); the text `{"x":1,"y":2}` takes one block of 30. The arguments are parsed
//! where they are read (validated and deserialized when the call runs), and sent to a
//! provider that wants text (OpenAI's `arguments` string) without being written again.
//!
//! A call fresh from a model also keeps the object it was built from, so the executor
//! validates it and hands it to the tool without parsing the text again; an agent releases
//! that object once the call has run, and the conversation keeps the text alone.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The arguments of a [`ToolCall`](crate::ToolCall): always a JSON object, kept as its text
/// and shared on clone.
///
/// Build them from a map ([`from_map`](Self::from_map), `From<Map>`) or from a model's text
/// ([`from_json`](Self::from_json), which checks it is an object); read them with
/// [`to_map`](Self::to_map), [`get`](Self::get) or [`deserialize`](Self::deserialize), or
/// take the text with [`as_json`](Self::as_json). Two values are equal when they hold the
/// same object, whatever the key order or spacing of their text.
///
/// ```
/// use actuator_model::ToolArguments;
/// use serde_json::json;
///
/// let args = ToolArguments::from_json(r#"{"x": 1, "y": "two"}"#)?;
/// assert_eq!(args.get("y"), Some(json!("two")));
/// assert_eq!(args, ToolArguments::from(json!({"y": "two", "x": 1}).as_object().unwrap().clone()));
///
/// #[derive(serde::Deserialize)]
/// struct Add { x: i64 }
/// assert_eq!(args.deserialize::<Add>()?.x, 1);
///
/// assert!(ToolArguments::from_json("[1, 2]").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ToolArguments {
    json: Arc<str>,
    /// The object the text was written from, while the call is fresh (always an object).
    parsed: Option<Arc<Value>>,
}

/// Text that is not a JSON object was given as a tool call's arguments.
#[derive(Debug, thiserror::Error)]
#[error("tool call arguments must be a JSON object")]
pub struct ToolArgumentsError(#[from] serde_json::Error);

impl ToolArguments {
    /// No arguments (`{}`); shares one allocation with every other empty value.
    pub fn new() -> Self {
        static EMPTY: OnceLock<Arc<str>> = OnceLock::new();
        ToolArguments {
            json: Arc::clone(EMPTY.get_or_init(|| Arc::from("{}"))),
            parsed: None,
        }
    }

    /// The arguments of `map`, written as compact JSON (in the map's key order). The text
    /// alone is kept; `From<Map>` also keeps the map for the call's execution.
    pub fn from_map(map: &Map<String, Value>) -> Self {
        if map.is_empty() {
            return Self::new();
        }
        // Writing a map of strings and JSON values into a string cannot fail.
        let json = serde_json::to_string(map).unwrap_or_else(|_| String::from("{}"));
        ToolArguments {
            json: Arc::from(json),
            parsed: None,
        }
    }

    /// The arguments of `map`, written as compact JSON and kept with the map itself, which
    /// the executor then reads without parsing the text (see
    /// [`release_parsed`](Self::release_parsed)).
    pub fn from_parsed(map: Map<String, Value>) -> Self {
        let mut arguments = Self::from_map(&map);
        if !map.is_empty() {
            arguments.parsed = Some(Arc::new(Value::Object(map)));
        }
        arguments
    }

    /// The arguments written as `text`, kept as given once it parses as a JSON object.
    ///
    /// # Errors
    /// When `text` is not JSON, is not an object, nests deeper than serde_json's limit of 128,
    /// or holds a number outside the range of `f64`.
    pub fn from_json(text: &str) -> Result<Self, ToolArgumentsError> {
        // Parsed in full (not just scanned) so that every later parse of the text succeeds.
        serde_json::from_str::<Map<String, Value>>(text)?;
        Ok(ToolArguments {
            json: Arc::from(text),
            parsed: None,
        })
    }

    /// The JSON text of the object.
    pub fn as_json(&self) -> &str {
        &self.json
    }

    /// The arguments parsed into a map, in the order of their text.
    ///
    /// # Errors
    /// Only for a map built in code that nests deeper than serde_json's parsing limit of 128
    /// (text given to [`from_json`](Self::from_json) was checked to parse).
    pub fn to_map(&self) -> Result<Map<String, Value>, ToolArgumentsError> {
        if let Some(Value::Object(map)) = self.parsed.as_deref() {
            return Ok(map.clone());
        }
        Ok(serde_json::from_str(&self.json)?)
    }

    /// The arguments parsed into a `Value::Object`; errors as [`to_map`](Self::to_map).
    ///
    /// # Errors
    /// As [`to_map`](Self::to_map).
    pub fn to_value(&self) -> Result<Value, ToolArgumentsError> {
        if let Some(parsed) = &self.parsed {
            return Ok(Value::clone(parsed));
        }
        Ok(serde_json::from_str(&self.json)?)
    }

    /// The arguments as a shared `Value::Object`: the object kept with a fresh call, without
    /// a copy, or else the text parsed.
    ///
    /// # Errors
    /// As [`to_map`](Self::to_map).
    pub fn to_shared_value(&self) -> Result<Arc<Value>, ToolArgumentsError> {
        match &self.parsed {
            Some(parsed) => Ok(Arc::clone(parsed)),
            // No arguments (most calls of a parameterless tool): nothing to parse.
            None if self.json.as_ref() == "{}" => Ok(Arc::new(Value::Object(Map::new()))),
            None => Ok(Arc::new(serde_json::from_str(&self.json)?)),
        }
    }

    /// Whether the parsed object is still kept beside the text.
    pub fn keeps_parsed(&self) -> bool {
        self.parsed.is_some()
    }

    /// Drops the parsed object and keeps the text alone (about a tenth of the memory for a
    /// small object). Agents do this once a call has run; reading the arguments afterwards
    /// parses the text.
    pub fn release_parsed(&mut self) {
        self.parsed = None;
    }

    /// The value of one argument, when there is one (parses the whole object; for many
    /// reads, [`to_map`](Self::to_map) once).
    pub fn get(&self, key: &str) -> Option<Value> {
        self.to_map().ok()?.remove(key)
    }

    /// The arguments deserialized into `T`, straight from their text.
    ///
    /// # Errors
    /// When the object does not fit `T`.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.json)
    }

    /// Whether there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.to_map().is_ok_and(|m| m.is_empty())
    }
}

impl Default for ToolArguments {
    fn default() -> Self {
        Self::new()
    }
}

impl From<Map<String, Value>> for ToolArguments {
    /// As [`from_parsed`](ToolArguments::from_parsed).
    fn from(map: Map<String, Value>) -> Self {
        Self::from_parsed(map)
    }
}

impl From<&Map<String, Value>> for ToolArguments {
    fn from(map: &Map<String, Value>) -> Self {
        Self::from_map(map)
    }
}

impl PartialEq for ToolArguments {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.json, &other.json)
            || self.json == other.json
            || matches!((self.to_map(), other.to_map()), (Ok(a), Ok(b)) if a == b)
    }
}

impl fmt::Debug for ToolArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolArguments").field(&&*self.json).finish()
    }
}

impl fmt::Display for ToolArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

impl Serialize for ToolArguments {
    /// As the JSON object itself (parsed, so any serializer sees an object, not text).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_map()
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::<String, Value>::deserialize(deserializer).map(|m| Self::from_map(&m))
    }
}
