//! Writes a synthetic session file (for benchmarks and manual testing):
//! `cargo run --release --example gen_session -- OUT.jsonl [TURNS] [SEED]`.
//! 10,000 turns make a file of about 44 MB with branches, labels and compactions.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: gen_session OUT.jsonl [TURNS] [SEED]");
        std::process::exit(2);
    };
    let turns = args.next().and_then(|t| t.parse().ok()).unwrap_or(10_000);
    let seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(7);
    match pi::session::synth::generate(std::path::Path::new(&out), turns, seed) {
        Ok(stats) => println!("{stats:?}"),
        Err(e) => {
            eprintln!("cannot write {out}: {e}");
            std::process::exit(1);
        }
    }
}
