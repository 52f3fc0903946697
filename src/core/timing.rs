//! `PI_TIMING=1`: prints how long startup phases take to stderr (as pi's `PI_TIMING`).

use std::sync::OnceLock;
use std::time::Instant;

fn start() -> Option<&'static Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    START
        .get_or_init(|| std::env::var_os("PI_TIMING").map(|_| Instant::now()))
        .as_ref()
}

/// Records that `phase` finished (no-op unless `PI_TIMING` is set).
pub fn mark(phase: &str) {
    if let Some(start) = start() {
        eprintln!(
            "[timing] {:>8.1} ms  {phase}",
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
}
