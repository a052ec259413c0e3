//! One sample, one epoch: the solver under the task's limits, retries on error, the scorers,
//! and the sample's log entry.

use actuator_tool_core::ErrorChain;
use std::collections::BTreeMap;
use std::sync::Arc;

use actuator_agent::RunContext;
use actuator_agent::checkpoint::{Checkpoints, DirectoryPart};

use crate::sample_events::EventsPart;
use actuator_events::{Event, EventSink, Score, ScoreEvent, unix_now};
use actuator_model::{ModelUsage, new_id};
use actuator_multi::TaskState;
use actuator_sandbox::SandboxHandle;
use serde_json::{Map, Value, json};

use crate::contain::{contain, contain_sync};
use crate::log::convert::{StampedLog, event_json, iso, limit_event};
use crate::log::pool::MessagePool;
use crate::log::schema::{EvalErrorInfo, EvalSample, EvalSampleLimit};
use crate::sample::{Sample, SampleId, SampleInput};
use crate::task::Task;
use crate::watch::RunWatch;

/// What one sample produced: its log entry and, per scorer, its score (`None`: unscored).
pub(crate) struct SampleOutcome {
    pub(crate) entry: EvalSample,
    pub(crate) scores: Vec<Option<Score>>,
    pub(crate) usage: BTreeMap<String, ModelUsage>,
    pub(crate) failed: bool,
    /// Whether its run went on from a checkpoint.
    pub(crate) resumed: bool,
    /// The checkpoints of a sample that finished, to remove once its entry is in the log.
    pub(crate) finished_checkpoints: Option<Checkpoints>,
}

/// Adds `u` to `total`, every field (optional ones summed when either side has them).
pub(crate) fn add_usage(total: &mut ModelUsage, u: &ModelUsage) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.total_tokens += u.total_tokens;
    let add = |a: &mut Option<u64>, b: Option<u64>| {
        if let Some(b) = b {
            *a = Some(a.unwrap_or(0) + b);
        }
    };
    add(
        &mut total.input_tokens_cache_read,
        u.input_tokens_cache_read,
    );
    add(
        &mut total.input_tokens_cache_write,
        u.input_tokens_cache_write,
    );
    add(&mut total.reasoning_tokens, u.reasoning_tokens);
    if let Some(c) = u.total_cost {
        total.total_cost = Some(total.total_cost.unwrap_or(0.0) + c);
    }
}

pub(crate) fn usage_json(usage: &BTreeMap<String, ModelUsage>) -> Map<String, Value> {
    usage
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(Value::Null)))
        .collect()
}

/// How each sample runs: the evaluation's watch on its events, further attempts after an
/// error, and whether runs may lack resources their tools need.
pub(crate) struct SampleOptions<'a> {
    pub(crate) watch: &'a Arc<RunWatch>,
    pub(crate) retries: u32,
    pub(crate) allow_missing_resources: bool,
    pub(crate) operator: Option<&'a crate::options::OperatorFor>,
    /// The checkpoints' template, and the task's id their keys start with.
    pub(crate) checkpoints: Option<(&'a Checkpoints, &'a str)>,
}

/// Runs `sample` once (with up to `retries` further attempts after an error) and scores it.
pub(crate) async fn run_sample(
    task: &Task,
    sample: &Sample,
    id: &SampleId,
    epoch: u32,
    options: &SampleOptions<'_>,
) -> SampleOutcome {
    let mut error_retries = Vec::new();
    let mut attempt = 0;
    loop {
        let outcome = attempt_sample(task, sample, id, epoch, options).await;
        match outcome {
            Err((partial, error)) if attempt < options.retries => {
                drop(partial);
                error_retries.push(error);
                attempt += 1;
            }
            Err((mut partial, error)) => {
                partial.entry.error = Some(error);
                if !error_retries.is_empty() {
                    partial.entry.error_retries = Some(error_retries);
                }
                partial.failed = true;
                return partial;
            }
            Ok(mut done) => {
                if !error_retries.is_empty() {
                    done.entry.error_retries = Some(error_retries);
                }
                return done;
            }
        }
    }
}

type Attempted = Result<SampleOutcome, (SampleOutcome, EvalErrorInfo)>;

/// The sample's context: its events, its sandbox (made by the task's factory, a panic in
/// which is the sample's error) and the task's limits.
async fn sample_context(
    task: &Task,
    log: Arc<dyn EventSink>,
    allow_missing_resources: bool,
) -> (RunContext, Option<SandboxHandle>, Option<EvalErrorInfo>) {
    let mut base = RunContext::with_events(log);
    if allow_missing_resources {
        base = base.allowing_missing_resources();
    }
    let Some(make) = &task.sandbox else {
        return (base.scoped(&task.limits), None, None);
    };
    let made = match contain_sync("the sample's sandbox setup", || make()) {
        Ok(making) => contain("the sample's sandbox setup", making).await,
        Err(panicked) => Err(panicked),
    };
    match made {
        Ok(Ok(handle)) => (
            base.with_resource(handle.clone()).scoped(&task.limits),
            Some(handle),
            None,
        ),
        Ok(Err(e)) => (
            base.scoped(&task.limits),
            None,
            Some(EvalErrorInfo::new(format!(
                "The sample's sandbox could not be made: {}",
                ErrorChain(&e)
            ))),
        ),
        Err(panicked) => (base.scoped(&task.limits), None, Some(panicked)),
    }
}

async fn attempt_sample(
    task: &Task,
    sample: &Sample,
    id: &SampleId,
    epoch: u32,
    options: &SampleOptions<'_>,
) -> Attempted {
    let started = unix_now();
    let log = StampedLog::new();
    let sink = options
        .watch
        .sink(log.clone(), format!("sample {id} (epoch {epoch})"));
    let (mut root, sandbox, mut error) =
        sample_context(task, sink, options.allow_missing_resources).await;
    // This attempt's checkpoints, a resource its react agent takes up.
    let checkpoints = options.checkpoints.map(|(template, task_id)| {
        template
            .with_key(format!("{task_id}/{id}/{epoch}"))
            .keep_finished()
    });
    // Its events, and its sandbox's files when they are on this host, are part of each
    // checkpoint.
    let checkpoints = checkpoints.map(|c| {
        let c = c.part(Arc::new(EventsPart::new(log.clone())));
        match sandbox
            .as_ref()
            .and_then(|s| s.sandbox().files_on_host().map(std::path::Path::to_owned))
        {
            Some(dir) => c.part(Arc::new(DirectoryPart::new("sandbox", dir))),
            None => c,
        }
    });
    if let Some(checkpoints) = &checkpoints {
        root = root.with_resource(checkpoints.clone());
    }
    // An operator's channel for this sample, a resource its agent takes up. The function is
    // user code: a panic in it is the sample's error.
    if let Some(channel_for) = options.operator {
        match contain_sync("the operator's channel for the sample", || {
            channel_for(id, epoch)
        }) {
            Ok(Some(channel)) => root = root.with_resource(channel),
            Ok(None) => {}
            Err(panicked) => error = error.or(Some(panicked)),
        }
    }
    // One span around the whole sample, so that a sink given by the user (an OpenTelemetry
    // exporter) sees the solver's run and the scores in one tree; the log leaves it out, as
    // the reference's has none.
    let (cx, sample_span) = root.span("sample", &format!("{} {id} epoch {epoch}", task.name));
    let sample_span_id = cx.span_id().map(str::to_owned);
    let mut state = TaskState {
        messages: sample.input.to_messages(),
        metadata: sample.metadata.clone(),
        ..TaskState::default()
    };
    let mut limit = None;
    // An approver's or a reviewer's termination: the reference's `operator` limit.
    let mut terminated = None;
    if error.is_none() {
        // The solver's own work, and a panic in it (in `solve` or in polling its future).
        // The reference's `solvers` span around the solver's work.
        let (solver_cx, solvers_span) = cx.span("solvers", "solvers");
        let solved = contain("the solver", async {
            task.solver.solve(&mut state, &solver_cx).await
        })
        .await;
        drop(solvers_span);
        match solved {
            Ok(Ok(())) => {}
            Ok(Err(e)) => match (e.limit(), e.termination()) {
                // The task's own limits end the sample normally: it is scored on what it did.
                (Some(l), _) if cx.owns(l) => limit = Some(l.clone()),
                // So does a termination, as the reference's TerminateSampleError does.
                (None, Some(reason)) => terminated = Some(reason),
                _ => error = Some(EvalErrorInfo::new(ErrorChain(&e).to_string())),
            },
            Err(panicked) => error = Some(panicked),
        }
    }
    let mut scores = Vec::with_capacity(task.scorers.len());
    let mut score_json = Map::new();
    if error.is_none() {
        // The reference's `scorers` span, and in it one `scorer` span per scorer with its
        // score event.
        let (scorers_cx, scorers_span) = cx.span("scorers", "scorers");
        let target = serde_json::to_value(&sample.target).ok();
        for scorer in &task.scorers {
            // The scorer's name and its scoring are user code: a panic in either is contained.
            let scored = match contain_sync("a scorer's name", || scorer.name().to_owned()) {
                Ok(name) => {
                    let what = format!("the scorer '{name}'");
                    let (scorer_cx, scorer_span) = scorers_cx.span("scorer", &name);
                    let scored =
                        contain(&what, async { scorer.score(&state, &sample.target).await }).await;
                    if let Ok(Ok(score)) = &scored {
                        let mut event = ScoreEvent::new(name.clone(), score.clone());
                        event.target = target.clone();
                        scorer_cx.emit(Event::Score(Box::new(event)));
                    }
                    drop(scorer_span);
                    scored.map(|score| (name, score))
                }
                Err(panicked) => Err(panicked),
            };
            match scored {
                Ok((name, Ok(score))) => {
                    score_json.insert(name, serde_json::to_value(&score).unwrap_or(Value::Null));
                    scores.push(Some(score));
                }
                Ok((_, Err(e))) => {
                    error = Some(EvalErrorInfo::new(ErrorChain(&e).to_string()));
                    scores.push(None);
                }
                Err(panicked) => {
                    error = Some(panicked);
                    scores.push(None);
                }
            }
        }
        drop(scorers_span);
    } else {
        scores.resize(task.scorers.len(), None);
    }
    let usage_so_far = cx.usage();
    // The sandbox's teardown (a container's) is awaited here rather than left to its drop,
    // and is user code too.
    if let Some(sandbox) = sandbox {
        match contain("the sample's sandbox cleanup", sandbox.sandbox().cleanup()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                error.get_or_insert(EvalErrorInfo::new(format!(
                    "The sample's sandbox could not be cleaned up: {}",
                    ErrorChain(&e)
                )));
            }
            Err(panicked) => {
                error.get_or_insert(panicked);
            }
        }
    }
    drop(sample_span);
    // The sandbox goes with the contexts: its teardown is user code too.
    if let Err(panicked) = contain_sync("the sample's sandbox teardown", || drop((cx, root))) {
        error.get_or_insert(panicked);
    }
    let completed = unix_now();

    let mut usage: BTreeMap<String, ModelUsage> = BTreeMap::new();
    let mut events = Vec::new();
    let mut pool = MessagePool::default();
    for (at, mut event) in log.take() {
        if !kept_in_log(&mut event, sample_span_id.as_deref()) {
            continue;
        }
        if let Event::Model(m) = &event
            && let Some(u) = m.output.as_ref().and_then(|o| o.usage.as_ref())
        {
            add_usage(usage.entry(m.model.clone()).or_default(), u);
        }
        events.extend(event_json(at, &event, started, &mut pool));
    }
    if let Some(l) = &limit {
        events.push(limit_event(
            completed,
            l.kind.as_str(),
            &l.message,
            l.limit,
            started,
        ));
    }
    if let Some(reason) = terminated {
        events.push(limit_event(completed, "operator", reason, 1.0, started));
    }

    let input = match &sample.input {
        SampleInput::Text(t) => Value::String(t.clone()),
        SampleInput::Messages(m) => serde_json::to_value(m).unwrap_or(Value::Null),
    };
    let entry = EvalSample {
        id: id.clone(),
        epoch,
        input,
        choices: sample.choices.clone(),
        target: sample.target.clone(),
        messages: state
            .messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect(),
        output: serde_json::to_value(&state.output).unwrap_or(json!({})),
        scores: (!score_json.is_empty()).then_some(score_json),
        metadata: sample.metadata.clone(),
        store: serde_json::to_value(&state.store)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default(),
        events,
        events_data: pool.into_events_data(),
        model_usage: usage_json(&usage),
        started_at: Some(iso(started)),
        completed_at: Some(iso(completed)),
        total_time: Some(((completed - started) * 1000.0).round() / 1000.0),
        working_time: Some((usage_so_far.working_time.as_secs_f64() * 1000.0).round() / 1000.0),
        uuid: Some(new_id().into_string()),
        error: None,
        error_retries: None,
        limit: match (&limit, terminated) {
            (Some(l), _) => Some(EvalSampleLimit {
                kind: l.kind.as_str().to_owned(),
                limit: l.limit,
            }),
            (None, Some(_)) => Some(EvalSampleLimit {
                kind: "operator".to_owned(),
                limit: 1.0,
            }),
            (None, None) => None,
        },
        sandbox: task.sandbox_spec.clone(),
        attempt: None,
    };
    let resumed = checkpoints.as_ref().is_some_and(|c| c.resumed().is_some());
    let outcome = SampleOutcome {
        entry,
        scores,
        usage,
        failed: false,
        resumed,
        // Removed once the sample is in the log (a failed one keeps them: its retry goes on
        // from there).
        finished_checkpoints: checkpoints.filter(|_| error.is_none()),
    };
    match error {
        None => Ok(outcome),
        Some(error) => Err((outcome, error)),
    }
}

/// Whether `event` goes into the sample's log entry: not the sample's own span, which the
/// reference's logs have none of (its `solvers` and `scorers` spans are then top-level, as
/// there); the spans it contained lose it as their parent.
fn kept_in_log(event: &mut Event, sample_span: Option<&str>) -> bool {
    match event {
        Event::SpanBegin(begin) if Some(begin.id.as_str()) == sample_span => false,
        Event::SpanEnd(end) if Some(end.id.as_str()) == sample_span => false,
        Event::SpanBegin(begin) => {
            if begin.parent_id.is_some() && begin.parent_id.as_deref() == sample_span {
                begin.parent_id = None;
            }
            true
        }
        _ => true,
    }
}
