//! The C boundary through the rlib: panics become raised errors, ownership
//! moves as documented, and hostile values give errors rather than crashes.

use ::core::ptr::null_mut;
use tvm_ffi::abi::*;
use tvm_ffi::capi::*;
use tvm_ffi::runtime::take_raised;
use tvm_ffi::runtime::{Any, Error, Function};

/// Kind and message of the raised error (which is taken).
fn raised() -> (String, String) {
    let err = take_raised().expect("an error was raised");
    let cell = tvm_ffi::runtime::error_cell(&err).expect("an Error object");
    // SAFETY: the cell's arrays describe the error's own storage.
    let text = |a: TVMFFIByteArray| unsafe {
        String::from_utf8_lossy(tvm_ffi::runtime::byte_slice(a)).into_owned()
    };
    (text(cell.kind), text(cell.message))
}

#[test]
fn a_panic_in_a_function_becomes_an_internal_error() {
    let f = Function::from_closure(|_| -> tvm_ffi::runtime::Result<Any> { panic!("kaboom") });
    let mut result = TVMFFIAny::NONE;
    // SAFETY: a live function, no arguments, a writable result.
    let code =
        unsafe { TVMFFIFunctionCall(f.as_object().as_ptr().cast(), null_mut(), 0, &mut result) };
    assert_eq!(code, -1);
    let (kind, message) = raised();
    assert_eq!(kind, "InternalError");
    assert!(message.contains("kaboom"), "{message}");
}

#[test]
fn an_error_returned_by_a_function_is_raised_with_its_kind() {
    let f = Function::from_closure(|_| Err(Error::index("index 9 out of range")));
    let err = f.call(&[]).unwrap_err();
    assert_eq!(err.to_string(), "IndexError: index 9 out of range");
}

#[test]
fn null_arguments_name_the_argument() {
    let mut any = TVMFFIAny::NONE;
    // SAFETY: NULL inputs are what is being tested.
    let code = unsafe { TVMFFIStringFromByteArray(::core::ptr::null(), &mut any) };
    assert_eq!(code, -1);
    let (kind, message) = raised();
    assert_eq!(
        (kind.as_str(), message.as_str()),
        ("ValueError", "`input` is NULL")
    );
    // SAFETY: as above.
    assert_eq!(unsafe { TVMFFIObjectIncRef(null_mut()) }, -1);
    assert_eq!(raised().1, "`obj` is NULL");
}

#[test]
fn hostile_byte_array_is_rejected() {
    let arr = TVMFFIByteArray {
        data: ::core::ptr::null(),
        size: usize::MAX,
    };
    let mut any = TVMFFIAny::NONE;
    // SAFETY: NULL data with a size is the hostile input being tested.
    assert_eq!(unsafe { TVMFFIBytesFromByteArray(&arr, &mut any) }, -1);
    assert!(raised().1.contains("NULL data"));
}

#[test]
fn returned_strings_are_owned_by_the_caller() {
    let text = b"a string long enough for the heap";
    let arr = TVMFFIByteArray {
        data: text.as_ptr().cast(),
        size: text.len(),
    };
    let mut out = TVMFFIAny::NONE;
    // SAFETY: valid input and output.
    assert_eq!(unsafe { TVMFFIStringFromByteArray(&arr, &mut out) }, 0);
    assert_eq!(out.type_index, kTVMFFIStr);
    // SAFETY: the value is owned by us now.
    let owned = unsafe { Any::from_raw(out) };
    assert_eq!(owned.view().as_str_bytes().unwrap(), text);
    let obj = owned.view().to_object().unwrap();
    assert_eq!(obj.strong_count(), 2);
    drop(owned);
    assert_eq!(obj.strong_count(), 1);
}

#[test]
fn type_info_of_unknown_index_is_null_with_an_error() {
    // The reference prints this failed check and aborts; ours raises it.
    assert!(TVMFFIGetTypeInfo(99_999).is_null());
    let (kind, message) = raised();
    assert_eq!(kind, "InternalError");
    assert!(
        message.contains("Cannot find type info for type_index=99999"),
        "{message}"
    );
}
