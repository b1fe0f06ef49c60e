//! fathom's derives. `#[derive(Merge)]` makes the merge rules of a result's figures part of the
//! result's type: the struct's `#[merge(...)]` names each of its fields under the rule by which
//! hosts' values combine (`sum(ops, rows)`), or under `fields(...)` when the field's own type
//! says it, and a field named under none, or under two, does not compile.

use proc_macro::TokenStream;
use quote::quote;
use std::collections::BTreeMap;
use syn::{parse_macro_input, Data, DeriveInput, Fields, Ident};

/// The rules a struct may name fields under, by the `Rule` variant each is.
const RULES: &[(&str, &str)] = &[
    ("sum", "Sum"),
    ("max", "Max"),
    ("min", "Min"),
    ("by_ops", "ByOps"),
    ("first", "First"),
    ("median", "Median"),
];

/// Implements `fathom_api::combine::MergeRules` from the struct's
/// `#[merge(sum(a, b), max(c), fields(d), ...)]`: a rule (`sum`, `max`, `min`, `by_ops`,
/// `first`, `median`) for each field named under it and everything below it, or `fields` for
/// a field whose type (a struct, or an `Option` or map of one) declares its own. A flattened
/// field (`#[serde(flatten)]`) takes every key the others do not. Every field must be named
/// once.
#[proc_macro_derive(Merge, attributes(merge))]
pub fn derive_merge(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match arms(&input) {
        Ok(arms) => {
            let name = &input.ident;
            // A flattened field's arm takes every other key: it goes last, in place of none.
            let (mut arms, rest): (Vec<_>, Vec<_>) = arms.into_iter().partition(|(wild, _)| !wild);
            let none = quote! { _ => ::core::option::Option::None, };
            let last = rest.into_iter().next().map_or(none, |(_, arm)| arm);
            arms.push((true, last));
            let arms = arms.into_iter().map(|(_, arm)| arm);
            quote! {
                impl ::fathom_api::combine::MergeRules for #name {
                    fn rule(path: &[&str]) -> ::core::option::Option<::fathom_api::combine::Rule> {
                        let Some((first, rest)) = path.split_first() else {
                            return ::core::option::Option::Some(::fathom_api::combine::Rule::First);
                        };
                        let _ = rest;
                        match *first {
                            #(#arms)*
                        }
                    }
                }
            }
            .into()
        }
        Err(e) => e.to_compile_error().into(),
    }
}

/// A match arm per field: its name to its rule, or to its type's rules for the rest; true for
/// the arm of a flattened field, which takes any key.
fn arms(input: &DeriveInput) -> syn::Result<Vec<(bool, proc_macro2::TokenStream)>> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            input,
            "Merge is derived for structs",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(input, "Merge needs named fields"));
    };
    let mut said = declared(input)?;
    let arms = fields
        .named
        .iter()
        .map(|f| {
            let ident = f.ident.as_ref().expect("named fields");
            let key = ident.to_string();
            let rule = said.remove(&key).ok_or_else(|| {
                syn::Error::new_spanned(
                    ident,
                    format!(
                        "field `{key}` has no merge rule: name it in the struct's \
                         #[merge(sum(..) | max(..) | min(..) | by_ops(..) | first(..) | \
                         median(..) | fields(..))]"
                    ),
                )
            })?;
            let ty = &f.ty;
            // A flattened field's keys sit beside the others: any key not a field's is its.
            let wild = flattened(f);
            let key = if wild {
                quote! { _ }
            } else {
                quote! { #key }
            };
            let arm = match rule.as_str() {
                "fields" => {
                    quote! { #key => <#ty as ::fathom_api::combine::MergeRules>::rule(rest), }
                }
                word => {
                    let variant = RULES
                        .iter()
                        .find(|(n, _)| *n == word)
                        .map(|(_, v)| Ident::new(v, ident.span()))
                        .expect("checked where the attribute was read");
                    quote! { #key => ::core::option::Option::Some(::fathom_api::combine::Rule::#variant), }
                }
            };
            Ok((wild, arm))
        })
        .collect::<syn::Result<Vec<_>>>()?;
    if let Some(name) = said.keys().next() {
        return Err(syn::Error::new_spanned(
            &input.ident,
            format!("#[merge] names `{name}`, which is not a field"),
        ));
    }
    Ok(arms)
}

/// The rule the struct's `#[merge(...)]` names each field under.
fn declared(input: &DeriveInput) -> syn::Result<BTreeMap<String, String>> {
    let mut said = BTreeMap::new();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("merge")) {
        attr.parse_nested_meta(|rule| {
            let word = rule
                .path
                .get_ident()
                .map(|i| i.to_string())
                .filter(|w| w == "fields" || RULES.iter().any(|(n, _)| n == w))
                .ok_or_else(|| rule.error("not a merge rule"))?;
            rule.parse_nested_meta(|field| {
                let name = field
                    .path
                    .get_ident()
                    .ok_or_else(|| field.error("expected a field's name"))?
                    .to_string();
                if said.insert(name.clone(), word.clone()).is_some() {
                    return Err(field.error(format!("`{name}` is named under two rules")));
                }
                Ok(())
            })
        })?;
    }
    Ok(said)
}

/// True for a field serde flattens into its parent (`#[serde(flatten)]`).
fn flattened(f: &syn::Field) -> bool {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .any(|a| {
            let mut flat = false;
            let _ = a.parse_nested_meta(|meta| {
                flat |= meta.path.is_ident("flatten");
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
            });
            flat
        })
}
