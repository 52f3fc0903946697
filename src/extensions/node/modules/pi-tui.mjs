// pi-rs's own `@mariozechner/pi-tui` module for pi extensions.
//
// pi's TUI library, as far as extensions use it: components they build for `ctx.ui.custom`,
// widgets, headers, footers and tool renderers (render(width) → lines, handleInput(data),
// invalidate()), the text helpers that measure and cut ANSI text, and key decoding. pi-rs draws
// the lines these components return, so they must be the same lines pi-tui returns for the same
// input: tests/node/shims/ check that against the real pi-tui.
//
// Not provided (see docs/extensions.md): the TUI/terminal classes themselves (the host hands
// extensions its own `tui` object), Markdown, Image and the terminal-image helpers, the
// autocomplete providers and StdinBuffer.

export { Editor, wordWrapLine } from "./tui-editor.mjs";
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
  sliceByColumn,
  Spacer,
  Text,
  TruncatedText,
  TUI_KEYBINDINGS,
} from "./tui-components.mjs";
export {
  decodeKittyPrintable,
  decodePrintableKey,
  isKeyRelease,
  isKeyRepeat,
  isKittyProtocolActive,
  Key,
  matchesKey,
  parseKey,
  setKittyProtocolActive,
} from "./tui-keys.mjs";
export { applyBackgroundToLine, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./tui-text.mjs";
