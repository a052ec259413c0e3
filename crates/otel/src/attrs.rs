//! The attribute names spans carry: the GenAI semantic conventions' names, from
//! `opentelemetry-semantic-conventions`, plus the few of this crate's own.
//!
//! The conventions' crate marks its `gen_ai.*` names deprecated (they moved to the GenAI
//! conventions' own repository, which has no Rust crate yet); the names themselves are
//! unchanged, so they are copied from it here, in one place, where the warning is allowed.
#![allow(deprecated)]

use opentelemetry_semantic_conventions::{attribute as semconv, metric};

/// Each name as a constant of this crate (a re-export would carry the deprecation along).
macro_rules! names {
    ($module:ident: $($name:ident)*) => {
        $(pub(crate) const $name: &str = $module::$name;)*
    };
}

names! {
    metric: GEN_AI_CLIENT_OPERATION_DURATION GEN_AI_CLIENT_TOKEN_USAGE
}

names! {
    semconv:
    GEN_AI_TOKEN_TYPE
    ERROR_TYPE
    GEN_AI_AGENT_NAME
    GEN_AI_EVALUATION_EXPLANATION
    GEN_AI_EVALUATION_NAME
    GEN_AI_EVALUATION_SCORE_LABEL
    GEN_AI_EVALUATION_SCORE_VALUE
    GEN_AI_INPUT_MESSAGES
    GEN_AI_OPERATION_NAME
    GEN_AI_OUTPUT_MESSAGES
    GEN_AI_PROVIDER_NAME
    GEN_AI_REQUEST_MAX_TOKENS
    GEN_AI_REQUEST_MODEL
    GEN_AI_REQUEST_TEMPERATURE
    GEN_AI_RESPONSE_FINISH_REASONS
    GEN_AI_RESPONSE_MODEL
    GEN_AI_TOOL_CALL_ARGUMENTS
    GEN_AI_TOOL_CALL_ID
    GEN_AI_TOOL_CALL_RESULT
    GEN_AI_TOOL_NAME
    GEN_AI_TOOL_TYPE
    GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
    GEN_AI_USAGE_INPUT_TOKENS
    GEN_AI_USAGE_OUTPUT_TOKENS
    GEN_AI_USAGE_REASONING_OUTPUT_TOKENS
}

/// The conventions' event for an evaluation result (an event name, which the conventions'
/// crate does not carry).
pub(crate) const GEN_AI_EVALUATION_RESULT: &str = "gen_ai.evaluation.result";

/// The kind of an Actuator span that is not an agent run (`handoff`, `compaction`, …).
pub(crate) const ACTUATOR_SPAN_TYPE: &str = "actuator.span.type";
/// The Actuator span id an OpenTelemetry span was made from (the id in the run's log).
pub(crate) const ACTUATOR_SPAN_ID: &str = "actuator.span.id";
