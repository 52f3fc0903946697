//! The test suite's scripted model server, standalone: drive pi-rs or the reference pi
//! with the same script and compare what they send.
//!
//! ```text
//! cargo run --example mock_llm -- --port 18101 --script script.json --log requests.jsonl
//! ```
//! Point a models.json provider at `http://127.0.0.1:PORT/v1` (OpenAI-style APIs), at
//! `http://127.0.0.1:PORT` (anthropic-messages) or `http://127.0.0.1:PORT/v1beta`
//! (google-generative-ai). The script format is described in `tests/support/mock_llm.rs`.

#[path = "../tests/support/mock_llm.rs"]
#[allow(dead_code)]
mod mock_llm;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut port: u16 = 0;
    let mut script_path: Option<PathBuf> = None;
    let mut log: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--port", Some(v)) => match v.parse() {
                Ok(p) => port = p,
                Err(_) => return usage(&format!("--port needs a number, got {v:?}")),
            },
            ("--script", Some(v)) => script_path = Some(v.into()),
            ("--log", Some(v)) => log = Some(v.into()),
            (other, _) => return usage(&format!("unknown or incomplete argument {other:?}")),
        }
    }
    let script = match &script_path {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => match mock_llm::Script::from_json(&text) {
                Ok(s) => s,
                Err(e) => return usage(&format!("{}: {e}", path.display())),
            },
            Err(e) => return usage(&format!("cannot read {}: {e}", path.display())),
        },
        None => mock_llm::Script::default(),
    };
    match mock_llm::MockLlm::start_on(port, script, log) {
        Ok(server) => {
            println!("mock LLM listening on {}", server.url());
            server.join();
            ExitCode::SUCCESS
        }
        Err(e) => usage(&format!("cannot listen on 127.0.0.1:{port}: {e}")),
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("error: {problem}\nusage: mock_llm [--port N] [--script FILE] [--log FILE]");
    ExitCode::from(2)
}
