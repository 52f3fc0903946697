// pi-rs's own `@mariozechner/pi-tui` module for pi extensions.
//
// pi's TUI library, as far as extensions use it: components they build for `ctx.ui.custom`,
// widgets, headers, footers and tool renderers (render(width) → lines, handleInput(data),
// invalidate()), the text helpers that measure and cut ANSI text, and key decoding. pi-rs draws
// the lines these components return, so they must be the same lines pi-tui returns for the same
// input: tests/node/shims/ check that against the real pi-tui.
//
// It exports what pi-tui's index exports, no more, so an extension written against pi-rs also
// loads in pi. Not provided (see docs/extensions.md): the TUI/terminal classes themselves (the host hands
// extensions its own `tui` object), the autocomplete providers and StdinBuffer.

export { Editor } from "./tui-editor.mjs";
export { Markdown } from "./tui-markdown.mjs";
export {
  Box,
  CancellableLoader,
  Container,
  CURSOR_MARKER,
  fuzzyFilter,
  fuzzyMatch,
  getKeybindings,
  Input,
  isFocusable,
  KeybindingsManager,
  Loader,
  SelectList,
  SettingsList,
  setKeybindings,
  Spacer,
  Text,
  TruncatedText,
  TUI_KEYBINDINGS,
} from "./tui-components.mjs";
export {
  decodeKittyPrintable,
  isKeyRelease,
  isKeyRepeat,
  isKittyProtocolActive,
  Key,
  matchesKey,
  parseKey,
  setKittyProtocolActive,
} from "./tui-keys.mjs";
export { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./tui-text.mjs";
export {
  allocateImageId,
  calculateImageRows,
  deleteAllKittyImages,
  deleteKittyImage,
  detectCapabilities,
  encodeITerm2,
  encodeKitty,
  getCapabilities,
  getCellDimensions,
  getGifDimensions,
  getImageDimensions,
  getJpegDimensions,
  getPngDimensions,
  getWebpDimensions,
  hyperlink,
  Image,
  imageFallback,
  renderImage,
  resetCapabilitiesCache,
  setCapabilities,
  setCellDimensions,
} from "./tui-image.mjs";

// pi 1.6: `text` drawn as a cursor by the component itself (reverse video). pi-tui 1.6
// drops such a cursor where the terminal's own cursor is shown; pi-rs always draws it.
export function renderFakeCursor(text) {
  return `\x1b[7m${text}\x1b[27m`;
}
