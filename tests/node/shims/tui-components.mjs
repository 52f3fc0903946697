// pi-tui.mjs components against the real pi-tui: the same lines from render(width) for the same
// state, and the same state after the same key input (Input, Editor, SelectList, SettingsList,
// loaders), at several widths.
import { finish, ours, real, same } from "./harness.mjs";

const mine = await ours("pi-tui.mjs");
const helpers = await ours("tui-components.mjs");
const theirs = await real("@mariozechner/pi-tui/dist/index.js");

const RED = (s) => `\x1b[31m${s}\x1b[39m`;
const BG = (s) => `\x1b[44m${s}\x1b[49m`;
const widths = [1, 4, 10, 17, 30, 41, 60, 80];
const long = "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun.";

/** Builds a component with each module and compares its lines at every width. */
function compare(name, build, steps = [], ws = widths) {
  const a = build(mine);
  const b = build(theirs);
  for (const w of ws) same(`${name} @${w}`, a.render(w), b.render(w));
  for (const [i, step] of steps.entries()) {
    const ra = step(a, mine);
    const rb = step(b, theirs);
    same(`${name} step ${i} result`, ra, rb);
    for (const w of ws) same(`${name} step ${i} @${w}`, a.render(w), b.render(w));
  }
}

// Text, TruncatedText, Spacer, Container, Box.
for (const [label, text] of Object.entries({ empty: "", blank: "   ", short: "hi", long, styled: `${RED("red")} and ${long}`, lines: "one\n\ntwo\tthree\n中文字符 wide", tabs: "\tx" })) {
  compare(`Text default ${label}`, (m) => new m.Text(text));
  compare(`Text 0,0 ${label}`, (m) => new m.Text(text, 0, 0));
  compare(`Text bg ${label}`, (m) => new m.Text(text, 2, 1, BG));
  compare(`TruncatedText ${label}`, (m) => new m.TruncatedText(text, 1, 1));
}
compare("Text setText", (m) => new m.Text("a"), [(t) => t.setText(long), (t) => t.setText(""), (t) => t.setCustomBgFn(BG), (t) => t.setText("x")]);
compare("Spacer", (m) => new m.Spacer(3), [(s) => s.setLines(0), (s) => s.setLines(1)]);
compare("Container", (m) => {
  const c = new m.Container();
  c.addChild(new m.Text("first", 0, 0));
  c.addChild(new m.Spacer(1));
  c.addChild(new m.Text(long, 1, 0));
  return c;
}, [(c) => c.removeChild(c.children[1]), (c) => c.clear()]);
compare("Box", (m) => {
  const b = new m.Box(2, 1, BG);
  b.addChild(new m.Text(long, 0, 0));
  b.addChild(new m.Text(RED("styled"), 1, 0));
  return b;
}, [(b) => b.setBgFn(RED), (b) => b.removeChild(b.children[0]), (b) => b.clear()]);
compare("Box plain", (m) => {
  const b = new m.Box();
  b.addChild(new m.Text("x\ny", 0, 0));
  return b;
});

// SelectList (preset's picker: values with descriptions) and its keys.
const selectTheme = { selectedPrefix: (s) => `>${s}`, selectedText: (s) => `\x1b[1m${s}\x1b[22m`, description: (s) => `\x1b[2m${s}\x1b[22m`, scrollInfo: (s) => `[${s}]`, noMatch: (s) => `!${s}` };
const items = [
  { value: "plan", label: "plan", description: "Read-only planning\nwith two lines" },
  { value: "implement", description: "Full tools, higher thinking" },
  { value: "a-very-long-preset-name-that-does-not-fit-the-column", description: "Long" },
  { value: "review" },
  { value: "中文预设", label: "中文预设", description: "wide label" },
  { value: "zeta", label: "Zeta label", description: long },
  { value: "omega", description: "" },
];
const KEYS = { up: "\x1b[A", down: "\x1b[B", enter: "\r", esc: "\x1b", ctrlc: "\x03", space: " ", left: "\x1b[D", right: "\x1b[C", home: "\x01", end: "\x05", bs: "\x7f", del: "\x1b[3~", wordLeft: "\x1bb", wordRight: "\x1bf", killWord: "\x17", killEnd: "\x0b", killStart: "\x15", yank: "\x19", yankPop: "\x1by", undo: "\x1f", tab: "\t", shiftEnter: "\x1b[13;2u", pageUp: "\x1b[5~", pageDown: "\x1b[6~", jump: "\x1d" };
const press = (key) => (c) => {
  const events = [];
  c.onSelect = (item) => events.push(["select", item.value]);
  c.onCancel = () => events.push(["cancel"]);
  c.onSelectionChange = (item) => events.push(["change", item.value]);
  c.handleInput(KEYS[key] ?? key);
  return events;
};
compare("SelectList", (m) => new m.SelectList(items, 4, selectTheme), ["down", "down", "down", "down", "down", "down", "down", "up", "up", "enter", "esc", "ctrlc", "x"].map(press));
compare("SelectList layout", (m) => new m.SelectList(items, 10, selectTheme, { minPrimaryColumnWidth: 12, maxPrimaryColumnWidth: 20, truncatePrimary: ({ text, maxWidth }) => `${text}`.slice(0, maxWidth + 3) }), [press("down"), press("down")]);
compare("SelectList filter", (m) => new m.SelectList(items, 5, selectTheme), [(l) => l.setFilter("IM"), (l) => l.setFilter("zz"), (l) => l.setFilter(""), (l) => l.setSelectedIndex(99), (l) => l.getSelectedItem()?.value]);

// SettingsList (tools example): cycling values, submenu, search.
const settingsTheme = { label: (s, sel) => (sel ? `*${s}*` : s), value: (s, sel) => (sel ? `<${s}>` : s), description: (s) => `\x1b[2m${s}\x1b[22m`, cursor: "→ ", hint: (s) => `\x1b[3m${s}\x1b[23m` };
const settings = (m) => {
  const log = [];
  const list = new m.SettingsList(
    [
      { id: "bash", label: "bash", currentValue: "enabled", values: ["enabled", "disabled"], description: "Run shell commands" },
      { id: "read", label: "read", currentValue: "enabled", values: ["enabled", "disabled"] },
      { id: "theme", label: "Theme with a rather long label name", currentValue: "dark", submenu: (value, done) => ({ render: () => [`submenu for ${value}`], handleInput: (d) => done(d === "\r" ? "light" : undefined), invalidate() {} }) },
      { id: "edit", label: "edit", currentValue: "a value that is too long to fit in narrow terminals at all", description: long },
    ],
    3,
    settingsTheme,
    (id, value) => log.push([id, value]),
    () => log.push(["cancel"]),
  );
  list.log = log;
  return list;
};
const settingsKey = (key) => (l) => {
  l.handleInput(KEYS[key] ?? key);
  return (l.log ?? []).slice();
};
compare("SettingsList", settings, ["enter", "space", "down", "enter", "down", "enter", "enter", "down", "down", "up", "esc"].map(settingsKey));
compare(
  "SettingsList search",
  (m) => new m.SettingsList([{ id: "a", label: "alpha", currentValue: "1", values: ["1", "2"] }, { id: "b", label: "beta", currentValue: "x" }], 5, settingsTheme, () => {}, () => {}, { enableSearch: true }),
  ["b", "e", "z", "bs", "bs", "bs", "a", "l"].map(settingsKey),
);
compare("SettingsList empty", (m) => new m.SettingsList([], 5, settingsTheme, () => {}, () => {}));

// Input: typing, movement, deletion, kill ring, undo, paste, scrolling.
const inputKey = (key) => (c) => {
  const events = [];
  c.onSubmit = (v) => events.push(["submit", v]);
  c.onEscape = () => events.push(["escape"]);
  c.handleInput(KEYS[key] ?? key);
  return [events, c.getValue()];
};
const inputScript = ["h", "e", "l", "l", "o", " ", "w", "o", "r", "l", "d", "left", "left", "bs", "del", "home", "right", "wordRight", "wordRight", "wordLeft", "killWord", "yank", "end", "killWord", "killWord", "yank", "yankPop", "undo", "undo", "home", "killEnd", "yank", "killStart", "中", "文", "😀", "\x1b[200~pasted\ntext\there\x1b[201~", "enter", "esc", "\x1b[97u", "\x1b[65;2u", "\x07"];
compare("Input", (m) => new m.Input(), inputScript.map(inputKey), [3, 8, 12, 30]);
compare("Input focused long", (m) => {
  const i = new m.Input();
  i.focused = true;
  i.setValue(long);
  return i;
}, ["end", "home", "wordRight", "wordRight", "wordRight", "right", "end", "left", "x"].map(inputKey), [5, 12, 30, 100]);

// Editor: the question example's inline editor and a multi-line prompt.
const tui = { terminal: { rows: 24, columns: 80 }, requestRender() {} };
const editorTheme = { borderColor: (s) => `\x1b[36m${s}\x1b[39m`, selectList: selectTheme };
const editorKey = (key) => (e) => {
  const events = [];
  e.onSubmit = (v) => events.push(["submit", v]);
  e.onChange = (v) => events.push(["change", v]);
  e.handleInput(KEYS[key] ?? key);
  return [events, e.getText(), e.getCursor()];
};
const editorWidths = [4, 10, 24, 50];
compare("Editor typing", (m) => new m.Editor(tui, editorTheme), ["H", "i", " ", "t", "h", "e", "r", "e", "shiftEnter", "s", "e", "c", "o", "n", "d", "left", "left", "bs", "del", "up", "end", "down", "home", "wordRight", "killWord", "yank", "yank", "yankPop", "undo", "killEnd", "killStart", "killStart", "undo", "undo", "\\", "enter", "x", "enter", "up", "up", "down", "down"].map(editorKey), editorWidths);
compare("Editor long text", (m) => {
  const e = new m.Editor(tui, editorTheme, { paddingX: 1 });
  e.setText(`${long}\n${long}\n\nshort\n${"x".repeat(70)}\n中文字符中文字符中文字符中文字符中文字符中文字符\n${long}`);
  return e;
}, ["up", "up", "up", "home", "down", "down", "right", "end", "pageUp", "pageDown", "wordLeft", "wordLeft", "killWord", "\x1b[200~a\r\nb\tc\x1b[201~", "jump", "o", "enter"].map(editorKey), editorWidths);
compare("Editor focused", (m) => {
  const e = new m.Editor(tui, editorTheme);
  e.focused = true;
  e.setText("abc");
  return e;
}, [(e) => e.insertTextAtCursor("\nmore"), (e) => e.setText(""), (e) => [e.getLines(), e.getExpandedText()], editorKey("left")], editorWidths);
compare("Editor kill ring and undo", (m) => new m.Editor(tui, editorTheme), ["o", "n", "e", " ", "t", "w", "o", "killWord", "left", "killWord", "end", "yank", "yankPop", "yankPop", "shiftEnter", "n", "e", "w", "killStart", "bs", "killEnd", "yank", "yankPop", "a", "b", " ", "c", "undo", "undo", "undo", "undo"].map(editorKey), editorWidths);
compare("Input kill ring and undo", (m) => new m.Input(), ["o", "n", "e", " ", "t", "w", "o", "killWord", "left", "killWord", "end", "yank", "yankPop", "yankPop", "a", "b", " ", "c", "undo", "undo", "undo"].map(inputKey), [10, 30]);
const tall = { terminal: { rows: 10 }, requestRender() {} };
compare("Editor scroll", (m) => {
  const e = new m.Editor(tall, editorTheme);
  e.setText(Array.from({ length: 12 }, (_, i) => `line ${i}`).join("\n"));
  return e;
}, ["up", "up", "up", "up", "up", "up", "up", "up", "pageDown"].map(editorKey), editorWidths);

// Loaders: first frame (the timer is stopped right away).
const loaderTui = { requestRender() {} };
compare("Loader", (m) => {
  const l = new m.Loader(loaderTui, RED, (s) => `\x1b[2m${s}\x1b[22m`, "Working...");
  l.stop();
  return l;
}, [(l) => { l.setMessage("Still working"); l.stop(); }, (l) => { l.setIndicator({ frames: ["*"], intervalMs: 5 }); l.stop(); }]);
compare("CancellableLoader", (m) => {
  const l = new m.CancellableLoader(loaderTui, RED, RED, "Summarizing");
  l.stop();
  return l;
}, [(l) => { let called = 0; l.onAbort = () => called++; l.handleInput("x"); l.handleInput("\x1b"); l.dispose(); return [called, l.aborted, l.signal.aborted]; }]);

// fuzzy helpers and keybindings.
const words = ["read", "bash", "edit", "write", "grep", "find", "ls", "git-status", "read_file", "gpt4", "4gpt", "READ"];
for (const q of ["", " ", "rd", "re", "ed it", "gpt4", "4gpt", "pgt", "xyz", "READ", "r e"]) {
  same(`fuzzyFilter ${JSON.stringify(q)}`, mine.fuzzyFilter(words, q, (w) => w), theirs.fuzzyFilter(words, q, (w) => w));
  for (const w of words) same(`fuzzyMatch ${q} ${w}`, mine.fuzzyMatch(q, w), theirs.fuzzyMatch(q, w));
}
const kbA = new mine.KeybindingsManager(mine.TUI_KEYBINDINGS, { "tui.select.up": ["k", "up"], "tui.select.down": "k", "nope": "x" });
const kbB = new theirs.KeybindingsManager(theirs.TUI_KEYBINDINGS, { "tui.select.up": ["k", "up"], "tui.select.down": "k", "nope": "x" });
same("keybindings resolved", kbA.getResolvedBindings(), kbB.getResolvedBindings());
same("keybindings conflicts", kbA.getConflicts(), kbB.getConflicts());
same("keybindings matches", ["k", "\x1b[A", "j"].map((d) => kbA.matches(d, "tui.select.up")), ["k", "\x1b[A", "j"].map((d) => kbB.matches(d, "tui.select.up")));
same("TUI_KEYBINDINGS", mine.TUI_KEYBINDINGS, theirs.TUI_KEYBINDINGS);
same("CURSOR_MARKER", mine.CURSOR_MARKER, theirs.CURSOR_MARKER);
same("isFocusable", [mine.isFocusable({ focused: false }), mine.isFocusable({})], [theirs.isFocusable({ focused: false }), theirs.isFocusable({})]);
const realUtils = await real("@mariozechner/pi-tui/dist/utils.js");
for (const strict of [false, true]) {
  for (const start of [0, 1, 2, 3, 5, 9]) {
    for (const len of [0, 1, 3, 6]) {
      const line = `${RED("ab中文")}cd\x1b[1mef\x1b[22m`;
      same(`sliceByColumn ${start} ${len} ${strict}`, helpers.sliceByColumn(line, start, len, strict), realUtils.sliceByColumn(line, start, len, strict));
    }
  }
}

// Image and the terminal-image helpers: the same sequences, sizes and notes, for each terminal
// kind (capabilities set explicitly on both modules).
{
  const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000280000001408020000000000", "hex").toString("base64");
  const gif = Buffer.from("4749463839612003580200000000", "hex").toString("base64");
  const big = "A".repeat(9000);
  for (const [data, mime] of [[png, "image/png"], [gif, "image/gif"], ["bm90IGFuIGltYWdl", "image/png"], [png, "image/bmp"]]) {
    same(`getImageDimensions ${mime}`, mine.getImageDimensions(data, mime), theirs.getImageDimensions(data, mime));
  }
  same("encodeKitty small", mine.encodeKitty(png, { columns: 10, rows: 3, imageId: 7, moveCursor: false }), theirs.encodeKitty(png, { columns: 10, rows: 3, imageId: 7, moveCursor: false }));
  same("encodeKitty chunks", mine.encodeKitty(big, { columns: 60 }), theirs.encodeKitty(big, { columns: 60 }));
  same("encodeITerm2", mine.encodeITerm2(png, { width: 20, height: "auto", name: "a.png", preserveAspectRatio: false }), theirs.encodeITerm2(png, { width: 20, height: "auto", name: "a.png", preserveAspectRatio: false }));
  same("deleteKittyImage", [mine.deleteKittyImage(9), mine.deleteAllKittyImages()], [theirs.deleteKittyImage(9), theirs.deleteAllKittyImages()]);
  for (const [w, c] of [[40, 60], [800, 20], [1, 5]]) {
    same(`calculateImageRows ${w} ${c}`, mine.calculateImageRows({ widthPx: w, heightPx: 20 }, c), theirs.calculateImageRows({ widthPx: w, heightPx: 20 }, c));
  }
  same("imageFallback", [mine.imageFallback("image/png", { widthPx: 4, heightPx: 2 }, "x.png"), mine.imageFallback("image/gif")], [theirs.imageFallback("image/png", { widthPx: 4, heightPx: 2 }, "x.png"), theirs.imageFallback("image/gif")]);
  same("hyperlink", mine.hyperlink("t", "https://e"), theirs.hyperlink("t", "https://e") + "");
  for (const images of ["kitty", "iterm2", null]) {
    for (const m of [mine, theirs]) m.setCapabilities({ images, trueColor: true, hyperlinks: false });
    compare(`Image ${images}`, (m) => new m.Image(png, "image/png", { fallbackColor: RED }, { maxWidthCells: 30, imageId: 5, filename: "p.png" }), [], [10, 40, 80]);
    compare(`Image ${images} unknown size`, (m) => new m.Image("AAAA", "image/webp", { fallbackColor: RED }, { imageId: 5 }), [], [80]);
  }
  for (const m of [mine, theirs]) m.resetCapabilitiesCache();
}

finish("tui components");
