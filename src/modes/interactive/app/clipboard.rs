//! `/copy`: the system clipboard through the platform's tool when one is installed
//! (`pbcopy`, `wl-copy`, `xclip`, `xsel`), otherwise OSC 52, which asks the terminal
//! itself to set the clipboard and also works over SSH.

use std::io::Write;
use std::process::{Command, Stdio};

fn try_command(program: &str, args: &[&str], text: &str) -> bool {
    let Ok(mut child) = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take()
        && stdin.write_all(text.as_bytes()).is_err()
    {
        let _ = child.kill();
        return false;
    }
    child.wait().map(|s| s.success()).unwrap_or(false)
}

/// Copies `text`; on success returns a note on how (empty for a native tool).
pub fn copy(text: &str) -> Result<&'static str, String> {
    let remote = std::env::var_os("SSH_CONNECTION").is_some();
    if !remote {
        let candidates: [(&str, &[&str], bool); 4] = [
            ("pbcopy", &[], cfg!(target_os = "macos")),
            (
                "wl-copy",
                &[],
                std::env::var_os("WAYLAND_DISPLAY").is_some(),
            ),
            (
                "xclip",
                &["-selection", "clipboard"],
                std::env::var_os("DISPLAY").is_some(),
            ),
            (
                "xsel",
                &["--clipboard", "--input"],
                std::env::var_os("DISPLAY").is_some(),
            ),
        ];
        for (program, args, applicable) in candidates {
            if applicable && try_command(program, args, text) {
                return Ok("");
            }
        }
    }
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let mut out = std::io::stdout();
    out.write_all(format!("\x1b]52;c;{encoded}\x07").as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| e.to_string())?;
    Ok(" (via the terminal)")
}
