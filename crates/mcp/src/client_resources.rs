//! A server's resources and prompts from our side: [`McpClient::list_resources`],
//! [`McpClient::read_resource`] and [`McpClient::get_prompt`], and the two tools
//! [`McpTools::resources`](crate::McpTools::resources) offers an agent (`list_resources`,
//! `read_resource`), so a model can browse what the server publishes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use actuator_tool_core::{
    Content, ParamsBuilder, SamplingMessage, ToolArgs, ToolContext, ToolDef, ToolError,
    ToolFailure, ToolOutput,
};
use rmcp::model::{GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

use crate::client::{McpClient, ensure_connected};
use crate::convert::content_from_mcp;
use crate::error::McpError;

/// A resource a server lists.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ListedResource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// What it is, when the server says.
    pub description: Option<String>,
    /// Its MIME type, when the server says.
    pub mime_type: Option<String>,
}

/// The most resources one listing collects (pages followed until then): a server cannot make
/// us hold an unbounded list.
pub const MAX_LISTED_RESOURCES: usize = 10_000;

/// The most pages one listing follows: a server that answers every page with a new cursor
/// and no resources cannot keep us listing.
const MAX_PAGES: usize = 100;

impl McpClient {
    /// The connection's peer, connecting first when needed.
    async fn peer(&self) -> Result<Peer<RoleClient>, McpError> {
        let inner = &self.inner;
        let mut guard = inner.connection.lock().await;
        Ok(ensure_connected(inner, &mut guard).await?.peer())
    }

    fn request_error(&self, request: &str, e: &impl std::fmt::Display) -> McpError {
        McpError::Request {
            server: self.inner.server.name.clone(),
            request: request.to_owned(),
            reason: self.inner.server.secrets().scrubbed(&e.to_string()),
        }
    }

    /// The server's resources (`resources/list`, every page up to 100 pages, at most
    /// [`MAX_LISTED_RESOURCES`]).
    pub async fn list_resources(&self) -> Result<Vec<ListedResource>, McpError> {
        let peer = self.peer().await?;
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params: Option<PaginatedRequestParams> = match &cursor {
                Some(c) => serde_json::from_value(serde_json::json!({"cursor": c})).ok(),
                None => None,
            };
            let page = peer
                .list_resources(params)
                .await
                .map_err(|e| self.request_error("resources/list", &e))?;
            let wire = serde_json::to_value(&page).unwrap_or(Value::Null);
            for r in wire["resources"].as_array().into_iter().flatten() {
                if out.len() >= MAX_LISTED_RESOURCES {
                    return Ok(out);
                }
                out.push(ListedResource {
                    uri: r["uri"].as_str().unwrap_or_default().to_owned(),
                    name: r["name"].as_str().unwrap_or_default().to_owned(),
                    description: r["description"].as_str().map(str::to_owned),
                    mime_type: r["mimeType"].as_str().map(str::to_owned),
                });
            }
            match wire["nextCursor"].as_str() {
                Some(next) if !next.is_empty() && cursor.as_deref() != Some(next) => {
                    cursor = Some(next.to_owned());
                }
                _ => return Ok(out),
            }
        }
        Ok(out)
    }

    /// Reads the resource at `uri` (`resources/read`): text items as text, binary ones as
    /// media by their MIME type.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<Content>, McpError> {
        let peer = self.peer().await?;
        let read = peer
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| self.request_error("resources/read", &e))?;
        let wire = serde_json::to_value(&read).unwrap_or(Value::Null);
        Ok(wire["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| {
                content_from_mcp(&serde_json::json!({"type": "resource", "resource": item}))
            })
            .collect())
    }

    /// The server's prompt `name` rendered with `arguments` (`prompts/get`): its messages,
    /// ready to start or continue a conversation.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<Vec<SamplingMessage>, McpError> {
        let peer = self.peer().await?;
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            let map = arguments
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            params = params.with_arguments(map);
        }
        let got = peer
            .get_prompt(params)
            .await
            .map_err(|e| self.request_error("prompts/get", &e))?;
        let wire = serde_json::to_value(&got).unwrap_or(Value::Null);
        Ok(wire["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                let content = content_from_mcp(&m["content"]);
                if m["role"] == "assistant" {
                    SamplingMessage::assistant(content)
                } else {
                    SamplingMessage::user(content)
                }
            })
            .collect())
    }

    /// Whether the server declared resources.
    pub(crate) async fn offers_resources(&self) -> Result<bool, McpError> {
        let peer = self.peer().await?;
        Ok(peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some()))
    }
}

fn listing_text(resources: &[ListedResource]) -> String {
    if resources.is_empty() {
        return "The server lists no resources.".to_owned();
    }
    let mut out = String::new();
    for r in resources {
        let _ = write!(out, "{} ({})", r.uri, r.name);
        if let Some(mime) = &r.mime_type {
            let _ = write!(out, " [{mime}]");
        }
        if let Some(description) = &r.description {
            let _ = write!(out, ": {description}");
        }
        out.push('\n');
    }
    out.pop();
    out
}

/// `{prefix}list_resources` and `{prefix}read_resource` for `client`'s server.
pub(crate) fn resource_tools(
    client: &McpClient,
    prefix: &str,
) -> Result<Vec<ToolDef>, actuator_tool_core::ToolDefError> {
    let server = client.server().server_name().to_owned();
    let lister = client.clone();
    let list = ToolDef::builder(format!("{prefix}list_resources"))
        .description(format!(
            "List the resources MCP server '{server}' publishes: their URIs, names and types."
        ))
        .handler(move |_args: ToolArgs, _ctx: ToolContext| {
            let client = lister.clone();
            async move {
                let listed = client
                    .list_resources()
                    .await
                    .map_err(|e| ToolFailure::from(ToolError::new(e.to_string())))?;
                Ok::<_, ToolFailure>(listing_text(&listed))
            }
        })
        .build()?;
    let reader = client.clone();
    let read = ToolDef::builder(format!("{prefix}read_resource"))
        .description(format!(
            "Read a resource of MCP server '{server}' by its URI (from list_resources)."
        ))
        .parameters(
            ParamsBuilder::new()
                .param::<String>("uri", Some("The resource's URI."))
                .build(),
        )
        .handler(move |mut args: ToolArgs, _ctx: ToolContext| {
            let client = reader.clone();
            async move {
                let uri: String = args.required("uri")?;
                let contents = client
                    .read_resource(&uri)
                    .await
                    .map_err(|e| ToolFailure::from(ToolError::new(e.to_string())))?;
                Ok::<_, ToolFailure>(ToolOutput::Content(contents))
            }
        })
        .build()?;
    Ok(vec![list, read])
}
