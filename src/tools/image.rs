//! Images for the `read` tool: recognizing the four formats models accept by their magic
//! bytes (never by the file extension), and shrinking images that are too large to send.
//!
//! Shrinking follows pi: fit into 2000×2000 keeping the aspect ratio (after applying the
//! EXIF orientation), then take the first encoding whose base64 text is under 4.5 MB, trying
//! PNG and then JPEG at falling qualities, and scale down by a quarter at a time until one
//! fits. An image already within all limits is sent unchanged.

use std::io::Cursor;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

/// Longest side of an image sent to a model.
pub const MAX_DIMENSION: u32 = 2000;
/// Largest base64 payload sent (4.5 MB, under Anthropic's 5 MB limit).
pub const MAX_BASE64_BYTES: usize = 4_718_592;
/// How many leading bytes are inspected to recognize a format.
pub const SNIFF_BYTES: usize = 4100;

const JPEG_QUALITIES: [u8; 5] = [80, 85, 70, 55, 40];

/// The image MIME type of `head` (the first bytes of a file), for the formats models
/// accept: PNG (but not animated PNG), JPEG, GIF and WebP.
pub fn detect_image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return (!is_animated_png(head)).then_some("image/png");
    }
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some("image/jpeg");
    }
    if head.starts_with(b"GIF") {
        return Some("image/gif");
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    None
}

/// An animation-control chunk before the first image data marks an APNG, which pi's type
/// detection reports as `image/apng` and therefore does not treat as an image.
fn is_animated_png(head: &[u8]) -> bool {
    let mut offset = 8;
    while offset + 8 <= head.len() {
        let length = u32::from_be_bytes([
            head[offset],
            head[offset + 1],
            head[offset + 2],
            head[offset + 3],
        ]) as usize;
        match &head[offset + 4..offset + 8] {
            b"acTL" => return true,
            b"IDAT" => return false,
            _ => {}
        }
        offset = offset.saturating_add(12).saturating_add(length);
    }
    false
}

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    pub data_base64: String,
    pub mime_type: String,
    pub original_width: u32,
    pub original_height: u32,
    pub width: u32,
    pub height: u32,
    pub was_resized: bool,
}

/// Fits an image into the size limits. `None` when it cannot be decoded or no encoding
/// gets under the byte limit even at 1×1.
pub fn fit_image(bytes: &[u8], mime_type: &str) -> Option<PreparedImage> {
    let image = decode_oriented(bytes)?;
    let (original_width, original_height) = (image.width(), image.height());
    let original_base64_len = bytes.len().div_ceil(3) * 4;
    if original_width <= MAX_DIMENSION
        && original_height <= MAX_DIMENSION
        && original_base64_len < MAX_BASE64_BYTES
    {
        return Some(PreparedImage {
            data_base64: BASE64.encode(bytes),
            mime_type: mime_type.to_string(),
            original_width,
            original_height,
            width: original_width,
            height: original_height,
            was_resized: false,
        });
    }

    let (mut width, mut height) = initial_target(original_width, original_height);
    loop {
        let resized = image.resize_exact(width, height, FilterType::Lanczos3);
        if let Some((data_base64, mime)) = first_encoding_under_limit(&resized) {
            return Some(PreparedImage {
                data_base64,
                mime_type: mime.to_string(),
                original_width,
                original_height,
                width,
                height,
                was_resized: true,
            });
        }
        if width == 1 && height == 1 {
            return None;
        }
        let next_width = if width == 1 {
            1
        } else {
            (width * 3 / 4).max(1)
        };
        let next_height = if height == 1 {
            1
        } else {
            (height * 3 / 4).max(1)
        };
        if (next_width, next_height) == (width, height) {
            return None;
        }
        (width, height) = (next_width, next_height);
    }
}

/// The note telling the model how resized coordinates map back, if the image was resized.
pub fn dimension_note(image: &PreparedImage) -> Option<String> {
    if !image.was_resized {
        return None;
    }
    let scale = f64::from(image.original_width) / f64::from(image.width);
    Some(format!(
        "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {} to map to original image.]",
        image.original_width,
        image.original_height,
        image.width,
        image.height,
        super::js::js_to_fixed(scale, 2)
    ))
}

fn decode_oriented(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

/// Scales into the 2000×2000 box, width first, rounding like JavaScript's `Math.round`.
fn initial_target(width: u32, height: u32) -> (u32, u32) {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let max = f64::from(MAX_DIMENSION);
    if w > max {
        h = (h * max / w + 0.5).floor();
        w = max;
    }
    if h > max {
        w = (w * max / h + 0.5).floor();
        h = max;
    }
    (w.max(1.0) as u32, h.max(1.0) as u32)
}

fn first_encoding_under_limit(image: &DynamicImage) -> Option<(String, &'static str)> {
    let mut png = Vec::new();
    if image
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .is_ok()
    {
        let encoded = BASE64.encode(&png);
        if encoded.len() < MAX_BASE64_BYTES {
            return Some((encoded, "image/png"));
        }
    }
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    for quality in JPEG_QUALITIES {
        let mut jpeg = Vec::new();
        if JpegEncoder::new_with_quality(&mut jpeg, quality)
            .encode_image(&rgb)
            .is_ok()
        {
            let encoded = BASE64.encode(&jpeg);
            if encoded.len() < MAX_BASE64_BYTES {
                return Some((encoded, "image/jpeg"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        }));
        let mut out = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn formats_are_recognized_by_magic_bytes() {
        assert_eq!(detect_image_mime(&png(2, 2)), Some("image/png"));
        assert_eq!(
            detect_image_mime(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some("image/jpeg")
        );
        assert_eq!(detect_image_mime(b"GIF89a...."), Some("image/gif"));
        assert_eq!(
            detect_image_mime(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(detect_image_mime(b"<svg xmlns="), None);
        assert_eq!(detect_image_mime(b"BM\0\0"), None);
        assert_eq!(detect_image_mime(b""), None);
    }

    #[test]
    fn small_images_are_sent_unchanged() {
        let bytes = png(40, 30);
        let prepared = fit_image(&bytes, "image/png").unwrap();
        assert_eq!(prepared.data_base64, BASE64.encode(&bytes));
        assert!(!prepared.was_resized);
        assert_eq!(dimension_note(&prepared), None);
    }

    #[test]
    fn large_images_are_fitted_into_the_box_with_a_note() {
        let prepared = fit_image(&png(3000, 1500), "image/png").unwrap();
        assert_eq!((prepared.width, prepared.height), (2000, 1000));
        assert!(prepared.was_resized);
        insta::assert_snapshot!(dimension_note(&prepared).unwrap(), @"[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]");
    }

    #[test]
    fn undecodable_images_give_none() {
        assert_eq!(fit_image(b"\x89PNG\r\n\x1a\ngarbage", "image/png"), None);
    }
}
