// Terminal text measuring for pi-rs's `@mariozechner/pi-tui` module (shared helper).
//
// Column widths, ANSI-aware truncation and word wrapping that give the same cells and the same
// escape codes as pi-tui 0.73.1 (`visibleWidth`, `truncateToWidth`, `wrapTextWithAnsi`), so a
// component an extension renders lines up exactly as it does in pi. Widths follow pi-tui's rules:
// graphemes (Intl.Segmenter); zero width for marks, controls and default-ignorables; 2 for RGI
// emoji, regional indicators and East Asian Wide/Fullwidth; a tab counts 3; ANSI CSI (ending in
// m, G, K, H or J), OSC and APC sequences count 0.

/** East_Asian_Width W and F ranges of Unicode 17 (start, end pairs, inclusive). */
const WIDE_RANGES = [
  0x1100, 0x115f, 0x231a, 0x231b, 0x2329, 0x232a, 0x23e9, 0x23ec, 0x23f0, 0x23f0, 0x23f3, 0x23f3,
  0x25fd, 0x25fe, 0x2614, 0x2615, 0x2630, 0x2637, 0x2648, 0x2653, 0x267f, 0x267f, 0x268a, 0x268f,
  0x2693, 0x2693, 0x26a1, 0x26a1, 0x26aa, 0x26ab, 0x26bd, 0x26be, 0x26c4, 0x26c5, 0x26ce, 0x26ce,
  0x26d4, 0x26d4, 0x26ea, 0x26ea, 0x26f2, 0x26f3, 0x26f5, 0x26f5, 0x26fa, 0x26fa, 0x26fd, 0x26fd,
  0x2705, 0x2705, 0x270a, 0x270b, 0x2728, 0x2728, 0x274c, 0x274c, 0x274e, 0x274e, 0x2753, 0x2755,
  0x2757, 0x2757, 0x2795, 0x2797, 0x27b0, 0x27b0, 0x27bf, 0x27bf, 0x2b1b, 0x2b1c, 0x2b50, 0x2b50,
  0x2b55, 0x2b55, 0x2e80, 0x2e99, 0x2e9b, 0x2ef3, 0x2f00, 0x2fd5, 0x2ff0, 0x303e, 0x3041, 0x3096,
  0x3099, 0x30ff, 0x3105, 0x312f, 0x3131, 0x318e, 0x3190, 0x31e5, 0x31ef, 0x321e, 0x3220, 0x3247,
  0x3250, 0xa48c, 0xa490, 0xa4c6, 0xa960, 0xa97c, 0xac00, 0xd7a3, 0xf900, 0xfaff, 0xfe10, 0xfe19,
  0xfe30, 0xfe52, 0xfe54, 0xfe66, 0xfe68, 0xfe6b, 0xff01, 0xff60, 0xffe0, 0xffe6,
  0x16fe0, 0x16fe4, 0x16ff0, 0x16ff6, 0x17000, 0x18cda, 0x18cff, 0x18d20, 0x18d80, 0x18df2,
  0x18e00, 0x19191, 0x191a0, 0x191d2, 0x1aff0, 0x1aff3, 0x1aff5, 0x1affb, 0x1affd, 0x1affe,
  0x1b000, 0x1b128, 0x1b132, 0x1b132, 0x1b150, 0x1b152, 0x1b155, 0x1b155, 0x1b164, 0x1b168,
  0x1b170, 0x1b2fb, 0x1d300, 0x1d356, 0x1d360, 0x1d376, 0x1f004, 0x1f004, 0x1f0cf, 0x1f0cf,
  0x1f18e, 0x1f18e, 0x1f191, 0x1f19a, 0x1f1ae, 0x1f1ae, 0x1f200, 0x1f202, 0x1f210, 0x1f23b,
  0x1f240, 0x1f248, 0x1f250, 0x1f251, 0x1f260, 0x1f265, 0x1f300, 0x1f320, 0x1f32d, 0x1f335,
  0x1f337, 0x1f37c, 0x1f37e, 0x1f393, 0x1f3a0, 0x1f3ca, 0x1f3cf, 0x1f3d3, 0x1f3e0, 0x1f3f0,
  0x1f3f4, 0x1f3f4, 0x1f3f8, 0x1f43e, 0x1f440, 0x1f440, 0x1f442, 0x1f4fc, 0x1f4ff, 0x1f53d,
  0x1f54b, 0x1f54e, 0x1f550, 0x1f567, 0x1f57a, 0x1f57a, 0x1f595, 0x1f596, 0x1f5a4, 0x1f5a4,
  0x1f5fb, 0x1f64f, 0x1f680, 0x1f6c5, 0x1f6cc, 0x1f6cc, 0x1f6d0, 0x1f6d2, 0x1f6d5, 0x1f6d9,
  0x1f6dc, 0x1f6df, 0x1f6eb, 0x1f6ec, 0x1f6f4, 0x1f6fc, 0x1f7da, 0x1f7da, 0x1f7e0, 0x1f7eb,
  0x1f7f0, 0x1f7f0, 0x1f90c, 0x1f93a, 0x1f93c, 0x1f945, 0x1f947, 0x1f9ff, 0x1fa70, 0x1fa7c,
  0x1fa80, 0x1fac6, 0x1fac8, 0x1fac8, 0x1facc, 0x1fadd, 0x1fadf, 0x1faeb, 0x1faef, 0x1fafa,
  0x20000, 0x2fffd, 0x30000, 0x3fffd,
];

function isWideCodePoint(cp) {
  let lo = 0;
  let hi = WIDE_RANGES.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < WIDE_RANGES[mid * 2]) hi = mid - 1;
    else if (cp > WIDE_RANGES[mid * 2 + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

const cellsOf = (cp) => (isWideCodePoint(cp) ? 2 : 1);

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const ZERO_WIDTH = /^(?:\p{Default_Ignorable_Code_Point}|\p{Control}|\p{Mark}|\p{Surrogate})+$/v;
const LEADING_INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Mark}\p{Surrogate}]+/v;
const EMOJI = /^\p{RGI_Emoji}$/v;

/** Cheap pre-check before the emoji regex: pictograph blocks, VS16 or a multi-code-point cluster. */
function mayBeEmoji(cluster) {
  const cp = cluster.codePointAt(0);
  return (
    (cp >= 0x1f000 && cp <= 0x1fbff) ||
    (cp >= 0x2300 && cp <= 0x23ff) ||
    (cp >= 0x2600 && cp <= 0x27bf) ||
    (cp >= 0x2b50 && cp <= 0x2b55) ||
    cluster.includes("\uFE0F") ||
    cluster.length > 2
  );
}

/** Terminal cells of one grapheme cluster. */
export function clusterWidth(cluster) {
  if (ZERO_WIDTH.test(cluster)) return 0;
  if (mayBeEmoji(cluster) && EMOJI.test(cluster)) return 2;
  const cp = cluster.replace(LEADING_INVISIBLE, "").codePointAt(0);
  if (cp === undefined) return 0;
  if (cp >= 0x1f1e6 && cp <= 0x1f1ff) return 2;
  let cells = cellsOf(cp);
  // Halfwidth/fullwidth forms and the Thai/Lao AM vowel that join the cluster add their own cells.
  for (const ch of cluster.slice(1)) {
    const c = ch.codePointAt(0);
    if (c >= 0xff00 && c <= 0xffef) cells += cellsOf(c);
    else if (c === 0x0e33 || c === 0x0eb3) cells += 1;
  }
  return cells;
}

function plainAscii(text) {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** The escape sequence starting at `at` (CSI ending m/G/K/H/J, OSC or APC), or null. */
export function escapeAt(text, at) {
  if (text[at] !== "\x1b") return null;
  const kind = text[at + 1];
  if (kind === "[") {
    for (let j = at + 2; j < text.length; j++) {
      if ("mGKHJ".includes(text[j])) return text.slice(at, j + 1);
    }
    return null;
  }
  if (kind === "]" || kind === "_") {
    for (let j = at + 2; j < text.length; j++) {
      if (text[j] === "\x07") return text.slice(at, j + 1);
      if (text[j] === "\x1b" && text[j + 1] === "\\") return text.slice(at, j + 2);
    }
  }
  return null;
}

/** Splits text into escape sequences and visible runs: [{ esc } | { text }]. */
function pieces(text) {
  const out = [];
  let run = "";
  let i = 0;
  while (i < text.length) {
    const esc = escapeAt(text, i);
    if (esc) {
      if (run) out.push({ text: run });
      run = "";
      out.push({ esc });
      i += esc.length;
    } else {
      run += text[i];
      i++;
    }
  }
  if (run) out.push({ text: run });
  return out;
}

const widthMemo = new Map();

/** Terminal columns `text` takes (escape codes 0, tab 3). */
export function visibleWidth(text) {
  if (text.length === 0) return 0;
  if (plainAscii(text)) return text.length;
  const memo = widthMemo.get(text);
  if (memo !== undefined) return memo;
  let visible = "";
  for (const piece of pieces(text.replaceAll("\t", "   "))) {
    if (piece.text) visible += piece.text;
  }
  let cells = 0;
  for (const { segment } of graphemes.segment(visible)) cells += clusterWidth(segment);
  if (widthMemo.size >= 512) widthMemo.delete(widthMemo.keys().next().value);
  widthMemo.set(text, cells);
  return cells;
}

/**
 * Walks the visible units of `text` (tabs as 3 cells, grapheme clusters elsewhere) in order,
 * with the escape codes met since the previous unit. `visit(unit, cells, escapes)` returns
 * false to stop.
 */
function walkUnits(text, visit) {
  let escapes = "";
  for (const piece of pieces(text)) {
    if (piece.esc) {
      escapes += piece.esc;
      continue;
    }
    for (const part of piece.text.split(/(\t)/)) {
      if (part === "") continue;
      if (part === "\t") {
        if (visit("\t", 3, escapes) === false) return false;
        escapes = "";
        continue;
      }
      for (const { segment } of graphemes.segment(part)) {
        if (visit(segment, clusterWidth(segment), escapes) === false) return false;
        escapes = "";
      }
    }
  }
  return true;
}

/** The longest prefix of `text` fitting `max` cells (escape codes kept only before kept units). */
function clip(text, max) {
  if (max <= 0 || text.length === 0) return { text: "", width: 0 };
  if (plainAscii(text)) {
    const kept = text.slice(0, max);
    return { text: kept, width: kept.length };
  }
  let kept = "";
  let width = 0;
  walkUnits(text, (unit, cells, escapes) => {
    if (width + cells > max) return false;
    kept += escapes + unit;
    width += cells;
    return true;
  });
  return { text: kept, width };
}

function finishTruncated(kept, keptWidth, ellipsis, ellipsisWidth, max, pad) {
  const reset = "\x1b[0m";
  const line = ellipsis.length > 0 ? `${kept}${reset}${ellipsis}${reset}` : `${kept}${reset}`;
  return pad ? line + " ".repeat(Math.max(0, max - keptWidth - ellipsisWidth)) : line;
}

/**
 * Cuts `text` to `max` columns, ending in `ellipsis` (default "...") plus resets when cut;
 * with `pad`, fills to exactly `max` columns.
 */
export function truncateToWidth(text, max, ellipsis = "...", pad = false) {
  if (max <= 0) return "";
  if (text.length === 0) return pad ? " ".repeat(max) : "";
  const ellipsisWidth = visibleWidth(ellipsis);
  if (ellipsisWidth >= max) {
    const width = visibleWidth(text);
    if (width <= max) return pad ? text + " ".repeat(max - width) : text;
    const cut = clip(ellipsis, max);
    if (cut.width === 0) return pad ? " ".repeat(max) : "";
    return finishTruncated("", 0, cut.text, cut.width, max, pad);
  }
  const room = max - ellipsisWidth;
  if (plainAscii(text)) {
    if (text.length <= max) return pad ? text + " ".repeat(max - text.length) : text;
    return finishTruncated(text.slice(0, room), room, ellipsis, ellipsisWidth, max, pad);
  }
  let kept = "";
  let keptWidth = 0;
  let seen = 0;
  let prefixOpen = true;
  const complete = walkUnits(text, (unit, cells, escapes) => {
    if (prefixOpen && keptWidth + cells <= room) {
      kept += escapes + unit;
      keptWidth += cells;
    } else {
      prefixOpen = false;
    }
    seen += cells;
    return seen <= max;
  });
  if (complete) return pad ? text + " ".repeat(Math.max(0, max - seen)) : text;
  return finishTruncated(kept, keptWidth, ellipsis, ellipsisWidth, max, pad);
}

// --- SGR state carried across wrapped lines -------------------------------------------------

function parseHyperlink(esc) {
  if (!esc.startsWith("\x1b]8;")) return undefined;
  const terminator = esc.endsWith("\x07") ? "\x07" : "\x1b\\";
  const body = esc.slice(4, esc.length - terminator.length);
  const split = body.indexOf(";");
  if (split === -1) return undefined;
  const url = body.slice(split + 1);
  if (!url) return null;
  return { params: body.slice(0, split), url, terminator };
}

const FLAG_CODES = { 1: "bold", 2: "dim", 3: "italic", 4: "underline", 5: "blink", 7: "inverse", 8: "hidden", 9: "strike" };
const FLAG_OFF = { 21: ["bold"], 22: ["bold", "dim"], 23: ["italic"], 24: ["underline"], 25: ["blink"], 27: ["inverse"], 28: ["hidden"], 29: ["strike"] };
const FLAG_ORDER = [
  ["bold", "1"],
  ["dim", "2"],
  ["italic", "3"],
  ["underline", "4"],
  ["blink", "5"],
  ["inverse", "7"],
  ["hidden", "8"],
  ["strike", "9"],
];

/** The styles in force after a run of escape codes, re-emittable at the start of a new line. */
export class StyleState {
  flags = new Set();
  fg = null;
  bg = null;
  link = null;

  feed(esc) {
    const link = parseHyperlink(esc);
    if (link !== undefined) {
      this.link = link;
      return;
    }
    if (!esc.endsWith("m")) return;
    const m = esc.match(/\x1b\[([\d;]*)m/);
    if (!m) return;
    if (m[1] === "" || m[1] === "0") {
      this.resetStyles();
      return;
    }
    const parts = m[1].split(";");
    for (let i = 0; i < parts.length; ) {
      const code = Number.parseInt(parts[i], 10);
      if (code === 38 || code === 48) {
        const take = parts[i + 1] === "5" && parts[i + 2] !== undefined ? 3 : parts[i + 1] === "2" && parts[i + 4] !== undefined ? 5 : 0;
        if (take > 0) {
          const color = parts.slice(i, i + take).join(";");
          if (code === 38) this.fg = color;
          else this.bg = color;
          i += take;
          continue;
        }
      }
      if (code === 0) this.resetStyles();
      else if (FLAG_CODES[code]) this.flags.add(FLAG_CODES[code]);
      else if (FLAG_OFF[code]) for (const f of FLAG_OFF[code]) this.flags.delete(f);
      else if (code === 39) this.fg = null;
      else if (code === 49) this.bg = null;
      else if ((code >= 30 && code <= 37) || (code >= 90 && code <= 97)) this.fg = String(code);
      else if ((code >= 40 && code <= 47) || (code >= 100 && code <= 107)) this.bg = String(code);
      i++;
    }
  }

  feedText(text) {
    for (const piece of pieces(text)) if (piece.esc) this.feed(piece.esc);
  }

  resetStyles() {
    this.flags.clear();
    this.fg = null;
    this.bg = null;
  }

  /** Escape codes that restore the current styles (and open hyperlink). */
  reopen() {
    const codes = FLAG_ORDER.filter(([flag]) => this.flags.has(flag)).map(([, code]) => code);
    if (this.fg) codes.push(this.fg);
    if (this.bg) codes.push(this.bg);
    let out = codes.length > 0 ? `\x1b[${codes.join(";")}m` : "";
    if (this.link) out += `\x1b]8;${this.link.params};${this.link.url}${this.link.terminator}`;
    return out;
  }

  /** What must be closed at a line end: underline (it would bleed into padding) and a hyperlink. */
  closeAtLineEnd() {
    let out = this.flags.has("underline") ? "\x1b[24m" : "";
    if (this.link) out += `\x1b]8;;${this.link.terminator}`;
    return out;
  }
}

// --- Word wrapping ------------------------------------------------------------------------------

/** Splits a line into runs of spaces and runs of non-spaces, escape codes riding with the next char. */
function wordsAndGaps(line) {
  const tokens = [];
  let token = "";
  let waiting = "";
  let inGap = false;
  let i = 0;
  while (i < line.length) {
    const esc = escapeAt(line, i);
    if (esc) {
      waiting += esc;
      i += esc.length;
      continue;
    }
    const isSpace = line[i] === " ";
    if (isSpace !== inGap && token) {
      tokens.push(token);
      token = "";
    }
    token += waiting + line[i];
    waiting = "";
    inGap = isSpace;
    i++;
  }
  token += waiting;
  if (token) tokens.push(token);
  return tokens;
}

/** Breaks one over-long word into pieces of at most `width` cells. */
function splitWord(word, width, state) {
  const out = [];
  let line = state.reopen();
  let cells = 0;
  for (const piece of pieces(word)) {
    if (piece.esc) {
      line += piece.esc;
      state.feed(piece.esc);
      continue;
    }
    for (const { segment } of graphemes.segment(piece.text)) {
      if (!segment) continue;
      const w = visibleWidth(segment);
      if (cells + w > width) {
        out.push(line + state.closeAtLineEnd());
        line = state.reopen();
        cells = 0;
      }
      line += segment;
      cells += w;
    }
  }
  if (line) out.push(line);
  return out.length > 0 ? out : [""];
}

function wrapLine(line, width) {
  if (!line) return [""];
  if (visibleWidth(line) <= width) return [line];
  const out = [];
  const state = new StyleState();
  let current = "";
  let cells = 0;
  for (const token of wordsAndGaps(line)) {
    const tokenCells = visibleWidth(token);
    const isGap = token.trim() === "";
    if (tokenCells > width && !isGap) {
      if (current) {
        out.push(current + state.closeAtLineEnd());
        current = "";
        cells = 0;
      }
      const parts = splitWord(token, width, state);
      out.push(...parts.slice(0, -1));
      current = parts[parts.length - 1];
      cells = visibleWidth(current);
      continue;
    }
    if (cells + tokenCells > width && cells > 0) {
      out.push(current.trimEnd() + state.closeAtLineEnd());
      current = isGap ? state.reopen() : state.reopen() + token;
      cells = isGap ? 0 : tokenCells;
    } else {
      current += token;
      cells += tokenCells;
    }
    state.feedText(token);
  }
  if (current) out.push(current);
  return out.length > 0 ? out.map((l) => l.trimEnd()) : [""];
}

/**
 * Word-wraps text to `width` columns keeping ANSI styles: styles open at a break are re-opened
 * on the next line (also across "\n"); no padding is added.
 */
export function wrapTextWithAnsi(text, width) {
  if (!text) return [""];
  const out = [];
  const state = new StyleState();
  for (const line of text.split("\n")) {
    const prefix = out.length > 0 ? state.reopen() : "";
    out.push(...wrapLine(prefix + line, width));
    state.feedText(line);
  }
  return out.length > 0 ? out : [""];
}

/** Pads a line to `width` and passes it through `bg`. */
export function applyBackgroundToLine(line, width, bg) {
  return bg(line + " ".repeat(Math.max(0, width - visibleWidth(line))));
}
