// The multi-line Editor of pi-rs's `@mariozechner/pi-tui` module (shared helper).
//
// Renders as pi-tui 0.73.1's Editor does (a rule above and below, word-wrapped lines, an
// inverse-video cursor, "↑ N more" / "↓ N more" scroll rules at 30% of the terminal's rows) and
// handles the same keys for typing, newlines (shift+enter, `\` + enter), submit, deletion by
// character / word / line with the kill ring, yank, undo, cursor and word movement, jump to
// character, page up/down and prompt history.
//
// Differences from pi-tui (see docs/extensions.md): no autocomplete (setAutocompleteProvider is
// accepted and ignored); a large paste is inserted as text rather than folded into a
// "[paste #n]" marker; up/down keep the visual column without pi-tui's sticky-column memory.

import { decodePrintableKey, matchesKey } from "./tui-keys.mjs";
import { truncateToWidth, visibleWidth } from "./tui-text.mjs";
import {
  CURSOR_MARKER,
  KillRing,
  getKeybindings,
  graphemeAfter,
  graphemeBefore,
  graphemes,
  isWhitespaceChar,
  wordLeft,
  wordRight,
} from "./tui-components.mjs";

/**
 * Splits one line into chunks of at most `width` cells, breaking after a run of spaces when one
 * fits and mid-word otherwise: [{ text, startIndex, endIndex }].
 */
export function wordWrapLine(line, width) {
  if (!line || width <= 0) return [{ text: "", startIndex: 0, endIndex: 0 }];
  if (visibleWidth(line) <= width) return [{ text: line, startIndex: 0, endIndex: line.length }];
  const chunks = [];
  const parts = [...graphemes.segment(line)];
  const cut = (from, to) => chunks.push({ text: line.slice(from, to), startIndex: from, endIndex: to });
  let cells = 0;
  let start = 0;
  let breakAt = -1;
  let breakCells = 0;
  for (let i = 0; i < parts.length; i++) {
    const { segment, index } = parts[i];
    const w = visibleWidth(segment);
    if (cells + w > width) {
      if (breakAt >= 0 && cells - breakCells + w <= width) {
        cut(start, breakAt);
        start = breakAt;
        cells -= breakCells;
      } else if (start < index) {
        cut(start, index);
        start = index;
        cells = 0;
      }
      breakAt = -1;
    }
    if (w > width) {
      const inner = wordWrapLine(segment, width);
      for (const piece of inner.slice(0, -1)) {
        chunks.push({ text: piece.text, startIndex: index + piece.startIndex, endIndex: index + piece.endIndex });
      }
      const last = inner[inner.length - 1];
      start = index + last.startIndex;
      cells = visibleWidth(last.text);
      breakAt = -1;
      continue;
    }
    cells += w;
    const next = parts[i + 1];
    if (isWhitespaceChar(segment) && next && !isWhitespaceChar(next.segment)) {
      breakAt = next.index;
      breakCells = cells;
    }
  }
  cut(start, line.length);
  return chunks;
}

const normalize = (text) => text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").replace(/\t/g, "    ");

export class Editor {
  focused = false;
  onSubmit;
  onChange;
  disableSubmit = false;
  #lines = [""];
  #line = 0;
  #col = 0;
  #scroll = 0;
  #layoutWidth = 80;
  #history = [];
  #historyIndex = -1;
  #kills = new KillRing();
  #last = null;
  #undo = [];
  #jump = null;
  #paste = null;

  constructor(tui, theme, options = {}) {
    this.tui = tui;
    this.theme = theme;
    this.borderColor = theme.borderColor;
    const padding = options.paddingX ?? 0;
    this.paddingX = Number.isFinite(padding) ? Math.max(0, Math.floor(padding)) : 0;
    const maxVisible = options.autocompleteMaxVisible ?? 5;
    this.autocompleteMaxVisible = Number.isFinite(maxVisible) ? Math.max(3, Math.min(20, Math.floor(maxVisible))) : 5;
  }

  getPaddingX() {
    return this.paddingX;
  }

  setPaddingX(padding) {
    const next = Number.isFinite(padding) ? Math.max(0, Math.floor(padding)) : 0;
    if (next !== this.paddingX) {
      this.paddingX = next;
      this.tui.requestRender();
    }
  }

  getAutocompleteMaxVisible() {
    return this.autocompleteMaxVisible;
  }

  setAutocompleteMaxVisible(maxVisible) {
    const next = Number.isFinite(maxVisible) ? Math.max(3, Math.min(20, Math.floor(maxVisible))) : 5;
    if (next !== this.autocompleteMaxVisible) {
      this.autocompleteMaxVisible = next;
      this.tui.requestRender();
    }
  }

  /** Accepted for compatibility; pi-rs's Editor offers no autocomplete. */
  setAutocompleteProvider(provider) {
    this.autocompleteProvider = provider;
  }

  isShowingAutocomplete() {
    return false;
  }

  addToHistory(text) {
    const trimmed = text.trim();
    if (!trimmed || this.#history[0] === trimmed) return;
    this.#history.unshift(trimmed);
    if (this.#history.length > 100) this.#history.pop();
  }

  getText() {
    return this.#lines.join("\n");
  }

  getExpandedText() {
    return this.getText();
  }

  getLines() {
    return [...this.#lines];
  }

  getCursor() {
    return { line: this.#line, col: this.#col };
  }

  setText(text) {
    this.#last = null;
    this.#historyIndex = -1;
    const clean = normalize(text);
    if (this.getText() !== clean) this.#pushUndo();
    this.#replaceAll(clean);
  }

  insertTextAtCursor(text) {
    if (!text) return;
    this.#pushUndo();
    this.#last = null;
    this.#historyIndex = -1;
    this.#insert(text);
  }

  invalidate() {}

  // --- Rendering -----------------------------------------------------------------------------

  #layout(width) {
    if (this.#lines.length === 1 && this.#lines[0] === "") return [{ text: "", cursor: 0 }];
    const out = [];
    this.#lines.forEach((line, i) => {
      const current = i === this.#line;
      if (visibleWidth(line) <= width) {
        out.push(current ? { text: line, cursor: this.#col } : { text: line });
        return;
      }
      const chunks = wordWrapLine(line, width);
      chunks.forEach((chunk, k) => {
        const last = k === chunks.length - 1;
        let has = false;
        let at = 0;
        if (current) {
          has = last ? this.#col >= chunk.startIndex : this.#col >= chunk.startIndex && this.#col < chunk.endIndex;
          at = Math.min(this.#col - chunk.startIndex, last ? Number.POSITIVE_INFINITY : chunk.text.length);
        }
        out.push(has ? { text: chunk.text, cursor: at } : { text: chunk.text });
      });
    });
    return out;
  }

  #rows() {
    return Math.max(5, Math.floor((this.tui?.terminal?.rows ?? 24) * 0.3));
  }

  render(width) {
    const padding = Math.min(this.paddingX, Math.max(0, Math.floor((width - 1) / 2)));
    const content = Math.max(1, width - padding * 2);
    const layoutWidth = Math.max(1, content - (padding ? 0 : 1));
    this.#layoutWidth = layoutWidth;
    const rows = this.#layout(layoutWidth);
    const max = this.#rows();
    let cursorRow = rows.findIndex((r) => r.cursor !== undefined);
    if (cursorRow === -1) cursorRow = 0;
    if (cursorRow < this.#scroll) this.#scroll = cursorRow;
    else if (cursorRow >= this.#scroll + max) this.#scroll = cursorRow - max + 1;
    this.#scroll = Math.max(0, Math.min(this.#scroll, Math.max(0, rows.length - max)));
    const shown = rows.slice(this.#scroll, this.#scroll + max);
    const side = " ".repeat(padding);
    const out = [];
    if (this.#scroll > 0) {
      const label = `─── ↑ ${this.#scroll} more `;
      const rest = width - visibleWidth(label);
      out.push(this.borderColor(rest >= 0 ? label + "─".repeat(rest) : truncateToWidth(label, width)));
    } else {
      out.push(this.borderColor("─").repeat(width));
    }
    for (const row of shown) {
      let text = row.text;
      let cells = visibleWidth(row.text);
      let rightSide = side;
      if (row.cursor !== undefined) {
        const before = text.slice(0, row.cursor);
        const after = text.slice(row.cursor);
        const marker = this.focused ? CURSOR_MARKER : "";
        if (after.length > 0) {
          const first = graphemes.segment(after)[Symbol.iterator]().next().value.segment;
          text = `${before}${marker}\x1b[7m${first}\x1b[0m${after.slice(first.length)}`;
        } else {
          text = `${before}${marker}\x1b[7m \x1b[0m`;
          cells += 1;
          if (cells > content && padding > 0) rightSide = side.slice(1);
        }
      }
      out.push(`${side}${text}${" ".repeat(Math.max(0, content - cells))}${rightSide}`);
    }
    const below = rows.length - (this.#scroll + shown.length);
    if (below > 0) {
      const label = `─── ↓ ${below} more `;
      out.push(this.borderColor(label + "─".repeat(Math.max(0, width - visibleWidth(label)))));
    } else {
      out.push(this.borderColor("─").repeat(width));
    }
    return out;
  }

  // --- Input ---------------------------------------------------------------------------------

  handleInput(data) {
    const kb = getKeybindings();
    const on = (action) => kb.matches(data, action);
    if (this.#jump !== null) {
      if (on("tui.editor.jumpForward") || on("tui.editor.jumpBackward")) {
        this.#jump = null;
        return;
      }
      const typed = decodePrintableKey(data) ?? (data.charCodeAt(0) >= 32 ? data : undefined);
      const direction = this.#jump;
      this.#jump = null;
      if (typed !== undefined) {
        this.#jumpTo(typed, direction);
        return;
      }
    }
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
        if (pasted.length > 0) this.#pasteText(pasted);
        if (rest.length > 0) this.handleInput(rest);
      }
      return;
    }
    if (on("tui.input.copy")) return;
    if (on("tui.editor.undo")) return void this.#popUndo();
    if (on("tui.input.tab")) return;
    if (on("tui.editor.deleteToLineEnd")) return void this.#killToEnd();
    if (on("tui.editor.deleteToLineStart")) return void this.#killToStart();
    if (on("tui.editor.deleteWordBackward")) return void this.#killWordLeft();
    if (on("tui.editor.deleteWordForward")) return void this.#killWordRight();
    if (on("tui.editor.deleteCharBackward") || matchesKey(data, "shift+backspace")) return void this.#backspace();
    if (on("tui.editor.deleteCharForward") || matchesKey(data, "shift+delete")) return void this.#deleteForward();
    if (on("tui.editor.yank")) return void this.#yank();
    if (on("tui.editor.yankPop")) return void this.#yankPop();
    if (on("tui.editor.cursorLineStart")) return void this.#setCol(0, true);
    if (on("tui.editor.cursorLineEnd")) return void this.#setCol(this.#current().length, true);
    if (on("tui.editor.cursorWordLeft")) return void this.#wordLeft();
    if (on("tui.editor.cursorWordRight")) return void this.#wordRight();
    const newline =
      on("tui.input.newLine") ||
      (data.charCodeAt(0) === 10 && data.length > 1) ||
      data === "\x1b\r" ||
      data === "\x1b[13;2~" ||
      (data.length > 1 && data.includes("\x1b") && data.includes("\r")) ||
      data === "\n";
    if (newline) {
      if (this.#backslashSubmits(data, kb)) {
        this.#backspace();
        this.#submit();
      } else {
        this.#newLine();
      }
      return;
    }
    if (on("tui.input.submit")) {
      if (this.disableSubmit) return;
      if (this.#col > 0 && this.#current()[this.#col - 1] === "\\") {
        this.#backspace();
        this.#newLine();
        return;
      }
      this.#submit();
      return;
    }
    if (on("tui.editor.cursorUp")) {
      const empty = this.#lines.length === 1 && this.#lines[0] === "";
      if (empty || (this.#historyIndex > -1 && this.#visualRow() === 0)) this.#browseHistory(-1);
      else if (this.#visualRow() === 0) this.#setCol(0, true);
      else this.#moveVertical(-1);
      return;
    }
    if (on("tui.editor.cursorDown")) {
      const lastRow = this.#visualRow() === this.#visualMap().length - 1;
      if (this.#historyIndex > -1 && lastRow) this.#browseHistory(1);
      else if (lastRow) this.#setCol(this.#current().length, true);
      else this.#moveVertical(1);
      return;
    }
    if (on("tui.editor.cursorRight")) return void this.#moveRight();
    if (on("tui.editor.cursorLeft")) return void this.#moveLeft();
    if (on("tui.editor.pageUp")) return void this.#moveVertical(-this.#rows(), true);
    if (on("tui.editor.pageDown")) return void this.#moveVertical(this.#rows(), true);
    if (on("tui.editor.jumpForward")) {
      this.#jump = "forward";
      return;
    }
    if (on("tui.editor.jumpBackward")) {
      this.#jump = "backward";
      return;
    }
    if (matchesKey(data, "shift+space")) return void this.#type(" ");
    const printable = decodePrintableKey(data);
    if (printable !== undefined) return void this.#type(printable);
    if (data.charCodeAt(0) >= 32) this.#type(data);
  }

  // --- Editing -------------------------------------------------------------------------------

  #current() {
    return this.#lines[this.#line] || "";
  }

  #changed() {
    this.onChange?.(this.getText());
  }

  #setCol(col, resetAction = false) {
    if (resetAction) this.#last = null;
    this.#col = col;
  }

  #pushUndo() {
    this.#undo.push(structuredClone({ lines: this.#lines, line: this.#line, col: this.#col }));
  }

  #popUndo() {
    this.#historyIndex = -1;
    const snapshot = this.#undo.pop();
    if (!snapshot) return;
    this.#lines = snapshot.lines;
    this.#line = snapshot.line;
    this.#col = snapshot.col;
    this.#last = null;
    this.#changed();
  }

  #replaceAll(text) {
    const lines = text.split("\n");
    this.#lines = lines.length === 0 ? [""] : lines;
    this.#line = this.#lines.length - 1;
    this.#col = this.#lines[this.#line]?.length || 0;
    this.#scroll = 0;
    this.#changed();
  }

  #insert(text) {
    if (!text) return;
    const pieces = normalize(text).split("\n");
    const line = this.#current();
    const before = line.slice(0, this.#col);
    const after = line.slice(this.#col);
    if (pieces.length === 1) {
      this.#lines[this.#line] = before + pieces[0] + after;
      this.#col += pieces[0].length;
    } else {
      const last = pieces[pieces.length - 1];
      this.#lines = [
        ...this.#lines.slice(0, this.#line),
        before + pieces[0],
        ...pieces.slice(1, -1),
        last + after,
        ...this.#lines.slice(this.#line + 1),
      ];
      this.#line += pieces.length - 1;
      this.#col = last.length;
    }
    this.#changed();
  }

  #type(text) {
    this.#historyIndex = -1;
    if (isWhitespaceChar(text) || this.#last !== "type-word") this.#pushUndo();
    this.#last = "type-word";
    const line = this.#current();
    this.#lines[this.#line] = line.slice(0, this.#col) + text + line.slice(this.#col);
    this.#col += text.length;
    this.#changed();
  }

  #pasteText(pasted) {
    this.#historyIndex = -1;
    this.#last = null;
    this.#pushUndo();
    const decoded = pasted.replace(/\x1b\[(\d+);5u/g, (match, code) => {
      const cp = Number(code);
      if (cp >= 97 && cp <= 122) return String.fromCharCode(cp - 96);
      if (cp >= 65 && cp <= 90) return String.fromCharCode(cp - 64);
      return match;
    });
    let text = [...normalize(decoded)].filter((ch) => ch === "\n" || ch.charCodeAt(0) >= 32).join("");
    if (/^[/~.]/.test(text) && this.#col > 0 && /\w/.test(this.#current()[this.#col - 1])) text = ` ${text}`;
    this.#insert(text);
  }

  #newLine() {
    this.#historyIndex = -1;
    this.#last = null;
    this.#pushUndo();
    const line = this.#current();
    this.#lines[this.#line] = line.slice(0, this.#col);
    this.#lines.splice(this.#line + 1, 0, line.slice(this.#col));
    this.#line++;
    this.#col = 0;
    this.#changed();
  }

  #backslashSubmits(data, kb) {
    if (this.disableSubmit || !matchesKey(data, "enter")) return false;
    const keys = kb.getKeys("tui.input.submit");
    if (!keys.includes("shift+enter") && !keys.includes("shift+return")) return false;
    return this.#col > 0 && this.#current()[this.#col - 1] === "\\";
  }

  #submit() {
    const text = this.getText().trim();
    this.#lines = [""];
    this.#line = 0;
    this.#col = 0;
    this.#historyIndex = -1;
    this.#scroll = 0;
    this.#undo = [];
    this.#last = null;
    this.onChange?.("");
    this.onSubmit?.(text);
  }

  #joinWithPrevious() {
    const previous = this.#lines[this.#line - 1] || "";
    this.#lines[this.#line - 1] = previous + this.#current();
    this.#lines.splice(this.#line, 1);
    this.#line--;
    this.#col = previous.length;
  }

  #joinWithNext() {
    this.#lines[this.#line] = this.#current() + (this.#lines[this.#line + 1] || "");
    this.#lines.splice(this.#line + 1, 1);
  }

  #backspace() {
    this.#historyIndex = -1;
    this.#last = null;
    if (this.#col > 0) {
      this.#pushUndo();
      const line = this.#current();
      const n = graphemeBefore(line, this.#col);
      this.#lines[this.#line] = line.slice(0, this.#col - n) + line.slice(this.#col);
      this.#col -= n;
    } else if (this.#line > 0) {
      this.#pushUndo();
      this.#joinWithPrevious();
    }
    this.#changed();
  }

  #deleteForward() {
    this.#historyIndex = -1;
    this.#last = null;
    const line = this.#current();
    if (this.#col < line.length) {
      this.#pushUndo();
      this.#lines[this.#line] = line.slice(0, this.#col) + line.slice(this.#col + graphemeAfter(line, this.#col));
    } else if (this.#line < this.#lines.length - 1) {
      this.#pushUndo();
      this.#joinWithNext();
    }
    this.#changed();
  }

  #killToStart() {
    this.#historyIndex = -1;
    const line = this.#current();
    if (this.#col > 0) {
      this.#pushUndo();
      this.#kills.push(line.slice(0, this.#col), { prepend: true, accumulate: this.#last === "kill" });
      this.#last = "kill";
      this.#lines[this.#line] = line.slice(this.#col);
      this.#col = 0;
    } else if (this.#line > 0) {
      this.#pushUndo();
      this.#kills.push("\n", { prepend: true, accumulate: this.#last === "kill" });
      this.#last = "kill";
      this.#joinWithPrevious();
    }
    this.#changed();
  }

  #killToEnd() {
    this.#historyIndex = -1;
    const line = this.#current();
    if (this.#col < line.length) {
      this.#pushUndo();
      this.#kills.push(line.slice(this.#col), { prepend: false, accumulate: this.#last === "kill" });
      this.#last = "kill";
      this.#lines[this.#line] = line.slice(0, this.#col);
    } else if (this.#line < this.#lines.length - 1) {
      this.#pushUndo();
      this.#kills.push("\n", { prepend: false, accumulate: this.#last === "kill" });
      this.#last = "kill";
      this.#joinWithNext();
    }
    this.#changed();
  }

  #killWordLeft() {
    this.#historyIndex = -1;
    const line = this.#current();
    if (this.#col === 0) {
      if (this.#line > 0) {
        this.#pushUndo();
        this.#kills.push("\n", { prepend: true, accumulate: this.#last === "kill" });
        this.#last = "kill";
        this.#joinWithPrevious();
      }
    } else {
      this.#pushUndo();
      const accumulate = this.#last === "kill";
      const from = wordLeft(line, this.#col);
      this.#kills.push(line.slice(from, this.#col), { prepend: true, accumulate });
      this.#last = "kill";
      this.#lines[this.#line] = line.slice(0, from) + line.slice(this.#col);
      this.#col = from;
    }
    this.#changed();
  }

  #killWordRight() {
    this.#historyIndex = -1;
    const line = this.#current();
    if (this.#col >= line.length) {
      if (this.#line < this.#lines.length - 1) {
        this.#pushUndo();
        this.#kills.push("\n", { prepend: false, accumulate: this.#last === "kill" });
        this.#last = "kill";
        this.#joinWithNext();
      }
    } else {
      this.#pushUndo();
      const accumulate = this.#last === "kill";
      const to = wordRight(line, this.#col);
      this.#kills.push(line.slice(this.#col, to), { prepend: false, accumulate });
      this.#last = "kill";
      this.#lines[this.#line] = line.slice(0, this.#col) + line.slice(to);
    }
    this.#changed();
  }

  #yank() {
    if (this.#kills.length === 0) return;
    this.#pushUndo();
    this.#insertRaw(this.#kills.peek());
    this.#last = "yank";
  }

  #yankPop() {
    if (this.#last !== "yank" || this.#kills.length <= 1) return;
    this.#pushUndo();
    this.#removeBeforeCursor(this.#kills.peek() || "");
    this.#changed();
    this.#kills.rotate();
    this.#insertRaw(this.#kills.peek() || "");
    this.#last = "yank";
  }

  /** Inserts killed text (which may hold newlines) at the cursor. */
  #insertRaw(text) {
    const pieces = text.split("\n");
    const line = this.#current();
    const before = line.slice(0, this.#col);
    const after = line.slice(this.#col);
    if (pieces.length === 1) {
      this.#lines[this.#line] = before + text + after;
      this.#col += text.length;
    } else {
      const last = pieces[pieces.length - 1];
      this.#lines.splice(this.#line, 1, before + pieces[0], ...pieces.slice(1, -1), last + after);
      this.#line += pieces.length - 1;
      this.#col = last.length;
    }
    this.#changed();
  }

  /** Removes `text` (just yanked) from before the cursor. */
  #removeBeforeCursor(text) {
    const pieces = text.split("\n");
    if (pieces.length === 1) {
      const line = this.#current();
      this.#lines[this.#line] = line.slice(0, this.#col - text.length) + line.slice(this.#col);
      this.#col -= text.length;
      return;
    }
    const startLine = this.#line - (pieces.length - 1);
    const startCol = (this.#lines[startLine] || "").length - pieces[0].length;
    const rest = this.#current().slice(this.#col);
    this.#lines.splice(startLine, pieces.length, (this.#lines[startLine] || "").slice(0, startCol) + rest);
    this.#line = startLine;
    this.#col = startCol;
  }

  #jumpTo(ch, direction) {
    this.#last = null;
    const forward = direction === "forward";
    for (let i = this.#line; forward ? i < this.#lines.length : i >= 0; i += forward ? 1 : -1) {
      const line = this.#lines[i] || "";
      const from = i === this.#line ? (forward ? this.#col + 1 : this.#col - 1) : undefined;
      const at = forward ? line.indexOf(ch, from) : line.lastIndexOf(ch, from);
      if (at !== -1) {
        this.#line = i;
        this.#col = at;
        return;
      }
    }
  }

  #wordLeft() {
    this.#last = null;
    if (this.#col === 0) {
      if (this.#line > 0) {
        this.#line--;
        this.#col = this.#current().length;
      }
      return;
    }
    this.#col = wordLeft(this.#current(), this.#col);
  }

  #wordRight() {
    this.#last = null;
    if (this.#col >= this.#current().length) {
      if (this.#line < this.#lines.length - 1) {
        this.#line++;
        this.#col = 0;
      }
      return;
    }
    this.#col = wordRight(this.#current(), this.#col);
  }

  #moveLeft() {
    this.#last = null;
    if (this.#col > 0) this.#col -= graphemeBefore(this.#current(), this.#col);
    else if (this.#line > 0) {
      this.#line--;
      this.#col = this.#current().length;
    }
  }

  #moveRight() {
    this.#last = null;
    const line = this.#current();
    if (this.#col < line.length) this.#col += graphemeAfter(line, this.#col);
    else if (this.#line < this.#lines.length - 1) {
      this.#line++;
      this.#col = 0;
    }
  }

  /** Visual rows: { line, start, length } per wrapped chunk of every logical line. */
  #visualMap() {
    const rows = [];
    this.#lines.forEach((line, i) => {
      if (line.length === 0 || visibleWidth(line) <= this.#layoutWidth) {
        rows.push({ line: i, start: 0, length: line.length });
        return;
      }
      for (const chunk of wordWrapLine(line, this.#layoutWidth)) {
        rows.push({ line: i, start: chunk.startIndex, length: chunk.endIndex - chunk.startIndex });
      }
    });
    return rows;
  }

  #visualRow(rows = this.#visualMap()) {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (row.line !== this.#line) continue;
      const offset = this.#col - row.start;
      const lastOfLine = i === rows.length - 1 || rows[i + 1].line !== row.line;
      if (offset >= 0 && (offset < row.length || (lastOfLine && offset === row.length))) return i;
    }
    return rows.length - 1;
  }

  #moveVertical(delta, clamp = false) {
    this.#last = null;
    const rows = this.#visualMap();
    const from = this.#visualRow(rows);
    let to = from + delta;
    if (clamp) to = Math.max(0, Math.min(rows.length - 1, to));
    if (to < 0 || to >= rows.length) return;
    const source = rows[from];
    const target = rows[to];
    const lastOfTarget = to === rows.length - 1 || rows[to + 1].line !== target.line;
    const targetMax = lastOfTarget ? target.length : Math.max(0, target.length - 1);
    const column = Math.min(this.#col - source.start, targetMax);
    this.#line = target.line;
    this.#col = Math.min(target.start + column, this.#current().length);
    // Never leave the cursor inside a grapheme cluster.
    for (const { segment, index } of graphemes.segment(this.#current())) {
      if (index > this.#col) break;
      if (this.#col < index + segment.length && this.#col > index) {
        this.#col = index;
        break;
      }
    }
  }

  #browseHistory(direction) {
    this.#last = null;
    if (this.#history.length === 0) return;
    const next = this.#historyIndex - direction;
    if (next < -1 || next >= this.#history.length) return;
    if (this.#historyIndex === -1 && next >= 0) this.#pushUndo();
    this.#historyIndex = next;
    this.#replaceAll(next === -1 ? "" : this.#history[next] || "");
  }
}
