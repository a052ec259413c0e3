//! Prompts a [`ToolServer`](crate::ToolServer) serves (`prompts/list`, `prompts/get`): named
//! message templates with arguments, and completions for those arguments.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use actuator_tool_core::{BoxFuture, SamplingMessage};
use serde_json::{Value, json};

use crate::complete::Completer;
use crate::convert::content_to_mcp;
use crate::error::HandlerError;

/// One message of a prompt: a role and its content (text, an image, an embedded resource
/// from [`ResourceContent::to_content`](crate::ResourceContent::to_content)). The same
/// shape as a sampling request's messages.
pub type PromptMessage = SamplingMessage;

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is, for the user filling it in.
    pub description: Option<String>,
    /// Whether `prompts/get` must give it.
    pub required: bool,
}

impl PromptArgument {
    /// An optional argument named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            description: None,
            required: false,
        }
    }

    /// Its description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Makes it required.
    #[must_use]
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

type GetFn = Arc<
    dyn Fn(BTreeMap<String, String>) -> BoxFuture<'static, Result<Vec<PromptMessage>, HandlerError>>
        + Send
        + Sync,
>;

/// A prompt: a name, a description, its arguments, and what it renders to.
///
/// `prompts/get` checks the arguments before calling the handler: a missing required one
/// or an unknown one is an invalid-params error naming it and the arguments the prompt
/// takes.
///
/// ```
/// use actuator_mcp::{Prompt, PromptArgument, PromptMessage};
/// let review = Prompt::new("review")
///     .description("Review a file")
///     .argument(PromptArgument::new("path").description("The file").required())
///     .get(|args| async move {
///         Ok(vec![PromptMessage::user(format!("Review {} for bugs.", args["path"]))])
///     })
///     .complete("path", |typed, _| {
///         ["src/main.rs", "src/lib.rs"].into_iter().filter(|p| p.starts_with(typed)).map(String::from).collect()
///     });
/// # let _ = review;
/// ```
#[derive(Clone)]
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    get: GetFn,
    completers: BTreeMap<String, Completer>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt named `name`; give it a handler with [`get`](Self::get).
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        let missing = name.clone();
        Prompt {
            get: Arc::new(move |_| {
                let name = missing.clone();
                Box::pin(async move {
                    Err(HandlerError::new(format!(
                        "prompt '{name}' has no handler (give it one with Prompt::get)"
                    )))
                })
            }),
            name,
            title: None,
            description: None,
            arguments: Vec::new(),
            completers: BTreeMap::new(),
        }
    }

    /// Its description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Its title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds an argument.
    #[must_use]
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// What it renders to, given its arguments.
    #[must_use]
    pub fn get<F, Fut>(mut self, get: F) -> Self
    where
        F: Fn(BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, HandlerError>> + Send + 'static,
    {
        self.get = Arc::new(move |args| Box::pin(get(args)));
        self
    }

    /// Completes the argument `argument`: called with what the user typed so far and the
    /// other arguments already given; returns the suggestions, best first.
    #[must_use]
    pub fn complete<F>(mut self, argument: impl Into<String>, complete: F) -> Self
    where
        F: Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static,
    {
        self.completers
            .insert(argument.into(), Completer::new(complete));
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn to_wire(&self) -> Value {
        let mut out = json!({"name": self.name});
        if let Some(title) = &self.title {
            out["title"] = json!(title);
        }
        if let Some(description) = &self.description {
            out["description"] = json!(description);
        }
        if !self.arguments.is_empty() {
            let arguments: Vec<Value> = self
                .arguments
                .iter()
                .map(|a| {
                    let mut arg = json!({"name": a.name, "required": a.required});
                    if let Some(description) = &a.description {
                        arg["description"] = json!(description);
                    }
                    arg
                })
                .collect();
            out["arguments"] = Value::Array(arguments);
        }
        out
    }

    /// Checks `args` against the declared arguments; `Err` names what is wrong.
    pub(crate) fn check_arguments(&self, args: &BTreeMap<String, String>) -> Result<(), String> {
        let takes = || {
            if self.arguments.is_empty() {
                "it takes no arguments".to_owned()
            } else {
                let names: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
                format!("it takes: {}", names.join(", "))
            }
        };
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|a| a.required && !args.contains_key(&a.name))
        {
            return Err(format!(
                "prompt '{}' needs the argument '{}' ({})",
                self.name,
                missing.name,
                takes()
            ));
        }
        if let Some(unknown) = args
            .keys()
            .find(|k| !self.arguments.iter().any(|a| &a.name == *k))
        {
            return Err(format!(
                "prompt '{}' has no argument '{unknown}' ({})",
                self.name,
                takes()
            ));
        }
        Ok(())
    }

    /// Renders the prompt as a `prompts/get` result.
    pub(crate) async fn render(
        &self,
        args: BTreeMap<String, String>,
    ) -> Result<Value, HandlerError> {
        let messages = (self.get)(args).await?;
        let messages: Vec<Value> = messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    actuator_tool_core::SamplingRole::User => "user",
                    actuator_tool_core::SamplingRole::Assistant => "assistant",
                };
                json!({"role": role, "content": content_to_mcp(&m.content)})
            })
            .collect();
        let mut out = json!({"messages": messages});
        if let Some(description) = &self.description {
            out["description"] = json!(description);
        }
        Ok(out)
    }

    pub(crate) fn completer(&self, argument: &str) -> Option<&Completer> {
        self.completers.get(argument)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_by_name_with_what_the_prompt_takes() {
        let p = Prompt::new("p")
            .argument(PromptArgument::new("a").required())
            .argument(PromptArgument::new("b"));
        assert!(
            p.check_arguments(&BTreeMap::from([("a".into(), "1".into())]))
                .is_ok()
        );
        let missing = p.check_arguments(&BTreeMap::new()).unwrap_err();
        assert_eq!(
            missing,
            "prompt 'p' needs the argument 'a' (it takes: a, b)"
        );
        let unknown = p
            .check_arguments(&BTreeMap::from([
                ("a".into(), "1".into()),
                ("z".into(), "2".into()),
            ]))
            .unwrap_err();
        assert_eq!(unknown, "prompt 'p' has no argument 'z' (it takes: a, b)");
    }
}
