//! The README's code blocks, each verbatim inside a function so that it compiles: the test
//! `tests/readme_code.rs` checks that every ```rust block of the README appears here, so the
//! README cannot show code that does not build. Not meant to be run.
#![allow(
    dead_code,
    unused_variables,
    clippy::print_stdout,
    clippy::print_stderr
)]

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// README: the first example.
#[rustfmt::skip]
async fn first_example(script: Vec<actuator::model::ModelOutput>) -> Result {
    use actuator::prelude::*;

    /// Add two integers.
    ///
    /// # Arguments
    /// * `x` - First addend.
    /// * `y` - Second addend.
    #[tool]
    async fn add(x: i64, y: i64) -> i64 { x + y }

    let model = ScriptedModel::new(script);   // or get_model("openai/gpt-4.1-mini")?, or any `Model`
    let agent = react().tools([add_tool()]).model(model).build()?;
    let result = run(&agent, "What is 3 + 4?", [turn_limit(10)]).await?;
    match result.answer() {
        Some(answer) => println!("answer: {answer}"),
        None => println!("no answer: {}", result.end), // a limit, the context window, a refusal
    }
    Ok(())
}

/// README: a struct parameter and `?` in a tool.
#[rustfmt::skip]
mod tool_input_example {
    use actuator::prelude::*;

    /// Which results to keep.
    #[tool_input]
    struct Filter {
        /// Only results in this language.
        language: Option<String>,
    }

    /// Search the documentation.
    ///
    /// # Arguments
    /// * `query` - What to search for.
    /// * `filter` - Which results to keep.
    #[tool]
    async fn search(query: String, filter: Filter) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
        let index = std::fs::read_to_string("index.txt")?;
        Ok(format!("{} hits for {query} ({:?})", index.matches(&query).count(), filter.language))
    }
}

/// README: the first program on a real model.
#[rustfmt::skip]
mod first_agent {
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::time::Duration;

    use actuator::agent::react::ReactToolChoice;
    use actuator::prelude::*;
    use actuator::providers::RetryPolicy;

    /// Add two integers.
    ///
    /// # Arguments
    /// * `x` - First addend.
    /// * `y` - Second addend.
    #[tool]
    async fn add(x: i64, y: i64) -> i64 { x + y }

    #[tokio::main]
    async fn main() -> ExitCode {
        match ask("What is 3 + 4?").await {
            Ok(code) => code,
            Err(e) => {
                // The error and its causes: which variable to set, which server did not answer.
                eprintln!("error: {}", actuator::tool_core::ErrorChain(&*e));
                ExitCode::FAILURE
            }
        }
    }

    async fn ask(question: &str) -> Result<ExitCode, Box<dyn std::error::Error>> {
        // MODEL=openai/gpt-4.1-mini (with OPENAI_API_KEY), or a local server:
        // MODEL=llama-cpp/local MODEL_BASE_URL=http://127.0.0.1:8080/v1
        let name = std::env::var("MODEL").unwrap_or_else(|_| "openai/gpt-4.1-mini".into());
        let mut options = ModelOptions::new()
            .timeout(Duration::from_secs(60))
            .retry(RetryPolicy::default().max_attempts(3).max_elapsed(Duration::from_secs(20)));
        if let Ok(url) = std::env::var("MODEL_BASE_URL") { options = options.base_url(url); }
        if let Ok(key) = std::env::var("MODEL_API_KEY") { options = options.api_key(key); }
        let model = options.build(&name)?;

        let agent = react()
            .tools([add_tool()])
            .model(model)
            // A small local model must be told which tool to call; a capable one needs no help.
            .tool_choice(ReactToolChoice::per_turn(|turn, _state| match turn {
                1 => ToolChoice::function("add"),
                _ => ToolChoice::function("submit"),
            }))
            .build()?;
        let options = RunOptions::new()
            .limits([turn_limit(10), token_limit(20_000), time_limit(Duration::from_secs(120))])
            .events(Arc::new(ConsoleTranscript::new())); // each turn, call, result and retry as it happens
        let result = run(&agent, question, options).await?;
        match result.answer() {
            Some(answer) => {
                println!("answer: {answer}");
                Ok(ExitCode::SUCCESS)
            }
            None => {
                eprintln!("no answer: {}", result.end); // which limit, the context window, a refusal
                Ok(ExitCode::FAILURE)
            }
        }
    }
}

/// README: structured output.
#[rustfmt::skip]
async fn structured_example(model: std::sync::Arc<dyn actuator::model::Model>) -> Result {
    use actuator::model::{ChatMessage, GenerateConfig};

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    struct Sum {
        /// The total.
        total: i64,
    }
    let input = [ChatMessage::user("What is 3 + 4?")];
    let sum: Sum = actuator::model::generate_structured(model.as_ref(), &input, &GenerateConfig::default()).await?;
    Ok(())
}

/// README: real models.
#[rustfmt::skip]
fn real_models() -> Result {
    let model = actuator::providers::get_model("openai/gpt-4.1-mini")?;      // OPENAI_API_KEY
    let model = actuator::providers::get_model("anthropic/claude-sonnet-4-5")?; // ANTHROPIC_API_KEY
    let model = actuator::providers::get_model("google/gemini-2.5-flash")?;  // GOOGLE_API_KEY
    let model = actuator::providers::get_model("openai-api/together/meta-llama/Llama-3.3-70B")?; // TOGETHER_API_KEY, TOGETHER_BASE_URL
    let model = actuator::providers::get_model("vllm/Qwen/Qwen3-8B")?;       // VLLM_BASE_URL or localhost:8000
    Ok(())
}

/// A provider of the user's own, for the README's registry example.
struct MyBedrockModel {
    name: String,
}

impl MyBedrockModel {
    fn new(
        name: &str,
        _options: &actuator::providers::ModelOptions,
    ) -> std::result::Result<Self, std::io::Error> {
        Ok(MyBedrockModel {
            name: name.to_owned(),
        })
    }
}

impl actuator::model::Model for MyBedrockModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate<'a>(
        &'a self,
        _request: actuator::model::GenerateRequest<'a>,
    ) -> actuator::model::BoxFuture<
        'a,
        std::result::Result<actuator::model::ModelOutput, actuator::model::ModelError>,
    > {
        Box::pin(async { Err(actuator::model::ModelError::other("not a real provider")) })
    }
}

/// README: the open provider registry.
#[rustfmt::skip]
fn registry_example() -> Result {
    actuator::providers::register_provider("bedrock", |name, options| {
        Ok(std::sync::Arc::new(MyBedrockModel::new(name, options)?))
    })?;
    let model = actuator::providers::get_model("bedrock/anthropic.claude-3-haiku")?;
    Ok(())
}

/// README: an MCP server's tools.
#[rustfmt::skip]
fn mcp_example(model: actuator::model::ScriptedModel) -> Result {
    use std::sync::Arc;
    use actuator::prelude::*;

    use actuator::mcp::{McpClient, McpServer, mcp_tools};

    let fs = McpClient::new(McpServer::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/work"]));
    let agent = react()
        .tool_source(Arc::new(mcp_tools(&fs).prefix("fs_").filter(["read_*", "write_file"])?))
        .model(model)
        .build()?;
    Ok(())
}

/// README: seeing the library's own log.
#[rustfmt::skip]
fn tracing_example() {
    // Before anything runs: retries, reconnections and warnings on stderr, filtered by RUST_LOG.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
}

/// README: the built-in tools in a sandbox.
#[rustfmt::skip]
async fn sandbox_example(model: actuator::model::ScriptedModel) -> Result {
    use actuator::prelude::*;
    use actuator::sandbox::SandboxHandle;
    use actuator::tools::{BashOptions, ShellOptions};

    let agent = react()
        .tools([bash(BashOptions::new())?, python(ShellOptions::new())?, text_editor(ShellOptions::new())?])
        .model(model)
        .build()?;
    let sandbox = SandboxHandle::new(LocalSandbox::new()?);   // fails, saying how, without bubblewrap
    let options = RunOptions::new().limits([turn_limit(30)]).resource(sandbox);
    let result = run(&agent, "Which Python version is installed?", options).await?;
    Ok(())
}

/// README: an evaluation over a JSON Lines file.
#[rustfmt::skip]
async fn eval_example(agent: actuator::agent::react::ReactAgent) -> Result {
    use std::sync::Arc;
    use actuator::prelude::*;
    use actuator::eval::{Dataset, EvalOptions, FieldSpec, Task, eval};
    use actuator::eval::scorers::{IncludesOptions, includes};
    use actuator::multi::as_solver;

    // questions.jsonl, one sample per line: {"question": "What is 3 + 4?", "answer": "7"}
    let dataset = Dataset::from_json("questions.jsonl", &FieldSpec::default().input("question").target("answer"))?;
    let solver = as_solver(Arc::new(agent)).build()?;
    let task = Task::new("arithmetic", dataset, Arc::new(solver))
        .scorer(includes(IncludesOptions::default()))
        .limits([turn_limit(20), token_limit(50_000)]);
    let run = eval(&task, EvalOptions::new().log_dir("logs").max_samples(8)).await?;
    println!("{}: {:?}", run.log.status, run.score("includes").and_then(|s| s.metric("accuracy")));
    if let Some(first) = run.first_error() {
        eprintln!("{} samples failed; the first, {first}", run.error_count); // with or without a log
    }
    Ok(())
}

/// README: an evaluation with a compose project per sample.
#[cfg(feature = "docker")]
#[rustfmt::skip]
fn docker_example(dataset: actuator::eval::Dataset, solver: std::sync::Arc<dyn actuator::multi::Solver>) -> Result {
    use actuator::eval::Task;
    use actuator::sandbox::docker::ComposeConfig;
    let task = Task::new("ctf", dataset, solver).docker(ComposeConfig::from_dir("ctf")?);
    drop(task);
    Ok(())
}

fn main() {}
