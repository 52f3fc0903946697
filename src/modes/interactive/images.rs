//! Inline images, as pi-tui draws them: the Kitty graphics protocol (kitty, Ghostty,
//! WezTerm) or iTerm2's inline images (iTerm2), chosen from the environment the way
//! pi-tui chooses; anywhere else (and inside tmux or screen, which do not pass the
//! sequences on reliably) a one-line text note `[Image: [image/png] 800x600]` instead.
//!
//! An image takes `rows` rows: `rows - 1` empty ones and a last one that moves the cursor
//! up to the first, writes the image and (Kitty) moves back down. The size follows pi:
//! `columns` cells wide (the `terminal.imageWidthCells` setting, 60 by default, at most
//! the width less 2), and as many rows as the picture's height needs at the terminal's
//! cell size (asked with `CSI 16 t`; 9×18 pixels until the terminal answers).
//!
//! The escape sequence of an image is megabytes, so the rendered [`Line`] holds only a
//! short marker (see [`marker_span`]) and the sequence lives here, registered once; the
//! renderer compares and keeps lines with the marker and [`expand`]s it only when the row
//! is actually written to the terminal. An unchanged image is thus never written again,
//! and the history's images are written once, into the scrollback, like pi's.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// How the terminal draws images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Kitty,
    Iterm2,
}

/// What the UI needs to draw images: the terminal's protocol and the width setting.
/// `None` in [`super::components::Ui`] means "no images": the terminal cannot, or
/// `terminal.showImages` is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageConfig {
    pub protocol: Protocol,
    /// `terminal.imageWidthCells` (pi's default 60).
    pub width_cells: usize,
}

/// pi's default image width in cells.
pub const DEFAULT_WIDTH_CELLS: usize = 60;

/// Largest base64 payload drawn inline (48 MiB of base64, 36 MiB of image); larger
/// images get the text note. pi has no cap; this keeps one broken tool result from
/// flooding the terminal.
pub const MAX_INLINE_BASE64: usize = 48 << 20;
/// Total size of the escape sequences kept for drawing (and redrawing after a resize);
/// images past it get the text note.
pub const MAX_REGISTERED_BYTES: usize = 256 << 20;
/// Largest image (in pixels) converted to PNG for Kitty, which is only sent PNGs.
const MAX_CONVERT_PIXELS: u64 = 40_000_000;

/// The terminal's image protocol, from the environment, as pi-tui's
/// `detectCapabilities` decides it: none inside tmux or screen; Kitty for kitty,
/// Ghostty and WezTerm; iTerm2 for iTerm2; none elsewhere.
pub fn detect(var: impl Fn(&str) -> Option<String>) -> Option<Protocol> {
    let get = |name: &str| var(name).unwrap_or_default();
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    let term_program = get("TERM_PROGRAM").to_lowercase();
    let term = get("TERM").to_lowercase();
    if set("TMUX") || term.starts_with("tmux") || term.starts_with("screen") {
        return None;
    }
    if set("KITTY_WINDOW_ID") || term_program == "kitty" {
        return Some(Protocol::Kitty);
    }
    if term_program == "ghostty" || term.contains("ghostty") || set("GHOSTTY_RESOURCES_DIR") {
        return Some(Protocol::Kitty);
    }
    if set("WEZTERM_PANE") || term_program == "wezterm" {
        return Some(Protocol::Kitty);
    }
    if set("ITERM_SESSION_ID") || term_program == "iterm.app" {
        return Some(Protocol::Iterm2);
    }
    None
}

/// [`detect`] for this process, decided once.
pub fn protocol() -> Option<Protocol> {
    static PROTOCOL: OnceLock<Option<Protocol>> = OnceLock::new();
    *PROTOCOL.get_or_init(|| detect(|name| std::env::var(name).ok()))
}

/// Asks the terminal for its cell size in pixels (answered `CSI 6 ; height ; width t`).
pub const CELL_SIZE_QUERY: &str = "\x1b[16t";

static CELL_WIDTH: AtomicU32 = AtomicU32::new(9);
static CELL_HEIGHT: AtomicU32 = AtomicU32::new(18);
/// An image has been drawn (a new cell size then calls for drawing everything again).
static DRAWN: AtomicBool = AtomicBool::new(false);

/// The terminal's cell size in pixels, (width, height).
pub fn cell_size() -> (u32, u32) {
    (
        CELL_WIDTH.load(Ordering::Relaxed),
        CELL_HEIGHT.load(Ordering::Relaxed),
    )
}

/// Records the terminal's answer to [`CELL_SIZE_QUERY`]. Returns whether images already
/// drawn are now the wrong size (they are drawn again by a full redraw, as pi does).
pub fn set_cell_size(width: u32, height: u32) -> bool {
    if width == 0 || height == 0 || (width, height) == cell_size() {
        return false;
    }
    CELL_WIDTH.store(width, Ordering::Relaxed);
    CELL_HEIGHT.store(height, Ordering::Relaxed);
    DRAWN.load(Ordering::Relaxed)
}

/// An image's size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub width: u32,
    pub height: u32,
}

/// The size in a PNG, JPEG, GIF or WebP header (pi-tui reads the same headers).
pub fn dimensions(bytes: &[u8], mime: &str) -> Option<Dims> {
    let be16 = |i: usize| -> Option<u32> {
        Some(u32::from(u16::from_be_bytes([
            *bytes.get(i)?,
            *bytes.get(i + 1)?,
        ])))
    };
    let le16 = |i: usize| -> Option<u32> {
        Some(u32::from(u16::from_le_bytes([
            *bytes.get(i)?,
            *bytes.get(i + 1)?,
        ])))
    };
    let dims = |width, height| Some(Dims { width, height });
    match mime {
        "image/png" => {
            if bytes.len() < 24 || !bytes.starts_with(b"\x89PNG") {
                return None;
            }
            let be32 =
                |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
            dims(be32(16), be32(20))
        }
        "image/jpeg" => {
            if !bytes.starts_with(&[0xff, 0xd8]) {
                return None;
            }
            let mut at = 2;
            while at + 9 < bytes.len() {
                if bytes[at] != 0xff {
                    at += 1;
                    continue;
                }
                let marker = bytes[at + 1];
                if (0xc0..=0xc2).contains(&marker) {
                    return dims(be16(at + 7)?, be16(at + 5)?);
                }
                let length = be16(at + 2)? as usize;
                if length < 2 {
                    return None;
                }
                at += 2 + length;
            }
            None
        }
        "image/gif" => {
            if bytes.len() < 10 || !(bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a")) {
                return None;
            }
            dims(le16(6)?, le16(8)?)
        }
        "image/webp" => {
            if bytes.len() < 30 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WEBP" {
                return None;
            }
            match &bytes[12..16] {
                b"VP8 " => dims(le16(26)? & 0x3fff, le16(28)? & 0x3fff),
                b"VP8L" => {
                    let bits = u32::from_le_bytes([bytes[21], bytes[22], bytes[23], bytes[24]]);
                    dims((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
                }
                b"VP8X" => {
                    let n24 = |i: usize| {
                        u32::from(bytes[i])
                            | u32::from(bytes[i + 1]) << 8
                            | u32::from(bytes[i + 2]) << 16
                    };
                    dims(n24(24) + 1, n24(27) + 1)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The size of a base64 image (only its header is decoded).
pub fn dimensions_base64(data: &str, mime: &str) -> Option<Dims> {
    // 64 base64 characters are 48 bytes: enough for the PNG, GIF and WebP headers.
    let head = if mime == "image/jpeg" {
        data
    } else {
        &data[..data.len().min(64) / 4 * 4]
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()?;
    dimensions(&bytes, mime)
}

/// Rows an image `columns` cells wide takes (at least one), as pi computes them.
pub fn rows_for(dims: Dims, columns: usize, cell: (u32, u32)) -> usize {
    let width_px = columns as f64 * f64::from(cell.0);
    let scale = width_px / f64::from(dims.width.max(1));
    let height_px = f64::from(dims.height) * scale;
    ((height_px / f64::from(cell.1.max(1))).ceil() as usize).max(1)
}

/// Kitty's transmit-and-display command (PNG, quiet, cursor not moved), in 4096-byte
/// chunks as pi sends it.
pub fn encode_kitty(data: &str, columns: usize, rows: usize, id: u32) -> String {
    const CHUNK: usize = 4096;
    let params = format!("a=T,f=100,q=2,C=1,c={columns},r={rows},i={id}");
    if data.len() <= CHUNK {
        return format!("\x1b_G{params};{data}\x1b\\");
    }
    let mut out = String::with_capacity(data.len() + data.len() / CHUNK * 16 + 64);
    let chunks: Vec<&[u8]> = data.as_bytes().chunks(CHUNK).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        // Base64 is ASCII, so every chunk is valid UTF-8.
        let chunk = std::str::from_utf8(chunk).unwrap_or_default();
        let more = u8::from(i + 1 < chunks.len());
        if i == 0 {
            out.push_str(&format!("\x1b_G{params},m=1;{chunk}\x1b\\"));
        } else {
            out.push_str(&format!("\x1b_Gm={more};{chunk}\x1b\\"));
        }
    }
    out
}

/// Deletes a Kitty image (and frees its data).
pub fn delete_kitty(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

/// iTerm2's inline image command, `columns` cells wide, height from the aspect ratio.
pub fn encode_iterm2(data: &str, columns: usize) -> String {
    format!("\x1b]1337;File=inline=1;width={columns};height=auto:{data}\x07")
}

/// pi's text for an image it does not draw: `[Image: name [image/png] 800x600]`.
pub fn fallback(mime: &str, dims: Option<Dims>, filename: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(name) = filename {
        parts.push(name.to_string());
    }
    parts.push(format!("[{mime}]"));
    if let Some(d) = dims {
        parts.push(format!("{}x{}", d.width, d.height));
    }
    format!("[Image: {}]", parts.join(" "))
}

/// A drawn image kept for writing: its sequence (with the cursor moves) and its Kitty id.
struct Registered {
    sequence: Arc<str>,
    kitty_id: Option<u32>,
    /// Rows it covers, ending with the row of its marker.
    rows: usize,
}

/// A placement at a width (columns) and cell size.
type RenderKey = (u64, usize, (u32, u32));

#[derive(Default)]
struct Registry {
    /// By marker id.
    images: HashMap<u64, Registered>,
    /// What was rendered for a placement at a size: the rows, or `None` (text note).
    rendered: HashMap<RenderKey, Option<(usize, u64)>>,
    /// Extension images by age (oldest first), at most [`MAX_HOST_IMAGES`].
    host_order: std::collections::VecDeque<u64>,
    bytes: usize,
}

/// Extension images kept at once (each new size or picture is a new sequence; the
/// oldest are dropped, and registered again if drawn again).
const MAX_HOST_IMAGES: usize = 64;

impl Registry {
    fn remove(&mut self, marker: u64) {
        if let Some(old) = self.images.remove(&marker) {
            self.bytes -= old.sequence.len();
        }
    }

    /// Drops what a placement was rendered as at other sizes: only one terminal size is
    /// drawn at a time (a resize draws everything again), so resizing does not pile up
    /// copies of every image.
    fn forget_other_sizes(&mut self, key: u64) {
        let stale: Vec<RenderKey> = self
            .rendered
            .keys()
            .filter(|k| k.0 == key)
            .copied()
            .collect();
        for k in stale {
            if let Some(Some((_, marker))) = self.rendered.remove(&k) {
                self.remove(marker);
            }
        }
    }
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

/// Starts the marker a rendered line holds in place of an image's sequence.
const MARKER_START: &str = "\x1b_pi:img:";
const MARKER_END: char = '\u{7}';

/// The style that marks a span as an image marker (no text uses both).
fn marker_style() -> Style {
    Style::new().add_modifier(Modifier::HIDDEN | Modifier::RAPID_BLINK)
}

/// The span a line holds for image `id`: zero columns wide, written as the image.
fn marker_span(id: u64) -> Span<'static> {
    Span::styled(
        format!("{MARKER_START}{id:016x}{MARKER_END}"),
        marker_style(),
    )
}

/// Whether a span is an image marker (see [`marker_span`]).
pub fn is_marker(span: &Span<'_>) -> bool {
    span.style
        .add_modifier
        .contains(Modifier::HIDDEN | Modifier::RAPID_BLINK)
        && span.content.starts_with(MARKER_START)
}

/// Whether an encoded row holds an image.
pub fn row_has_image(row: &str) -> bool {
    row.contains(MARKER_START)
}

/// The marker ids in an encoded row.
fn marker_ids(row: &str) -> impl Iterator<Item = u64> + '_ {
    row.match_indices(MARKER_START).filter_map(|(at, _)| {
        let rest = &row[at + MARKER_START.len()..];
        let end = rest.find(MARKER_END)?;
        u64::from_str_radix(&rest[..end], 16).ok()
    })
}

/// The Kitty ids drawn by encoded rows (to delete them before the rows are rewritten).
pub fn kitty_ids<'a>(rows: impl IntoIterator<Item = &'a String>) -> Vec<u32> {
    let Ok(reg) = registry().lock() else {
        return Vec::new();
    };
    let mut ids: Vec<u32> = rows
        .into_iter()
        .flat_map(|r| marker_ids(r).collect::<Vec<_>>())
        .filter_map(|m| reg.images.get(&m).and_then(|i| i.kitty_id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// How many rows the images in an encoded row cover, counting the row itself (1 when
/// it has none).
pub fn rows_covered(row: &str) -> usize {
    if !row_has_image(row) {
        return 1;
    }
    let Ok(reg) = registry().lock() else {
        return 1;
    };
    marker_ids(row)
        .filter_map(|m| reg.images.get(&m).map(|i| i.rows))
        .max()
        .unwrap_or(1)
}

/// Bytes for the terminal: the image markers in `out` replaced by their sequences.
pub fn expand(out: &str) -> Cow<'_, str> {
    if !out.contains(MARKER_START) {
        return Cow::Borrowed(out);
    }
    let Ok(reg) = registry().lock() else {
        return Cow::Borrowed(out);
    };
    let mut expanded = String::with_capacity(out.len());
    let mut rest = out;
    while let Some(at) = rest.find(MARKER_START) {
        expanded.push_str(&rest[..at]);
        let after = &rest[at + MARKER_START.len()..];
        let Some(end) = after.find(MARKER_END) else {
            rest = after;
            continue;
        };
        if let Some(image) = u64::from_str_radix(&after[..end], 16)
            .ok()
            .and_then(|id| reg.images.get(&id))
        {
            expanded.push_str(&image.sequence);
        }
        rest = &after[end + MARKER_END.len_utf8()..];
    }
    expanded.push_str(rest);
    Cow::Owned(expanded)
}

/// A stable key for one placement of an image: what it shows (cheaply: the length and
/// both ends of the data) and where (`place`, e.g. a tool call id and the block's index).
pub fn placement_key(place: &str, data: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    place.hash(&mut h);
    data.len().hash(&mut h);
    data.as_bytes()[..data.len().min(256)].hash(&mut h);
    data.as_bytes()[data.len().saturating_sub(256)..].hash(&mut h);
    h.finish()
}

/// The lines of an image `max_width` cells at most (pi: the setting, at most the width
/// less 2), or `None` when it cannot be drawn (the caller shows [`fallback`]): an image
/// too large, data that is not an image, a format Kitty cannot take that does not
/// convert to PNG.
pub fn image_lines(
    config: ImageConfig,
    data: &str,
    mime: &str,
    width: usize,
    key: u64,
) -> Option<Vec<Line<'static>>> {
    let columns = config.width_cells.min(width.saturating_sub(2)).max(1);
    let cell = cell_size();
    let cache_key = (key, columns, cell);
    let known = registry()
        .lock()
        .ok()
        .and_then(|reg| reg.rendered.get(&cache_key).copied());
    let (rows, marker) = match known {
        Some(done) => done?,
        None => {
            if let Ok(mut reg) = registry().lock() {
                reg.forget_other_sizes(key);
            }
            let made = register(config.protocol, data, mime, columns, cell, key);
            if let Ok(mut reg) = registry().lock() {
                reg.rendered.insert(cache_key, made);
            }
            made?
        }
    };
    let mut lines = vec![Line::default(); rows - 1];
    lines.push(Line::from(marker_span(marker)));
    Some(lines)
}

/// Builds and registers the sequence of one placement: `(rows, marker id)`.
fn register(
    protocol: Protocol,
    data: &str,
    mime: &str,
    columns: usize,
    cell: (u32, u32),
    key: u64,
) -> Option<(usize, u64)> {
    if data.len() > MAX_INLINE_BASE64 || data.is_empty() {
        return None;
    }
    let dims = dimensions_base64(data, mime);
    let converted;
    let (data, dims) = match protocol {
        // Kitty is sent PNGs: other formats are converted (pi does the same).
        Protocol::Kitty if mime != "image/png" => {
            converted = to_png(data)?;
            (converted.0.as_str(), converted.1)
        }
        // pi assumes 800x600 for a size it cannot read and sends the data anyway;
        // data without a readable header is not sent to the terminal here.
        _ => (data, dims?),
    };
    let rows = rows_for(dims, columns, cell);
    let up = rows - 1;
    let mut sequence = String::with_capacity(data.len() + 128);
    if up > 0 {
        sequence.push_str(&format!("\x1b[{up}A"));
    }
    let kitty_id = match protocol {
        Protocol::Kitty => {
            // Never 0 (no id); stable for the placement, so drawing it again replaces it.
            let id = (key % 0xffff_fffe) as u32 + 1;
            sequence.push_str(&encode_kitty(data, columns, rows, id));
            if up > 0 {
                sequence.push_str(&format!("\x1b[{up}B"));
            }
            Some(id)
        }
        Protocol::Iterm2 => {
            sequence.push_str(&encode_iterm2(data, columns));
            None
        }
    };
    let mut reg = registry().lock().ok()?;
    if reg.bytes + sequence.len() > MAX_REGISTERED_BYTES {
        return None;
    }
    let marker = key ^ ((columns as u64) << 48) ^ (u64::from(cell.0) << 32) ^ u64::from(cell.1);
    reg.bytes += sequence.len();
    reg.images.insert(
        marker,
        Registered {
            sequence: Arc::from(sequence),
            kitty_id,
            rows,
        },
    );
    DRAWN.store(true, Ordering::Relaxed);
    Some((rows, marker))
}

/// A non-PNG image as base64 PNG, with its size; `None` when it does not decode or is
/// too large to convert.
fn to_png(data: &str) -> Option<(String, Dims)> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    let reader = image::ImageReader::new(std::io::Cursor::new(&bytes))
        .with_guessed_format()
        .ok()?;
    let (w, h) = reader.into_dimensions().ok()?;
    if u64::from(w) * u64::from(h) > MAX_CONVERT_PIXELS {
        return None;
    }
    let decoded = image::load_from_memory(&bytes).ok()?;
    let mut png = Vec::new();
    decoded
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .ok()?;
    Some((
        base64::engine::general_purpose::STANDARD.encode(png),
        Dims {
            width: w,
            height: h,
        },
    ))
}

/// Lines from an extension component that carry an image sequence pi-tui's `Image`
/// wrote (`ESC _ G …` or `ESC ] 1337 ; File=…`): the sequence is registered and the
/// line gets a marker for it, so it is drawn as pi draws it. `None` for other lines.
pub fn host_image_line(text: &str) -> Option<Line<'static>> {
    if !(text.contains("\x1b_G") || text.contains("\x1b]1337;File="))
        || text.len() > MAX_INLINE_BASE64 + MAX_INLINE_BASE64 / 512 + 4096
        || !is_image_sequence(text)
    {
        return None;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    let marker = h.finish();
    let mut reg = registry().lock().ok()?;
    if !reg.images.contains_key(&marker) {
        if reg.bytes + text.len() > MAX_REGISTERED_BYTES {
            return None;
        }
        if reg.host_order.len() >= MAX_HOST_IMAGES
            && let Some(oldest) = reg.host_order.pop_front()
        {
            reg.remove(oldest);
        }
        reg.host_order.push_back(marker);
        let kitty_id = kitty_id_in(text);
        // pi-tui's `Image` moves up over the rows above its last one.
        let up = text
            .strip_prefix("\x1b[")
            .map(|rest| rest.bytes().take_while(u8::is_ascii_digit).count())
            .filter(|&n| n > 0 && text.as_bytes().get(2 + n) == Some(&b'A'))
            .and_then(|n| text[2..2 + n].parse::<usize>().ok())
            .unwrap_or(0);
        reg.bytes += text.len();
        reg.images.insert(
            marker,
            Registered {
                sequence: Arc::from(text),
                kitty_id,
                rows: up + 1,
            },
        );
        DRAWN.store(true, Ordering::Relaxed);
    }
    Some(Line::from(marker_span(marker)))
}

/// Whether `text` is only what pi-tui's `Image` writes on an image's last row: an
/// optional cursor-up, Kitty commands or one iTerm2 image, an optional cursor-down.
/// Nothing else in a line is passed to the terminal as it is.
fn is_image_sequence(text: &str) -> bool {
    fn cursor_move(s: &str, dir: char) -> &str {
        let Some(rest) = s.strip_prefix("\x1b[") else {
            return s;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[digits..].strip_prefix(dir) {
            Some(after) if digits > 0 => after,
            _ => s,
        }
    }
    let safe = |payload: &str| {
        payload
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=,;:._-".contains(&b))
    };
    let mut rest = cursor_move(text, 'A');
    if let Some(iterm) = rest.strip_prefix("\x1b]1337;File=") {
        let Some(end) = iterm.find('\u{7}') else {
            return false;
        };
        if !safe(&iterm[..end]) {
            return false;
        }
        rest = &iterm[end + 1..];
    } else {
        let mut any = false;
        while let Some(kitty) = rest.strip_prefix("\x1b_G") {
            let Some(end) = kitty.find("\x1b\\") else {
                return false;
            };
            if !safe(&kitty[..end]) {
                return false;
            }
            rest = &kitty[end + 2..];
            any = true;
        }
        if !any {
            return false;
        }
    }
    cursor_move(rest, 'B').is_empty()
}

/// The `i=` of a Kitty command in `text`, as pi-tui reads it to delete images.
fn kitty_id_in(text: &str) -> Option<u32> {
    let start = text.find("\x1b_G")? + 3;
    let params = &text[start..start + text[start..].find(';')?];
    params
        .split(',')
        .find_map(|p| p.strip_prefix("i="))
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&id| id > 0)
}

#[cfg(test)]
mod tests;
