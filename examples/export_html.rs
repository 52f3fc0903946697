//! Exports a session file to HTML: `cargo run --example export_html -- <session.jsonl> [out.html]`.
//!
//! The same as `pi --export`, for trying the exporter before the CLI is wired to it.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let Some(input) = args.next() else {
        eprintln!("usage: export_html <session.jsonl> [out.html]");
        return ExitCode::from(2);
    };
    let out = args.next();
    match pi::export::export_session_file(&input, out.as_deref()) {
        Ok(path) => {
            println!("Exported to: {}", path.display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("Error: {err}");
            ExitCode::FAILURE
        }
    }
}
