//! [`GenerateRequest`]: one model call as one value.

use std::fmt;
use std::sync::Arc;

use actuator_tool_core::{ToolChoice, ToolInfo, TraceContext};

use crate::config::{self, GenerateConfig};
use crate::message::ChatMessage;
use crate::observe::{GenerateObserver, RetryReport, wait_queued, wait_reported};

/// The tool choice of a request that names none.
static AUTO: ToolChoice = ToolChoice::Auto;

/// One generation asked of a [`Model`](crate::Model): the conversation, the tools on offer,
/// the tool choice, the generation settings, and who hears of the provider's retries.
///
/// A request borrows all of it, so building one per turn copies neither the conversation nor
/// the tools (an agent's loop builds one each turn over the messages it keeps). A model that
/// wraps another passes the request on, changed or not (`request.config(&merged)`), and what
/// it carries, the retry observer included, follows it to the model that does the work.
///
/// The fields are public to read; the setters set them. Unset, a request offers no tools,
/// lets the model choose (`auto`) and uses the default [`GenerateConfig`]. The struct is
/// `#[non_exhaustive]`: what a call will carry next (a response schema for structured
/// output, cache hints, a trace context) joins it as new fields with defaults, without
/// changing [`Model::generate`](crate::Model::generate) or any caller.
///
/// ```
/// use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, Model, ScriptedModel, ModelOutput};
/// use actuator_tool_core::ToolChoice;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([ModelOutput::from_content("m", "hello")]);
/// let input = [ChatMessage::user("hi")];
/// let config = GenerateConfig::default().max_tokens(100);
/// let request = GenerateRequest::new(&input).tool_choice(&ToolChoice::None).config(&config);
/// assert_eq!(request.config.max_tokens, Some(100));
/// let out = model.generate(request).await.unwrap();
/// assert_eq!(out.completion(), "hello");
/// # });
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct GenerateRequest<'a> {
    /// The conversation so far.
    pub input: &'a [ChatMessage],
    /// The tools the model may call: exactly these (the caller applied the tool choice,
    /// see [`generate`](crate::generate)). Default: none.
    pub tools: &'a [Arc<ToolInfo>],
    /// Whether and which tool the model must call. Default: [`ToolChoice::Auto`].
    pub tool_choice: &'a ToolChoice,
    /// Generation settings. Default: [`GenerateConfig::default`].
    pub config: &'a GenerateConfig,
    /// Who hears of the retries the provider makes and the time it waits between them
    /// (see [`GenerateRequest::wait_for_retry`]). Default: nobody.
    pub observer: Option<&'a dyn GenerateObserver>,
    /// The W3C trace context the request belongs to: a provider sends it as the
    /// `traceparent` (and `tracestate`) headers, so a traced run links to the server's spans.
    /// Default: none, and no header is sent. A run passes the [`TraceContext`] in its
    /// resources (the one MCP calls carry in `_meta` too).
    pub trace: Option<&'a TraceContext>,
    /// The tools as a shared list, when the caller has them so: kept to be shared rather than
    /// copied by whoever records the request (see [`GenerateRequest::tools_arc`]).
    shared_tools: Option<&'a Arc<[Arc<ToolInfo>]>>,
}

impl<'a> GenerateRequest<'a> {
    /// A request to continue `input`, with no tools, the `auto` tool choice, the default
    /// config and no observer.
    ///
    /// ```
    /// use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest};
    /// use actuator_tool_core::ToolChoice;
    /// let input = [ChatMessage::user("hi")];
    /// let request = GenerateRequest::new(&input);
    /// assert_eq!(request.input.len(), 1);
    /// assert!(request.tools.is_empty());
    /// assert_eq!(request.tool_choice, &ToolChoice::Auto);
    /// assert_eq!(request.config, &GenerateConfig::default());
    /// assert!(request.observer.is_none());
    /// ```
    pub fn new(input: &'a [ChatMessage]) -> Self {
        GenerateRequest {
            input,
            tools: &[],
            tool_choice: &AUTO,
            config: &config::DEFAULT,
            observer: None,
            trace: None,
            shared_tools: None,
        }
    }

    /// The tools on offer.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_model::GenerateRequest;
    /// use actuator_tool_core::{ToolInfo, ToolParams};
    /// let tools = vec![Arc::new(ToolInfo::new("add", "Adds.", ToolParams::default()))];
    /// let request = GenerateRequest::new(&[]).tools(&tools);
    /// assert_eq!(request.tools[0].name, "add");
    /// ```
    #[must_use]
    pub fn tools(mut self, tools: &'a [Arc<ToolInfo>]) -> Self {
        self.tools = tools;
        self
    }

    /// The tools on offer, as a list the caller shares: the same as
    /// [`GenerateRequest::tools`], and whoever records the request (an agent's model event)
    /// can keep a reference to the list instead of a copy ([`GenerateRequest::tools_arc`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_model::GenerateRequest;
    /// use actuator_tool_core::{ToolInfo, ToolParams};
    /// let tools: Arc<[Arc<ToolInfo>]> = Arc::from([Arc::new(ToolInfo::new("add", "Adds.", ToolParams::default()))]);
    /// let request = GenerateRequest::new(&[]).shared_tools(&tools);
    /// assert_eq!(request.tools.len(), 1);
    /// assert!(Arc::ptr_eq(request.tools_arc().unwrap(), &tools));
    /// ```
    #[must_use]
    pub fn shared_tools(mut self, tools: &'a Arc<[Arc<ToolInfo>]>) -> Self {
        self.tools = tools;
        self.shared_tools = Some(tools);
        self
    }

    /// The shared list the tools on offer are, when they were given as one
    /// ([`GenerateRequest::shared_tools`]) and still are (not replaced since, for example by a
    /// tool choice that offers fewer).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_model::GenerateRequest;
    /// use actuator_tool_core::{ToolInfo, ToolParams};
    /// let tools: Arc<[Arc<ToolInfo>]> = Arc::from([Arc::new(ToolInfo::new("add", "Adds.", ToolParams::default()))]);
    /// let fewer = Vec::new();
    /// let request = GenerateRequest::new(&[]).shared_tools(&tools).tools(&fewer);
    /// assert!(request.tools_arc().is_none());
    /// ```
    pub fn tools_arc(&self) -> Option<&'a Arc<[Arc<ToolInfo>]>> {
        // Compared as fat pointers (address and length): the list is shared only while the
        // tools on offer are exactly it.
        self.shared_tools
            .filter(|shared| std::ptr::eq::<[Arc<ToolInfo>]>(&***shared, self.tools))
    }

    /// The tool choice.
    #[must_use]
    pub fn tool_choice(mut self, tool_choice: &'a ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// The generation settings.
    #[must_use]
    pub fn config(mut self, config: &'a GenerateConfig) -> Self {
        self.config = config;
        self
    }

    /// Who hears of the provider's retries (see [`GenerateRequest::wait_for_retry`]).
    #[must_use]
    pub fn observer(mut self, observer: &'a dyn GenerateObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The trace context the request belongs to, sent as `traceparent` (see
    /// [`GenerateRequest::trace`]).
    ///
    /// ```
    /// use actuator_model::{ChatMessage, GenerateRequest};
    /// use actuator_tool_core::TraceContext;
    /// let trace = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
    /// let input = [ChatMessage::user("hi")];
    /// let request = GenerateRequest::new(&input).trace(&trace);
    /// assert_eq!(request.trace.map(|t| t.traceparent()), Some(trace.traceparent()));
    /// ```
    #[must_use]
    pub fn trace(mut self, trace: &'a TraceContext) -> Self {
        self.trace = Some(trace);
        self
    }

    /// The observer to report a streamed response's deltas to, when it wants them
    /// ([`GenerateObserver::wants_deltas`]): a provider asks once per attempt, and builds no
    /// delta when the answer is `None`.
    ///
    /// ```
    /// use actuator_model::{GenerateObserver, GenerateRequest, RetryReport};
    /// # use std::time::Duration;
    /// struct Deaf;
    /// impl GenerateObserver for Deaf {
    ///     fn retrying(&self, _: &RetryReport) {}
    ///     fn waited(&self, _: &RetryReport, _: Duration) {}
    /// }
    /// let deaf = Deaf;
    /// assert!(GenerateRequest::new(&[]).observer(&deaf).delta_observer().is_none());
    /// ```
    pub fn delta_observer(&self) -> Option<&'a dyn GenerateObserver> {
        self.observer.filter(|o| o.wants_deltas())
    }

    /// What a provider calls between two attempts: tells the request's observer (if any)
    /// about the retry, waits `report.wait`, and tells the observer how long the wait really
    /// took, also when the future is dropped during it. The caller (an agent's run) records
    /// the wait as waiting, not working time, and can show the retry as it happens.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use std::time::Duration;
    /// use actuator_model::{GenerateObserver, GenerateRequest, RetryReport};
    ///
    /// #[derive(Default)]
    /// struct Heard(Mutex<Vec<u32>>);
    /// impl GenerateObserver for Heard {
    ///     fn retrying(&self, report: &RetryReport) { self.0.lock().unwrap().push(report.retry); }
    ///     fn waited(&self, _: &RetryReport, _: Duration) {}
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let heard = Heard::default();
    /// let request = GenerateRequest::new(&[]).observer(&heard);
    /// request.wait_for_retry(RetryReport::new(1, Duration::from_millis(1), "HTTP 429")).await;
    /// // Without an observer the wait still happens; nobody hears of it.
    /// GenerateRequest::new(&[]).wait_for_retry(RetryReport::new(2, Duration::ZERO, "HTTP 500")).await;
    /// assert_eq!(*heard.0.lock().unwrap(), [1]);
    /// # });
    /// ```
    pub async fn wait_for_retry(&self, report: RetryReport) {
        wait_reported(self.observer, report).await;
    }

    /// What a provider wraps its wait for a connection slot in (see
    /// [`concurrency`](crate::concurrency)): the request's observer hears of it a slice at a
    /// time ([`GenerateObserver::queueing`], [`GenerateObserver::queued`]), so a run counts it
    /// as waiting, not working time. A provider skips it when a slot is free at once.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use std::time::Duration;
    /// use actuator_model::{GenerateObserver, GenerateRequest, RetryReport};
    ///
    /// #[derive(Default)]
    /// struct Queued(Mutex<Duration>);
    /// impl GenerateObserver for Queued {
    ///     fn retrying(&self, _: &RetryReport) {}
    ///     fn waited(&self, _: &RetryReport, _: Duration) {}
    ///     fn queued(&self, _: Duration, waited: Duration) { *self.0.lock().unwrap() += waited; }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queued = Queued::default();
    /// let request = GenerateRequest::new(&[]).observer(&queued);
    /// let n = request.wait_queued(async {
    ///     tokio::time::sleep(Duration::from_millis(20)).await;
    ///     7
    /// }).await;
    /// assert_eq!(n, 7);
    /// assert!(*queued.0.lock().unwrap() >= Duration::from_millis(20));
    /// # });
    /// ```
    pub async fn wait_queued<F: std::future::Future>(&self, wait: F) -> F::Output {
        wait_queued(self.observer, wait).await
    }
}

impl fmt::Debug for GenerateRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenerateRequest")
            .field("input", &self.input)
            .field("tools", &self.tools)
            .field("tool_choice", &self.tool_choice)
            .field("config", &self.config)
            .field("observer", &self.observer.map(|_| "..."))
            .field("shared_tools", &self.tools_arc().is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::{BoxFuture, Model, ModelError, ModelOutput};

    /// Remembers every report it hears and every wait.
    #[derive(Default)]
    struct Heard {
        retries: Mutex<Vec<RetryReport>>,
        waits: Mutex<Vec<Duration>>,
    }

    impl GenerateObserver for Heard {
        fn retrying(&self, report: &RetryReport) {
            self.retries.lock().unwrap().push(report.clone());
        }
        fn waited(&self, _: &RetryReport, waited: Duration) {
            self.waits.lock().unwrap().push(waited);
        }
    }

    /// A provider that fails once, waits through the request, then answers.
    struct Retrying;

    impl Model for Retrying {
        fn name(&self) -> &str {
            "retrying"
        }

        fn generate<'a>(
            &'a self,
            request: GenerateRequest<'a>,
        ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
            Box::pin(async move {
                let report = RetryReport::new(1, Duration::from_millis(1), "HTTP 429");
                request.wait_for_retry(report.with_status(429)).await;
                Ok(ModelOutput::from_content("retrying", "done"))
            })
        }
    }

    /// A model that wraps another and changes the call's config on the way, as a model with
    /// its own defaults does.
    struct Defaults<M>(M, GenerateConfig);

    impl<M: Model> Model for Defaults<M> {
        fn name(&self) -> &str {
            self.0.name()
        }

        fn generate<'a>(
            &'a self,
            request: GenerateRequest<'a>,
        ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
            Box::pin(async move {
                let merged = request.config.merge(&self.1);
                self.0.generate(request.config(&merged)).await
            })
        }
    }

    #[test]
    fn a_new_request_offers_no_tools_lets_the_model_choose_and_has_the_default_config() {
        let input = [ChatMessage::user("hi")];
        let request = GenerateRequest::new(&input);
        assert!(std::ptr::eq(request.input, &input[..]));
        assert!(request.tools.is_empty());
        assert_eq!(*request.tool_choice, ToolChoice::Auto);
        assert_eq!(*request.config, GenerateConfig::default());
        assert!(request.observer.is_none());
        assert!(request.tools_arc().is_none());
    }

    #[test]
    fn the_setters_set_what_they_name_and_borrow_rather_than_copy() {
        let info = Arc::new(ToolInfo::new("add", "Adds.", Default::default()));
        let tools = vec![Arc::clone(&info)];
        let choice = ToolChoice::function("add");
        let config = GenerateConfig::default().max_tokens(7);
        let heard = Heard::default();
        let request = GenerateRequest::new(&[])
            .tools(&tools)
            .tool_choice(&choice)
            .config(&config)
            .observer(&heard);
        assert!(std::ptr::eq(request.tools, &tools[..]));
        assert!(std::ptr::eq(request.tool_choice, &choice));
        assert!(std::ptr::eq(request.config, &config));
        assert!(request.observer.is_some());
        // A clone is another view of the same borrowed values.
        let copy = request.clone();
        assert!(std::ptr::eq(copy.tools, request.tools));
        assert!(format!("{copy:?}").contains("add"));
    }

    #[test]
    fn shared_tools_stay_shared_only_while_they_are_the_tools_on_offer() {
        let shared: Arc<[Arc<ToolInfo>]> =
            Arc::from([Arc::new(ToolInfo::new("a", "A.", Default::default()))]);
        let request = GenerateRequest::new(&[]).shared_tools(&shared);
        assert!(Arc::ptr_eq(request.tools_arc().unwrap(), &shared));
        // The same list set again (as a resolved `auto` choice does) is still it.
        let again = request.clone().tools(&shared);
        assert!(again.tools_arc().is_some());
        let none = request.tools(&[]);
        assert!(none.tools_arc().is_none());
    }

    #[tokio::test]
    async fn a_providers_retry_reaches_the_observer_the_request_carries() {
        let heard = Heard::default();
        let out = Retrying
            .generate(GenerateRequest::new(&[]).observer(&heard))
            .await
            .unwrap();
        assert_eq!(out.completion(), "done");
        let retries = heard.retries.lock().unwrap();
        assert_eq!(retries.len(), 1);
        assert_eq!((retries[0].retry, retries[0].status), (1, Some(429)));
        assert_eq!(heard.waits.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn the_observer_follows_the_request_through_wrapper_models() {
        let heard = Heard::default();
        let wrapped: Arc<dyn Model> = Arc::new(Defaults(Retrying, GenerateConfig::default()));
        let boxed: Box<dyn Model> = Box::new(Arc::clone(&wrapped));
        boxed
            .generate(GenerateRequest::new(&[]).observer(&heard))
            .await
            .unwrap();
        assert_eq!(heard.retries.lock().unwrap().len(), 1);
        assert_eq!(heard.waits.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_wait_dropped_midway_still_reports_how_long_it_lasted() {
        let heard = Heard::default();
        let request = GenerateRequest::new(&[]).observer(&heard);
        let wait = request.wait_for_retry(RetryReport::new(1, Duration::from_secs(60), "x"));
        let _ = tokio::time::timeout(Duration::from_millis(5), wait).await;
        let waits = heard.waits.lock().unwrap();
        assert_eq!(waits.len(), 1);
        assert!(waits[0] < Duration::from_secs(60));
    }
}
