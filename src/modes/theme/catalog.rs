//! The custom themes a session can select (pi 0.73's registered themes): the theme files
//! of the `themes` settings entries, the `themes/` folders of the project and the user,
//! and the configured pi packages, in that precedence. Themes are known by the `name` in
//! their file; when two files use one name the first keeps it and the other is reported
//! as a collision. A custom theme goes before a built-in one of the same name, as in pi.

use std::path::{Path, PathBuf};

use super::{ColorMode, Theme, ThemeError, builtin_theme_names};

/// The loaded custom themes, first of each name only, and what was wrong with the files.
#[derive(Debug, Clone, Default)]
pub struct ThemeCatalog {
    themes: Vec<Theme>,
    warnings: Vec<String>,
}

impl ThemeCatalog {
    /// Loads `files` (in precedence order) for the terminal's colour `mode`.
    pub fn load(files: &[PathBuf], mode: ColorMode) -> ThemeCatalog {
        let mut catalog = ThemeCatalog::default();
        for file in files {
            match Theme::load_file(file, mode) {
                Ok(theme) if theme.name() == super::SYSTEM_THEME => catalog.warnings.push(format!(
                    "Theme {} is ignored: \"system\" is the reserved name of the default theme",
                    file.display()
                )),
                Ok(theme) => match catalog.themes.iter().find(|t| t.name() == theme.name()) {
                    Some(winner) => catalog.warnings.push(format!(
                        "Theme name \"{}\" collision: {} is shadowed by {}",
                        theme.name(),
                        file.display(),
                        winner.source().unwrap_or(Path::new("<builtin>")).display()
                    )),
                    None => catalog.themes.push(theme),
                },
                Err(e) => catalog.warnings.push(e.to_string()),
            }
        }
        catalog
    }

    /// Problems found while loading: unreadable or invalid files, name collisions.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The names of the custom themes, in load order (what pi's startup header lists
    /// under `[Themes]`).
    pub fn custom_names(&self) -> Vec<String> {
        self.themes.iter().map(|t| t.name().to_string()).collect()
    }

    /// Every selectable theme name, built-in and custom, sorted (pi's
    /// `getAvailableThemes`).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = builtin_theme_names().map(str::to_string).collect();
        for theme in &self.themes {
            if !names.iter().any(|n| n == theme.name()) {
                names.push(theme.name().to_string());
            }
        }
        names.sort();
        names
    }

    /// The theme called `name`: a custom one, else a built-in one, else
    /// `<themes_dir>/<name>.json`.
    pub fn theme(
        &self,
        name: &str,
        themes_dir: &Path,
        mode: ColorMode,
    ) -> Result<Theme, ThemeError> {
        match self.themes.iter().find(|t| t.name() == name) {
            Some(theme) if theme.mode() == mode => Ok(theme.clone()),
            Some(theme) => Ok(theme.with_mode(mode)),
            None => Theme::load_named(name, themes_dir, mode),
        }
    }
}
