// pi-rs's own `Markdown` component of `@mariozechner/pi-tui` (exported by pi-tui.mjs).
//
// pi-tui draws markdown from the block and inline tokens of the `marked` parser (GFM, with a
// strict `~~strike~~` rule); this module has its own small parser that produces blocks of the
// same shape for the markdown assistants and extensions write (ATX and setext headings,
// paragraphs, fenced and indented code, block quotes, nested bullet and ordered lists, task
// items, GFM tables, thematic breaks, HTML blocks; inline code, emphasis, strong, strikethrough,
// links, autolinks, bare URLs, hard breaks, escapes, inline HTML), then lays them out line by
// line the way pi-tui does: the theme's styles, `highlightCode` for code blocks, the same
// spacing between blocks, width-aware tables and wrapping with `wrapTextWithAnsi`.
// tests/node/shims/tui-markdown.mjs compares the lines with the real component.
// Not reproduced: the rarer CommonMark corners where `marked` has its own rules (see
// docs/extensions.md).

import { applyBackgroundToLine, visibleWidth, wrapTextWithAnsi } from "./tui-text.mjs";

// ---------------------------------------------------------------------------------------------
// Block parser

const BLANK = /^[ \t]*$/;
const ATX = /^ {0,3}(#{1,6})(?=\s|$)(.*)$/;
const HR = /^ {0,3}((?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})$/;
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^( {0,3})([*+-]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const DEF = /^ {0,3}\[((?:\\.|[^\[\]\\])+)\]:[ \t]*(?:<([^<>\n]*)>|(\S+))(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+) *$/;
const TABLE_DELIM = /^ {0,3}\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?[ \t]*$/;
const HTML_BLOCK_TAGS =
  "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|meta|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul";
const HTML_START = new RegExp(`^ {0,3}(?:<(?:script|pre|style|textarea)[\\s>]|<!--|<\\?|<![A-Za-z]|<!\\[CDATA\\[|</?(?:${HTML_BLOCK_TAGS})(?:\\s|/?>|$))`, "i");

/** Whether a line starts a block that ends a paragraph. */
function interruptsParagraph(line, isLast = false) {
  if (BLANK.test(line) || ATX.test(line) || HR.test(line) || QUOTE.test(line) || HTML_START.test(line)) return true;
  const fence = FENCE.exec(line);
  if (fence && !isLast && !(fence[2][0] === "`" && fence[3].includes("`"))) return true;
  const bullet = BULLET.exec(line);
  if (bullet && bullet[4].trim() !== "" && (/^[*+-]$/.test(bullet[2]) || /^1[.)]$/.test(bullet[2]))) return true;
  return false;
}

/** Leading spaces of a line. */
function indentOf(line) {
  return line.length - line.trimStart().length;
}

/** Removes up to `n` leading spaces. */
function dedent(line, n) {
  let i = 0;
  while (i < n && line[i] === " ") i++;
  return line.slice(i);
}

/** Splits a table row into trimmed cell texts (escaped pipes stay in the cell). */
function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  const cells = [];
  let cell = "";
  for (let i = 0; i < row.length; i++) {
    if (row[i] === "\\" && row[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (row[i] === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += row[i];
  }
  cells.push(cell.trim());
  return cells;
}

/** Link reference definitions of the document being parsed: label (normalized) → href. */
let definitions = new Map();

/** Normalizes a link label for lookup: case and inner whitespace do not matter. */
function labelKey(label) {
  return label.trim().replace(/\s+/g, " ").toLowerCase();
}

/** Parses block tokens of `src`; `top` selects paragraphs (top level, quotes) or text (list items). */
function parseBlocks(src, top) {
  const lines = src.split("\n");
  const tokens = [];
  let i = 0;
  const last = () => tokens[tokens.length - 1];
  const blankRun = () => {
    let j = i;
    while (j < lines.length && BLANK.test(lines[j])) j++;
    return j;
  };
  while (i < lines.length) {
    const line = lines[i];
    if (BLANK.test(line)) {
      const j = blankRun();
      // marked's newline rule: the line ending before a blank run plus the run itself; one
      // line ending belongs to the block before, more make a `space` token (an empty line)
      closeOpen(tokens);
      const prev = last();
      const raw = (prev ? "\n" : "") + lines.slice(i, j).join("\n") + (j < lines.length ? "\n" : "");
      if (raw.length > 1 || (!prev && raw.length > 0)) tokens.push({ type: "space" });
      i = j;
      continue;
    }
    if (indentOf(line) >= 4 && !(last() && (last().type === "paragraph" || last().type === "text") && last().open)) {
      const body = [];
      while (i < lines.length && (indentOf(lines[i]) >= 4 || BLANK.test(lines[i]))) {
        body.push(dedent(lines[i], 4));
        i++;
      }
      while (body.length > 0 && body[body.length - 1].trim() === "") {
        body.pop();
      }
      closeOpen(tokens);
      tokens.push({ type: "code", lang: undefined, text: body.join("\n") });
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence && !(fence[2][0] === "`" && fence[3].includes("`")) && !(last()?.open && i === lines.length - 1)) {
      const pad = fence[1].length;
      const marker = fence[2];
      const close = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}[ \\t]*$`);
      const body = [];
      i++;
      while (i < lines.length && !close.test(lines[i])) {
        body.push(dedent(lines[i], pad));
        i++;
      }
      i++;
      closeOpen(tokens);
      const info = fence[3].trim().replace(/\\([!-/:-@[-`{-~])/g, "$1");
      tokens.push({ type: "code", lang: info, text: body.join("\n") });
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      let text = atx[2].trim();
      if (text.endsWith("#")) {
        const trimmed = text.replace(/#+$/, "");
        if (!trimmed || trimmed.endsWith(" ")) text = trimmed.trim();
      }
      closeOpen(tokens);
      tokens.push({ type: "heading", depth: atx[1].length, text, tokens: parseInline(text) });
      i++;
      i = eatBlankLines(lines, i);
      continue;
    }
    const open = last() && last().open ? last() : undefined;
    const def = open ? undefined : DEF.exec(line);
    if (def) {
      if (!definitions.has(labelKey(def[1]))) definitions.set(labelKey(def[1]), def[2] ?? def[3]);
      i = eatBlankLines(lines, i + 1);
      continue;
    }
    if (open && (open.type === "paragraph" || open.type === "text") && SETEXT.test(line) && setextAllowed(open.lines, line)) {
      tokens.pop();
      const text = open.lines.join("\n");
      tokens.push({ type: "heading", depth: line.trim()[0] === "=" ? 1 : 2, text, tokens: parseInline(text) });
      i = eatBlankLines(lines, i + 1);
      continue;
    }
    if (HR.test(line)) {
      closeOpen(tokens);
      tokens.push({ type: "hr" });
      i = eatBlankLines(lines, i + 1);
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      let lazy = false;
      while (i < lines.length) {
        const q = QUOTE.exec(lines[i]);
        if (q) {
          body.push(q[1]);
          lazy = !BLANK.test(q[1]) && !FENCE.test(q[1]) && indentOf(q[1]) < 4;
        } else if (lazy && !interruptsParagraph(lines[i])) {
          body.push(lines[i]);
        } else break;
        i++;
      }
      closeOpen(tokens);
      tokens.push({ type: "blockquote", text: body.join("\n"), tokens: parseBlocks(body.join("\n"), true) });
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet && !(open && open.type === "paragraph" && !interruptsParagraph(line))) {
      closeOpen(tokens);
      i = parseList(lines, i, tokens);
      continue;
    }
    if (HTML_START.test(line)) {
      closeOpen(tokens);
      const body = [];
      const comment = /^ {0,3}<!--/.test(line);
      while (i < lines.length) {
        body.push(lines[i]);
        i++;
        if (comment ? lines[i - 1].includes("-->") : i < lines.length && BLANK.test(lines[i])) break;
      }
      tokens.push({ type: "html", raw: body.join("\n"), text: body.join("\n") });
      i = eatBlankLines(lines, i);
      continue;
    }
    if (top && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]) && line.includes("|") && !open) {
      const header = splitRow(line);
      const delims = splitRow(lines[i + 1]);
      if (header.length === delims.length) {
        const raw = [line, lines[i + 1]];
        i += 2;
        const rows = [];
        while (i < lines.length && !BLANK.test(lines[i]) && !interruptsParagraph(lines[i])) {
          raw.push(lines[i]);
          const cells = splitRow(lines[i]);
          const row = [];
          for (let c = 0; c < header.length; c++) row.push({ tokens: parseInline(cells[c] ?? "") });
          rows.push(row);
          i++;
        }
        const end = eatBlankLines(lines, i);
        const newlines = end - i + (end < lines.length ? 1 : 0);
        i = end;
        tokens.push({ type: "table", raw: raw.join("\n") + "\n".repeat(newlines), header: header.map((h) => ({ tokens: parseInline(h) })), rows });
        continue;
      }
    }
    // Paragraph (top) or text (inside list items): continuation of the open one, or a new one.
    if (open && (open.type === "paragraph" || open.type === "text")) {
      open.lines.push(line);
    } else {
      tokens.push({ type: top ? "paragraph" : "text", lines: [line], open: true });
    }
    i++;
  }
  closeOpen(tokens);
  return tokens;
}

/** Whether paragraph lines can become a setext heading: `marked` refuses when a later line
 *  looks like the start of another block, or the text and underline look like a table. */
function setextAllowed(lines, underline) {
  if (lines.length === 1 && lines[0].includes("|") && TABLE_DELIM.test(underline)) return false;
  return lines.slice(1).every((l) => !BULLET.test(l) && !QUOTE.test(l) && !FENCE.test(l) && !ATX.test(l) && !HTML_START.test(l));
}

/** Finishes an open paragraph or text block: parses its inline content. */
function closeOpen(tokens) {
  const open = tokens[tokens.length - 1];
  if (open && open.open) {
    delete open.open;
    open.tokens = parseInline(open.lines.join("\n"));
  }
}

/** Skips the empty lines after a block that swallows them (marked's trailing `\n+`). */
function eatBlankLines(lines, from) {
  let i = from;
  while (i < lines.length && lines[i] === "") i++;
  return i;
}

/** Parses a list starting at line `start`; returns the index after it. */
function parseList(lines, start, tokens) {
  const first = BULLET.exec(lines[start]);
  const ordered = first[2].length > 1;
  const delimiter = first[2].slice(-1);
  const list = { type: "list", ordered, start: ordered ? Number.parseInt(first[2], 10) : "", loose: false, items: [] };
  let i = start;
  let endedWithBlank = false;
  while (i < lines.length) {
    const m = BULLET.exec(lines[i]);
    if (!m || HR.test(lines[i])) break;
    const isOrdered = m[2].length > 1;
    if (isOrdered !== ordered || m[2].slice(-1) !== delimiter) break;
    if (endedWithBlank) list.loose = true;
    const spaces = m[3].length;
    const markerWidth = m[1].length + m[2].length;
    const contentIndent = m[4] === "" ? markerWidth + 1 : spaces > 4 ? markerWidth + 1 : markerWidth + spaces;
    const body = [spaces > 4 ? " ".repeat(spaces - 1) + m[4] : m[4]];
    i++;
    let blankInside = false;
    let pendingBlank = 0;
    while (i < lines.length) {
      const l = lines[i];
      if (BLANK.test(l)) {
        pendingBlank++;
        i++;
        continue;
      }
      if (indentOf(l) >= contentIndent) {
        if (pendingBlank > 0) blankInside = true;
        for (; pendingBlank > 0; pendingBlank--) body.push("");
        body.push(dedent(l, contentIndent));
        i++;
        continue;
      }
      if (pendingBlank === 0 && !BULLET.test(l) && !HR.test(l) && !FENCE.test(l) && !ATX.test(l) && !/^ {0,3}<(?:[a-z].*>|!--)/i.test(l)) {
        body.push(l.trimStart());
        i++;
        continue;
      }
      break;
    }
    endedWithBlank = pendingBlank > 0;
    let text = body.join("\n");
    // a task item's checkbox is not drawn (pi-tui shows the text only)
    const taskMatch = /^\[[ xX]\] +/.exec(text);
    if (taskMatch) text = text.slice(taskMatch[0].length);
    const itemTokens = parseBlocks(text, false);
    if (blankInside && itemTokens.some((t) => t.type === "space")) list.loose = true;
    list.items.push({ tokens: itemTokens });
    if (i < lines.length && endedWithBlank && !BULLET.test(lines[i])) break;
    if (endedWithBlank && i < lines.length) {
      const next = BULLET.exec(lines[i]);
      if (!next || next[2].length > 1 !== ordered || next[2].slice(-1) !== delimiter) break;
    }
  }
  // `marked` ends the last item with a line break when its text ends in two spaces
  const lastItem = list.items[list.items.length - 1];
  const lastText = lastItem?.tokens[lastItem.tokens.length - 1];
  // a line break; before a blank line the item's text is trimmed instead
  if (lastText && lastText.type === "text" && / {2,}$/.test(lastText.lines[lastText.lines.length - 1])) {
    if (endedWithBlank) lastText.tokens = parseInline(lastText.lines.join("\n").trimEnd());
    else lastText.tokens.push({ type: "br" });
  }
  if (list.loose) {
    for (const item of list.items) for (const t of item.tokens) if (t.type === "text") t.type = "paragraph";
  }
  tokens.push(list);
  // the blank lines after the last item are the next space token's
  while (i > start && BLANK.test(lines[i - 1])) i--;
  return i;
}

// ---------------------------------------------------------------------------------------------
// Inline parser

const PUNCT = /[!-/:-@[-`{-~\p{P}\p{S}]/u;
const SPACE = /\s/u;

/** Parses inline markdown into tokens (text, escape, codespan, strong, em, del, link, br, html). */
function parseInline(src) {
  const out = [];
  const delims = [];
  let text = "";
  const flush = () => {
    if (text) out.push({ type: "text", text });
    text = "";
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const rest = src.slice(i);
    let m;
    if (c === "\\" && i + 1 < src.length && /[!-/:-@[-`{-~]/.test(src[i + 1])) {
      flush();
      out.push({ type: "escape", text: src[i + 1] });
      i += 2;
      continue;
    }
    if (c === "\\" && src[i + 1] === "\n") {
      flush();
      out.push({ type: "br" });
      i += 2;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(rest)[0];
      const close = findCodeClose(src, i + run.length, run.length);
      if (close >= 0) {
        flush();
        let code = src.slice(i + run.length, close).replace(/\n/g, " ");
        if (/[^ ]/.test(code) && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
        out.push({ type: "codespan", text: code });
        i = close + run.length;
        continue;
      }
      text += run;
      i += run.length;
      continue;
    }
    if (c === "<" && (m = /^<([A-Za-z][A-Za-z0-9.+-]{1,31}:[^\s<>]*)>/.exec(rest))) {
      flush();
      out.push({ type: "link", href: m[1], text: m[1], tokens: [{ type: "text", text: m[1] }] });
      i += m[0].length;
      continue;
    }
    if (c === "<" && (m = /^<([A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)>/.exec(rest))) {
      flush();
      out.push({ type: "link", href: `mailto:${m[1]}`, text: m[1], tokens: [{ type: "text", text: m[1] }] });
      i += m[0].length;
      continue;
    }
    if (c === "<" && (m = /^(?:<\/?[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?>|<!--[\s\S]*?-->)/.exec(rest))) {
      flush();
      out.push({ type: "html", raw: m[0] });
      i += m[0].length;
      continue;
    }
    if (c === "[" || (c === "!" && src[i + 1] === "[")) {
      const link = parseLink(src, c === "!" ? i + 1 : i);
      const ref = link ? undefined : parseReference(src, c === "!" ? i + 1 : i);
      if (ref && c === "[") {
        flush();
        out.push({ type: "link", href: ref.href, text: ref.label, tokens: parseInline(ref.label) });
        i = ref.end;
        continue;
      }
      if (link) {
        flush();
        if (c === "!") out.push({ type: "image", text: link.label });
        else out.push({ type: "link", href: link.href, text: link.label, tokens: parseInline(link.label) });
        i = link.end;
        continue;
      }
    }
    if ((c === "h" || c === "w") && !/[A-Za-z0-9]$/.test(src.slice(0, i)) && (m = /^(?:https?:\/\/|www\.)[^\s<]+/.exec(rest))) {
      // GFM bare URL: trailing punctuation and unbalanced closing parentheses are not part of it
      let url = m[0];
      for (;;) {
        const trimmed = url.replace(/[?!.,:*_~'"]+$/, "");
        const opens = (trimmed.match(/\(/g) ?? []).length;
        const closes = (trimmed.match(/\)/g) ?? []).length;
        url = trimmed.endsWith(")") && closes > opens ? trimmed.slice(0, -1) : trimmed;
        if (url === trimmed) break;
      }
      if (url.length > 4 && !/^(?:https?:\/\/|www\.)$/.test(url)) {
        flush();
        out.push({ type: "link", href: url.startsWith("www.") ? `http://${url}` : url, text: url, tokens: [{ type: "text", text: url }] });
        i += url.length;
        continue;
      }
    }
    if (c === "\n") {
      const spaces = /( {2,})$/.exec(text);
      if (spaces) {
        text = text.slice(0, -spaces[1].length);
        flush();
        out.push({ type: "br" });
      } else {
        text += "\n";
      }
      i++;
      continue;
    }
    if (c === "*" || c === "_" || c === "~") {
      const run = new RegExp(`^\\${c}+`).exec(rest)[0];
      const before = i > 0 ? src[i - 1] : " ";
      const after = src[i + run.length] ?? " ";
      const leftFlank = !SPACE.test(after) && (!PUNCT.test(after) || SPACE.test(before) || PUNCT.test(before));
      const rightFlank = !SPACE.test(before) && (!PUNCT.test(before) || SPACE.test(after) || PUNCT.test(after));
      let canOpen = leftFlank;
      let canClose = rightFlank;
      if (c === "_") {
        canOpen = leftFlank && (!rightFlank || PUNCT.test(before));
        canClose = rightFlank && (!leftFlank || PUNCT.test(after));
      }
      if (c === "~") {
        canOpen = run.length === 2 && !SPACE.test(after);
        canClose = run.length === 2 && !SPACE.test(before);
      }
      flush();
      const node = { type: "text", text: run };
      out.push(node);
      delims.push({ node, char: c, count: run.length, canOpen, canClose, orig: run.length });
      i += run.length;
      continue;
    }
    text += c;
    i++;
  }
  flush();
  return resolveEmphasis(out, delims);
}

/** Index of the closing backtick run of exactly `n` after `from`, or -1. */
function findCodeClose(src, from, n) {
  let i = from;
  while (i < src.length) {
    if (src[i] === "`") {
      let j = i;
      while (src[j] === "`") j++;
      if (j - i === n) return i;
      i = j;
    } else i++;
  }
  return -1;
}

/** Parses `[label](href "title")` at `at`; returns its parts or undefined. */
function parseLink(src, at) {
  let depth = 0;
  let i = at;
  for (; i < src.length; i++) {
    if (src[i] === "\\") {
      i++;
      continue;
    }
    if (src[i] === "`") {
      const run = /^`+/.exec(src.slice(i))[0];
      const close = findCodeClose(src, i + run.length, run.length);
      if (close >= 0) i = close + run.length - 1;
      continue;
    }
    if (src[i] === "[") depth++;
    if (src[i] === "]" && --depth === 0) break;
  }
  if (depth !== 0 || src[i + 1] !== "(") return undefined;
  const label = src.slice(at + 1, i);
  const m = /^\(\s*(<[^>\n]*>|(?:\\.|[^\s()\\]|\((?:\\.|[^\s()\\])*\))*)(?:\s+("[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/.exec(src.slice(i + 1));
  if (!m) return undefined;
  let href = m[1];
  if (href.startsWith("<")) href = href.slice(1, -1);
  href = href.replace(/\\([!-/:-@[-`{-~])/g, "$1");
  return { label, href, end: i + 1 + m[0].length };
}

/** Parses a reference link `[text][label]`, `[label][]` or `[label]` whose label is defined. */
function parseReference(src, at) {
  const m = /^\[((?:\\.|[^\[\]\\])*)\](?:\[((?:\\.|[^\[\]\\])*)\])?/.exec(src.slice(at));
  if (!m) return undefined;
  const label = m[2] ? m[2] : m[1];
  const href = definitions.get(labelKey(label));
  if (href === undefined || label.trim() === "") return undefined;
  return { label: m[1], href, end: at + m[0].length };
}

/** Pairs emphasis delimiters (CommonMark's process-emphasis) into em/strong/del nodes. */
function resolveEmphasis(out, delims) {
  for (let ci = 0; ci < delims.length; ci++) {
    const closer = delims[ci];
    if (!closer.canClose || closer.count === 0) continue;
    let oi = ci - 1;
    for (; oi >= 0; oi--) {
      const o = delims[oi];
      if (o.char !== closer.char || !o.canOpen || o.count === 0) continue;
      if (o.char === "~" && o.count !== closer.count) continue;
      if (o.char !== "~" && (o.canClose || closer.canOpen) && (o.orig + closer.orig) % 3 === 0 && !(o.orig % 3 === 0 && closer.orig % 3 === 0)) continue;
      break;
    }
    if (oi < 0) continue;
    const opener = delims[oi];
    const use = opener.char === "~" ? 2 : opener.count >= 2 && closer.count >= 2 ? 2 : 1;
    const type = opener.char === "~" ? "del" : use === 2 ? "strong" : "em";
    const start = out.indexOf(opener.node);
    const end = out.indexOf(closer.node);
    const inner = out.splice(start + 1, end - start - 1);
    const node = { type, tokens: mergeText(inner) };
    out.splice(start + 1, 0, node);
    opener.count -= use;
    closer.count -= use;
    opener.node.text = opener.node.text.slice(use);
    closer.node.text = closer.node.text.slice(use);
    // delimiters between opener and closer are now inside the node
    for (let k = oi + 1; k < ci; k++) delims[k].count = 0;
    if (closer.count > 0) ci--;
  }
  return mergeText(out.filter((t) => !(t.type === "text" && t.text === "")));
}

/** Joins neighbouring text tokens. */
function mergeText(tokens) {
  const merged = [];
  for (const t of tokens) {
    if (t.type === "text" && t.text === "") continue;
    const prev = merged[merged.length - 1];
    if (t.type === "text" && prev && prev.type === "text") prev.text += t.text;
    else merged.push(t);
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Layout

/** The part of `style(x)` before `x`: the escape codes a style opens with. */
function stylePrefixOf(style) {
  const styled = style("\u0000");
  const at = styled.indexOf("\u0000");
  return at >= 0 ? styled.slice(0, at) : "";
}

/** pi-tui's Markdown component: markdown text laid out in styled terminal lines. */
export class Markdown {
  constructor(text, paddingX, paddingY, theme, defaultTextStyle) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.theme = theme;
    this.defaultTextStyle = defaultTextStyle;
  }

  setText(text) {
    this.text = text;
    this.invalidate();
  }

  invalidate() {
    this.cache = undefined;
  }

  render(width) {
    if (this.cache && this.cache.text === this.text && this.cache.width === width) return this.cache.lines;
    const lines = this.layout(width);
    this.cache = { text: this.text, width, lines };
    return lines.length > 0 || !this.text || this.text.trim() === "" ? lines : [""];
  }

  layout(width) {
    if (!this.text || this.text.trim() === "") return [];
    const inner = Math.max(1, width - this.paddingX * 2);
    const src = this.text.replace(/\t/g, "   ").replace(/\r\n?/g, "\n");
    // two passes: the first finds the link definitions, wherever they are
    definitions = new Map();
    parseBlocks(src, true);
    const blocks = parseBlocks(src, true);
    const raw = [];
    blocks.forEach((block, k) => raw.push(...this.block(block, inner, blocks[k + 1]?.type)));
    const margin = " ".repeat(this.paddingX);
    const bg = this.defaultTextStyle?.bgColor;
    const finish = (line) => (bg ? applyBackgroundToLine(line, width, bg) : line + " ".repeat(Math.max(0, width - visibleWidth(line))));
    const body = raw.flatMap((line) => wrapTextWithAnsi(line, inner)).map((line) => finish(margin + line + margin));
    const pad = Array.from({ length: this.paddingY }, () => (bg ? applyBackgroundToLine(" ".repeat(width), width, bg) : " ".repeat(width)));
    return [...pad, ...body, ...pad];
  }

  /** The default text style's decorations, applied in pi-tui's order. */
  defaultStyle(text) {
    const s = this.defaultTextStyle;
    if (!s) return text;
    let out = text;
    if (s.color) out = s.color(out);
    if (s.bold) out = this.theme.bold(out);
    if (s.italic) out = this.theme.italic(out);
    if (s.strikethrough) out = this.theme.strikethrough(out);
    if (s.underline) out = this.theme.underline(out);
    return out;
  }

  defaultContext() {
    return { apply: (t) => this.defaultStyle(t), prefix: this.defaultTextStyle ? stylePrefixOf((t) => this.defaultStyle(t)) : "" };
  }

  codeLines(block) {
    const theme = this.theme;
    const indent = theme.codeBlockIndent ?? "  ";
    const body = theme.highlightCode ? theme.highlightCode(block.text, block.lang) : block.text.split("\n").map((l) => theme.codeBlock(l));
    return [theme.codeBlockBorder(`\`\`\`${block.lang || ""}`), ...body.map((l) => indent + l), theme.codeBlockBorder("```")];
  }

  /** Lines of one block; `next` is the following block's type (spacing rules). */
  block(block, width, next, ctx) {
    const theme = this.theme;
    const gap = next && next !== "space" ? [""] : [];
    switch (block.type) {
      case "heading": {
        const style = block.depth === 1 ? (t) => theme.heading(theme.bold(theme.underline(t))) : (t) => theme.heading(theme.bold(t));
        const text = this.inline(block.tokens, { apply: style, prefix: stylePrefixOf(style) });
        return [block.depth >= 3 ? style(`${"#".repeat(block.depth)} `) + text : text, ...gap];
      }
      case "paragraph":
        return [this.inline(block.tokens, ctx), ...(next && next !== "list" && next !== "space" ? [""] : [])];
      case "code":
        return [...this.codeLines(block), ...gap];
      case "list":
        return this.list(block, 0, ctx);
      case "table":
        return this.table(block, width, next, ctx);
      case "blockquote":
        return [...this.quote(block, width), ...gap];
      case "hr":
        return [theme.hr("─".repeat(Math.min(width, 80))), ...gap];
      case "html":
        return [this.defaultStyle(block.raw.trim())];
      case "space":
        return [""];
      default:
        return [];
    }
  }

  quote(block, width) {
    const theme = this.theme;
    const style = (t) => theme.quote(theme.italic(t));
    const prefix = stylePrefixOf(style);
    const inner = Math.max(1, width - 2);
    const ctx = { apply: (t) => t, prefix };
    const body = [];
    block.tokens.forEach((t, k) => body.push(...this.block(t, inner, block.tokens[k + 1]?.type, ctx)));
    while (body.length > 0 && body[body.length - 1] === "") body.pop();
    const out = [];
    for (const line of body) {
      const styled = prefix ? style(line.replace(/\x1b\[0m/g, `\x1b[0m${prefix}`)) : style(line);
      for (const w of wrapTextWithAnsi(styled, inner)) out.push(theme.quoteBorder("│ ") + w);
    }
    return out;
  }

  list(block, depth, ctx) {
    const indent = "  ".repeat(depth);
    const nested = /^\s+\x1b\[36m[-\d]/;
    const out = [];
    block.items.forEach((item, k) => {
      const bullet = block.ordered ? `${(block.start ?? 1) + k}. ` : "- ";
      const lines = this.item(item.tokens, depth, ctx);
      if (lines.length === 0) {
        out.push(indent + this.theme.listBullet(bullet));
        return;
      }
      out.push(nested.test(lines[0]) ? lines[0] : indent + this.theme.listBullet(bullet) + lines[0]);
      for (const line of lines.slice(1)) out.push(nested.test(line) ? line : `${indent}  ${line}`);
    });
    return out;
  }

  item(tokens, depth, ctx) {
    const out = [];
    for (const t of tokens) {
      if (t.type === "list") out.push(...this.list(t, depth + 1, ctx));
      else if (t.type === "text" || t.type === "paragraph") out.push(this.inline(t.tokens, ctx));
      else if (t.type === "code") out.push(...this.codeLines(t));
      else {
        const text = this.inline([t], ctx);
        if (text) out.push(text);
      }
    }
    return out;
  }

  inline(tokens, ctx) {
    const { apply, prefix } = ctx ?? this.defaultContext();
    const theme = this.theme;
    const plain = (t) => t.split("\n").map(apply).join("\n");
    const inner = (t) => this.inline(t.tokens, { apply, prefix });
    let out = "";
    for (const t of tokens) {
      switch (t.type) {
        case "text":
        case "escape":
          out += plain(t.text);
          break;
        case "strong":
          out += theme.bold(inner(t)) + prefix;
          break;
        case "em":
          out += theme.italic(inner(t)) + prefix;
          break;
        case "del":
          out += theme.strikethrough(inner(t)) + prefix;
          break;
        case "codespan":
          out += theme.code(t.text) + prefix;
          break;
        case "link": {
          const styled = theme.link(theme.underline(inner(t)));
          const bare = t.href.startsWith("mailto:") ? t.href.slice(7) : t.href;
          out += t.text === t.href || t.text === bare ? styled + prefix : styled + theme.linkUrl(` (${t.href})`) + prefix;
          break;
        }
        case "br":
          out += "\n";
          break;
        case "html":
          out += plain(t.raw);
          break;
        default:
          if (typeof t.text === "string") out += plain(t.text);
          break;
      }
    }
    while (prefix && out.endsWith(prefix)) out = out.slice(0, -prefix.length);
    return out;
  }

  table(block, width, next, ctx) {
    const cols = block.header.length;
    const gap = next && next !== "space" ? [""] : [];
    const overhead = 3 * cols + 1;
    const room = width - overhead;
    if (room < cols) return [...wrapTextWithAnsi(block.raw, width), ...gap];
    const cell = (c) => this.inline(c.tokens, ctx);
    const longestWord = (text) => Math.min(30, Math.max(0, ...text.split(/\s+/).filter(Boolean).map(visibleWidth)));
    const natural = [];
    const minWord = [];
    block.header.forEach((c, k) => {
      const text = cell(c);
      natural[k] = visibleWidth(text);
      minWord[k] = Math.max(1, longestWord(text));
    });
    for (const row of block.rows) {
      row.forEach((c, k) => {
        const text = cell(c);
        natural[k] = Math.max(natural[k] || 0, visibleWidth(text));
        minWord[k] = Math.max(minWord[k] || 1, longestWord(text));
      });
    }
    const sum = (xs) => xs.reduce((a, b) => a + b, 0);
    let mins = minWord;
    if (sum(mins) > room) {
      // words do not fit: start every column at 1 and share the rest by word length
      mins = new Array(cols).fill(1);
      const spare = room - cols;
      if (spare > 0) {
        const weight = sum(minWord.map((w) => Math.max(0, w - 1)));
        const grow = minWord.map((w) => (weight > 0 ? Math.floor((Math.max(0, w - 1) / weight) * spare) : 0));
        grow.forEach((g, k) => {
          mins[k] += g;
        });
        let left = spare - sum(grow);
        for (let k = 0; left > 0 && k < cols; k++, left--) mins[k]++;
      }
    }
    let widths;
    if (sum(natural) + overhead <= width) {
      widths = natural.map((w, k) => Math.max(w, mins[k]));
    } else {
      const potential = sum(natural.map((w, k) => Math.max(0, w - mins[k])));
      const extra = Math.max(0, room - sum(mins));
      widths = mins.map((m, k) => m + (potential > 0 ? Math.floor((Math.max(0, natural[k] - m) / potential) * extra) : 0));
      let left = room - sum(widths);
      while (left > 0) {
        let grew = false;
        for (let k = 0; k < cols && left > 0; k++) {
          if (widths[k] < natural[k]) {
            widths[k]++;
            left--;
            grew = true;
          }
        }
        if (!grew) break;
      }
    }
    const rule = (l, m, r) => `${l}─${widths.map((w) => "─".repeat(w)).join(`─${m}─`)}─${r}`;
    const pad = (text, k) => text + " ".repeat(Math.max(0, widths[k] - visibleWidth(text)));
    const rowLines = (cells, bold) => {
      const wrapped = cells.map((c, k) => wrapTextWithAnsi(cell(c), Math.max(1, widths[k])));
      const height = Math.max(...wrapped.map((w) => w.length));
      const out = [];
      for (let n = 0; n < height; n++) {
        const parts = wrapped.map((w, k) => (bold ? this.theme.bold(pad(w[n] || "", k)) : pad(w[n] || "", k)));
        out.push(`│ ${parts.join(" │ ")} │`);
      }
      return out;
    };
    const out = [rule("┌", "┬", "┐"), ...rowLines(block.header, true), rule("├", "┼", "┤")];
    block.rows.forEach((row, k) => {
      out.push(...rowLines(row, false));
      if (k < block.rows.length - 1) out.push(rule("├", "┼", "┤"));
    });
    out.push(rule("└", "┴", "┘"), ...gap);
    return out;
  }
}
