//! The W3C Trace Context a tool call belongs to ([`TraceContext`]): put in a run's resources
//! (or a call's extensions), it travels with every MCP call the run makes, in the request's
//! `_meta` (`traceparent`, `tracestate`, as MCP's SEP-414 names them), and a served call
//! receives the caller's, so a traced run links to the work a server does for it.

use std::fmt;

/// The longest `tracestate` kept (the W3C limit is 512 characters; longer ones are dropped
/// rather than cut, since a cut list-member is meaningless).
pub const MAX_TRACESTATE_LEN: usize = 512;

/// A W3C Trace Context: the trace's id, the id of the span the call is made from, whether
/// the trace is sampled, and the vendors' `tracestate`.
///
/// ```
/// use actuator_tool_core::TraceContext;
///
/// let trace = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")?;
/// assert_eq!(trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert!(trace.sampled());
/// assert_eq!(trace.traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
/// # Ok::<(), actuator_tool_core::TraceContextError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TraceContext {
    trace_id: u128,
    parent_id: u64,
    flags: u8,
    tracestate: Option<String>,
}

/// Why a `traceparent` (or an id) is not a valid W3C Trace Context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceContextError {
    /// The value does not have the `version-traceid-parentid-flags` shape with lowercase hex
    /// fields of 2, 32, 16 and 2 digits.
    #[error("a traceparent is `00-<32 hex>-<16 hex>-<2 hex>` in lowercase; got {0:?}")]
    Malformed(String),
    /// Version `ff` is forbidden, and version `00` has nothing after its flags.
    #[error("traceparent version {0:?} is not one this reader accepts")]
    Version(String),
    /// An all-zero trace id or parent id, which the specification makes invalid.
    #[error("a trace id and a parent id must not be all zeros")]
    ZeroId,
}

impl TraceContext {
    /// A sampled trace context from its ids, or an error when either is zero.
    ///
    /// ```
    /// use actuator_tool_core::TraceContext;
    ///
    /// let trace = TraceContext::new(0x4bf92f3577b34da6a3ce929d0e0e4736, 0x00f067aa0ba902b7)?;
    /// assert_eq!(trace.parent_id(), "00f067aa0ba902b7");
    /// # Ok::<(), actuator_tool_core::TraceContextError>(())
    /// ```
    pub fn new(trace_id: u128, parent_id: u64) -> Result<Self, TraceContextError> {
        if trace_id == 0 || parent_id == 0 {
            return Err(TraceContextError::ZeroId);
        }
        Ok(TraceContext {
            trace_id,
            parent_id,
            flags: 1,
            tracestate: None,
        })
    }

    /// Reads a `traceparent` header value. Versions after `00` are read by their first four
    /// fields, as the specification asks of a version-00 reader.
    ///
    /// ```
    /// use actuator_tool_core::TraceContext;
    ///
    /// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_err());
    /// assert!(TraceContext::parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01").is_err());
    /// ```
    pub fn parse(traceparent: &str) -> Result<Self, TraceContextError> {
        let malformed = || TraceContextError::Malformed(truncated(traceparent));
        let value = traceparent.trim_matches([' ', '\t']);
        let mut fields = value.splitn(5, '-');
        let (Some(version), Some(trace_id), Some(parent_id), Some(flags)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(malformed());
        };
        let rest = fields.next();
        let hex = |field: &str, len: usize| {
            field.len() == len
                && field
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        if !hex(version, 2) || !hex(trace_id, 32) || !hex(parent_id, 16) || !hex(flags, 2) {
            return Err(malformed());
        }
        if version == "ff" || (version == "00" && rest.is_some()) {
            return Err(TraceContextError::Version(version.to_owned()));
        }
        let trace_id = u128::from_str_radix(trace_id, 16).map_err(|_| malformed())?;
        let parent_id = u64::from_str_radix(parent_id, 16).map_err(|_| malformed())?;
        let flags = u8::from_str_radix(flags, 16).map_err(|_| malformed())?;
        let mut trace = TraceContext::new(trace_id, parent_id)?;
        trace.flags = flags;
        Ok(trace)
    }

    /// This context with the vendors' `tracestate`. One longer than
    /// [`MAX_TRACESTATE_LEN`] or holding characters outside printable ASCII is dropped, as
    /// the specification allows.
    #[must_use]
    pub fn with_tracestate(mut self, tracestate: &str) -> Self {
        let usable = !tracestate.is_empty()
            && tracestate.len() <= MAX_TRACESTATE_LEN
            && tracestate.bytes().all(|b| (0x20..0x7f).contains(&b));
        self.tracestate = usable.then(|| tracestate.to_owned());
        self
    }

    /// This context as a `traceparent` value (version 00).
    pub fn traceparent(&self) -> String {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id, self.parent_id, self.flags
        )
    }

    /// The trace id, 32 lowercase hex digits.
    pub fn trace_id(&self) -> String {
        format!("{:032x}", self.trace_id)
    }

    /// The id of the span the call is made from, 16 lowercase hex digits.
    pub fn parent_id(&self) -> String {
        format!("{:016x}", self.parent_id)
    }

    /// Whether the caller records this trace (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The vendors' `tracestate`, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent())
            .field("tracestate", &self.tracestate)
            .finish()
    }
}

/// A value quoted in an error, cut so a hostile header cannot make the error huge.
fn truncated(value: &str) -> String {
    const KEEP: usize = 64;
    match value.char_indices().nth(KEEP) {
        Some((at, _)) => format!("{}…", &value[..at]),
        None => value.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_round_trips() {
        let trace = TraceContext::parse(VALID).unwrap();
        assert_eq!(trace.traceparent(), VALID);
        assert_eq!(trace.parent_id(), "00f067aa0ba902b7");
        let unsampled = TraceContext::parse(&VALID.replace("-01", "-00")).unwrap();
        assert!(!unsampled.sampled());
    }

    #[test]
    fn malformed_values_are_refused_with_their_reason() {
        for bad in [
            "",
            "00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(
                matches!(
                    TraceContext::parse(bad),
                    Err(TraceContextError::Malformed(_))
                ),
                "{bad:?}"
            );
        }
        assert_eq!(
            TraceContext::parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            Err(TraceContextError::Version("ff".into()))
        );
        assert_eq!(
            TraceContext::parse(&format!("{VALID}-extra")),
            Err(TraceContextError::Version("00".into()))
        );
        assert_eq!(
            TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"),
            Err(TraceContextError::ZeroId)
        );
    }

    #[test]
    fn a_later_version_is_read_by_its_first_four_fields() {
        let trace =
            TraceContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what")
                .unwrap();
        assert_eq!(trace.traceparent(), VALID);
    }

    #[test]
    fn a_huge_hostile_value_gives_a_short_error() {
        let huge = "x".repeat(1 << 20);
        let err = TraceContext::parse(&huge).unwrap_err().to_string();
        assert!(err.len() < 200, "{}", err.len());
    }

    #[test]
    fn tracestate_past_the_limit_or_with_control_characters_is_dropped() {
        let trace = TraceContext::parse(VALID).unwrap();
        assert_eq!(
            trace
                .clone()
                .with_tracestate("congo=t61rcWkgMzE")
                .tracestate(),
            Some("congo=t61rcWkgMzE")
        );
        let long = "a=".to_owned() + &"b".repeat(MAX_TRACESTATE_LEN);
        assert_eq!(trace.clone().with_tracestate(&long).tracestate(), None);
        assert_eq!(trace.with_tracestate("a=b\r\nx: y").tracestate(), None);
    }
}
