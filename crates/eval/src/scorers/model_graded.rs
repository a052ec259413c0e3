//! `model_graded_qa`: a grader model judges the answer against the target as a criterion,
//! with the reference's template and instructions.

use std::sync::Arc;

use actuator_events::{NOANSWER, Score};
use actuator_model::{BoxFuture, ChatMessage, GenerateRequest, MessageSource, Model};
use actuator_multi::TaskState;

use crate::error::ScoreError;
use crate::sample::Target;
use crate::scorer::Scorer;

/// The reference's default template for `model_graded_qa` (`{question}`, `{answer}`,
/// `{criterion}`, `{instructions}` are filled in).
pub const DEFAULT_TEMPLATE: &str = "
You are assessing a submitted answer on a given task based on a criterion. Here is the data:

[BEGIN DATA]
***
[Task]: {question}
***
[Submission]: {answer}
***
[Criterion]: {criterion}
***
[END DATA]

Does the submission meet the criterion?

{instructions}
";

/// The reference's default instructions (no partial credit).
pub const DEFAULT_INSTRUCTIONS: &str = "
After assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where LETTER is one of CI.  Please choose ONE option for the grade: either \"C\" for correct answers, or \"I\" for incorrect answers.

For example, after reviewing a correct answer you might write 'GRADE: C' or after reviewing an incorrect answer you might write 'GRADE: I'.

First, write out in a step by step manner your reasoning about the criterion to be sure that your conclusion is correct. Avoid simply stating the correct answers at the outset. Then, end with your answer formatted as 'GRADE: $LETTER' (without quotes) where LETTER is one of CI.
";

/// Finds the last `GRADE: X` in the grader's reply (the greedy `.*` binds to the last one,
/// so a grade echoed earlier, or injected through the submission, does not win).
pub const DEFAULT_GRADE_PATTERN: &str = r"(?is).*\bGRADE\s*:\s*(correct|incorrect|partial|C|P|I)\b";

/// A model-graded scorer. Build one with [`model_graded_qa`].
pub struct ModelGraded {
    model: Arc<dyn Model>,
    template: String,
    instructions: String,
    /// Always `Some` for the default pattern (a constant that compiles); an `Option` so that
    /// nothing here can panic.
    grade: Option<regex::Regex>,
}

/// The reference's `model_graded_qa`: `model` reads the question, the submission and the
/// target (as the criterion) and ends its reply with `GRADE: C` or `GRADE: I`. A reply without
/// a grade scores `N` with the reason `grader_failed`.
///
/// `model` is a model by value or an `Arc<dyn Model>` (kept as it is).
pub fn model_graded_qa(model: impl Model + 'static) -> ModelGraded {
    ModelGraded {
        model: actuator_model::shared_model(model),
        template: DEFAULT_TEMPLATE.to_owned(),
        instructions: DEFAULT_INSTRUCTIONS.to_owned(),
        grade: regex::Regex::new(DEFAULT_GRADE_PATTERN).ok(),
    }
}

impl ModelGraded {
    /// A template of one's own (placeholders `{question}`, `{answer}`, `{criterion}`,
    /// `{instructions}`).
    #[must_use]
    pub fn template(mut self, template: impl Into<String>) -> Self {
        self.template = template.into();
        self
    }

    /// Instructions of one's own.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    fn prompt(&self, state: &TaskState, target: &Target) -> String {
        let question = state
            .messages
            .iter()
            .find(|m| matches!(m, ChatMessage::User(u) if u.source == Some(MessageSource::Input)))
            .or_else(|| {
                state
                    .messages
                    .iter()
                    .find(|m| matches!(m, ChatMessage::User(_)))
            })
            .map(ChatMessage::text)
            .unwrap_or_default();
        self.template
            .replace("{question}", &question)
            .replace("{criterion}", &target.text())
            .replace("{instructions}", &self.instructions)
            .replace("{answer}", &state.output.completion())
    }
}

impl Scorer for ModelGraded {
    fn name(&self) -> &str {
        "model_graded_qa"
    }

    fn score<'a>(
        &'a self,
        state: &'a TaskState,
        target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>> {
        Box::pin(async move {
            let prompt = self.prompt(state, target);
            let input = [ChatMessage::user(prompt)];
            let reply = self
                .model
                .generate(GenerateRequest::new(&input))
                .await
                .map_err(|e| ScoreError {
                    scorer: self.name().to_owned(),
                    message: format!("the grader model failed: {e}"),
                })?;
            let text = reply.completion();
            let grade = self
                .grade
                .as_ref()
                .and_then(|g| g.captures(&text))
                .and_then(|c| c.get(1))
                .map(|g| match g.as_str().to_lowercase().as_str() {
                    "c" | "correct" => "C",
                    "p" | "partial" => "P",
                    _ => "I",
                });
            let answer = state.output.completion();
            Ok(match grade {
                Some(g) => Score::new(g).with_answer(answer).with_explanation(text),
                None => Score::new(NOANSWER)
                    .with_reason("grader_failed")
                    .with_answer(answer)
                    .with_explanation(format!("Grade not found in model output: {text}")),
            })
        })
    }
}
