// Task 4: a tensor made from Rust data, handed out through DLPack.
use tvm_ffi::{Result, Tensor};

fn main() -> Result<()> {
    let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!(
        "shape {:?}, data {:?}",
        t.shape(),
        t.data_as_slice::<f32>()?
    );
    // The crate has no DLPack export in Rust: a raw data pointer is all there
    // is (returned to Python, its tensors do reach numpy.from_dlpack).
    println!("data at {:p}, no DLPack handle to give away", t.data_ptr());
    Ok(())
}
