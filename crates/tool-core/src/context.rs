//! [`ToolContext`]: what a handler knows about the call it serves, with typed extensions that
//! outer layers (the executor, handoff) use to pass data without this crate knowing their types.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// A map from type to one value of that type, shared cheaply (values are `Arc`ed).
///
/// Cloning is O(1): the executor copies a run's extensions into every call's context, so the
/// map itself is shared and copied only when a clone is changed.
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<Map>>,
}

type Map = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.as_ref().map_or(0, |m| m.len()))
            .finish()
    }
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, replacing any earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map_mut().insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The map, made unique to this value first (copied when shared).
    fn map_mut(&mut self) -> &mut Map {
        Arc::make_mut(self.map.get_or_insert_with(Default::default))
    }

    /// The stored value of type `T`.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map.as_ref()?.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// Whether a value of the type `id` is stored.
    pub(crate) fn contains_type(&self, id: TypeId) -> bool {
        self.map.as_ref().is_some_and(|m| m.contains_key(&id))
    }

    /// Removes and returns the stored value of type `T` when this map holds the only reference.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<Arc<T>> {
        self.map.as_ref()?.get(&TypeId::of::<T>())?;
        self.map_mut()
            .remove(&TypeId::of::<T>())
            .and_then(|v| v.downcast::<T>().ok())
    }

    /// Copies every value of `other` into this map (values of a type both hold are replaced
    /// by `other`'s). Values are shared, not cloned.
    pub fn extend(&mut self, other: &Extensions) {
        let Some(theirs) = &other.map else {
            return;
        };
        if self.map.is_none() {
            self.map = Some(Arc::clone(theirs));
            return;
        }
        let mine = self.map_mut();
        for (k, v) in theirs.iter() {
            mine.insert(*k, Arc::clone(v));
        }
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|m| m.is_empty())
    }
}

/// What a handler knows about the call it serves.
///
/// ```
/// use actuator_tool_core::ToolContext;
/// let mut ctx = ToolContext::new("call_1", "add");
/// ctx.extensions.insert(42_u32);
/// assert_eq!(ctx.extensions.get::<u32>(), Some(&42));
/// ```
///
/// `#[non_exhaustive]`: build one with [`ToolContext::new`] (what a call knows may grow).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ToolContext {
    /// The id the model gave the call (shared with the call's events, not copied for them).
    pub call_id: Arc<str>,
    /// The name of the tool called (shared as the id is).
    pub function: Arc<str>,
    /// Data from outer layers (for example, the conversation so far).
    pub extensions: Extensions,
}

impl ToolContext {
    /// A context for a call.
    pub fn new(call_id: impl Into<Arc<str>>, function: impl Into<Arc<str>>) -> Self {
        ToolContext {
            call_id: call_id.into(),
            function: function.into(),
            extensions: Extensions::new(),
        }
    }
}
