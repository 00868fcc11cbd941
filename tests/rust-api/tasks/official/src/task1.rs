// Task 1: a library exporting add_one(i64) and a tensor kernel.
mod task6;
use tvm_ffi::{tvm_ffi_dll_export_typed_func, Result, Tensor};

fn add_one(x: i64) -> Result<i64> {
    Ok(x + 1)
}

fn scale(x: Tensor, by: f64) -> Result<Tensor> {
    let out: Vec<f32> = x
        .data_as_slice::<f32>()?
        .iter()
        .map(|v| v * by as f32)
        .collect();
    Tensor::from_slice(&out, x.shape())
}

tvm_ffi_dll_export_typed_func!(add_one, add_one);
tvm_ffi_dll_export_typed_func!(scale, scale);
