// The simple components of pi-rs's `@mariozechner/pi-tui` module (shared helper).
//
// A component is `{ render(width) → string[], handleInput?(data), invalidate() }`; pi-rs
// prints the lines it returns as they are, so each component here returns the same lines as
// pi-tui 0.73.1's for the same state and width: Container, Text, TruncatedText, Box, Spacer,
// SelectList, SettingsList, Input, Loader, CancellableLoader. Key handling goes through the
// keybindings (`getKeybindings()`), pi-tui's defaults unless the host installs the user's.

import { decodeKittyPrintable, matchesKey } from "./tui-keys.mjs";
import { applyBackgroundToLine, clusterWidth, escapeAt, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./tui-text.mjs";

/** Zero-width marker a focused component puts where the terminal cursor belongs. */
export const CURSOR_MARKER = "\x1b_pi:c\x07";

export function isFocusable(component) {
  return component !== null && "focused" in component;
}

// --- Keybindings ---------------------------------------------------------------------------------

const binding = (defaultKeys, description) => ({ defaultKeys, description });

/** pi-tui's own actions with their default keys. */
export const TUI_KEYBINDINGS = {
  "tui.editor.cursorUp": binding("up", "Move cursor up"),
  "tui.editor.cursorDown": binding("down", "Move cursor down"),
  "tui.editor.cursorLeft": binding(["left", "ctrl+b"], "Move cursor left"),
  "tui.editor.cursorRight": binding(["right", "ctrl+f"], "Move cursor right"),
  "tui.editor.cursorWordLeft": binding(["alt+left", "ctrl+left", "alt+b"], "Move cursor word left"),
  "tui.editor.cursorWordRight": binding(["alt+right", "ctrl+right", "alt+f"], "Move cursor word right"),
  "tui.editor.cursorLineStart": binding(["home", "ctrl+a"], "Move to line start"),
  "tui.editor.cursorLineEnd": binding(["end", "ctrl+e"], "Move to line end"),
  "tui.editor.jumpForward": binding("ctrl+]", "Jump forward to character"),
  "tui.editor.jumpBackward": binding("ctrl+alt+]", "Jump backward to character"),
  "tui.editor.pageUp": binding("pageUp", "Page up"),
  "tui.editor.pageDown": binding("pageDown", "Page down"),
  "tui.editor.deleteCharBackward": binding("backspace", "Delete character backward"),
  "tui.editor.deleteCharForward": binding(["delete", "ctrl+d"], "Delete character forward"),
  "tui.editor.deleteWordBackward": binding(["ctrl+w", "alt+backspace"], "Delete word backward"),
  "tui.editor.deleteWordForward": binding(["alt+d", "alt+delete"], "Delete word forward"),
  "tui.editor.deleteToLineStart": binding("ctrl+u", "Delete to line start"),
  "tui.editor.deleteToLineEnd": binding("ctrl+k", "Delete to line end"),
  "tui.editor.yank": binding("ctrl+y", "Yank"),
  "tui.editor.yankPop": binding("alt+y", "Yank pop"),
  "tui.editor.undo": binding("ctrl+-", "Undo"),
  "tui.input.newLine": binding("shift+enter", "Insert newline"),
  "tui.input.submit": binding("enter", "Submit input"),
  "tui.input.tab": binding("tab", "Tab / autocomplete"),
  "tui.input.copy": binding("ctrl+c", "Copy selection"),
  "tui.select.up": binding("up", "Move selection up"),
  "tui.select.down": binding("down", "Move selection down"),
  "tui.select.pageUp": binding("pageUp", "Selection page up"),
  "tui.select.pageDown": binding("pageDown", "Selection page down"),
  "tui.select.confirm": binding("enter", "Confirm selection"),
  "tui.select.cancel": binding(["escape", "ctrl+c"], "Cancel selection"),
};

function keyList(keys) {
  if (keys === undefined) return [];
  return [...new Set(Array.isArray(keys) ? keys : [keys])];
}

/** Actions → keys: the definitions' defaults, each replaced by the user's keys where given. */
export class KeybindingsManager {
  #keys = new Map();
  #conflicts = [];

  constructor(definitions, userBindings = {}) {
    this.definitions = definitions;
    this.userBindings = userBindings;
    this.rebuild();
  }

  rebuild() {
    this.#keys.clear();
    const claims = new Map();
    for (const [action, keys] of Object.entries(this.userBindings)) {
      if (!(action in this.definitions)) continue;
      for (const key of keyList(keys)) {
        if (!claims.has(key)) claims.set(key, new Set());
        claims.get(key).add(action);
      }
    }
    this.#conflicts = [...claims]
      .filter(([, actions]) => actions.size > 1)
      .map(([key, actions]) => ({ key, keybindings: [...actions] }));
    for (const [action, definition] of Object.entries(this.definitions)) {
      const user = this.userBindings[action];
      this.#keys.set(action, keyList(user === undefined ? definition.defaultKeys : user));
    }
  }

  matches(data, action) {
    return (this.#keys.get(action) ?? []).some((key) => matchesKey(data, key));
  }

  getKeys(action) {
    return [...(this.#keys.get(action) ?? [])];
  }

  getDefinition(action) {
    return this.definitions[action];
  }

  getConflicts() {
    return this.#conflicts.map((c) => ({ ...c, keybindings: [...c.keybindings] }));
  }

  setUserBindings(userBindings) {
    this.userBindings = userBindings;
    this.rebuild();
  }

  getUserBindings() {
    return { ...this.userBindings };
  }

  getResolvedBindings() {
    const out = {};
    for (const action of Object.keys(this.definitions)) {
      const keys = this.#keys.get(action) ?? [];
      out[action] = keys.length === 1 ? keys[0] : [...keys];
    }
    return out;
  }
}

let keybindings = null;

export function setKeybindings(manager) {
  keybindings = manager;
}

/**
 * The keybindings components consult: the ones set with setKeybindings, else pi-rs's (pi's app
 * actions and the user's keybindings.json, from `__piHost.keybindings()`), else pi-tui's defaults.
 */
export function getKeybindings() {
  if (!keybindings) {
    const fromHost = globalThis.__piHost?.keybindings?.();
    keybindings = new KeybindingsManager({ ...TUI_KEYBINDINGS, ...(fromHost?.definitions ?? {}) }, fromHost?.userBindings ?? {});
  }
  return keybindings;
}

// --- Layout components -----------------------------------------------------------------------

/** Stacks its children's lines. */
export class Container {
  children = [];

  addChild(component) {
    this.children.push(component);
  }

  removeChild(component) {
    const at = this.children.indexOf(component);
    if (at !== -1) this.children.splice(at, 1);
  }

  clear() {
    this.children = [];
  }

  invalidate() {
    for (const child of this.children) child.invalidate?.();
  }

  render(width) {
    return this.children.flatMap((child) => child.render(width));
  }
}

/** Word-wrapped text with horizontal/vertical padding and an optional background. */
export class Text {
  #cache;

  constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.customBgFn = customBgFn;
  }

  setText(text) {
    this.text = text;
    this.#cache = undefined;
  }

  setCustomBgFn(customBgFn) {
    this.customBgFn = customBgFn;
    this.#cache = undefined;
  }

  invalidate() {
    this.#cache = undefined;
  }

  render(width) {
    if (this.#cache && this.#cache.text === this.text && this.#cache.width === width) return this.#cache.lines;
    let lines = [];
    if (this.text && this.text.trim() !== "") {
      const inner = Math.max(1, width - this.paddingX * 2);
      const side = " ".repeat(this.paddingX);
      const fill = (line) =>
        this.customBgFn ? applyBackgroundToLine(line, width, this.customBgFn) : line + " ".repeat(Math.max(0, width - visibleWidth(line)));
      const body = wrapTextWithAnsi(this.text.replace(/\t/g, "   "), inner).map((line) => fill(side + line + side));
      const blank = this.customBgFn ? applyBackgroundToLine(" ".repeat(width), width, this.customBgFn) : " ".repeat(width);
      const pad = Array.from({ length: this.paddingY }, () => blank);
      lines = [...pad, ...body, ...pad];
      this.#cache = { text: this.text, width, lines };
      return lines.length > 0 ? lines : [""];
    }
    this.#cache = { text: this.text, width, lines };
    return lines;
  }
}

/** The first line of its text, cut to the width and padded to it. */
export class TruncatedText {
  constructor(text, paddingX = 0, paddingY = 0) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
  }

  invalidate() {}

  render(width) {
    const blank = " ".repeat(width);
    const pad = Array.from({ length: this.paddingY }, () => blank);
    const firstLine = this.text.split("\n")[0];
    const side = " ".repeat(this.paddingX);
    const line = side + truncateToWidth(firstLine, Math.max(1, width - this.paddingX * 2)) + side;
    return [...pad, line + " ".repeat(Math.max(0, width - visibleWidth(line))), ...pad];
  }
}

/** Children inside padding, every line filled to the width (and through `bgFn` when set). */
export class Box {
  children = [];
  #cache;

  constructor(paddingX = 1, paddingY = 1, bgFn) {
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.bgFn = bgFn;
  }

  addChild(component) {
    this.children.push(component);
    this.#cache = undefined;
  }

  removeChild(component) {
    const at = this.children.indexOf(component);
    if (at !== -1) {
      this.children.splice(at, 1);
      this.#cache = undefined;
    }
  }

  clear() {
    this.children = [];
    this.#cache = undefined;
  }

  setBgFn(bgFn) {
    this.bgFn = bgFn;
  }

  invalidate() {
    this.#cache = undefined;
    for (const child of this.children) child.invalidate?.();
  }

  render(width) {
    if (this.children.length === 0) return [];
    const inner = Math.max(1, width - this.paddingX * 2);
    const left = " ".repeat(this.paddingX);
    const content = this.children.flatMap((child) => child.render(inner).map((line) => left + line));
    if (content.length === 0) return [];
    const bgSample = this.bgFn ? this.bgFn("test") : undefined;
    const cache = this.#cache;
    if (cache && cache.width === width && cache.bgSample === bgSample && cache.content.length === content.length && cache.content.every((l, i) => l === content[i])) {
      return cache.lines;
    }
    const fill = (line) => {
      const padded = line + " ".repeat(Math.max(0, width - visibleWidth(line)));
      return this.bgFn ? applyBackgroundToLine(padded, width, this.bgFn) : padded;
    };
    const pad = Array.from({ length: this.paddingY }, () => fill(""));
    const lines = [...pad, ...content.map(fill), ...pad];
    this.#cache = { width, bgSample, content, lines };
    return lines;
  }
}

/** `lines` empty lines. */
export class Spacer {
  constructor(lines = 1) {
    this.lines = lines;
  }

  setLines(lines) {
    this.lines = lines;
  }

  invalidate() {}

  render() {
    return Array.from({ length: this.lines }, () => "");
  }
}

// --- Lists --------------------------------------------------------------------------------------

const oneLine = (text) => text.replace(/[\r\n]+/g, " ").trim();

/** The first shown index of a `max`-row window keeping `selected` near its middle. */
function windowStart(selected, count, max) {
  return Math.max(0, Math.min(selected - Math.floor(max / 2), count - max));
}

/** A scrolling list of `{ value, label?, description? }` with a selection arrow. */
export class SelectList {
  selectedIndex = 0;

  constructor(items, maxVisible, theme, layout = {}) {
    this.items = items;
    this.filteredItems = items;
    this.maxVisible = maxVisible;
    this.theme = theme;
    this.layout = layout;
  }

  setFilter(filter) {
    const prefix = filter.toLowerCase();
    this.filteredItems = this.items.filter((item) => item.value.toLowerCase().startsWith(prefix));
    this.selectedIndex = 0;
  }

  setSelectedIndex(index) {
    this.selectedIndex = Math.max(0, Math.min(index, this.filteredItems.length - 1));
  }

  invalidate() {}

  render(width) {
    const items = this.filteredItems;
    if (items.length === 0) return [this.theme.noMatch("  No matching commands")];
    const column = this.#primaryColumnWidth();
    const start = windowStart(this.selectedIndex, items.length, this.maxVisible);
    const end = Math.min(start + this.maxVisible, items.length);
    const lines = [];
    for (let i = start; i < end; i++) {
      const item = items[i];
      if (!item) continue;
      lines.push(this.#renderItem(item, i === this.selectedIndex, width, item.description ? oneLine(item.description) : undefined, column));
    }
    if (start > 0 || end < items.length) {
      lines.push(this.theme.scrollInfo(truncateToWidth(`  (${this.selectedIndex + 1}/${items.length})`, width - 2, "")));
    }
    return lines;
  }

  handleInput(data) {
    const kb = getKeybindings();
    const count = this.filteredItems.length;
    if (kb.matches(data, "tui.select.up")) {
      this.selectedIndex = this.selectedIndex === 0 ? count - 1 : this.selectedIndex - 1;
      this.#selectionChanged();
    } else if (kb.matches(data, "tui.select.down")) {
      this.selectedIndex = this.selectedIndex === count - 1 ? 0 : this.selectedIndex + 1;
      this.#selectionChanged();
    } else if (kb.matches(data, "tui.select.confirm")) {
      const item = this.filteredItems[this.selectedIndex];
      if (item && this.onSelect) this.onSelect(item);
    } else if (kb.matches(data, "tui.select.cancel")) {
      this.onCancel?.();
    }
  }

  getSelectedItem() {
    return this.filteredItems[this.selectedIndex] || null;
  }

  #selectionChanged() {
    const item = this.filteredItems[this.selectedIndex];
    if (item && this.onSelectionChange) this.onSelectionChange(item);
  }

  #label(item) {
    return item.label || item.value;
  }

  #primaryColumnWidth() {
    const lo = this.layout.minPrimaryColumnWidth ?? this.layout.maxPrimaryColumnWidth ?? 32;
    const hi = this.layout.maxPrimaryColumnWidth ?? this.layout.minPrimaryColumnWidth ?? 32;
    const min = Math.max(1, Math.min(lo, hi));
    const max = Math.max(1, Math.max(lo, hi));
    const widest = this.filteredItems.reduce((w, item) => Math.max(w, visibleWidth(this.#label(item)) + 2), 0);
    return Math.max(min, Math.min(widest, max));
  }

  #primary(item, selected, maxWidth, columnWidth) {
    const text = this.#label(item);
    const cut = this.layout.truncatePrimary
      ? this.layout.truncatePrimary({ text, maxWidth, columnWidth, item, isSelected: selected })
      : truncateToWidth(text, maxWidth, "");
    return truncateToWidth(cut, maxWidth, "");
  }

  #renderItem(item, selected, width, description, column) {
    const prefix = selected ? "→ " : "  ";
    const prefixWidth = 2;
    if (description && width > 40) {
      const columnWidth = Math.max(1, Math.min(column, width - prefixWidth - 4));
      const value = this.#primary(item, selected, Math.max(1, columnWidth - 2), columnWidth);
      const valueWidth = visibleWidth(value);
      const gap = " ".repeat(Math.max(1, columnWidth - valueWidth));
      const room = width - (prefixWidth + valueWidth + gap.length) - 2;
      if (room > 10) {
        const desc = truncateToWidth(description, room, "");
        if (selected) return this.theme.selectedText(`${prefix}${value}${gap}${desc}`);
        return prefix + value + this.theme.description(gap + desc);
      }
    }
    const maxWidth = width - prefixWidth - 2;
    const value = this.#primary(item, selected, maxWidth, maxWidth);
    return selected ? this.theme.selectedText(`${prefix}${value}`) : prefix + value;
  }
}

/** Settings rows (label, current value) cycled with Enter/Space, optional submenus and search. */
export class SettingsList {
  selectedIndex = 0;
  #submenu = null;
  #submenuIndex = null;

  constructor(items, maxVisible, theme, onChange, onCancel, options = {}) {
    this.items = items;
    this.filteredItems = items;
    this.maxVisible = maxVisible;
    this.theme = theme;
    this.onChange = onChange;
    this.onCancel = onCancel;
    this.searchEnabled = options.enableSearch ?? false;
    if (this.searchEnabled) this.searchInput = new Input();
  }

  updateValue(id, value) {
    const item = this.items.find((i) => i.id === id);
    if (item) item.currentValue = value;
  }

  invalidate() {
    this.#submenu?.invalidate?.();
  }

  render(width) {
    if (this.#submenu) return this.#submenu.render(width);
    const lines = [];
    if (this.searchEnabled && this.searchInput) lines.push(...this.searchInput.render(width), "");
    if (this.items.length === 0) {
      lines.push(this.theme.hint("  No settings available"));
      if (this.searchEnabled) this.#hint(lines, width);
      return lines;
    }
    const shown = this.searchEnabled ? this.filteredItems : this.items;
    if (shown.length === 0) {
      lines.push(truncateToWidth(this.theme.hint("  No matching settings"), width));
      this.#hint(lines, width);
      return lines;
    }
    const start = windowStart(this.selectedIndex, shown.length, this.maxVisible);
    const end = Math.min(start + this.maxVisible, shown.length);
    const labelWidth = Math.min(30, Math.max(...this.items.map((item) => visibleWidth(item.label))));
    for (let i = start; i < end; i++) {
      const item = shown[i];
      if (!item) continue;
      const selected = i === this.selectedIndex;
      const prefix = selected ? this.theme.cursor : "  ";
      const label = this.theme.label(item.label + " ".repeat(Math.max(0, labelWidth - visibleWidth(item.label))), selected);
      const valueRoom = width - (visibleWidth(prefix) + labelWidth + 2) - 2;
      const value = this.theme.value(truncateToWidth(item.currentValue, valueRoom, ""), selected);
      lines.push(truncateToWidth(`${prefix}${label}  ${value}`, width));
    }
    if (start > 0 || end < shown.length) {
      lines.push(this.theme.hint(truncateToWidth(`  (${this.selectedIndex + 1}/${shown.length})`, width - 2, "")));
    }
    const current = shown[this.selectedIndex];
    if (current?.description) {
      lines.push("");
      for (const line of wrapTextWithAnsi(current.description, width - 4)) lines.push(this.theme.description(`  ${line}`));
    }
    this.#hint(lines, width);
    return lines;
  }

  handleInput(data) {
    if (this.#submenu) {
      this.#submenu.handleInput?.(data);
      return;
    }
    const kb = getKeybindings();
    const shown = this.searchEnabled ? this.filteredItems : this.items;
    if (kb.matches(data, "tui.select.up")) {
      if (shown.length === 0) return;
      this.selectedIndex = this.selectedIndex === 0 ? shown.length - 1 : this.selectedIndex - 1;
    } else if (kb.matches(data, "tui.select.down")) {
      if (shown.length === 0) return;
      this.selectedIndex = this.selectedIndex === shown.length - 1 ? 0 : this.selectedIndex + 1;
    } else if (kb.matches(data, "tui.select.confirm") || data === " ") {
      this.#activate();
    } else if (kb.matches(data, "tui.select.cancel")) {
      this.onCancel();
    } else if (this.searchEnabled && this.searchInput) {
      const typed = data.replace(/ /g, "");
      if (!typed) return;
      this.searchInput.handleInput(typed);
      this.filteredItems = fuzzyFilter(this.items, this.searchInput.getValue(), (item) => item.label);
      this.selectedIndex = 0;
    }
  }

  #activate() {
    const item = (this.searchEnabled ? this.filteredItems : this.items)[this.selectedIndex];
    if (!item) return;
    if (item.submenu) {
      this.#submenuIndex = this.selectedIndex;
      this.#submenu = item.submenu(item.currentValue, (value) => {
        if (value !== undefined) {
          item.currentValue = value;
          this.onChange(item.id, value);
        }
        this.#submenu = null;
        if (this.#submenuIndex !== null) {
          this.selectedIndex = this.#submenuIndex;
          this.#submenuIndex = null;
        }
      });
    } else if (item.values && item.values.length > 0) {
      const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length];
      item.currentValue = next;
      this.onChange(item.id, next);
    }
  }

  #hint(lines, width) {
    const text = this.searchEnabled ? "  Type to search · Enter/Space to change · Esc to cancel" : "  Enter/Space to change · Esc to cancel";
    lines.push("", truncateToWidth(this.theme.hint(text), width));
  }
}

// --- Fuzzy matching ------------------------------------------------------------------------------

function scoreQuery(query, text) {
  if (query.length === 0) return { matches: true, score: 0 };
  if (query.length > text.length) return { matches: false, score: 0 };
  let q = 0;
  let score = 0;
  let last = -1;
  let run = 0;
  for (let i = 0; i < text.length && q < query.length; i++) {
    if (text[i] !== query[q]) continue;
    if (last === i - 1) {
      run++;
      score -= run * 5;
    } else {
      run = 0;
      if (last >= 0) score += (i - last - 1) * 2;
    }
    if (i === 0 || /[\s\-_./:]/.test(text[i - 1])) score -= 10;
    score += i * 0.1;
    last = i;
    q++;
  }
  if (q < query.length) return { matches: false, score: 0 };
  if (query === text) score -= 100;
  return { matches: true, score };
}

/** Whether the query's characters appear in order in the text, and how well (lower is better). */
export function fuzzyMatch(query, text) {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  const first = scoreQuery(q, t);
  if (first.matches) return first;
  const lettersDigits = q.match(/^([a-z]+)([0-9]+)$/);
  const digitsLetters = q.match(/^([0-9]+)([a-z]+)$/);
  const swapped = lettersDigits ? lettersDigits[2] + lettersDigits[1] : digitsLetters ? digitsLetters[2] + digitsLetters[1] : "";
  if (!swapped) return first;
  const second = scoreQuery(swapped, t);
  return second.matches ? { matches: true, score: second.score + 5 } : first;
}

/** The items every space-separated token of the query matches, best first. */
export function fuzzyFilter(items, query, getText) {
  const tokens = query.trim().split(/\s+/).filter((t) => t.length > 0);
  if (!query.trim() || tokens.length === 0) return items;
  const scored = [];
  for (const item of items) {
    const text = getText(item);
    let total = 0;
    let all = true;
    for (const token of tokens) {
      const m = fuzzyMatch(token, text);
      if (!m.matches) {
        all = false;
        break;
      }
      total += m.score;
    }
    if (all) scored.push({ item, total });
  }
  scored.sort((a, b) => a.total - b.total);
  return scored.map((s) => s.item);
}

// --- Text editing helpers shared with the Editor -------------------------------------------------

export const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
export const isWhitespaceChar = (ch) => /\s/.test(ch);
export const isPunctuationChar = (ch) => /[(){}[\]<>.,;:'"!?+\-=*/\\|&%^$#@~`]/.test(ch);

/** Killed text for yank / yank-pop; consecutive kills join one entry. */
export class KillRing {
  ring = [];

  push(text, { prepend, accumulate }) {
    if (!text) return;
    if (accumulate && this.ring.length > 0) {
      const last = this.ring.pop();
      this.ring.push(prepend ? text + last : last + text);
    } else {
      this.ring.push(text);
    }
  }

  peek() {
    return this.ring.length > 0 ? this.ring[this.ring.length - 1] : undefined;
  }

  rotate() {
    if (this.ring.length > 1) this.ring.unshift(this.ring.pop());
  }

  get length() {
    return this.ring.length;
  }
}

/** Length in UTF-16 units of the grapheme before / after `at`. */
export function graphemeBefore(text, at) {
  const all = [...graphemes.segment(text.slice(0, at))];
  return all.length > 0 ? all[all.length - 1].segment.length : 1;
}

export function graphemeAfter(text, at) {
  const first = graphemes.segment(text.slice(at))[Symbol.iterator]().next();
  return first.done ? 1 : first.value.segment.length;
}

/** Where a word-left move from `at` lands: spaces, then a punctuation run or a word run. */
export function wordLeft(text, at) {
  const parts = [...graphemes.segment(text.slice(0, at))].map((s) => s.segment);
  let pos = at;
  const back = (test) => {
    while (parts.length > 0 && test(parts[parts.length - 1])) pos -= parts.pop().length;
  };
  back(isWhitespaceChar);
  if (parts.length > 0) {
    if (isPunctuationChar(parts[parts.length - 1])) back(isPunctuationChar);
    else back((g) => !isWhitespaceChar(g) && !isPunctuationChar(g));
  }
  return pos;
}

/** Where a word-right move from `at` lands. */
export function wordRight(text, at) {
  const parts = [...graphemes.segment(text.slice(at))].map((s) => s.segment);
  let pos = at;
  let i = 0;
  const forward = (test) => {
    while (i < parts.length && test(parts[i])) pos += parts[i++].length;
  };
  forward(isWhitespaceChar);
  if (i < parts.length) {
    if (isPunctuationChar(parts[i])) forward(isPunctuationChar);
    else forward((g) => !isWhitespaceChar(g) && !isPunctuationChar(g));
  }
  return pos;
}

/** Whether the input holds a C0/C1 control character or DEL (so it is not typed text). */
export function hasControlChars(data) {
  return [...data].some((ch) => {
    const code = ch.charCodeAt(0);
    return code < 32 || code === 0x7f || (code >= 0x80 && code <= 0x9f);
  });
}

/** The columns [start, start+length) of a line (wide characters crossing the end left out when strict). */
export function sliceByColumn(line, start, length, strict = false) {
  if (length <= 0) return "";
  const end = start + length;
  let out = "";
  let col = 0;
  let waiting = "";
  let i = 0;
  while (i < line.length && col < end) {
    const esc = escapeAt(line, i);
    if (esc) {
      if (col >= start) out += esc;
      else waiting += esc;
      i += esc.length;
      continue;
    }
    let j = i;
    while (j < line.length && !escapeAt(line, j)) j++;
    for (const { segment } of graphemes.segment(line.slice(i, j))) {
      const w = clusterWidth(segment);
      if (col >= start && col < end && (!strict || col + w <= end)) {
        out += waiting + segment;
        waiting = "";
      }
      col += w;
      if (col >= end) break;
    }
    i = j;
  }
  return out;
}

// --- Input ---------------------------------------------------------------------------------------

/** Single-line input with horizontal scrolling, Emacs keys, kill ring, undo and bracketed paste. */
export class Input {
  value = "";
  cursor = 0;
  focused = false;
  #paste = null;
  #kills = new KillRing();
  #last = null;
  #undo = [];

  getValue() {
    return this.value;
  }

  setValue(value) {
    this.value = value;
    this.cursor = Math.min(this.cursor, value.length);
  }

  handleInput(data) {
    if (data.includes("\x1b[200~")) {
      this.#paste = "";
      data = data.replace("\x1b[200~", "");
    }
    if (this.#paste !== null) {
      this.#paste += data;
      const end = this.#paste.indexOf("\x1b[201~");
      if (end !== -1) {
        const pasted = this.#paste.slice(0, end);
        const rest = this.#paste.slice(end + 6);
        this.#paste = null;
        this.#insertPaste(pasted);
        if (rest) this.handleInput(rest);
      }
      return;
    }
    const kb = getKeybindings();
    const on = (action) => kb.matches(data, action);
    if (on("tui.select.cancel")) return void this.onEscape?.();
    if (on("tui.editor.undo")) return void this.#popUndo();
    if (on("tui.input.submit") || data === "\n") return void this.onSubmit?.(this.value);
    if (on("tui.editor.deleteCharBackward")) return void this.#backspace();
    if (on("tui.editor.deleteCharForward")) return void this.#deleteForward();
    if (on("tui.editor.deleteWordBackward")) return void this.#killWordLeft();
    if (on("tui.editor.deleteWordForward")) return void this.#killWordRight();
    if (on("tui.editor.deleteToLineStart")) return void this.#killToStart();
    if (on("tui.editor.deleteToLineEnd")) return void this.#killToEnd();
    if (on("tui.editor.yank")) return void this.#yank();
    if (on("tui.editor.yankPop")) return void this.#yankPop();
    if (on("tui.editor.cursorLeft")) {
      this.#last = null;
      if (this.cursor > 0) this.cursor -= graphemeBefore(this.value, this.cursor);
      return;
    }
    if (on("tui.editor.cursorRight")) {
      this.#last = null;
      if (this.cursor < this.value.length) this.cursor += graphemeAfter(this.value, this.cursor);
      return;
    }
    if (on("tui.editor.cursorLineStart")) {
      this.#last = null;
      this.cursor = 0;
      return;
    }
    if (on("tui.editor.cursorLineEnd")) {
      this.#last = null;
      this.cursor = this.value.length;
      return;
    }
    if (on("tui.editor.cursorWordLeft")) {
      if (this.cursor > 0) {
        this.#last = null;
        this.cursor = wordLeft(this.value, this.cursor);
      }
      return;
    }
    if (on("tui.editor.cursorWordRight")) {
      if (this.cursor < this.value.length) {
        this.#last = null;
        this.cursor = wordRight(this.value, this.cursor);
      }
      return;
    }
    const printable = decodeKittyPrintable(data);
    if (printable !== undefined) return void this.#type(printable);
    if (!hasControlChars(data)) this.#type(data);
  }

  #pushUndo() {
    this.#undo.push({ value: this.value, cursor: this.cursor });
  }

  #popUndo() {
    const snapshot = this.#undo.pop();
    if (!snapshot) return;
    this.value = snapshot.value;
    this.cursor = snapshot.cursor;
    this.#last = null;
  }

  #splice(from, to, text) {
    this.value = this.value.slice(0, from) + text + this.value.slice(to);
  }

  #type(text) {
    if (isWhitespaceChar(text) || this.#last !== "type-word") this.#pushUndo();
    this.#last = "type-word";
    this.#splice(this.cursor, this.cursor, text);
    this.cursor += text.length;
  }

  #backspace() {
    this.#last = null;
    if (this.cursor === 0) return;
    this.#pushUndo();
    const n = graphemeBefore(this.value, this.cursor);
    this.#splice(this.cursor - n, this.cursor, "");
    this.cursor -= n;
  }

  #deleteForward() {
    this.#last = null;
    if (this.cursor >= this.value.length) return;
    this.#pushUndo();
    this.#splice(this.cursor, this.cursor + graphemeAfter(this.value, this.cursor), "");
  }

  #kill(from, to, prepend, accumulate) {
    this.#kills.push(this.value.slice(from, to), { prepend, accumulate });
    this.#last = "kill";
    this.#splice(from, to, "");
    this.cursor = from;
  }

  #killToStart() {
    if (this.cursor === 0) return;
    this.#pushUndo();
    this.#kill(0, this.cursor, true, this.#last === "kill");
  }

  #killToEnd() {
    if (this.cursor >= this.value.length) return;
    this.#pushUndo();
    const at = this.cursor;
    this.#kill(at, this.value.length, false, this.#last === "kill");
    this.cursor = at;
  }

  #killWordLeft() {
    if (this.cursor === 0) return;
    const accumulate = this.#last === "kill";
    this.#pushUndo();
    this.#kill(wordLeft(this.value, this.cursor), this.cursor, true, accumulate);
  }

  #killWordRight() {
    if (this.cursor >= this.value.length) return;
    const accumulate = this.#last === "kill";
    this.#pushUndo();
    const at = this.cursor;
    this.#kill(at, wordRight(this.value, at), false, accumulate);
    this.cursor = at;
  }

  #yank() {
    const text = this.#kills.peek();
    if (!text) return;
    this.#pushUndo();
    this.#splice(this.cursor, this.cursor, text);
    this.cursor += text.length;
    this.#last = "yank";
  }

  #yankPop() {
    if (this.#last !== "yank" || this.#kills.length <= 1) return;
    this.#pushUndo();
    const previous = this.#kills.peek() || "";
    this.#splice(this.cursor - previous.length, this.cursor, "");
    this.cursor -= previous.length;
    this.#kills.rotate();
    const text = this.#kills.peek() || "";
    this.#splice(this.cursor, this.cursor, text);
    this.cursor += text.length;
    this.#last = "yank";
  }

  #insertPaste(text) {
    this.#last = null;
    this.#pushUndo();
    const clean = text.replace(/\r\n/g, "").replace(/\r/g, "").replace(/\n/g, "").replace(/\t/g, "    ");
    this.#splice(this.cursor, this.cursor, clean);
    this.cursor += clean.length;
  }

  invalidate() {}

  render(width) {
    const prompt = "> ";
    const room = width - prompt.length;
    if (room <= 0) return [prompt];
    let shown = this.value;
    let cursorAt = this.cursor;
    const total = visibleWidth(this.value);
    if (total >= room) {
      const scroll = this.cursor === this.value.length ? room - 1 : room;
      if (scroll > 0) {
        const cursorCol = visibleWidth(this.value.slice(0, this.cursor));
        const half = Math.floor(scroll / 2);
        let start = 0;
        if (cursorCol < half) start = 0;
        else if (cursorCol > total - half) start = Math.max(0, total - scroll);
        else start = Math.max(0, cursorCol - half);
        shown = sliceByColumn(this.value, start, scroll, true);
        cursorAt = sliceByColumn(this.value, start, Math.max(0, cursorCol - start), true).length;
      } else {
        shown = "";
        cursorAt = 0;
      }
    }
    const under = graphemes.segment(shown.slice(cursorAt))[Symbol.iterator]().next();
    const atCursor = under.done ? " " : under.value.segment;
    const line = `${shown.slice(0, cursorAt)}${this.focused ? CURSOR_MARKER : ""}\x1b[7m${atCursor}\x1b[27m${shown.slice(cursorAt + atCursor.length)}`;
    return [prompt + line + " ".repeat(Math.max(0, room - visibleWidth(line)))];
  }
}

// --- Loaders -------------------------------------------------------------------------------------

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A spinner and a message below an empty line, re-rendered through `ui.requestRender()`. */
export class Loader extends Text {
  #timer = null;
  #frame = 0;
  #frames = [...SPINNER];
  #interval = 80;
  #verbatim = false;

  constructor(ui, spinnerColorFn, messageColorFn, message = "Loading...", indicator) {
    super("", 1, 0);
    this.spinnerColorFn = spinnerColorFn;
    this.messageColorFn = messageColorFn;
    this.message = message;
    this.ui = ui;
    this.setIndicator(indicator);
  }

  render(width) {
    return ["", ...super.render(width)];
  }

  start() {
    this.#show();
    this.stop();
    if (this.#frames.length <= 1) return;
    this.#timer = setInterval(() => {
      this.#frame = (this.#frame + 1) % this.#frames.length;
      this.#show();
    }, this.#interval);
  }

  stop() {
    if (this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  setMessage(message) {
    this.message = message;
    this.#show();
  }

  setIndicator(indicator) {
    this.#verbatim = indicator !== undefined;
    this.#frames = indicator?.frames !== undefined ? [...indicator.frames] : [...SPINNER];
    this.#interval = indicator?.intervalMs && indicator.intervalMs > 0 ? indicator.intervalMs : 80;
    this.#frame = 0;
    this.start();
  }

  #show() {
    const frame = this.#frames[this.#frame] ?? "";
    const shown = this.#verbatim ? frame : this.spinnerColorFn(frame);
    this.setText(`${frame.length > 0 ? `${shown} ` : ""}${this.messageColorFn(this.message)}`);
    this.ui?.requestRender();
  }
}

/** A Loader that Escape (or Ctrl+C) aborts: `signal`, `aborted`, `onAbort`. */
export class CancellableLoader extends Loader {
  #abort = new AbortController();

  get signal() {
    return this.#abort.signal;
  }

  get aborted() {
    return this.#abort.signal.aborted;
  }

  handleInput(data) {
    if (getKeybindings().matches(data, "tui.select.cancel")) {
      this.#abort.abort();
      this.onAbort?.();
    }
  }

  dispose() {
    this.stop();
  }
}
