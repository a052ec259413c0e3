//! `#[tool_input]`: a tool's struct or enum parameter derives `Deserialize` and `JsonSchema`
//! through the runtime crate's re-exports of `serde` and `schemars`, so a user of the
//! `actuator` facade needs neither crate in their `Cargo.toml`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Item, Path, Token};

use crate::model::{TOOL_CORE, default_krate, item_head};

/// `#[tool_input]` or `#[tool_input(crate = path)]`.
struct Args {
    krate: Option<Path>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Ok(Args { krate: None });
        }
        let key: Token![crate] = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "unknown `tool_input` option: the only option is `crate = path`",
            )
        })?;
        input.parse::<Token![=]>()?;
        let path = Path::parse_mod_style(input)?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after `crate = path`"));
        }
        let _ = key;
        Ok(Args { krate: Some(path) })
    }
}

/// Expands `#[tool_input]` on `input`.
pub(crate) fn tool_input(args: TokenStream, input: TokenStream) -> TokenStream {
    let args = match syn::parse2::<Args>(args) {
        Ok(args) => args,
        Err(error) => {
            let error = error.into_compile_error();
            return quote!(#input #error);
        }
    };
    let item = match syn::parse2::<Item>(input.clone()) {
        Ok(item @ (Item::Struct(_) | Item::Enum(_))) => item,
        Ok(other) => {
            let error = syn::Error::new_spanned(
                item_head(&other),
                "`#[tool_input]` goes on a struct or an enum (a tool's parameter type)",
            )
            .into_compile_error();
            return quote!(#other #error);
        }
        // Not an item: let the compiler report the syntax error on the user's tokens.
        Err(_) => return input,
    };
    let krate = args.krate.unwrap_or_else(|| default_krate(&TOOL_CORE));
    let serde = quote!(#krate::serde).to_string().replace(' ', "");
    let schemars = quote!(#krate::schemars).to_string().replace(' ', "");
    let serde_lit = syn::LitStr::new(&serde, Span::call_site());
    let schemars_lit = syn::LitStr::new(&schemars, Span::call_site());
    quote! {
        #[derive(#krate::serde::Deserialize, #krate::schemars::JsonSchema)]
        #[serde(crate = #serde_lit)]
        #[schemars(crate = #schemars_lit)]
        #item
    }
}
