//! Runs headless Chromium on a local file with plain command-line flags (no driver, no
//! npm): `--dump-dom` returns the DOM after the page's script ran, `--screenshot` writes
//! a PNG. Every run gets a fresh profile directory and no network features.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium binary: `$PI_CHROMIUM`, else the first of the usual names on `PATH`.
pub fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PI_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The binary, or `None` after printing why the calling test is skipped.
pub fn available(test: &str) -> Option<PathBuf> {
    let found = binary();
    if found.is_none() {
        println!(
            "SKIPPED {test}: no Chromium found (install Debian's `chromium` package, or set PI_CHROMIUM to a Chrome/Chromium binary)"
        );
    }
    found
}

fn file_url(path: &Path, fragment: &str) -> String {
    let mut url = format!("file://{}", path.display());
    if !fragment.is_empty() {
        url.push('#');
        url.push_str(fragment);
    }
    url
}

fn run(binary: &Path, extra: &[String], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).unwrap();
        out
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// The serialized DOM of `file#fragment` after its scripts ran.
pub fn dump_dom(binary: &Path, file: &Path, fragment: &str) -> String {
    let dom = run(
        binary,
        &["--dump-dom".to_string()],
        &file_url(file, fragment),
    );
    assert!(dom.contains("</html>"), "chromium returned no DOM: {dom:?}");
    dom
}

/// Takes a screenshot of `file#fragment` at `width`×`height` into `png`.
pub fn screenshot(binary: &Path, file: &Path, fragment: &str, png: &Path, width: u32, height: u32) {
    run(
        binary,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},{height}"),
        ],
        &file_url(file, fragment),
    );
}

/// Width and height of a PNG file, from its IHDR chunk.
pub fn png_size(png: &Path) -> (u32, u32) {
    let bytes = std::fs::read(png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}
