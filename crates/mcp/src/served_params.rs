//! Whether a request's params fit its method, for the methods our server answers: a
//! request rmcp could not read, or read as its catch-all custom request, is answered as
//! invalid params (-32602) with serde's reason, never as an unknown method.

// `logging/setLevel` is deprecated in rmcp's newest revision; this server still answers it.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, InitializeRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why `params` do not fit `method`, when `method` is one this server answers; `None` for any
/// other method. rmcp reads a request whose params do not fit its method as a custom request
/// (its catch-all), so this is where a known method's bad params arrive: they are invalid
/// params (-32602), not an unknown method (-32601).
pub(crate) fn params_mismatch(method: &str, params: Option<Value>) -> Option<String> {
    fn reason<P: DeserializeOwned>(params: Value) -> String {
        match serde_json::from_value::<P>(params) {
            Err(e) => e.to_string(),
            // The params alone read, the request did not (say, a `_meta` of the wrong type).
            Ok(_) => "they do not have the shape the method takes".to_owned(),
        }
    }
    let params = params.unwrap_or(Value::Null);
    Some(match method {
        "initialize" => reason::<InitializeRequestParams>(params),
        "tools/call" => reason::<CallToolRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            reason::<Option<PaginatedRequestParams>>(params)
        }
        "resources/read" => reason::<ReadResourceRequestParams>(params),
        "resources/subscribe" => reason::<SubscribeRequestParams>(params),
        "resources/unsubscribe" => reason::<UnsubscribeRequestParams>(params),
        "prompts/get" => reason::<GetPromptRequestParams>(params),
        "completion/complete" => reason::<CompleteRequestParams>(params),
        "logging/setLevel" => reason::<SetLevelRequestParams>(params),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_methods_this_server_answers_have_invalid_params() {
        let reason = params_mismatch("tools/call", Some(json!({"name": 5})));
        assert!(reason.is_some_and(|r| r.contains("invalid type")));
        assert!(params_mismatch("resources/read", None).is_some());
        // Unknown here: rmcp's tasks and skills, the client's own methods, anything else.
        for method in [
            "tasks/get",
            "sampling/createMessage",
            "ping",
            "no/such_method",
        ] {
            assert_eq!(params_mismatch(method, Some(json!([]))), None, "{method}");
        }
    }
}
