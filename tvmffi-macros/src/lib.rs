//! The procedural macros of `tvmffi`: [`macro@export`] turns a typed Rust
//! function into a TVM-FFI export, [`macro@global`] into a global registered
//! when the library loads, [`macro@Object`] a struct into a reflected object
//! type. Use them through `tvmffi`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{
    Attribute, Data, DeriveInput, Error, Expr, Fields, FnArg, ItemFn, LitStr, ReturnType,
    parse_macro_input,
};

/// Exports a function as `__tvm_ffi_<name>` (the reference's
/// `TVM_FFI_DLL_EXPORT_TYPED_FUNC`), with `__tvm_ffi__doc_<name>` (its doc
/// comment) and `__tvm_ffi__metadata_<name>` (its type schema).
/// `#[export(name = "other")]` exports it under another name.
///
/// Parameters are any `tvmffi::FromAny` type (`i64`, `&str`, `Slice<f32>`,
/// `Tensor`, `ObjectRef<T>`, `Vec<T>`, ...); the result is any
/// `tvmffi::IntoResult` (a value, `()` or a `Result`).
#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func = parse_macro_input!(item as ItemFn);
    let name = if attr.is_empty() {
        func.sig.ident.to_string()
    } else {
        match parse_export_name(attr) {
            Ok(n) => n,
            Err(e) => return e.to_compile_error().into(),
        }
    };
    expand_export(&func, &name)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// Registers a function as the global `name` when the library (or program)
/// is loaded: `tvm_ffi.get_global_func(name)` finds it right after
/// `tvm_ffi.load_module`, with no registration call. Parameters and result
/// as for [`macro@export`].
///
/// ```ignore
/// #[tvmffi::global("my_ext.scale")]
/// fn scale(x: f64, by: f64) -> f64 {
///     x * by
/// }
/// ```
///
/// A later load of a library registering the same name replaces the
/// function. The library stays loaded for the life of the process (the
/// global's code must outlive every reference to it).
#[proc_macro_attribute]
pub fn global(attr: TokenStream, item: TokenStream) -> TokenStream {
    let name = parse_macro_input!(attr as LitStr).value();
    let func = parse_macro_input!(item as ItemFn);
    expand_global(&func, &name)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

fn expand_global(func: &ItemFn, name: &str) -> syn::Result<Tokens> {
    let types = plain_fn_params(func, "#[global]")?;
    let ident = &func.sig.ident;
    let ret = return_type(func);
    let signature = signature(name, &types, &ret);
    let call = call_with_args(&quote!(#ident), &types);
    let register = at_load(quote!({
        ::tvmffi::__private::register_global_at_load(
            #name,
            ::tvmffi::Function::from_packed(#signature, |args: &::tvmffi::__private::Args<'_>| #call),
        )
    }));
    Ok(quote! {
        #func
        #register
    })
}

fn parse_export_name(attr: TokenStream) -> syn::Result<String> {
    let mut name = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            name = Some(meta.value()?.parse::<LitStr>()?.value());
            Ok(())
        } else {
            Err(meta.error("expected `name = \"...\"`"))
        }
    });
    syn::parse::Parser::parse(parser, attr)?;
    name.ok_or_else(|| Error::new(Span::call_site(), "expected `name = \"...\"`"))
}

/// The parameter types of a plain, safe, synchronous, non-generic free
/// function, which `what` (`#[export]`, `#[global]`) turns into a TVM-FFI
/// function.
fn plain_fn_params(func: &ItemFn, what: &str) -> syn::Result<Vec<syn::Type>> {
    if !func.sig.generics.params.is_empty() {
        return Err(Error::new(
            func.sig.generics.span(),
            format!("{what} functions cannot be generic"),
        ));
    }
    if func.sig.asyncness.is_some() || func.sig.unsafety.is_some() {
        return Err(Error::new(
            func.sig.span(),
            format!("{what} functions are plain, safe, synchronous functions"),
        ));
    }
    let mut types = Vec::new();
    for arg in &func.sig.inputs {
        match arg {
            FnArg::Typed(t) => types.push((*t.ty).clone()),
            FnArg::Receiver(r) => {
                return Err(Error::new(
                    r.span(),
                    format!("{what} functions take no `self`"),
                ));
            }
        }
    }
    Ok(types)
}

/// The function's result type (`()` when it declares none).
fn return_type(func: &ItemFn) -> Tokens {
    match &func.sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, t) => quote!(#t),
    }
}

fn expand_export(func: &ItemFn, name: &str) -> syn::Result<Tokens> {
    let types = plain_fn_params(func, "#[export]")?;
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(Error::new(
            func.sig.ident.span(),
            "an export name is letters, digits and `_`",
        ));
    }
    let ident = &func.sig.ident;
    let ret = return_type(func);
    let signature = signature(name, &types, &ret);
    let call = call_with_args(&quote!(#ident), &types);
    let call_sym = format_ident!("__tvm_ffi_{}", name);
    let doc_sym = format_ident!("__tvm_ffi__doc_{}", name);
    let meta_sym = format_ident!("__tvm_ffi__metadata_{}", name);
    let doc = doc_text(&func.attrs);
    let doc_export = (!doc.is_empty()).then(|| {
        quote! {
            #[unsafe(no_mangle)]
            unsafe extern "C" fn #doc_sym(
                _: *mut ::core::ffi::c_void, _: *const ::tvmffi::__private::RawAny, _: i32,
                result: *mut ::tvmffi::__private::RawAny,
            ) -> i32 {
                // SAFETY: the runtime passes a writable result.
                unsafe { ::tvmffi::__private::return_text(result, #doc) }
            }
        }
    });
    Ok(quote! {
        #func
        const _: () = {
            static SIGNATURE: ::tvmffi::__private::Signature = #signature;
            #[unsafe(no_mangle)]
            unsafe extern "C" fn #call_sym(
                _: *mut ::core::ffi::c_void, args: *const ::tvmffi::__private::RawAny, num_args: i32,
                result: *mut ::tvmffi::__private::RawAny,
            ) -> i32 {
                // SAFETY: the runtime calls with the safe-call contract
                // (`num_args` valid values, a writable result).
                unsafe {
                    ::tvmffi::__private::call_packed(&SIGNATURE, args, num_args, result, |args| #call)
                }
            }
            #doc_export
            #[unsafe(no_mangle)]
            unsafe extern "C" fn #meta_sym(
                _: *mut ::core::ffi::c_void, _: *const ::tvmffi::__private::RawAny, _: i32,
                result: *mut ::tvmffi::__private::RawAny,
            ) -> i32 {
                // SAFETY: the runtime passes a writable result.
                unsafe { ::tvmffi::__private::return_metadata(result, &SIGNATURE) }
            }
        };
    })
}

/// `Signature::new(name, params, ret)` of a function of these types.
fn signature(name: &str, types: &[syn::Type], ret: &Tokens) -> Tokens {
    quote! {
        ::tvmffi::__private::Signature::new(
            #name,
            || ::std::vec![#(<#types as ::tvmffi::FromAny<'_>>::schema()),*],
            || <#ret as ::tvmffi::IntoResult>::schema(),
        )
    }
}

/// The body run per call on `args`: checks the count, converts each
/// argument to its type and calls `callee`.
fn call_with_args(callee: &Tokens, types: &[syn::Type]) -> Tokens {
    let count = types.len();
    let index = 0..count;
    quote! {{
        args.expect_len(#count)?;
        ::tvmffi::IntoResult::into_result(#callee(#(args.get::<#types>(#index)?),*))
    }}
}

/// Makes a `tvmffi::Function` of a closure, like `Function::from_typed`,
/// but its parameters may borrow from the arguments (`&str`,
/// `tvmffi::Slice<T>`). Every parameter and the result are annotated:
///
/// ```ignore
/// let shout = tvmffi::function!("demo.shout", |s: &str, times: i64| -> String {
///     s.to_uppercase().repeat(times as usize)
/// })?;
/// ```
#[proc_macro]
pub fn function(input: TokenStream) -> TokenStream {
    let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
    let items = parse_macro_input!(input with parser);
    expand_function(items.into_iter().collect())
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

fn expand_function(items: Vec<Expr>) -> syn::Result<Tokens> {
    let [
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(name),
            ..
        }),
        Expr::Closure(closure),
    ] = items.as_slice()
    else {
        return Err(Error::new(
            Span::call_site(),
            "expected `function!(\"name\", |a: T, ..| -> R { .. })`",
        ));
    };
    let mut types = Vec::new();
    for input in &closure.inputs {
        match input {
            syn::Pat::Type(t) => types.push((*t.ty).clone()),
            other => {
                return Err(Error::new(
                    other.span(),
                    "annotate each parameter's type (`x: i64`)",
                ));
            }
        }
    }
    let ReturnType::Type(_, ret) = &closure.output else {
        return Err(Error::new(
            closure.span(),
            "annotate the closure's result (`-> T`)",
        ));
    };
    let signature = signature(&name.value(), &types, &quote!(#ret));
    let call = call_with_args(&quote!(callee), &types);
    Ok(quote! {{
        let callee = #closure;
        ::tvmffi::Function::from_packed(#signature, move |args: &::tvmffi::__private::Args<'_>| #call)
    }})
}

/// The doc comment, one line per `///` line, without rustdoc's leading space.
fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.strip_prefix(' ').map(str::to_owned).unwrap_or(l))
        .collect();
    lines.join("\n")
}

/// Makes a struct a TVM-FFI object type: `tvmffi::ObjectRef::new(value)`
/// builds one, and the runtime sees its type key (`#[type_key = "..."]`)
/// and every named field (its doc comment, `#[field(default = expr)]`,
/// `#[field(skip)]` to keep one Rust-only). Fields are read-only for other
/// languages unless their type is `tvmffi::Writable<T>`. The struct also
/// implements `Default` (the runtime builds objects from it, then sets
/// the fields). The type is registered when the library is loaded.
#[proc_macro_derive(Object, attributes(type_key, field))]
pub fn derive_object(item: TokenStream) -> TokenStream {
    let input = parse_macro_input!(item as DeriveInput);
    expand_object(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

fn expand_object(input: &DeriveInput) -> syn::Result<Tokens> {
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(Error::new(
            input.generics.span(),
            "object types cannot be generic",
        ));
    }
    let mut key = None;
    for a in input.attrs.iter().filter(|a| a.path().is_ident("type_key")) {
        let syn::Meta::NameValue(nv) = &a.meta else {
            return Err(Error::new(
                a.span(),
                "expected #[type_key = \"module.Name\"]",
            ));
        };
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        else {
            return Err(Error::new(nv.value.span(), "expected a string"));
        };
        key = Some(s.value());
    }
    let key = key.ok_or_else(|| {
        Error::new(
            ident.span(),
            "#[derive(Object)] needs #[type_key = \"module.Name\"]",
        )
    })?;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new(
            ident.span(),
            "#[derive(Object)] applies to structs",
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(Error::new(
            ident.span(),
            "#[derive(Object)] needs named fields",
        ));
    };
    let mut specs = Vec::new();
    for f in &fields.named {
        let (mut skip, mut default) = (false, None::<Expr>);
        for a in f.attrs.iter().filter(|a| a.path().is_ident("field")) {
            a.parse_nested_meta(|meta| {
                if meta.path.is_ident("skip") {
                    skip = true;
                } else if meta.path.is_ident("default") {
                    default = Some(meta.value()?.parse()?);
                } else {
                    return Err(meta.error("expected `skip` or `default = expr`"));
                }
                Ok(())
            })?;
        }
        if skip {
            continue;
        }
        let fname = f.ident.as_ref().expect("named field");
        let fty = &f.ty;
        let name = fname.to_string();
        let doc = doc_text(&f.attrs);
        let with_default =
            default.map(|d| quote!(.with_default(|| ::tvmffi::IntoAny::into_any(#d))));
        specs.push(quote! {
            ::tvmffi::__private::FieldSpec::of::<#fty>(
                #name, #doc,
                ::tvmffi::__private::value_offset::<Self>() + ::core::mem::offset_of!(Self, #fname),
            ) #with_default
        });
    }
    let at_load = at_load(quote!({
        let _ = <#ident as ::tvmffi::ObjectType>::type_index();
    }));
    Ok(quote! {
        impl ::tvmffi::ObjectType for #ident {
            const TYPE_KEY: &'static str = #key;
            fn fields() -> ::std::vec::Vec<::tvmffi::__private::FieldSpec> {
                ::std::vec![#(#specs),*]
            }
            fn type_index() -> ::tvmffi::Result<i32> {
                static REGISTRATION: ::tvmffi::__private::Registration = ::tvmffi::__private::Registration::new();
                ::tvmffi::__private::registered::<Self>(&REGISTRATION)
            }
        }
        // Registers the type when the library (or program) is loaded,
        // before any language looks its key up.
        #at_load
    })
}

/// A static initializer (the system's list of functions run when the
/// library or program is loaded) that runs `body`, a block, with panics
/// contained.
fn at_load(body: Tokens) -> Tokens {
    quote! {
        const _: () = {
            #[used]
            // The sections of tvm-ffi-rs's `platform::at_load`, spelled alike.
            #[cfg_attr(not(any(target_vendor = "apple", windows)), unsafe(link_section = ".init_array"))]
            #[cfg_attr(target_vendor = "apple", unsafe(link_section = "__DATA,__mod_init_func"))]
            #[cfg_attr(windows, unsafe(link_section = ".CRT$XCU"))]
            static RUN_AT_LOAD: extern "C" fn() = {
                extern "C" fn run_at_load() {
                    let _ = ::std::panic::catch_unwind(|| #body);
                }
                run_at_load
            };
        };
    }
}
