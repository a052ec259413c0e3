//! [`ToolServer`] as rmcp's [`ServerHandler`]: tools, resources, prompts, completions and
//! logging, each request answered from the server's catalog and its session's state.

// Sampling, logging and resources/subscribe are deprecated by SEP-2577 for the protocol
// version after 2025-11-25; every version this crate speaks has them.
#![allow(deprecated)]

use std::collections::BTreeMap;

use actuator_tool_core::{LogLevel, TraceContext};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, RequestMetaObject,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tracing::Instrument;

use crate::complete::no_completion;
use crate::resources::{ResourceContent, ResourceRead};
use crate::served_call::CallSession;
use crate::served_params::params_mismatch;
use crate::server::ToolServer;

/// MCP's code for a resource that does not exist.
const RESOURCE_NOT_FOUND: i32 = -32002;

/// A result built from its wire form (the protocol's shapes, whatever rmcp's Rust types).
fn from_wire<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value)
        .map_err(|e| ErrorData::internal_error(format!("a result could not be sent: {e}"), None))
}

/// A request's parameters in their wire form.
fn to_wire(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// String arguments by name; a non-string value is refused, naming it.
fn string_map(value: &Value, what: &str) -> Result<BTreeMap<String, String>, ErrorData> {
    let Some(object) = value.as_object() else {
        return Ok(BTreeMap::new());
    };
    object
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            _ => Err(ErrorData::invalid_params(
                format!("{what} '{k}' must be a string"),
                None,
            )),
        })
        .collect()
}

impl ToolServer {
    fn capabilities(&self) -> ServerCapabilities {
        let catalog = &self.catalog;
        let mut caps = json!({"tools": {}, "logging": {}});
        if !catalog.resources.is_empty() || !catalog.templates.is_empty() {
            caps["resources"] = json!({"subscribe": true});
        }
        if !catalog.prompts.is_empty() {
            caps["prompts"] = json!({});
        }
        if !catalog.prompts.is_empty() || !catalog.templates.is_empty() {
            caps["completions"] = json!({});
        }
        serde_json::from_value(caps)
            .unwrap_or_else(|_| ServerCapabilities::builder().enable_tools().build())
    }

    async fn read(&self, uri: &str) -> Result<Vec<ResourceContent>, ErrorData> {
        let request = |params| ResourceRead {
            uri: uri.to_owned(),
            params,
        };
        let read = if let Some(fixed) = self.catalog.resources.iter().find(|r| r.uri() == uri) {
            (fixed.reader())(request(BTreeMap::new())).await
        } else if let Some((template, params)) = self
            .catalog
            .templates
            .iter()
            .find_map(|t| t.matches(uri).map(|params| (t, params)))
        {
            (template.reader())(request(params)).await
        } else {
            return Err(ErrorData::new(
                ErrorCode(RESOURCE_NOT_FOUND),
                format!("Resource {uri} not found"),
                Some(json!({"uri": uri})),
            ));
        };
        read.map_err(|e| ErrorData::internal_error(format!("reading {uri} failed: {e}"), None))
    }

    fn knows_resource(&self, uri: &str) -> bool {
        self.catalog.resources.iter().any(|r| r.uri() == uri)
            || self
                .catalog
                .templates
                .iter()
                .any(|t| t.matches(uri).is_some())
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(self.capabilities()).with_server_info(
            Implementation::new(self.options.name.clone(), self.options.version.clone()),
        );
        if let Some(instructions) = &self.options.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let id = format!("mcp_{}", context.id);
        let name = request.name.to_string();
        let call = CallSession::start(
            context.peer.clone(),
            context.meta.get_progress_token(),
            self.session.clone(),
        );
        let trace = call_trace(&context.meta, request.meta.as_ref());
        let span = tracing::info_span!(
            "mcp_served_call",
            tool = %name,
            trace_id = trace.as_ref().map(|t| t.trace_id()).unwrap_or_default(),
        );
        tokio::select! {
            landed = self.land(request, id, Some(&call), trace).instrument(span) => {
                call.finish().await;
                landed.map(CallToolResponse::Complete)
            }
            () = context.ct.cancelled() => {
                tracing::debug!(tool = %name, "MCP client cancelled the call");
                Err(ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("Tool '{name}' was cancelled by the client."),
                    None,
                ))
            }
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level: LogLevel = serde_json::from_value(to_wire(&request.level)).map_err(|_| {
            ErrorData::invalid_params(
                "the log level must be one of debug, info, notice, warning, error, critical, \
                 alert, emergency",
                None,
            )
        })?;
        self.session.set_log_level(level);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources: Vec<Value> = self.catalog.resources.iter().map(|r| r.to_wire()).collect();
        from_wire(json!({"resources": resources}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates: Vec<Value> = self.catalog.templates.iter().map(|t| t.to_wire()).collect();
        from_wire(json!({"resourceTemplates": templates}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = self.read(&request.uri).await?;
        let contents: Vec<Value> = contents.iter().map(ResourceContent::to_wire).collect();
        from_wire::<rmcp::model::ReadResourceResult>(json!({"contents": contents}))
            .map(ReadResourceResponse::Complete)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.knows_resource(&request.uri) {
            return Err(ErrorData::new(
                ErrorCode(RESOURCE_NOT_FOUND),
                format!("Resource {} not found", request.uri),
                Some(json!({"uri": request.uri})),
            ));
        }
        if !self.session.subscribe(&request.uri, context.peer) {
            return Err(ErrorData::invalid_params(
                format!(
                    "this session subscribes to {} resources already, the most it may; \
                     unsubscribe from one first",
                    crate::served_session::MAX_SUBSCRIPTIONS
                ),
                None,
            ));
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts: Vec<Value> = self.catalog.prompts.iter().map(|p| p.to_wire()).collect();
        from_wire(json!({"prompts": prompts}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(prompt) = self
            .catalog
            .prompts
            .iter()
            .find(|p| p.name() == request.name)
        else {
            let names: Vec<&str> = self.catalog.prompts.iter().map(|p| p.name()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "Prompt {} not found (this server's prompts: {})",
                    request.name,
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                ),
                None,
            ));
        };
        let args = string_map(
            &request.arguments.map(Value::Object).unwrap_or(Value::Null),
            "prompt argument",
        )?;
        prompt
            .check_arguments(&args)
            .map_err(|message| ErrorData::invalid_params(message, None))?;
        let rendered = prompt.render(args).await.map_err(|e| {
            ErrorData::internal_error(format!("prompt '{}' failed: {e}", request.name), None)
        })?;
        from_wire::<rmcp::model::GetPromptResult>(rendered).map(GetPromptResponse::Complete)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let wire = to_wire(&request);
        let argument = wire["argument"]["name"].as_str().unwrap_or_default();
        let value = wire["argument"]["value"].as_str().unwrap_or_default();
        let context = string_map(&wire["context"]["arguments"], "context argument")?;
        let reference = &wire["ref"];
        let completer = match reference["type"].as_str() {
            Some("ref/prompt") => {
                let name = reference["name"].as_str().unwrap_or_default();
                let prompt = self.catalog.prompts.iter().find(|p| p.name() == name);
                let Some(prompt) = prompt else {
                    return Err(ErrorData::invalid_params(
                        format!("Prompt {name} not found"),
                        None,
                    ));
                };
                prompt.completer(argument)
            }
            Some("ref/resource") => {
                let uri = reference["uri"].as_str().unwrap_or_default();
                let template = self.catalog.templates.iter().find(|t| t.template() == uri);
                let Some(template) = template else {
                    return Err(ErrorData::invalid_params(
                        format!("no resource template '{uri}'"),
                        None,
                    ));
                };
                template.completer(argument)
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "a completion reference is ref/prompt or ref/resource",
                    None,
                ));
            }
        };
        let completion = completer.map_or_else(no_completion, |c| c.complete(value, &context));
        from_wire(json!({"completion": completion}))
    }

    /// A method rmcp does not know is not found (-32601); a known method whose params did not
    /// fit it (see `params_mismatch`) is invalid params (-32602), with serde's reason.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let CustomRequest { method, params, .. } = request;
        match params_mismatch(&method, params) {
            Some(reason) => Err(ErrorData::invalid_params(
                format!("invalid params for {method}: {reason}"),
                None,
            )),
            None => Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method, None)),
        }
    }
}

/// The caller's W3C trace context from the request's `_meta`, when it sent a valid one (an
/// invalid one is ignored, as the specification asks, and logged at debug).
fn call_trace(
    context: &RequestMetaObject,
    params: Option<&RequestMetaObject>,
) -> Option<TraceContext> {
    let meta = [Some(context), params]
        .into_iter()
        .flatten()
        .find(|m| m.get_traceparent().is_some())?;
    let traceparent = meta.get_traceparent()?;
    match TraceContext::parse(traceparent) {
        Ok(trace) => Some(match meta.get_tracestate() {
            Some(state) => trace.with_tracestate(state),
            None => trace,
        }),
        Err(e) => {
            tracing::debug!(error = %e, "ignoring the MCP request's traceparent");
            None
        }
    }
}
