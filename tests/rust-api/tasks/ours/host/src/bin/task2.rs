// Task 2: a global from a closure with mixed arguments, called by name; an error.
use tvmffi::{Function, Result, ensure};
use tvmffi_host as _; // the runtime, linked into this program

fn main() -> Result<()> {
    let greet = Function::from_typed(
        "demo.greet",
        |n: i64, who: String, loud: bool| -> Result<String> {
            ensure!(n >= 0, ValueError, "n must be non-negative, got {n}");
            let text = vec![format!("hi {who}"); n as usize].join(" ");
            Ok(if loud { text.to_uppercase() } else { text })
        },
    )?;
    greet.register_global("demo.greet", false)?;
    let f = Function::get_global("demo.greet")?;
    let text: String = f.call((2, "rust", true))?;
    println!("{text}");
    if let Err(err) = f.call::<_, String>((-1, "rust", false)) {
        println!("{}: {}", err.kind(), err.message());
    }
    Ok(())
}
