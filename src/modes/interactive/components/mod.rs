//! Pure renderers for everything the chat screen shows. Each takes plain data (messages
//! from [`crate::messages`], tool call state, footer numbers) and returns lines for a
//! width; none of them knows about sessions, agents or the terminal.
//!
//! Components render through a [`Ui`]: the theme plus what hints need (the user's key
//! for "ctrl+o to expand", the home directory shown as `~`). [`Cached`] keeps a
//! component's lines until its data, the width, the theme or the keybindings change, so
//! redrawing a long transcript does not re-render every message.

pub mod assistant_message;
pub mod bash_execution;
pub mod changelog;
pub mod checkpoint_diff;
pub mod config_selector;
pub mod custom_message;
pub mod footer;
pub mod header;
pub mod hotkeys;
pub mod line_input;
pub mod login_dialog;
pub mod login_selector;
pub mod model_selector;
pub mod option_selector;
#[cfg(test)]
mod picker_widths;
pub mod scoped_models_selector;
pub mod select_list;
pub mod session_info;
pub mod session_picker;
pub mod settings_selector;
pub mod skill_invocation;
pub mod status;
pub mod summaries;
pub mod summarize_dialog;
pub mod thinking_selector;
pub mod tool_execution;
pub mod transcript;
pub mod tree_selector;
pub mod trust_selector;
pub mod user_message;
pub mod user_message_selector;

use std::cell::RefCell;
use std::sync::Arc;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::keys::{Action, Keybindings};
use super::text::{WrapOptions, pad_line, patch_lines, wrap_spans};
use super::theme::{Theme, ThemeToken};

/// What every component renders with.
#[derive(Clone, Copy)]
pub struct Ui<'a> {
    pub theme: &'a Theme,
    pub keys: &'a Keybindings,
    /// Shown as `~` at the start of paths.
    pub home: Option<&'a str>,
    /// How images are drawn inline; `None`: as pi's text note (the terminal cannot draw
    /// them, or `terminal.showImages` is off).
    pub images: Option<super::images::ImageConfig>,
    /// `outputPad`: columns left and right of transcript messages, tool boxes, `!`
    /// output and summaries (0 or 1).
    pub output_pad: usize,
}

impl<'a> Ui<'a> {
    pub fn new(theme: &'a Theme, keys: &'a Keybindings) -> Self {
        Ui {
            theme,
            keys,
            home: None,
            images: None,
            output_pad: 1,
        }
    }

    pub fn with_home(mut self, home: Option<&'a str>) -> Self {
        self.home = home;
        self
    }

    pub fn with_images(mut self, images: Option<super::images::ImageConfig>) -> Self {
        self.images = images;
        self
    }

    pub fn with_output_pad(mut self, pad: usize) -> Self {
        self.output_pad = pad;
        self
    }

    pub fn fg(&self, token: ThemeToken) -> Style {
        self.theme.fg(token)
    }

    /// The user's key(s) for an action, as hints show them (`ctrl+o`).
    pub fn key(&self, action: Action) -> String {
        self.keys.key_text(action)
    }

    /// The user's key(s) for an action capitalized, as pi writes them in running text
    /// (`Alt+Up`, `Escape/Ctrl+C`).
    pub fn key_capitalized(&self, action: Action) -> String {
        capitalize_keys(&self.keys.key_text(action))
    }

    /// `path` with the home directory replaced by `~`.
    pub fn short_path(&self, path: &str) -> String {
        match self.home {
            Some(home) if !home.is_empty() && path.starts_with(home) => {
                let rest = &path[home.len()..];
                if rest.is_empty() || rest.starts_with('/') {
                    format!("~{rest}")
                } else {
                    path.to_string()
                }
            }
            _ => path.to_string(),
        }
    }

    /// A hint like `ctrl+o to expand`: the key dim, the words muted.
    pub fn key_hint(&self, action: Action, what: &str) -> Vec<Span<'static>> {
        vec![
            Span::styled(self.key(action), self.fg(ThemeToken::Dim)),
            Span::styled(format!(" {what}"), self.fg(ThemeToken::Muted)),
        ]
    }

    fn cache_key(&self, width: usize) -> CacheKey {
        // Images are drawn at the terminal's cell size: a new one renders them anew.
        let images = self.images.map(|c| {
            let (cw, ch) = super::images::cell_size();
            (c.protocol as u64) << 60
                | (c.width_cells as u64) << 32
                | u64::from(cw) << 16
                | u64::from(ch)
        });
        (
            width,
            self.theme.generation(),
            self.keys.generation(),
            self.home.map(str::to_string),
            images,
            self.output_pad,
        )
    }
}

/// Something that draws itself into lines of a given width.
pub trait Component {
    /// Lines of at most `width` columns.
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>>;
}

type CacheKey = (usize, u64, u64, Option<String>, Option<u64>, usize);
type CacheEntry = (CacheKey, Arc<[Line<'static>]>);

/// A component with its last rendering remembered. Change it through
/// [`Cached::update`] so the cache knows.
pub struct Cached<C> {
    inner: C,
    cache: RefCell<Option<CacheEntry>>,
    /// Counts the changes made through [`Cached::update`].
    version: u64,
}

impl<C: Component> Cached<C> {
    pub fn new(inner: C) -> Self {
        Cached {
            inner,
            cache: RefCell::new(None),
            version: 0,
        }
    }

    pub fn get(&self) -> &C {
        &self.inner
    }

    /// Changes the component and drops its cached lines.
    pub fn update(&mut self, f: impl FnOnce(&mut C)) {
        f(&mut self.inner);
        self.version += 1;
        self.cache.get_mut().take();
    }

    /// Changes only how the component is drawn (lines an extension rendered for it),
    /// not what it shows: the cache is dropped, the version stays.
    pub fn update_drawing(&mut self, f: impl FnOnce(&mut C)) {
        f(&mut self.inner);
        self.cache.get_mut().take();
    }

    /// How many times the component was changed through [`Cached::update`].
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The component's lines, rendered only when something changed.
    pub fn lines(&self, width: usize, ui: &Ui<'_>) -> Arc<[Line<'static>]> {
        let key = ui.cache_key(width);
        if let Some((cached_key, lines)) = self.cache.borrow().as_ref()
            && *cached_key == key
        {
            return Arc::clone(lines);
        }
        let lines: Arc<[Line<'static>]> = self.inner.render(width, ui).into();
        *self.cache.borrow_mut() = Some((key, Arc::clone(&lines)));
        lines
    }
}

/// Lines of text wrapped inside `pad_x` columns of margin on each side (pi's `Text`).
/// Each entry of `logical` is one line before wrapping.
pub fn text_block(
    logical: Vec<Vec<Span<'static>>>,
    width: usize,
    pad_x: usize,
) -> Vec<Line<'static>> {
    let pad_x = pad_x.min(width.saturating_sub(1) / 2);
    let inner = width.saturating_sub(2 * pad_x).max(1);
    let margin = Span::raw(" ".repeat(pad_x));
    let opts = WrapOptions::prefixed(if pad_x > 0 { vec![margin] } else { vec![] });
    logical
        .iter()
        .flat_map(|spans| wrap_spans(spans, inner + pad_x, &opts))
        .collect()
}

/// Plain text (with `\n`) in one style, wrapped with a margin.
pub fn styled_text(text: &str, style: Style, width: usize, pad_x: usize) -> Vec<Line<'static>> {
    let logical = text
        .split('\n')
        .map(|l| vec![Span::styled(l.to_string(), style)])
        .collect();
    text_block(logical, width, pad_x)
}

/// pi's `Box`: content rendered `pad_x` columns in from each side, `pad_y` empty rows
/// above and below, every row padded to the full width in the background style.
pub fn panel(
    width: usize,
    pad_x: usize,
    pad_y: usize,
    background: Style,
    content: impl FnOnce(usize) -> Vec<Line<'static>>,
) -> Vec<Line<'static>> {
    let pad_x = pad_x.min(width.saturating_sub(1) / 2);
    let inner = width.saturating_sub(2 * pad_x).max(1);
    let margin = " ".repeat(pad_x);
    let mut out = Vec::new();
    out.extend((0..pad_y).map(|_| Line::default()));
    for line in content(inner) {
        let mut spans = Vec::with_capacity(line.spans.len() + 1);
        if pad_x > 0 {
            spans.push(Span::raw(margin.clone()));
        }
        spans.extend(line.spans);
        out.push(Line::from(spans));
    }
    out.extend((0..pad_y).map(|_| Line::default()));
    let mut out: Vec<Line<'static>> = out
        .into_iter()
        .map(|l| pad_line(l, width, Style::default()))
        .collect();
    patch_lines(&mut out, background);
    out
}

/// A `─` rule across the width.
pub fn rule(width: usize, style: Style) -> Line<'static> {
    Line::from(Span::styled("─".repeat(width.max(1)), style))
}

/// The spinner frames of pi's loader.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use std::cell::Cell;

    struct Counting<'a> {
        text: String,
        renders: &'a Cell<usize>,
    }

    impl Component for Counting<'_> {
        fn render(&self, width: usize, _ui: &Ui<'_>) -> Vec<Line<'static>> {
            self.renders.set(self.renders.get() + 1);
            styled_text(&self.text, Style::default(), width, 1)
        }
    }

    #[test]
    fn cached_components_render_once_per_width_and_change() {
        let renders = Cell::new(0);
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let mut c = Cached::new(Counting {
            text: "hello".into(),
            renders: &renders,
        });
        c.lines(40, &ui);
        c.lines(40, &ui);
        assert_eq!(renders.get(), 1);
        c.lines(30, &ui);
        assert_eq!(renders.get(), 2);
        c.update(|c| c.text = "bye".into());
        assert_eq!(plain(&c.lines(30, &ui), 30), " bye");
        let other_theme = t.with_mode(crate::modes::interactive::theme::ColorMode::Ansi256);
        c.lines(30, &Ui::new(&other_theme, &keys));
        assert_eq!(renders.get(), 4);
    }

    #[test]
    fn panels_pad_to_the_full_width_in_the_background() {
        let t = theme();
        let bg = t.bg(ThemeToken::UserMessageBg);
        let lines = panel(12, 1, 1, bg, |w| {
            styled_text("hello world again", Style::default(), w, 0)
        });
        insta::assert_snapshot!(crate::modes::interactive::test_support::buffer(&lines, 12), @r"
        |            |
        | hello      |
        | world      |
        | again      |
        |            |
        ");
        assert!(
            lines
                .iter()
                .all(|l| l.spans.iter().all(|s| s.style.bg == bg.bg))
        );
    }

    #[test]
    fn home_is_shortened_only_at_a_path_boundary() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys).with_home(Some("/home/user"));
        assert_eq!(ui.short_path("/home/user/proj"), "~/proj");
        assert_eq!(ui.short_path("/home/user"), "~");
        assert_eq!(ui.short_path("/home/username"), "/home/username");
    }
}

#[cfg(test)]
mod width_property;

/// `ctrl+shift+p/escape` → `Ctrl+Shift+P/Escape`: every `+`-separated part of every
/// `/`-separated key starts with a capital.
pub fn capitalize_keys(text: &str) -> String {
    text.split('/')
        .map(|key| {
            key.split('+')
                .map(|part| {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(first) => first.to_uppercase().chain(chars).collect(),
                        None => String::new(),
                    }
                })
                .collect::<Vec<String>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}
