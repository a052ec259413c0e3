//! The default prompts of the react agent, byte for byte as the reference has them (§9.2).

/// Included in the system message when any tool is a handoff.
pub const DEFAULT_HANDOFF_PROMPT: &str = "\nYou are part of a multi-agent system designed to make agent coordination and execution easy. Agents uses two primary abstraction: **Agents** and **Handoffs**. An agent encompasses instructions and tools and can hand off a conversation to another agent when appropriate. Handoffs are achieved by calling a handoff function,generally named `transfer_to_<agent_name>`. Transfers between agents are handled seamlessly in the background; do not mention or draw attention to these transfers in your conversation with the user.\n";

/// Part of the assistant prompt.
pub const PARALLEL_TOOLS_PROMPT: &str = "Prioritize parallel tool calls: when operations are independent, run them in one response \u{2014} e.g. reading several files or running several searches at once \u{2014} rather than one at a time. Only sequence calls when one depends on another's result.";

/// The assistant prompt.
pub const DEFAULT_ASSISTANT_PROMPT: &str = concat!(
    "\nYou are a helpful assistant attempting to submit the best possible answer. You have several tools available to help with finding the answer. You will see the result of tool calls right after sending the message. ",
    "Prioritize parallel tool calls: when operations are independent, run them in one response \u{2014} e.g. reading several files or running several searches at once \u{2014} rather than one at a time. Only sequence calls when one depends on another's result.",
    " Do some reasoning before your actions, describing what tool calls you are going to use and how they fit into your plan.\n"
);

/// Tells the model about the submit tool (`{submit}` is its name).
pub const DEFAULT_SUBMIT_PROMPT: &str = "\nWhen you have completed the task and have an answer, call the {submit}() tool to report it.\n";

/// Sent when the model answers without calling a tool (`{submit}` is the submit tool's name).
pub const DEFAULT_CONTINUE_PROMPT: &str = "\nPlease proceed to the next step using your best judgement. If you believe you have completed the task, please call the `{submit}()` tool with your final answer.\n";

/// Sent by the no-submit variant when `on_continue` says to continue after a text-only turn.
pub const DEFAULT_CONTINUE_PROMPT_NO_SUBMIT: &str =
    "\nPlease proceed to the next step using your best judgement.\n";

/// Sent after an incorrect submission when more attempts remain.
pub const DEFAULT_INCORRECT_MESSAGE: &str =
    "Your submission was incorrect. Please proceed and attempt to find the correct answer.";

/// The default submit tool's description.
pub const DEFAULT_SUBMIT_DESCRIPTION: &str = "Submit an answer for evaluation.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_prompt_embeds_the_parallel_prompt() {
        assert!(DEFAULT_ASSISTANT_PROMPT.contains(PARALLEL_TOOLS_PROMPT));
        assert!(
            DEFAULT_ASSISTANT_PROMPT.starts_with('\n') && DEFAULT_ASSISTANT_PROMPT.ends_with('\n')
        );
    }
}
