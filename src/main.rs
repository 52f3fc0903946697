//! The `pi` binary: parse arguments, pick a mode, map errors to exit codes.

fn main() {
    let mut args = std::env::args().skip(1);
    if let Some(arg) = args.next()
        && (arg == "--version" || arg == "-v")
    {
        println!("{}", env!("CARGO_PKG_VERSION"));
        return;
    }
    eprintln!("pi-rs {}: not ready yet", env!("CARGO_PKG_VERSION"));
    std::process::exit(1);
}
