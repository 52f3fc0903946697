//! pi-tui's `OverlayOptions` as the extension host sends them with an overlay
//! (`ctx.ui.custom(…, { overlay: true, overlayOptions })`); the interactive UI's
//! `overlays` module places overlays by them.

use serde::Deserialize;

/// A size or position: columns/rows, or a percentage string such as `"50%"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum SizeValue {
    Number(f64),
    Text(String),
}

/// `margin`: the same on every side, or per side.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Margin {
    All(f64),
    Sides {
        #[serde(default)]
        top: Option<f64>,
        #[serde(default)]
        right: Option<f64>,
        #[serde(default)]
        bottom: Option<f64>,
        #[serde(default)]
        left: Option<f64>,
    },
}

/// pi-tui's `OverlayOptions`, as the extension host sends them (the `visible` callback is
/// evaluated in the host; its result arrives with every render).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OverlayOptions {
    #[serde(default)]
    pub width: Option<SizeValue>,
    #[serde(default)]
    pub min_width: Option<f64>,
    #[serde(default)]
    pub max_height: Option<SizeValue>,
    #[serde(default)]
    pub anchor: Option<String>,
    #[serde(default)]
    pub offset_x: Option<f64>,
    #[serde(default)]
    pub offset_y: Option<f64>,
    #[serde(default)]
    pub row: Option<SizeValue>,
    #[serde(default)]
    pub col: Option<SizeValue>,
    #[serde(default)]
    pub margin: Option<Margin>,
    /// The overlay does not take the keyboard when shown.
    #[serde(default)]
    pub non_capturing: bool,
}

impl OverlayOptions {
    /// Reads the options object the host sent; anything unreadable counts as "no options"
    /// and is named in the error.
    pub fn from_json(value: Option<&serde_json::Value>) -> Result<OverlayOptions, String> {
        match value {
            None | Some(serde_json::Value::Null) => Ok(OverlayOptions::default()),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| format!("overlay options not understood ({e}): {v}")),
        }
    }
}
