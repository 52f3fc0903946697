//! The `read` tool on real files: limits and their notices, offsets, huge lines, images
//! recognized by content, and pi's error texts. Expected texts were checked against pi
//! 0.73.1's own read tool on the same files.

// Fixture helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;
use std::sync::atomic::Ordering;

use crate::tools_common::Sandbox;
use image::{DynamicImage, ImageFormat, RgbImage};
use pi::ai::message::UserBlock;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn numbered_lines(count: usize) -> String {
    (1..=count).map(|i| format!("line {i}\n")).collect()
}

fn png_bytes(width: u32, height: u32) -> Vec<u8> {
    let image = DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])
    }));
    let mut out = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .unwrap();
    out
}

#[tokio::test]
async fn small_file_is_returned_verbatim_without_line_numbers() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "hello wrld\nsecond line\n");
    let outcome = sandbox.run("read", json!({"path": "a.txt"})).await;
    assert_eq!(outcome.text(), "hello wrld\nsecond line\n");
    assert_eq!(outcome.ok().details, None);
}

#[tokio::test]
async fn long_file_stops_at_2000_lines_and_says_how_to_continue() {
    let sandbox = Sandbox::new();
    sandbox.write("big.txt", numbered_lines(3000));
    let outcome = sandbox.run("read", json!({"path": "big.txt"})).await;
    let text = outcome.text();
    assert!(text.starts_with("line 1\nline 2\n"));
    insta::assert_snapshot!(text.lines().rev().take(3).collect::<Vec<_>>().join("|"), @"[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]||line 2000");
    let truncation = &outcome.details()["truncation"];
    assert_eq!(truncation["truncatedBy"], "lines");
    assert_eq!(truncation["outputLines"], 2000);
    assert_eq!(truncation["totalLines"], 3001);

    let next = sandbox
        .run("read", json!({"path": "big.txt", "offset": 2990}))
        .await;
    insta::assert_snapshot!(next.text(), @r"
    line 2990
    line 2991
    line 2992
    line 2993
    line 2994
    line 2995
    line 2996
    line 2997
    line 2998
    line 2999
    line 3000
    ");
}

#[tokio::test]
async fn byte_limit_notice_names_the_50kb_limit() {
    let sandbox = Sandbox::new();
    let line = format!("{}\n", "y".repeat(100));
    sandbox.write("bytes.txt", line.repeat(1000));
    let outcome = sandbox.run("read", json!({"path": "bytes.txt"})).await;
    let text = outcome.text();
    assert!(text.ends_with(
        "\n\n[Showing lines 1-506 of 1001 (50.0KB limit). Use offset=507 to continue.]"
    ));
    assert_eq!(outcome.details()["truncation"]["truncatedBy"], "bytes");
}

#[tokio::test]
async fn a_limit_that_leaves_lines_reports_how_many_remain() {
    let sandbox = Sandbox::new();
    sandbox.write("big.txt", numbered_lines(3000));
    let outcome = sandbox
        .run("read", json!({"path": "big.txt", "offset": 10, "limit": 5}))
        .await;
    insta::assert_snapshot!(outcome.text(), @r"
    line 10
    line 11
    line 12
    line 13
    line 14

    [2987 more lines in file. Use offset=15 to continue.]
    ");
    assert_eq!(outcome.ok().details, None);
}

#[tokio::test]
async fn offset_beyond_the_end_is_an_error() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "one\ntwo\n");
    let outcome = sandbox
        .run("read", json!({"path": "a.txt", "offset": 5}))
        .await;
    assert_eq!(
        outcome.error(),
        "Offset 5 is beyond end of file (3 lines total)"
    );
    // A numeric string is converted like pi's validator does.
    let outcome = sandbox
        .run("read", json!({"path": "a.txt", "offset": "3"}))
        .await;
    assert_eq!(outcome.text(), "");
}

#[tokio::test]
async fn a_line_over_50kb_points_to_a_bash_fallback() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "wide.txt",
        format!("short\n{}\nafter\n", "x".repeat(60_000)),
    );
    let outcome = sandbox
        .run("read", json!({"path": "wide.txt", "offset": 2}))
        .await;
    insta::assert_snapshot!(outcome.text(), @"[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' wide.txt | head -c 51200]");
    assert_eq!(
        outcome.details()["truncation"]["firstLineExceedsLimit"],
        true
    );
}

#[tokio::test]
async fn images_are_recognized_by_content_not_by_extension() {
    let sandbox = Sandbox::new();
    let png = png_bytes(40, 30);
    sandbox.write("picture-without-extension", &png);
    sandbox.write("fake.png", "just text");
    let outcome = sandbox
        .run("read", json!({"path": "picture-without-extension"}))
        .await;
    let output = outcome.ok();
    assert_eq!(output.content.len(), 2);
    assert_eq!(outcome.text(), "Read image file [image/png]");
    let UserBlock::Image(image) = &output.content[1] else {
        panic!("expected an image block");
    };
    assert_eq!(image.mime_type, "image/png");
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap(),
        png
    );

    let text = sandbox.run("read", json!({"path": "fake.png"})).await;
    assert_eq!(text.text(), "just text");
}

#[tokio::test]
async fn large_images_are_shrunk_to_2000px_with_a_coordinate_note() {
    let sandbox = Sandbox::new();
    sandbox.write("wide.png", png_bytes(3000, 1200));
    let outcome = sandbox.run("read", json!({"path": "wide.png"})).await;
    insta::assert_snapshot!(outcome.text(), @r"
    Read image file [image/png]
    [Image: original 3000x1200, displayed at 2000x800. Multiply coordinates by 1.50 to map to original image.]
    ");
    let UserBlock::Image(image) = &outcome.ok().content[1] else {
        panic!("expected an image block");
    };
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    let decoded = image::load_from_memory(&bytes).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (2000, 800));
}

#[tokio::test]
async fn without_auto_resize_the_original_image_is_sent() {
    let mut sandbox = Sandbox::new();
    sandbox.config.auto_resize_images = false;
    let png = png_bytes(2500, 10);
    sandbox.write("wide.png", &png);
    let outcome = sandbox.run("read", json!({"path": "wide.png"})).await;
    assert_eq!(outcome.text(), "Read image file [image/png]");
    let UserBlock::Image(image) = &outcome.ok().content[1] else {
        panic!("expected an image block");
    };
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap(),
        png
    );
}

#[tokio::test]
async fn a_model_without_vision_is_told_the_image_is_omitted() {
    let sandbox = Sandbox::new();
    sandbox
        .config
        .model_accepts_images
        .store(false, Ordering::Relaxed);
    sandbox.write("p.png", png_bytes(4, 4));
    let outcome = sandbox.run("read", json!({"path": "p.png"})).await;
    insta::assert_snapshot!(outcome.text(), @r"
    Read image file [image/png]
    [Current model does not support images. The image will be omitted from this request.]
    ");
}

#[tokio::test]
async fn an_undecodable_image_is_replaced_by_a_note() {
    let sandbox = Sandbox::new();
    sandbox.write("broken.png", b"\x89PNG\r\n\x1a\nnot really a png");
    let outcome = sandbox.run("read", json!({"path": "broken.png"})).await;
    insta::assert_snapshot!(outcome.text(), @r"
    Read image file [image/png]
    [Image omitted: could not be resized below the inline image size limit.]
    ");
    assert_eq!(outcome.ok().content.len(), 1);
}

#[tokio::test]
async fn crlf_bom_and_invalid_utf8_are_returned_as_pi_does() {
    let sandbox = Sandbox::new();
    sandbox.write("crlf.txt", b"\xef\xbb\xbfone\r\ntwo\xff\r\n");
    let outcome = sandbox.run("read", json!({"path": "crlf.txt"})).await;
    assert_eq!(outcome.text(), "\u{feff}one\r\ntwo\u{fffd}\r\n");
}

#[tokio::test]
async fn missing_files_and_directories_fail_with_node_style_errors() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.path("dir")).unwrap();
    let missing = sandbox.run("read", json!({"path": "nope.txt"})).await;
    assert_eq!(
        sandbox.scrub(&missing.error()),
        "ENOENT: no such file or directory, access '$CWD/nope.txt'"
    );
    let dir = sandbox.run("read", json!({"path": "@dir"})).await;
    assert_eq!(
        dir.error(),
        "EISDIR: illegal operation on a directory, read"
    );
}

#[tokio::test]
async fn missing_path_argument_fails_validation_with_pi_text() {
    let sandbox = Sandbox::new();
    let outcome = sandbox.run("read", json!({})).await;
    insta::assert_snapshot!(outcome.error(), @r#"
    Validation failed for tool "read":
      - path: must have required properties path

    Received arguments:
    {}
    "#);
}

#[tokio::test]
async fn a_cancelled_read_reports_operation_aborted() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "x");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = sandbox
        .run_with("read", json!({"path": "a.txt"}), cancel)
        .await;
    assert_eq!(outcome.error(), "Operation aborted");
}
