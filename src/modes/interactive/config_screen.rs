//! Runs the `pi config` screen in the terminal: the
//! [`ConfigSelector`](super::components::config_selector::ConfigSelector) drawn inline
//! below the shell's output (as pi's TUI does), keys read until it closes, each switch
//! handed to the caller to write before the checkbox changes. When it closes the last
//! frame stays on the screen and the cursor goes below it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crossterm::event::{Event, read};

use super::components::Ui;
use super::components::config_selector::{ConfigOutcome, ConfigSelector};
use super::keys::Keybindings;
use super::renderer::{Drawn, Frame, InlineRenderer};
use super::terminal::TerminalGuard;
use super::theme::{ColorMode, Theme, ThemeCatalog, resolve_theme_setting};
use crate::core::packages::config::{ConfigResource, theme_files};
use crate::core::settings::Settings;

/// The theme the settings name, looked up among the built-in themes and those of the
/// settings' folders, entries and packages (the dark one when it cannot be loaded).
pub fn theme_for(settings: &Settings, cwd: &Path, agent_dir: &Path) -> Theme {
    let env = |name: &str| std::env::var(name).ok();
    let mode = ColorMode::detect(env);
    let catalog = ThemeCatalog::load(&theme_files(settings, cwd, agent_dir), mode);
    let name =
        resolve_theme_setting(settings.theme(), env).unwrap_or_else(|(_, fallback)| fallback);
    catalog
        .theme(&name, &agent_dir.join("themes"), mode)
        .unwrap_or_else(|_| Theme::dark(mode))
}

/// Shows the screen until it is closed. `apply` writes the settings edit for switching a
/// resource; an error from it ends the screen with that error.
pub fn run(
    resources: Vec<ConfigResource>,
    theme: Theme,
    agent_dir: &Path,
    apply: impl Fn(&ConfigResource, bool) -> Result<(), String>,
) -> Result<(), String> {
    let keys = match Keybindings::load(&keybindings_path(agent_dir)) {
        Ok(loaded) => loaded.bindings,
        Err(_) => Keybindings::defaults(),
    };
    let guard = TerminalGuard::enter().map_err(|e| format!("cannot use the terminal: {e}"))?;
    let (width, height) = TerminalGuard::size();
    let mut renderer = InlineRenderer::new(width, height);
    let mut selector = ConfigSelector::new(resources);
    let mut out = io::stdout();
    let ui = Ui::new(&theme, &keys);
    let result = loop {
        let lines = selector.render(renderer.size().0 as usize, &ui);
        draw(&mut renderer, &mut out, &[], &lines).map_err(|e| e.to_string())?;
        let outcome = match read() {
            Ok(Event::Key(key)) => selector.handle_key(&key, &keys),
            Ok(Event::Paste(text)) => {
                selector.paste(&text);
                ConfigOutcome::None
            }
            Ok(Event::Resize(w, h)) => {
                renderer.set_size(w, h);
                let lines = selector.render(w as usize, &ui);
                renderer
                    .redraw_all(&mut out, &[], &lines, None, false)
                    .map_err(|e| e.to_string())?;
                ConfigOutcome::None
            }
            Ok(_) => ConfigOutcome::None,
            Err(e) => break Err(format!("cannot read the terminal: {e}")),
        };
        match outcome {
            ConfigOutcome::None => {}
            ConfigOutcome::Close => break Ok(()),
            ConfigOutcome::Toggle { index, enabled } => {
                let Some(resource) = selector.resources().get(index) else {
                    continue;
                };
                if let Err(e) = apply(resource, enabled) {
                    break Err(e);
                }
                selector.set_enabled(index, enabled);
            }
        }
    };
    // The last frame stays, as pi leaves it; the shell prompt goes below.
    let lines = selector.render(renderer.size().0 as usize, &ui);
    draw(&mut renderer, &mut out, &lines, &[]).map_err(|e| e.to_string())?;
    renderer
        .finish_session(&mut out)
        .map_err(|e| e.to_string())?;
    drop(guard);
    result
}

fn keybindings_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("keybindings.json")
}

fn draw(
    renderer: &mut InlineRenderer,
    out: &mut impl Write,
    history: &[ratatui::text::Line<'static>],
    live: &[ratatui::text::Line<'static>],
) -> io::Result<()> {
    let drawn = renderer.draw(
        out,
        &Frame {
            new_history: history,
            live,
            cursor: None,
            show_cursor: false,
        },
    )?;
    if drawn == Drawn::NeedsFullRedraw {
        renderer.redraw_all(out, history, live, None, false)?;
    }
    out.flush()
}
