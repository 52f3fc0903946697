use super::*;

fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

/// A PNG header of the given size (enough for the size to be read).
fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend(width.to_be_bytes());
    png.extend(height.to_be_bytes());
    png.extend([8, 2, 0, 0, 0]);
    png
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn the_protocol_is_chosen_from_the_environment_as_pi_tui_chooses_it() {
    assert_eq!(
        detect(env(&[("KITTY_WINDOW_ID", "1")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(
        detect(env(&[("TERM_PROGRAM", "kitty")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(
        detect(env(&[("TERM_PROGRAM", "ghostty")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(
        detect(env(&[("TERM", "xterm-ghostty")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(
        detect(env(&[("GHOSTTY_RESOURCES_DIR", "/x")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(detect(env(&[("WEZTERM_PANE", "0")])), Some(Protocol::Kitty));
    assert_eq!(
        detect(env(&[("TERM_PROGRAM", "WezTerm")])),
        Some(Protocol::Kitty)
    );
    assert_eq!(
        detect(env(&[("ITERM_SESSION_ID", "w0")])),
        Some(Protocol::Iterm2)
    );
    assert_eq!(
        detect(env(&[("TERM_PROGRAM", "iTerm.app")])),
        Some(Protocol::Iterm2)
    );
    // Inside tmux or screen: never, whatever the outer terminal is.
    assert_eq!(
        detect(env(&[("KITTY_WINDOW_ID", "1"), ("TMUX", "/tmp/t,1,0")])),
        None
    );
    assert_eq!(
        detect(env(&[
            ("KITTY_WINDOW_ID", "1"),
            ("TERM", "screen-256color")
        ])),
        None
    );
    assert_eq!(
        detect(env(&[("KITTY_WINDOW_ID", "1"), ("TERM", "tmux-256color")])),
        None
    );
    for other in ["vscode", "alacritty", "Apple_Terminal", ""] {
        assert_eq!(detect(env(&[("TERM_PROGRAM", other)])), None, "{other}");
    }
}

#[test]
fn sizes_are_read_from_png_jpeg_gif_and_webp_headers() {
    let png = png_header(40, 20);
    assert_eq!(
        dimensions(&png, "image/png"),
        Some(Dims {
            width: 40,
            height: 20
        })
    );
    assert_eq!(
        dimensions_base64(&b64(&png), "image/png"),
        Some(Dims {
            width: 40,
            height: 20
        })
    );
    // A JPEG: an APP0 segment, then SOF0 with height 0x0102 and width 0x0304.
    let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0];
    jpeg.extend([
        0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x02, 0x03, 0x04, 0x03, 0, 0, 0,
    ]);
    assert_eq!(
        dimensions(&jpeg, "image/jpeg"),
        Some(Dims {
            width: 0x304,
            height: 0x102
        })
    );
    let gif = b"GIF89a\x20\x03\x58\x02rest";
    assert_eq!(
        dimensions(gif, "image/gif"),
        Some(Dims {
            width: 800,
            height: 600
        })
    );
    let mut webp = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
    webp.resize(24, 0);
    webp.extend([0x1f, 0x03, 0x00, 0x57, 0x02, 0x00]);
    assert_eq!(
        dimensions(&webp, "image/webp"),
        Some(Dims {
            width: 800,
            height: 600
        })
    );
    // Not what the type says, too short, unknown types: no size, no panic.
    assert_eq!(dimensions(b"GIF89a", "image/png"), None);
    assert_eq!(dimensions(&png[..10], "image/png"), None);
    assert_eq!(dimensions(&[0xff, 0xd8, 0xff], "image/jpeg"), None);
    assert_eq!(dimensions(&png, "image/bmp"), None);
    assert_eq!(dimensions_base64("!!not base64!!", "image/png"), None);
}

#[test]
fn rows_follow_the_aspect_ratio_at_the_cell_size() {
    // pi's figures: 40x20 at 60 columns of 9x18-pixel cells is 15 rows.
    assert_eq!(
        rows_for(
            Dims {
                width: 40,
                height: 20
            },
            60,
            (9, 18)
        ),
        15
    );
    assert_eq!(
        rows_for(
            Dims {
                width: 800,
                height: 600
            },
            60,
            (9, 18)
        ),
        23
    );
    assert_eq!(
        rows_for(
            Dims {
                width: 800,
                height: 600
            },
            60,
            (10, 20)
        ),
        23
    );
    assert_eq!(
        rows_for(
            Dims {
                width: 1000,
                height: 1
            },
            10,
            (9, 18)
        ),
        1
    );
    assert_eq!(
        rows_for(
            Dims {
                width: 0,
                height: 0
            },
            10,
            (9, 18)
        ),
        1
    );
}

#[test]
fn kitty_commands_are_chunked_as_pi_sends_them() {
    assert_eq!(
        encode_kitty("AAAA", 60, 15, 7),
        "\x1b_Ga=T,f=100,q=2,C=1,c=60,r=15,i=7;AAAA\x1b\\"
    );
    let data = "B".repeat(4096 * 2 + 10);
    let seq = encode_kitty(&data, 10, 2, 9);
    let parts: Vec<&str> = seq.split("\x1b\\").filter(|p| !p.is_empty()).collect();
    assert_eq!(parts.len(), 3);
    assert!(parts[0].starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=10,r=2,i=9,m=1;BBB"));
    assert!(parts[1].starts_with("\x1b_Gm=1;BBB"));
    assert_eq!(parts[2], format!("\x1b_Gm=0;{}", "B".repeat(10)));
    assert_eq!(delete_kitty(9), "\x1b_Ga=d,d=I,i=9,q=2\x1b\\");
    assert_eq!(
        encode_iterm2("AAAA", 60),
        "\x1b]1337;File=inline=1;width=60;height=auto:AAAA\x07"
    );
}

#[test]
fn the_text_note_is_pis() {
    let d = Some(Dims {
        width: 40,
        height: 20,
    });
    assert_eq!(fallback("image/png", d, None), "[Image: [image/png] 40x20]");
    assert_eq!(
        fallback("image/png", None, Some("a.png")),
        "[Image: a.png [image/png]]"
    );
}

#[test]
fn an_image_becomes_empty_rows_and_a_marker_written_as_the_image() {
    let config = ImageConfig {
        protocol: Protocol::Kitty,
        width_cells: 60,
    };
    let data = b64(&png_header(40, 20));
    let key = placement_key("call-1#0", &data);
    let lines = image_lines(config, &data, "image/png", 80, key).unwrap();
    assert_eq!(lines.len(), 15);
    assert!(lines[..14].iter().all(|l| l.spans.is_empty()));
    let marker = crate::modes::interactive::ansi::encode_line(&lines[14], 80);
    assert!(row_has_image(&marker));
    assert_eq!(crate::modes::interactive::text::line_width(&lines[14]), 0);
    let written = expand(&marker).into_owned();
    let id = (key % 0xffff_fffe) as u32 + 1;
    assert!(
        written.starts_with(&format!(
            "\x1b[14A\x1b_Ga=T,f=100,q=2,C=1,c=60,r=15,i={id};{data}\x1b\\\x1b[14B"
        )),
        "{written:?}"
    );
    assert_eq!(kitty_ids([&marker]), vec![id]);
    // The same placement again: the same rows and marker, nothing new registered.
    assert_eq!(
        image_lines(config, &data, "image/png", 80, key).unwrap(),
        lines
    );
    // Narrow: at most the width less 2.
    let narrow = image_lines(config, &data, "image/png", 22, key).unwrap();
    assert_eq!(narrow.len(), 5);
    let written = expand(&crate::modes::interactive::ansi::encode_line(
        &narrow[4], 22,
    ))
    .into_owned();
    assert!(written.contains("c=20,r=5,"), "{written:?}");
}

#[test]
fn broken_images_are_not_drawn() {
    let config = ImageConfig {
        protocol: Protocol::Kitty,
        width_cells: 60,
    };
    // Not a PNG at all, a JPEG that does not decode (Kitty gets PNGs only), empty data.
    let junk = b64(b"hello, not an image at all");
    assert!(image_lines(config, &junk, "image/png", 80, 1).is_none());
    assert!(image_lines(config, &junk, "image/jpeg", 80, 2).is_none());
    assert!(image_lines(config, "", "image/png", 80, 3).is_none());
    let iterm = ImageConfig {
        protocol: Protocol::Iterm2,
        width_cells: 60,
    };
    assert!(image_lines(iterm, &junk, "image/gif", 80, 4).is_none());
}

#[test]
fn kitty_gets_other_formats_as_png() {
    let mut gif = Vec::new();
    image::DynamicImage::new_rgb8(30, 10)
        .write_to(&mut std::io::Cursor::new(&mut gif), image::ImageFormat::Gif)
        .unwrap();
    let config = ImageConfig {
        protocol: Protocol::Kitty,
        width_cells: 30,
    };
    let lines = image_lines(config, &b64(&gif), "image/gif", 80, 77).unwrap();
    // 30x10 at 30 columns of 9x18: 270 px wide, 90 high, 5 rows.
    assert_eq!(lines.len(), 5);
    let written = expand(&crate::modes::interactive::ansi::encode_line(&lines[4], 80)).into_owned();
    let payload_start = written.find(";iVBOR").expect("a PNG payload");
    assert!(written[..payload_start].contains("f=100,q=2,C=1,c=30,r=5,"));
}

#[test]
fn an_extension_images_sequence_passes_only_when_it_is_nothing_else() {
    let kitty = "\x1b[2A\x1b_Ga=T,f=100,q=2,C=1,c=10,r=3,i=55;iVBORw0KGgo=\x1b\\\x1b[2B";
    let line = host_image_line(kitty).unwrap();
    let marker = crate::modes::interactive::ansi::encode_line(&line, 80);
    // The row ends with the SGR reset every encoded row ends with.
    assert_eq!(expand(&marker), format!("{kitty}\x1b[0m"));
    assert_eq!(kitty_ids([&marker]), vec![55]);
    let iterm = "\x1b[2A\x1b]1337;File=inline=1;width=10;height=auto:iVBORw0KGgo=\x07";
    assert_eq!(
        expand(&crate::modes::interactive::ansi::encode_line(
            &host_image_line(iterm).unwrap(),
            80
        )),
        format!("{iterm}\x1b[0m")
    );
    for bad in [
        "text \x1b_Ga=T;AAAA\x1b\\",
        "\x1b_Ga=T;AAAA\x1b\\\x1b[2J",
        "\x1b_Ga=T;AA\x07AA\x1b\\",
        "\x1b_Ga=T;AAAA",
        "\x1b]1337;File=inline=1:AA\x1b[2JAA\x07",
        "plain text",
    ] {
        assert!(host_image_line(bad).is_none(), "{bad:?}");
    }
}

#[test]
fn a_cell_size_answer_reports_whether_drawn_images_need_redrawing() {
    assert!(!set_cell_size(0, 20));
    let before = cell_size();
    assert!(!set_cell_size(before.0, before.1));
}

#[test]
fn resizing_keeps_one_copy_of_each_image() {
    let config = ImageConfig {
        protocol: Protocol::Kitty,
        width_cells: 60,
    };
    let data = b64(&png_header(40, 20));
    let key = placement_key("call-resize#0", &data);
    let held = || registry().lock().unwrap().images.len();
    image_lines(config, &data, "image/png", 80, key).unwrap();
    let before = held();
    for width in 20..70 {
        image_lines(config, &data, "image/png", width, key).unwrap();
    }
    // Other tests register images meanwhile: at most a few more than before.
    assert!(held() < before + 10, "{} images held", held());
}
