//! The options of `#[tool(...)]` and `#[agent(...)]` on a function and on a parameter.
//!
//! Both are comma-separated `key`, `key = value` lists. Parsing never stops at the first
//! problem: an unknown or duplicated key, or a bad value, is recorded in the [`Ctxt`] with the
//! span of the offending token, the rest of that entry is skipped, and parsing goes on with the
//! next entry.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, LitBool, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;

/// Which attribute is being expanded: its name appears in error messages and in the parameter
/// attributes it reads (`#[tool(default)]`, `#[agent(default)]`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Macro {
    Tool,
    Agent,
}

impl Macro {
    /// The attribute's name, `tool` or `agent`.
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Macro::Tool => "tool",
            Macro::Agent => "agent",
        }
    }

    /// The article before the attribute's name: "a `#[tool]`", "an `#[agent]`".
    pub(crate) fn article(self) -> &'static str {
        match self {
            Macro::Tool => "a",
            Macro::Agent => "an",
        }
    }
}

/// A value with the span of the tokens it came from.
#[derive(Clone)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// The options of the `#[tool(...)]` attribute on a function.
#[derive(Default)]
pub(crate) struct AttrOptions {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) parallel: Option<bool>,
    pub(crate) max_output: Option<usize>,
    /// The timeout in milliseconds.
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) viewer: Option<Expr>,
    pub(crate) canonical: Option<Expr>,
    pub(crate) krate: Option<Path>,
}

const TOOL_OPTIONS: &str =
    "`name`, `description`, `parallel`, `max_output`, `timeout`, `viewer`, `canonical`, `crate`";

/// Parses the arguments of `#[tool(...)]` on a function.
pub(crate) fn parse_tool_options(cx: &Ctxt, args: TokenStream) -> AttrOptions {
    let mut options = AttrOptions::default();
    let mut seen: Vec<String> = Vec::new();
    parse_entries(cx, args, |key, input| {
        let key_name = key.to_string();
        if !is_one_of(&key_name, TOOL_OPTIONS) {
            return Err(syn::Error::new(
                key.span(),
                format!("unknown `#[tool]` option `{key_name}`; expected one of {TOOL_OPTIONS}"),
            ));
        }
        check_duplicate(Macro::Tool, &mut seen, key)?;
        match key_name.as_str() {
            "name" => options.name = Some(string_value(key, input)?),
            "description" => options.description = Some(description(Macro::Tool, key, input)?),
            "parallel" => options.parallel = Some(flag(input)?),
            "max_output" => {
                let lit: LitInt = value_of(key, input)?;
                options.max_output = Some(lit.base10_parse::<usize>().map_err(|_| {
                    syn::Error::new(
                        lit.span(),
                        "`max_output` is a number of bytes: a non-negative integer (0 never truncates)",
                    )
                })?);
            }
            "timeout" => {
                let lit: LitStr = value_of(key, input)?;
                let ms = parse_duration_ms(&lit.value()).ok_or_else(|| {
                    syn::Error::new(
                        lit.span(),
                        "`timeout` is a positive whole number with a unit: \"500ms\", \"30s\", \"5m\" or \"1h\"",
                    )
                })?;
                options.timeout_ms = Some(ms);
            }
            "viewer" => options.viewer = Some(value_of(key, input)?),
            "canonical" => options.canonical = Some(value_of(key, input)?),
            _ => options.krate = Some(value_with(key, input, Path::parse_mod_style)?),
        }
        Ok(())
    });
    options
}

/// Parses `= "text"`.
fn string_value(key: &Ident, input: ParseStream<'_>) -> syn::Result<Spanned<String>> {
    let lit: LitStr = value_of(key, input)?;
    Ok(Spanned {
        value: lit.value(),
        span: lit.span(),
    })
}

/// Parses `= "a description"`, which must not be blank.
fn description(m: Macro, key: &Ident, input: ParseStream<'_>) -> syn::Result<Spanned<String>> {
    let text = string_value(key, input)?;
    if text.value.trim().is_empty() {
        return Err(syn::Error::new(
            text.span,
            format!("the {} description must not be empty", m.attr()),
        ));
    }
    Ok(text)
}

/// The options of the `#[agent(...)]` attribute on a function.
#[derive(Default)]
pub(crate) struct AgentOptions {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) krate: Option<Path>,
}

const AGENT_OPTIONS: &str = "`name`, `description`, `crate`";

/// Parses the arguments of `#[agent(...)]` on a function.
pub(crate) fn parse_agent_options(cx: &Ctxt, args: TokenStream) -> AgentOptions {
    let mut options = AgentOptions::default();
    let mut seen: Vec<String> = Vec::new();
    parse_entries(cx, args, |key, input| {
        let key_name = key.to_string();
        if !is_one_of(&key_name, AGENT_OPTIONS) {
            return Err(syn::Error::new(
                key.span(),
                format!("unknown `#[agent]` option `{key_name}`; expected one of {AGENT_OPTIONS}"),
            ));
        }
        check_duplicate(Macro::Agent, &mut seen, key)?;
        match key_name.as_str() {
            "name" => {
                let name = string_value(key, input)?;
                if name.value.trim().is_empty() {
                    return Err(syn::Error::new(
                        name.span,
                        "the agent name must not be empty",
                    ));
                }
                options.name = Some(name);
            }
            "description" => options.description = Some(description(Macro::Agent, key, input)?),
            _ => options.krate = Some(value_with(key, input, Path::parse_mod_style)?),
        }
        Ok(())
    });
    options
}

/// How a parameter gets its value when the model leaves it out.
#[derive(Clone)]
pub(crate) enum ParamDefault {
    /// `#[tool(default)]`: `Default::default()`, not shown in the schema.
    Trait(Span),
    /// `#[tool(default = expr)]`: `expr`, shown in the schema as `default`.
    Expr(Box<Expr>),
}

/// The options of `#[tool(...)]` (or `#[agent(...)]`) on a parameter.
#[derive(Default)]
pub(crate) struct ParamOptions {
    /// `#[tool(flatten)]`: the struct's fields are the parameters.
    pub(crate) flatten: Option<Span>,
    pub(crate) default: Option<ParamDefault>,
}

const PARAM_OPTIONS: &str = "`flatten`, `default`";
/// An agent's arguments are always taken one by one: no `flatten`.
const AGENT_PARAM_OPTIONS: &str = "`default`";

/// Parses the arguments of one `#[tool(...)]` (or `#[agent(...)]`) attribute on a parameter
/// into `options`.
pub(crate) fn parse_param_options(
    cx: &Ctxt,
    m: Macro,
    args: TokenStream,
    options: &mut ParamOptions,
) {
    let allowed = match m {
        Macro::Tool => PARAM_OPTIONS,
        Macro::Agent => AGENT_PARAM_OPTIONS,
    };
    let mut seen: Vec<String> = Vec::new();
    if options.flatten.is_some() {
        seen.push("flatten".into());
    }
    if options.default.is_some() {
        seen.push("default".into());
    }
    parse_entries(cx, args, |key, input| {
        let key_name = key.to_string();
        if !is_one_of(&key_name, allowed) {
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "unknown `#[{}]` parameter option `{key_name}`; expected one of {allowed}",
                    m.attr()
                ),
            ));
        }
        check_duplicate(m, &mut seen, key)?;
        if key_name == "flatten" {
            options.flatten = Some(key.span());
        } else if input.peek(Token![=]) {
            let expr: Expr = value_of(key, input)?;
            options.default = Some(ParamDefault::Expr(Box::new(expr)));
        } else {
            options.default = Some(ParamDefault::Trait(key.span()));
        }
        Ok(())
    });
}

fn is_one_of(key: &str, list: &str) -> bool {
    list.split(", ").any(|k| k.trim_matches('`') == key)
}

fn check_duplicate(m: Macro, seen: &mut Vec<String>, key: &Ident) -> syn::Result<()> {
    let name = key.to_string();
    if seen.contains(&name) {
        return Err(syn::Error::new(
            key.span(),
            format!("duplicate `#[{}]` option `{name}`", m.attr()),
        ));
    }
    seen.push(name);
    Ok(())
}

/// Parses `key`, `key = true` or `key = false`.
fn flag(input: ParseStream<'_>) -> syn::Result<bool> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        Ok(input.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

/// Parses `= value`.
fn value_of<T: syn::parse::Parse>(key: &Ident, input: ParseStream<'_>) -> syn::Result<T> {
    value_with(key, input, T::parse)
}

fn value_with<T>(
    key: &Ident,
    input: ParseStream<'_>,
    parser: fn(ParseStream<'_>) -> syn::Result<T>,
) -> syn::Result<T> {
    if !input.peek(Token![=]) {
        return Err(syn::Error::new(
            key.span(),
            format!("expected a value: `{key} = ...`"),
        ));
    }
    input.parse::<Token![=]>()?;
    parser(input)
}

/// Runs `entry` for each `key …` entry of a comma-separated list. When `entry` fails, its error
/// is recorded and the rest of that entry is skipped.
fn parse_entries(
    cx: &Ctxt,
    tokens: TokenStream,
    mut entry: impl FnMut(&Ident, ParseStream<'_>) -> syn::Result<()>,
) {
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        while !input.is_empty() {
            let result = match input.call(Ident::parse_any) {
                Ok(key) => entry(&key, input).and_then(|()| {
                    if input.is_empty() || input.peek(Token![,]) {
                        Ok(())
                    } else {
                        Err(input.error("expected `,`"))
                    }
                }),
                Err(_) => Err(input.error("expected an option name")),
            };
            if let Err(error) = result {
                cx.syn_error(error);
                skip_to_comma(input)?;
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(())
    };
    if let Err(error) = parser.parse2(tokens) {
        cx.syn_error(error);
    }
}

/// Skips the token trees up to (not including) the next top-level comma.
fn skip_to_comma(input: ParseStream<'_>) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

/// `"500ms"`, `"30s"`, `"5m"`, `"1h"` → milliseconds. Zero and overflow are rejected.
pub(crate) fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(factor).filter(|ms| *ms > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        assert_eq!(parse_duration_ms("30s"), Some(30_000));
        assert_eq!(parse_duration_ms("5m"), Some(300_000));
        assert_eq!(parse_duration_ms("1h"), Some(3_600_000));
        assert_eq!(parse_duration_ms("0s"), None);
        assert_eq!(parse_duration_ms("30"), None);
        assert_eq!(parse_duration_ms("1.5s"), None);
        assert_eq!(parse_duration_ms("s"), None);
        assert_eq!(parse_duration_ms("30 sec"), None);
    }

    #[test]
    fn options_collect_every_error() {
        let cx = Ctxt::new();
        let options = parse_tool_options(
            &cx,
            quote::quote!(name = "a", bogus = 3, name = "b", parallel, timeout = "2s"),
        );
        assert_eq!(options.name.map(|n| n.value).as_deref(), Some("a"));
        assert_eq!(options.parallel, Some(true));
        assert_eq!(options.timeout_ms, Some(2_000));
        let message = cx
            .finish()
            .err()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>());
        let message = message.unwrap_or_default();
        assert_eq!(message.len(), 2, "{message:?}");
        assert!(message[0].contains("unknown `#[tool]` option `bogus`"));
        assert!(message[1].contains("duplicate `#[tool]` option `name`"));
    }
}
