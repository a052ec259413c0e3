//! Validation of `#[agent]`: turns the function and its attributes into an [`AgentFn`], the
//! checked description of what to generate. As for `#[tool]` (see `model`), every problem is
//! recorded in the [`Ctxt`] on the user's token it concerns, and an [`AgentFn`] is returned
//! even then, so that a stub constructor can be generated next to the errors.
//!
//! An agent function is `async fn name(state: AgentState, <params…>) -> Result<AgentState,
//! AgentError>`: the first parameter is the state, one parameter of type `RunContext` (by
//! value, anywhere after the state) receives the run's context, and every other parameter is
//! one of the agent's arguments, checked and described exactly as a tool's.

use proc_macro2::TokenStream;
use quote::format_ident;
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, PatType, Path, ReturnType, Type, Visibility};

use crate::attr::{self, Macro};
use crate::ctxt::Ctxt;
use crate::docs;
use crate::model::{self, Runtime};
use crate::params::{self, Param};

/// `#[agent]`'s runtime crate; its `__private` module re-exports `actuator_tool_core`, so the
/// expansion needs this one path only.
pub(crate) const AGENT: Runtime = Runtime {
    package: "actuator-agent",
    lib: "actuator_agent",
    facade_module: "agent",
};

/// Everything the code generator needs, validated.
pub(crate) struct AgentFn {
    /// The path to `actuator_agent`.
    pub(crate) krate: Path,
    pub(crate) vis: Visibility,
    pub(crate) fn_ident: Ident,
    /// `{fn}_agent`.
    pub(crate) ctor_ident: Ident,
    /// The function's `#[cfg]` attributes, repeated on the constructor.
    pub(crate) cfgs: Vec<Attribute>,
    pub(crate) name: String,
    pub(crate) description: String,
    /// Whether the function is a `&self` method (or has any receiver, when invalid).
    pub(crate) method: bool,
    /// The function's inputs after the receiver, in order.
    pub(crate) inputs: Vec<Input>,
    /// The agent's own parameters (the [`Input::Param`]s), in order.
    pub(crate) params: Vec<Param>,
    /// The declared return type: the span that a wrong one is reported on.
    pub(crate) output: Option<Type>,
}

/// What one input of the function receives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// The agent's state (the first input).
    State,
    /// The run's context.
    Context,
    /// The agent's parameter of this index in [`AgentFn::params`].
    Param(usize),
}

/// Validates `func` and its `#[agent(...)]` arguments. The function's parameters lose their
/// `#[agent(...)]` and doc attributes (which rustc would reject on parameters).
pub(crate) fn analyze(cx: &Ctxt, args: TokenStream, func: &mut ItemFn) -> AgentFn {
    let options = attr::parse_agent_options(cx, args);
    let fn_ident = func.sig.ident.clone();
    let fn_name = fn_ident.unraw().to_string();

    model::check_signature(cx, Macro::Agent, func);
    if func.sig.asyncness.is_none() {
        cx.error_spanned_by(
            func.sig.fn_token,
            format!(
                "an `#[agent]` function must be `async`: an agent awaits its model and tools; \
                 write `async fn {fn_name}`"
            ),
        );
    }
    let method = model::check_receiver(cx, Macro::Agent, func);
    let output = match &func.sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            cx.error_spanned_by(
                &fn_ident,
                format!(
                    "an `#[agent]` function returns the new state: add \
                     `-> Result<AgentState, AgentError>` to `{fn_name}`"
                ),
            );
            None
        }
    };

    let (inputs, raw, unschemed) = split_inputs(cx, func);
    let fn_docs = docs::parse_fn_docs(&docs::doc_lines(&func.attrs));
    let params = params::describe_params(cx, &fn_name, raw, &unschemed, &fn_docs);

    let name = options
        .name
        .map_or_else(|| fn_name.clone(), |name| name.value);
    let description = match options.description {
        Some(description) => description.value,
        None => {
            if fn_docs.description.is_empty() {
                cx.error_at(
                    fn_ident.span(),
                    format!(
                        "agent `{name}` has no description: handoffs and `as_tool` show it to \
                         the model to decide when to use the agent; add a doc comment \
                         (`/// What it does.`) to `{fn_name}` or set \
                         `#[agent(description = \"...\")]`"
                    ),
                );
            }
            fn_docs.description
        }
    };

    AgentFn {
        krate: options
            .krate
            .unwrap_or_else(|| model::default_krate(&AGENT)),
        vis: func.vis.clone(),
        ctor_ident: format_ident!("{}_agent", fn_name, span = fn_ident.span()),
        cfgs: model::cfg_attrs(func),
        fn_ident,
        name,
        description,
        method,
        inputs,
        params,
        output,
    }
}

/// Whether `ty` is a path whose last segment is `name` (`AgentState`, `actuator::agent::AgentState`).
fn is_named(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == name),
        Type::Group(group) => is_named(&group.elem, name),
        Type::Paren(paren) => is_named(&paren.elem, name),
        _ => false,
    }
}

/// Sorts the inputs into the state, the context and the agent's parameters (returned taken
/// apart, not yet described), with the names of the state and context inputs (which
/// `# Arguments` may describe for Rust readers without being an error).
fn split_inputs(cx: &Ctxt, func: &mut ItemFn) -> (Vec<Input>, Vec<params::RawParam>, Vec<String>) {
    const STATE: &str = "the first parameter of an `#[agent]` function is the agent's state: \
                         `state: AgentState`";
    let paren_span = func.sig.paren_token.span.join();
    let mut inputs = Vec::new();
    let mut unschemed = Vec::new();
    let mut param_inputs: Vec<&mut PatType> = Vec::new();
    let mut context_seen = false;
    let mut state_first = false;
    for input in &mut func.sig.inputs {
        let FnArg::Typed(pat_type) = input else {
            continue;
        };
        let role = if inputs.is_empty() {
            state_first = is_named(&pat_type.ty, "AgentState");
            if !state_first {
                cx.error_spanned_by(&pat_type.ty, STATE);
            }
            Input::State
        } else if is_named(&pat_type.ty, "AgentState") {
            // When the state is not first, that is the one error (not also an undescribed
            // parameter `state`).
            if state_first {
                cx.error_spanned_by(
                    &pat_type.ty,
                    "an `#[agent]` function receives one state, in its first parameter",
                );
            }
            Input::State
        } else if is_named(&pat_type.ty, "RunContext") {
            if context_seen {
                cx.error_spanned_by(
                    &pat_type.ty,
                    "only one parameter of an `#[agent]` function can receive the `RunContext`",
                );
            }
            context_seen = true;
            Input::Context
        } else if let Type::Reference(reference) = &*pat_type.ty
            && is_named(&reference.elem, "RunContext")
        {
            cx.error_spanned_by(
                &pat_type.ty,
                "take the `RunContext` by value (`cx: RunContext`): it is a cheap handle the \
                 agent owns for the run",
            );
            Input::Context
        } else {
            inputs.push(Input::Param(param_inputs.len()));
            param_inputs.push(pat_type);
            continue;
        };
        strip_attrs(cx, pat_type, role);
        if let Pat::Ident(pat) = &*pat_type.pat {
            unschemed.push(pat.ident.unraw().to_string());
        }
        inputs.push(role);
    }
    if inputs.is_empty() {
        cx.error_at(paren_span, STATE);
    }
    let raw = params::collect_params(cx, Macro::Agent, param_inputs);
    (inputs, raw, unschemed)
}

/// Removes the doc comments of the state or context input (rustc rejects them on parameters;
/// they describe nothing the model sees) and rejects `#[agent(...)]` options on it.
fn strip_attrs(cx: &Ctxt, pat_type: &mut PatType, role: Input) {
    let what = if role == Input::State {
        "the agent's state"
    } else {
        "the run's context"
    };
    pat_type.attrs.retain(|attr| {
        if attr.path().is_ident("agent") {
            cx.error_spanned_by(
                attr,
                format!("this parameter receives {what}: it takes no `#[agent]` options"),
            );
            return false;
        }
        !docs::is_doc(attr)
    });
}
