//! Names a provider rejects, repaired so that the repair can be undone: the function name
//! Gemini is sent, and the parameter names Anthropic is sent. A repaired name is derived from
//! the original alone (disallowed characters become `_`, a hash of the original is appended),
//! so the provider's side maps a call back without keeping state: [`Dialect::function_name`]
//! for the name a model calls, [`restore_argument_names`] for its arguments.

use std::borrow::Cow;

use serde_json::{Map, Value};

use actuator_tool_core::ToolInfo;

use crate::Dialect;

/// What a provider accepts as a name.
pub(crate) struct NameRule {
    /// The pattern as the provider documents it, for reports.
    pub(crate) pattern: &'static str,
    max: usize,
    first: fn(char) -> bool,
    rest: fn(char) -> bool,
}

/// Anthropic's property keys: `^[a-zA-Z0-9_.-]{1,64}$` (the API rejects the whole request
/// with "Property keys should match pattern …" otherwise).
pub(crate) const ANTHROPIC_PROPERTY: NameRule = NameRule {
    pattern: "^[a-zA-Z0-9_.-]{1,64}$",
    max: 64,
    first: key_char,
    rest: key_char,
};

/// Gemini's function names: a letter or an underscore first, then letters, digits, `_`, `.`,
/// `-`, at most 64 (the Gemini API also allows `:`, Vertex AI documents the narrower set).
pub(crate) const GEMINI_FUNCTION: NameRule = NameRule {
    pattern: "^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$",
    max: 64,
    first: |c| c.is_ascii_alphabetic() || c == '_',
    rest: key_char,
};

fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

impl NameRule {
    pub(crate) fn accepts(&self, name: &str) -> bool {
        let mut chars = name.chars();
        chars.next().is_some_and(self.first) && chars.all(self.rest) && name.len() <= self.max
    }

    /// The name as sent: itself when the rule accepts it; otherwise each disallowed character
    /// becomes `_` (a `_` goes first when the first character cannot), cut to fit, and `_` with
    /// eight hex digits of a hash of the original appended, so that two names stay apart.
    pub(crate) fn repair<'a>(&self, name: &'a str) -> Cow<'a, str> {
        if self.accepts(name) {
            return Cow::Borrowed(name);
        }
        let tag = format!("_{:08x}", fnv1a(name));
        let mut base: String = name
            .chars()
            .map(|c| if (self.rest)(c) { c } else { '_' })
            .collect();
        if !base.starts_with(self.first) {
            base.insert(0, '_');
        }
        // Every character left is ASCII, so any byte length is a character boundary.
        base.truncate(self.max - tag.len());
        base.push_str(&tag);
        Cow::Owned(base)
    }
}

/// FNV-1a, 32 bits: stable across builds and platforms, which a repaired name must be.
fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5, |hash, b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// The parameters a dialect renames, as `(name, name as sent)`, in declaration order; empty
/// when the dialect renames none. Renaming is skipped (and the names sent as they are) when
/// a repaired name would collide with another parameter's: see [`Renames::collisions`].
pub(crate) struct Renames {
    pub(crate) renamed: Vec<(String, String)>,
    pub(crate) collisions: Vec<String>,
}

pub(crate) fn property_renames(rule: &NameRule, info: &ToolInfo) -> Renames {
    let props = &info.parameters.properties;
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut collisions = Vec::new();
    for name in props.keys() {
        if let Cow::Owned(wire) = rule.repair(name) {
            let taken = props.contains_key(&wire) || renamed.iter().any(|(_, w)| *w == wire);
            if taken {
                collisions.push(name.clone());
            } else {
                renamed.push((name.clone(), wire));
            }
        }
    }
    Renames {
        renamed,
        collisions,
    }
}

/// Renames the keys of a `properties` object and the names in a `required` list.
pub(crate) fn rename_properties(schema: &mut Value, renamed: &[(String, String)]) {
    if renamed.is_empty() {
        return;
    }
    let wire = |name: &str| {
        renamed
            .iter()
            .find(|(original, _)| original == name)
            .map(|(_, w)| w.clone())
    };
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        let old = std::mem::take(props);
        *props = old
            .into_iter()
            .map(|(k, v)| (wire(&k).unwrap_or(k), v))
            .collect::<Map<String, Value>>();
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        for name in required.iter_mut() {
            if let Some(w) = name.as_str().and_then(wire) {
                *name = Value::String(w);
            }
        }
    }
}

/// Maps a model's arguments back to the tool's own parameter names, undoing the renaming a
/// dialect did (today: Anthropic's, for names outside `^[a-zA-Z0-9_.-]{1,64}$`). Call it on the
/// arguments of every call a provider returns, before validation; arguments that are not an
/// object, and names the dialect did not rename, are left alone. [`send_argument_names`] is
/// the inverse, for a call replayed in the history.
///
/// ```
/// use actuator_dialect::{Dialect, restore_argument_names, send_argument_names};
/// use actuator_tool_core::{ToolInfo, ToolParams};
/// use serde_json::json;
///
/// let mut params = ToolParams::default();
/// params.properties.insert("filter[id]".into(), json!({"type": "string"}));
/// let info = ToolInfo::new("list_apps", "List apps.", params);
///
/// let rendered = Dialect::Anthropic.render(&info);
/// let sent = rendered.tool["input_schema"]["properties"].as_object().unwrap();
/// let wire = sent.keys().next().unwrap().clone();
/// assert!(wire.starts_with("filter_id__"));
///
/// let mut arguments = json!({ wire.clone(): "42" });
/// restore_argument_names(Dialect::Anthropic, &info, &mut arguments);
/// assert_eq!(arguments, json!({"filter[id]": "42"}));
/// send_argument_names(Dialect::Anthropic, &info, &mut arguments);
/// assert_eq!(arguments, json!({ wire: "42" }));
/// ```
pub fn restore_argument_names(dialect: Dialect, info: &ToolInfo, arguments: &mut Value) {
    rename_arguments(dialect, info, arguments, true);
}

/// Renames a call's arguments from the tool's own parameter names to the names a dialect sent
/// them under: a call replayed in the history the provider is sent then matches the schema
/// the model was given. The inverse of [`restore_argument_names`].
pub fn send_argument_names(dialect: Dialect, info: &ToolInfo, arguments: &mut Value) {
    rename_arguments(dialect, info, arguments, false);
}

fn rename_arguments(dialect: Dialect, info: &ToolInfo, arguments: &mut Value, restore: bool) {
    let rule = match dialect {
        Dialect::Anthropic => &ANTHROPIC_PROPERTY,
        _ => return,
    };
    let Value::Object(args) = arguments else {
        return;
    };
    let renamed = property_renames(rule, info).renamed;
    if renamed.is_empty() {
        return;
    }
    let target = |key: &str| {
        renamed.iter().find_map(|(original, wire)| {
            let (from, to) = if restore {
                (wire, original)
            } else {
                (original, wire)
            };
            (from == key).then(|| to.clone())
        })
    };
    // Key order is kept; a key is left as it is when its new name is taken already.
    let old = std::mem::take(args);
    let taken: Vec<String> = old.keys().cloned().collect();
    for (key, value) in old {
        match target(&key) {
            Some(to) if !taken.contains(&to) => args.insert(to, value),
            _ => args.insert(key, value),
        };
    }
}

/// The function name a dialect sends for a tool named `name` (see [`Dialect::function_name`]).
pub(crate) fn function_name(dialect: Dialect, name: &str) -> Cow<'_, str> {
    match dialect {
        Dialect::Gemini => GEMINI_FUNCTION.repair(name),
        _ => Cow::Borrowed(name),
    }
}
