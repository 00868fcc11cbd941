//! Device selection: the global `__tvm_set_device(device_type, device_id)`
//! that TVM's generated host code calls before a device kernel, as TVM's
//! runtime registers it (CUDA: the device's primary context made current,
//! as `cudaSetDevice`; a no-op for the CPU). It yields to TVM's own when
//! `import tvm` registered one.

use crate::abi::*;
use crate::module::cuda::driver;
use crate::runtime::call::function::Function;
use crate::runtime::call::registry::Globals;
use crate::runtime::call::signature::Described;
use crate::runtime::model::any::Any;
use crate::runtime::model::error::{Error, Result};

/// Makes the device current (see the module docs).
fn set_device(device_type: i64, device_id: i64) -> Result<()> {
    let device_type = i32::try_from(device_type).unwrap_or(-1);
    match device_type {
        kDLCPU => Ok(()),
        kDLCUDA | kDLCUDAHost | kDLCUDAManaged => {
            let id = i32::try_from(device_id)
                .map_err(|_| Error::value(format!("__tvm_set_device: device id {device_id}")))?;
            driver::driver()?.set_device(id)
        }
        _ => Err(Error::value(format!(
            "__tvm_set_device: device type {device_type} is not supported by this runtime \
             without TVM's (CPU and CUDA are; `import tvm` provides the others)"
        ))),
    }
}

/// Registers `__tvm_set_device`, yielding to a registration of the same
/// name.
pub(crate) fn register_globals(g: &mut Globals<'_>) {
    g.yielding(Described::packed(
        "__tvm_set_device",
        Function::from_closure(|args| {
            args.expect_len("__tvm_set_device", 2)?;
            match (args.get(0).as_i64(), args.get(1).as_i64()) {
                (Some(t), Some(i)) => set_device(t, i).map(|()| Any::NONE),
                _ => Err(Error::type_error(
                    "__tvm_set_device takes (device_type: int, device_id: int)",
                )),
            }
        }),
    ));
}
