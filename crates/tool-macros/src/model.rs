//! Validation: turns the `#[tool]` function and its attributes into a [`Tool`], the checked
//! description of what to generate. Every problem is recorded in the [`Ctxt`] on the user's
//! token it concerns; a [`Tool`] is returned even then, so that a stub constructor can still be
//! generated and the user sees the real error, not a cascade of "cannot find `add_tool`".
//!
//! The checks of the signature and the receiver, the path to the runtime crate and the
//! "not a function" span are shared with `#[agent]` (see `agent_model`).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;
use syn::{
    Attribute, Expr, FnArg, Ident, ItemFn, Path, ReceiverKind, ReturnType, Safety, Visibility,
};

use crate::attr::{self, Macro};
use crate::ctxt::Ctxt;
use crate::docs;
pub(crate) use crate::params::{Param, ParamKind};
use crate::params::{collect_params, describe_params};

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
    /// The tool's canonical arguments (`canonical = path::to_fn`).
    pub(crate) canonical: Option<Expr>,
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

/// Where a runtime crate is: its package (`actuator-tool-core`), its library name
/// (`actuator_tool_core`) and its module in the `actuator` facade (`tool_core`).
pub(crate) struct Runtime {
    pub(crate) package: &'static str,
    pub(crate) lib: &'static str,
    pub(crate) facade_module: &'static str,
}

/// `#[tool]`'s runtime crate.
pub(crate) const TOOL_CORE: Runtime = Runtime {
    package: "actuator-tool-core",
    lib: "actuator_tool_core",
    facade_module: "tool_core",
};

/// The default path to a runtime crate: the crate itself when the calling crate depends on it,
/// else the `actuator` facade's re-export, found in the caller's `Cargo.toml` (so that users of
/// the facade need no `crate = ...`).
pub(crate) fn default_krate(runtime: &Runtime) -> Path {
    use proc_macro_crate::{FoundCrate, crate_name};
    // `Itself` also answers for the package's tests and examples, which are separate crates.
    let is_lib = |lib: &str| std::env::var("CARGO_CRATE_NAME").is_ok_and(|c| c == lib);
    let ident = |name: &str| proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
    let module = ident(runtime.facade_module);
    match crate_name(runtime.package) {
        Ok(FoundCrate::Itself) if is_lib(runtime.lib) => syn::parse_quote!(crate),
        Ok(FoundCrate::Name(name)) => {
            let name = ident(&name);
            syn::parse_quote!(::#name)
        }
        _ => match crate_name("actuator") {
            Ok(FoundCrate::Itself) if is_lib("actuator") => syn::parse_quote!(crate::#module),
            Ok(FoundCrate::Itself) => syn::parse_quote!(::actuator::#module),
            Ok(FoundCrate::Name(name)) => {
                let name = ident(&name);
                syn::parse_quote!(::#name::#module)
            }
            Err(_) => {
                let lib = ident(runtime.lib);
                syn::parse_quote!(::#lib)
            }
        },
    }
}

/// The function's `#[cfg]` attributes, repeated on its constructor.
pub(crate) fn cfg_attrs(func: &ItemFn) -> Vec<Attribute> {
    func.attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .cloned()
        .collect()
}

/// Validates `func` and its `#[tool(...)]` arguments. The function's parameters lose their
/// `#[tool(...)]` and doc attributes (which rustc would reject on parameters).
pub(crate) fn analyze(cx: &Ctxt, args: TokenStream, func: &mut ItemFn) -> Tool {
    let options = attr::parse_tool_options(cx, args);
    let sig = &func.sig;
    let fn_ident = sig.ident.clone();
    let fn_name = fn_ident.unraw().to_string();

    check_signature(cx, Macro::Tool, func);
    let method = check_receiver(cx, Macro::Tool, func);

    let inputs = func.sig.inputs.iter_mut().filter_map(|input| match input {
        FnArg::Typed(pat_type) => Some(pat_type),
        FnArg::Receiver(_) => None,
    });
    let params = collect_params(cx, Macro::Tool, inputs);
    let fn_docs = docs::parse_fn_docs(&docs::doc_lines(&func.attrs));
    let params = describe_params(cx, &fn_name, params, &[], &fn_docs);

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

    let cfgs = cfg_attrs(func);

    Tool {
        krate: options.krate.unwrap_or_else(|| default_krate(&TOOL_CORE)),
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
        canonical: options.canonical,
    }
}

/// Rejects what a tool or agent function cannot be: generic, `unsafe`, variadic.
pub(crate) fn check_signature(cx: &Ctxt, m: Macro, func: &ItemFn) {
    let attr_name = m.attr();
    let a = m.article();
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            format!(
                "{a} `#[{attr_name}]` function cannot be generic: the model calls it with JSON, so \
                 every parameter needs one concrete type"
            ),
        );
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(
            where_clause,
            format!(
                "{a} `#[{attr_name}]` function cannot have a `where` clause: every parameter needs \
                 one concrete type"
            ),
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        cx.error_spanned_by(
            token,
            format!(
                "{a} `#[{attr_name}]` function cannot be `unsafe`: a model's call cannot uphold \
                 its safety contract"
            ),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(
            variadic.dots,
            format!("{a} `#[{attr_name}]` function cannot be variadic"),
        );
    }
}

/// Checks the receiver: none (a free function) or `&self`. Returns whether there is one.
pub(crate) fn check_receiver(cx: &Ctxt, m: Macro, func: &ItemFn) -> bool {
    let Some(receiver) = func.sig.receiver() else {
        return false;
    };
    let attr_name = m.attr();
    let a = m.article();
    match &receiver.kind {
        ReceiverKind::Reference(_, _, None) => {}
        ReceiverKind::Reference(_, _, Some(_)) => cx.error_spanned_by(
            receiver,
            format!(
                "{a} `#[{attr_name}]` method cannot take `&mut self`: calls may run concurrently; \
                 take `&self` and keep mutable state behind a `Mutex` or an atomic"
            ),
        ),
        ReceiverKind::Value => cx.error_spanned_by(
            receiver,
            format!(
                "{a} `#[{attr_name}]` method cannot take `self` by value: the {attr_name} keeps \
                 the value in an `Arc` and calls the method many times; take `&self`"
            ),
        ),
        _ => cx.error_spanned_by(
            receiver,
            format!(
                "{a} `#[{attr_name}]` method must take `&self` (the {attr_name} keeps the value \
                 in an `Arc<Self>`)"
            ),
        ),
    }
    true
}

/// The head of an item (`struct Foo`, `impl`, `mod m`, …): where a "not a function" error goes.
pub(crate) fn item_head(item: &syn::Item) -> TokenStream {
    use syn::Item;
    let (keyword, ident): (TokenStream, Option<&Ident>) = match item {
        Item::Fn(i) => (i.sig.fn_token.to_token_stream(), Some(&i.sig.ident)),
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
