// Task 1: a library exporting add_one(i64) and a tensor kernel.
mod task6;
use tvmffi::{Result, Slice, Tensor, export};

#[export]
fn add_one(x: i64) -> i64 {
    x + 1
}

#[export]
fn scale(x: Slice<f32>, by: f64) -> Result<Tensor> {
    let out: Vec<f32> = x.iter().map(|v| v * by as f32).collect();
    Tensor::from_vec(out, x.shape())
}
