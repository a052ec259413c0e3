//! The parameters of a `#[tool]` or `#[agent]` function: taken apart (their `#[tool(...)]` or
//! `#[agent(...)]` options and doc comments read and stripped), checked, and described from
//! their own doc comments or the function's `# Arguments` section. Both attributes build their
//! parameters' schema from the result, so both follow the same rules.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Pat, PatType, Type};

use crate::attr::{self, Macro, ParamDefault, ParamOptions};
use crate::ctxt::Ctxt;
use crate::docs::{self, FnDocs};

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

/// A parameter as written, before descriptions are attached.
pub(crate) struct RawParam {
    ident: Ident,
    ty: Type,
    options: ParamOptions,
    doc: Option<String>,
}

/// Takes the typed parameters apart, stripping their `#[tool]` (or `#[agent]`) and doc
/// attributes.
pub(crate) fn collect_params<'a>(
    cx: &Ctxt,
    m: Macro,
    inputs: impl IntoIterator<Item = &'a mut PatType>,
) -> Vec<RawParam> {
    let attr_name = m.attr();
    let a = m.article();
    let mut params = Vec::new();
    let mut flatten_seen = false;
    for pat_type in inputs {
        let mut options = ParamOptions::default();
        let doc_lines = docs::doc_lines(&pat_type.attrs);
        let mut kept = Vec::with_capacity(pat_type.attrs.len());
        for attr in std::mem::take(&mut pat_type.attrs) {
            if attr.path().is_ident(attr_name) {
                match attr.meta.require_list() {
                    Ok(list) => attr::parse_param_options(cx, m, list.tokens.clone(), &mut options),
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

        let plain_name = format!(
            "{a} `#[{attr_name}]` parameter must be a plain name such as `query: String`: the \
             name is the parameter's name in the JSON arguments"
        );
        let ident = match &*pat_type.pat {
            Pat::Ident(pat) => {
                if pat.by_ref.is_some() || pat.subpat.is_some() {
                    // Still a named parameter: its `# Arguments` entry is not an error too.
                    cx.error_spanned_by(&pat_type.pat, &plain_name);
                }
                pat.ident.clone()
            }
            other => {
                cx.error_spanned_by(other, &plain_name);
                continue;
            }
        };
        check_param_type(cx, m, &pat_type.ty);

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
fn check_param_type(cx: &Ctxt, m: Macro, ty: &Type) {
    let attr_name = m.attr();
    let a = m.article();
    match ty {
        Type::ImplTrait(_) => cx.error_spanned_by(
            ty,
            format!(
                "`impl Trait` cannot be {a} `#[{attr_name}]` parameter type: the argument is \
                 deserialized from JSON, so it needs a concrete type"
            ),
        ),
        Type::Reference(_) => cx.error_spanned_by(
            ty,
            format!(
                "{a} `#[{attr_name}]` parameter cannot be a reference: the argument is \
                 deserialized from JSON and must own its data (use `String` for `&str`, \
                 `Vec<T>` for `&[T]`)"
            ),
        ),
        _ if contains_impl(ty.to_token_stream()) => cx.error_spanned_by(
            ty,
            format!(
                "`impl Trait` cannot appear in {a} `#[{attr_name}]` parameter type: the argument \
                 is deserialized from JSON, so it needs a concrete type"
            ),
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
/// `# Arguments` entries naming one of `unschemed` (inputs that are not in the schema, such as
/// an agent's state) are allowed and left out.
pub(crate) fn describe_params(
    cx: &Ctxt,
    fn_name: &str,
    raw: Vec<RawParam>,
    unschemed: &[String],
    fn_docs: &FnDocs,
) -> Vec<Param> {
    for problem in &fn_docs.problems {
        cx.error_at(problem.span, &problem.message);
    }
    let names: Vec<String> = raw.iter().map(|p| p.ident.unraw().to_string()).collect();
    let mut documented: Vec<&str> = Vec::new();
    for arg in &fn_docs.arguments {
        if unschemed.contains(&arg.name) {
            continue;
        }
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
