//! Peak memory of opening a big session and building its context.
//!
//! ```sh
//! cargo run --release --example session_rss -- [path] [turns]
//! ```
//!
//! Without a path, a synthetic 10 000-turn session is generated (once) under `target/`.
//! Generation happens in a separate process so that the figure printed is only what
//! opening plus `build_session_context` cost: the peak resident set (`VmHWM`) of a fresh
//! process that does exactly that.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use pi::session::manager::SessionManager;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn default_path(turns: usize) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/synthetic-session-{turns}.jsonl"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--measure") {
        let path = PathBuf::from(&args[1]);
        let baseline = vm_hwm_kib().unwrap_or(0);
        let start = Instant::now();
        let session = SessionManager::open(&path, None)?;
        let opened = start.elapsed();
        let context = session.build_session_context();
        let total = start.elapsed();
        let peak = vm_hwm_kib().unwrap_or(0);
        println!(
            "{}: {:.1} MB, {} entries; open {:.1} ms, open + context {:.1} ms ({} messages); peak RSS {:.1} MB (process baseline {:.1} MB)",
            path.display(),
            std::fs::metadata(&path)?.len() as f64 / 1e6,
            session.entry_count(),
            opened.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
            context.messages.len(),
            peak as f64 / 1024.0,
            baseline as f64 / 1024.0,
        );
        return Ok(());
    }
    let turns: usize = args.get(1).and_then(|t| t.parse().ok()).unwrap_or(10_000);
    let path = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| default_path(turns));
    if !path.exists() {
        let stats = pi::session::synth::generate(&path, turns, 42)?;
        eprintln!("generated {}: {stats:?}", path.display());
    }
    let status = Command::new(std::env::current_exe()?)
        .arg("--measure")
        .arg(&path)
        .status()?;
    std::process::exit(status.code().unwrap_or(1));
}
