// Task 4: a tensor made from Rust data, handed out through DLPack.
use tvmffi::{Result, Tensor};
use tvmffi_host as _; // the runtime, linked into this program

fn main() -> Result<()> {
    let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!("{t:?}");
    let dlpack = t.to_dlpack()?;
    println!(
        "DLPack tensor at {:p}, released when dropped",
        dlpack.as_ptr()
    );
    Ok(())
}
