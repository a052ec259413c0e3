//! Validation: turns the `#[tool]` function and its attributes into a [`Tool`], the checked
//! description of what to generate. Every problem is recorded in the [`Ctxt`] on the user's
//! token it concerns; a [`Tool`] is returned even then, so that a stub constructor can still be
//! generated and the user sees the real error, not a cascade of "cannot find `add_tool`".

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, FnArg, Ident, ItemFn, Pat, Path, ReceiverKind, ReturnType, Safety, Type,
    Visibility,
};

use crate::attr::{self, ParamDefault, ParamOptions};
use crate::ctxt::Ctxt;
use crate::docs::{self, FnDocs};

/// Everything the code generator needs, validated.
pub(crate) struct Tool {
    /// The path to `actuator_tool_core`.
    pub(crate) krate: Path,
    pub(crate) vis: Visibility,
    pub(crate) fn_ident: Ident,
    /// `{fn}_tool`.
    pub(crate) ctor_ident: Ident,
    /// The function's `#[cfg]` attributes, repeated on the constructor.
    pub(crate) cfgs: Vec<Attribute>,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) is_async: bool,
    /// Whether the function is a `&self` method (or has any receiver, when invalid).
    pub(crate) method: bool,
    pub(crate) params: Vec<Param>,
    pub(crate) output: ReturnType,
    pub(crate) parallel: bool,
    pub(crate) max_output: Option<usize>,
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) viewer: Option<Expr>,
}

/// One parameter of the function.
pub(crate) struct Param {
    /// The JSON name (the identifier without `r#`).
    pub(crate) name: String,
    pub(crate) ty: Type,
    pub(crate) description: Option<String>,
    pub(crate) kind: ParamKind,
}

pub(crate) enum ParamKind {
    /// Taken with `ToolArgs::required` (optional in the schema when the type accepts null).
    Plain,
    /// `#[tool(default = expr)]`.
    DefaultExpr(Box<Expr>),
    /// `#[tool(default)]`.
    DefaultTrait,
    /// `#[tool(flatten)]`.
    Flatten,
}

/// The longest tool name providers accept.
const MAX_NAME_LEN: usize = 64;

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The default path to the runtime crate: `actuator_tool_core` when the calling crate depends
/// on it, else the `actuator` facade's re-export, found in the caller's `Cargo.toml` (so that
/// users of the facade need no `crate = ...`).
pub(crate) fn default_krate() -> Path {
    use proc_macro_crate::{FoundCrate, crate_name};
    // `Itself` also answers for the package's tests and examples, which are separate crates.
    let is_lib = |lib: &str| std::env::var("CARGO_CRATE_NAME").is_ok_and(|c| c == lib);
    let ident = |name: &str| proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
    match crate_name("actuator-tool-core") {
        Ok(FoundCrate::Itself) if is_lib("actuator_tool_core") => syn::parse_quote!(crate),
        Ok(FoundCrate::Name(name)) => {
            let name = ident(&name);
            syn::parse_quote!(::#name)
        }
        _ => match crate_name("actuator") {
            Ok(FoundCrate::Itself) if is_lib("actuator") => syn::parse_quote!(crate::tool_core),
            Ok(FoundCrate::Itself) => syn::parse_quote!(::actuator::tool_core),
            Ok(FoundCrate::Name(name)) => {
                let name = ident(&name);
                syn::parse_quote!(::#name::tool_core)
            }
            Err(_) => syn::parse_quote!(::actuator_tool_core),
        },
    }
}

/// Validates `func` and its `#[tool(...)]` arguments. The function's parameters lose their
/// `#[tool(...)]` and doc attributes (which rustc would reject on parameters).
pub(crate) fn analyze(cx: &Ctxt, args: TokenStream, func: &mut ItemFn) -> Tool {
    let options = attr::parse_tool_options(cx, args);
    let sig = &func.sig;
    let fn_ident = sig.ident.clone();
    let fn_name = fn_ident.unraw().to_string();

    check_signature(cx, func);
    let method = check_receiver(cx, func);

    let params = collect_params(cx, func);
    let fn_docs = docs::parse_fn_docs(&docs::doc_lines(&func.attrs));
    let params = describe_params(cx, &fn_name, params, &fn_docs);

    let name = match &options.name {
        Some(name) => {
            if !valid_tool_name(&name.value) {
                cx.error_at(
                    name.span,
                    format!(
                        "invalid tool name `{}`: a tool name must be 1 to 64 characters from [a-zA-Z0-9_-]",
                        name.value
                    ),
                );
            }
            name.value.clone()
        }
        None => {
            if !valid_tool_name(&fn_name) {
                cx.error_at(
                    fn_ident.span(),
                    format!(
                        "`{fn_name}` is not a valid tool name (1 to 64 characters from [a-zA-Z0-9_-]); \
                         set one with `#[tool(name = \"...\")]`"
                    ),
                );
            }
            fn_name.clone()
        }
    };

    let description = match &options.description {
        Some(description) => description.value.clone(),
        None => {
            if fn_docs.description.is_empty() {
                cx.error_at(
                    fn_ident.span(),
                    format!(
                        "tool `{name}` has no description: the model reads it to decide when to \
                         call the tool; add a doc comment (`/// What it does.`) to `{fn_name}` or \
                         set `#[tool(description = \"...\")]`"
                    ),
                );
            }
            fn_docs.description
        }
    };

    // A tool's parameters are deserialized into owned values, so a synchronous tool function
    // cannot take `&str` where it only reads a `String`: clippy's suggestion does not apply.
    if func.sig.asyncness.is_none() && !params.is_empty() {
        func.attrs
            .push(syn::parse_quote!(#[allow(clippy::needless_pass_by_value)]));
    }

    let cfgs = func
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .cloned()
        .collect();

    Tool {
        krate: options.krate.unwrap_or_else(default_krate),
        vis: func.vis.clone(),
        ctor_ident: format_ident!("{}_tool", fn_name, span = fn_ident.span()),
        fn_ident,
        cfgs,
        name,
        description,
        is_async: func.sig.asyncness.is_some(),
        method,
        params,
        output: func.sig.output.clone(),
        parallel: options.parallel.unwrap_or(false),
        max_output: options.max_output,
        timeout_ms: options.timeout_ms,
        viewer: options.viewer,
    }
}

/// Rejects what a tool function cannot be: generic, `unsafe`, variadic.
fn check_signature(cx: &Ctxt, func: &ItemFn) {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "a `#[tool]` function cannot be generic: the model calls it with JSON, so every \
             parameter needs one concrete type",
        );
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(
            where_clause,
            "a `#[tool]` function cannot have a `where` clause: every parameter needs one \
             concrete type",
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        cx.error_spanned_by(
            token,
            "a `#[tool]` function cannot be `unsafe`: a model's call cannot uphold its safety \
             contract",
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic.dots, "a `#[tool]` function cannot be variadic");
    }
}

/// Checks the receiver: none (a free function) or `&self`. Returns whether there is one.
fn check_receiver(cx: &Ctxt, func: &ItemFn) -> bool {
    let Some(receiver) = func.sig.receiver() else {
        return false;
    };
    match &receiver.kind {
        ReceiverKind::Reference(_, _, None) => {}
        ReceiverKind::Reference(_, _, Some(_)) => cx.error_spanned_by(
            receiver,
            "a `#[tool]` method cannot take `&mut self`: calls may run concurrently; take `&self` \
             and keep mutable state behind a `Mutex` or an atomic",
        ),
        ReceiverKind::Value => cx.error_spanned_by(
            receiver,
            "a `#[tool]` method cannot take `self` by value: the tool keeps the value in an `Arc` \
             and calls the method many times; take `&self`",
        ),
        _ => cx.error_spanned_by(
            receiver,
            "a `#[tool]` method must take `&self` (the tool keeps the value in an `Arc<Self>`)",
        ),
    }
    true
}

/// A parameter as written, before descriptions are attached.
struct RawParam {
    ident: Ident,
    ty: Type,
    options: ParamOptions,
    doc: Option<String>,
}

/// Takes the typed parameters apart, stripping their `#[tool]` and doc attributes.
fn collect_params(cx: &Ctxt, func: &mut ItemFn) -> Vec<RawParam> {
    let mut params = Vec::new();
    let mut flatten_seen = false;
    for input in &mut func.sig.inputs {
        let FnArg::Typed(pat_type) = input else {
            continue;
        };
        let mut options = ParamOptions::default();
        let doc_lines = docs::doc_lines(&pat_type.attrs);
        let mut kept = Vec::with_capacity(pat_type.attrs.len());
        for attr in std::mem::take(&mut pat_type.attrs) {
            if attr.path().is_ident("tool") {
                match attr.meta.require_list() {
                    Ok(list) => attr::parse_param_options(cx, list.tokens.clone(), &mut options),
                    Err(err) => cx.syn_error(err),
                }
            } else if !docs::is_doc(&attr) {
                kept.push(attr);
            }
        }
        pat_type.attrs = kept;

        if let (Some(_), Some(default)) = (options.flatten, &options.default) {
            let span = match default {
                ParamDefault::Trait(span) => *span,
                ParamDefault::Expr(expr) => expr.span(),
            };
            cx.error_at(
                span,
                "a `#[tool(flatten)]` parameter cannot have a default: give the struct's fields \
                 `#[serde(default)]` instead",
            );
        }
        if let Some(flatten) = options.flatten {
            if flatten_seen {
                cx.error_at(
                    flatten,
                    "only one parameter can be `#[tool(flatten)]`: its struct takes all the \
                     remaining arguments",
                );
            }
            flatten_seen = true;
        }

        const PLAIN_NAME: &str = "a `#[tool]` parameter must be a plain name such as \
                                  `query: String`: the name is the parameter's name in the \
                                  JSON arguments";
        let ident = match &*pat_type.pat {
            Pat::Ident(pat) => {
                if pat.by_ref.is_some() || pat.subpat.is_some() {
                    // Still a named parameter: its `# Arguments` entry is not an error too.
                    cx.error_spanned_by(&pat_type.pat, PLAIN_NAME);
                }
                pat.ident.clone()
            }
            other => {
                cx.error_spanned_by(other, PLAIN_NAME);
                continue;
            }
        };
        check_param_type(cx, &pat_type.ty);

        let doc = docs::render(doc_lines.iter().map(|l| l.text.as_str()));
        params.push(RawParam {
            ident,
            ty: (*pat_type.ty).clone(),
            options,
            doc: (!doc.is_empty()).then_some(doc),
        });
    }
    params
}

/// Rejects parameter types that can never be deserialized from JSON arguments.
fn check_param_type(cx: &Ctxt, ty: &Type) {
    match ty {
        Type::ImplTrait(_) => cx.error_spanned_by(
            ty,
            "`impl Trait` cannot be a `#[tool]` parameter type: the argument is deserialized \
             from JSON, so it needs a concrete type",
        ),
        Type::Reference(_) => cx.error_spanned_by(
            ty,
            "a `#[tool]` parameter cannot be a reference: the argument is deserialized from \
             JSON and must own its data (use `String` for `&str`, `Vec<T>` for `&[T]`)",
        ),
        _ if contains_impl(ty.to_token_stream()) => cx.error_spanned_by(
            ty,
            "`impl Trait` cannot appear in a `#[tool]` parameter type: the argument is \
             deserialized from JSON, so it needs a concrete type",
        ),
        _ => {}
    }
}

fn contains_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(ident) => ident == "impl",
        TokenTree::Group(group) => contains_impl(group.stream()),
        _ => false,
    })
}

/// Attaches descriptions: the parameter's own doc comment first, else its `# Arguments` entry.
fn describe_params(cx: &Ctxt, fn_name: &str, raw: Vec<RawParam>, fn_docs: &FnDocs) -> Vec<Param> {
    for problem in &fn_docs.problems {
        cx.error_at(problem.span, &problem.message);
    }
    let names: Vec<String> = raw.iter().map(|p| p.ident.unraw().to_string()).collect();
    let mut documented: Vec<&str> = Vec::new();
    for arg in &fn_docs.arguments {
        if !names.contains(&arg.name) {
            let known = if names.is_empty() {
                "it has no parameters".to_owned()
            } else {
                format!(
                    "its parameters are {}",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            cx.error_at(
                arg.span,
                format!(
                    "`# Arguments` describes `{}`, which is not a parameter of `{fn_name}` ({known})",
                    arg.name
                ),
            );
        } else if documented.contains(&arg.name.as_str()) {
            cx.error_at(
                arg.span,
                format!("`# Arguments` describes `{}` twice", arg.name),
            );
        } else {
            documented.push(&arg.name);
        }
    }

    raw.into_iter()
        .zip(names)
        .map(|(param, name)| {
            let kind = match (param.options.flatten, param.options.default) {
                (Some(_), _) => ParamKind::Flatten,
                (None, Some(ParamDefault::Expr(expr))) => ParamKind::DefaultExpr(expr),
                (None, Some(ParamDefault::Trait(_))) => ParamKind::DefaultTrait,
                (None, None) => ParamKind::Plain,
            };
            let description = match kind {
                ParamKind::Flatten => None,
                _ => param.doc.or_else(|| {
                    fn_docs
                        .arguments
                        .iter()
                        .find(|a| a.name == name && !a.text.is_empty())
                        .map(|a| a.text.clone())
                }),
            };
            // A malformed `# Arguments` line naming the parameter is already an error.
            let reported = fn_docs
                .problems
                .iter()
                .any(|p| p.name.as_deref() == Some(name.as_str()));
            if description.is_none() && !matches!(kind, ParamKind::Flatten) && !reported {
                cx.error_spanned_by(
                    &param.ident,
                    format!(
                        "parameter `{name}` has no description: add a doc comment on it \
                         (`/// What {name} is.`) or an entry under `# Arguments` in the \
                         function's doc comment (``* `{name}` - What {name} is.``)"
                    ),
                );
            }
            Param {
                name,
                ty: param.ty,
                description,
                kind,
            }
        })
        .collect()
}

/// The head of an item (`struct Foo`, `impl`, `mod m`, …): where a "not a function" error goes.
pub(crate) fn item_head(item: &syn::Item) -> TokenStream {
    use syn::Item;
    let (keyword, ident): (TokenStream, Option<&Ident>) = match item {
        Item::Struct(i) => (i.struct_token.to_token_stream(), Some(&i.ident)),
        Item::Enum(i) => (i.enum_token.to_token_stream(), Some(&i.ident)),
        Item::Union(i) => (i.union_token.to_token_stream(), Some(&i.ident)),
        Item::Const(i) => (i.const_token.to_token_stream(), Some(&i.ident)),
        Item::Static(i) => (i.static_token.to_token_stream(), Some(&i.ident)),
        Item::Mod(i) => (i.mod_token.to_token_stream(), Some(&i.ident)),
        Item::Trait(i) => (i.trait_token.to_token_stream(), Some(&i.ident)),
        Item::Type(i) => (i.type_token.to_token_stream(), Some(&i.ident)),
        Item::Impl(i) => (i.impl_token.to_token_stream(), None),
        Item::Use(i) => (i.use_token.to_token_stream(), None),
        Item::Macro(i) => (i.mac.path.to_token_stream(), None),
        _ => return item.to_token_stream(),
    };
    quote!(#keyword #ident)
}
