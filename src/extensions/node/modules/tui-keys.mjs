// Key input decoding for pi-rs's `@mariozechner/pi-tui` module (shared helper).
//
// `matchesKey(data, keyId)`, `parseKey(data)`, `Key`, `isKeyRelease`, `isKeyRepeat` and
// `decodeKittyPrintable` answer as pi-tui 0.73.1's do for the same bytes: legacy terminal
// sequences, the Kitty keyboard protocol (CSI u, with alternate keys and event types) and xterm
// modifyOtherKeys (CSI 27;mod;code~). Whether the Kitty protocol is on changes a few ambiguous
// sequences (ESC CR, LF, ESC+letter); pi-rs's host sets it with `setKittyProtocolActive` from
// what the terminal reported.

let kittyActive = false;

export function setKittyProtocolActive(active) {
  kittyActive = Boolean(active);
}

export function isKittyProtocolActive() {
  return kittyActive;
}

const SYMBOLS = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";
const isSymbol = (ch) => ch.length === 1 && SYMBOLS.includes(ch);

const SHIFT = 1;
const ALT = 2;
const CTRL = 4;
const SUPER = 8;
const LOCKS = 64 | 128;

const SYMBOL_NAMES = {
  backtick: "`",
  hyphen: "-",
  equals: "=",
  leftbracket: "[",
  rightbracket: "]",
  backslash: "\\",
  semicolon: ";",
  quote: "'",
  comma: ",",
  period: ".",
  slash: "/",
  exclamation: "!",
  at: "@",
  hash: "#",
  dollar: "$",
  percent: "%",
  caret: "^",
  ampersand: "&",
  asterisk: "*",
  leftparen: "(",
  rightparen: ")",
  underscore: "_",
  plus: "+",
  pipe: "|",
  tilde: "~",
  leftbrace: "{",
  rightbrace: "}",
  colon: ":",
  lessthan: "<",
  greaterthan: ">",
  question: "?",
};

const NAMED_KEYS = ["escape", "esc", "enter", "return", "tab", "space", "backspace", "delete", "insert", "clear", "home", "end", "pageUp", "pageDown", "up", "down", "left", "right"];

const withMods = (...mods) => (key) => `${mods.join("+")}+${key}`;

/** Key identifiers: `Key.enter`, `Key.ctrl("c")`, `Key.ctrlShift("p")`, symbol names, f1–f12. */
export const Key = {
  ...Object.fromEntries(NAMED_KEYS.map((k) => [k, k])),
  ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i + 1}`, `f${i + 1}`])),
  ...SYMBOL_NAMES,
  ctrl: withMods("ctrl"),
  shift: withMods("shift"),
  alt: withMods("alt"),
  super: withMods("super"),
  ctrlShift: withMods("ctrl", "shift"),
  shiftCtrl: withMods("shift", "ctrl"),
  ctrlAlt: withMods("ctrl", "alt"),
  altCtrl: withMods("alt", "ctrl"),
  shiftAlt: withMods("shift", "alt"),
  altShift: withMods("alt", "shift"),
  ctrlSuper: withMods("ctrl", "super"),
  superCtrl: withMods("super", "ctrl"),
  shiftSuper: withMods("shift", "super"),
  superShift: withMods("super", "shift"),
  altSuper: withMods("alt", "super"),
  superAlt: withMods("super", "alt"),
  ctrlShiftAlt: withMods("ctrl", "shift", "alt"),
  ctrlShiftSuper: withMods("ctrl", "shift", "super"),
};

// Internal code points of the non-character keys (negative, as Kitty numbers them apart).
const UP = -1;
const DOWN = -2;
const RIGHT = -3;
const LEFT = -4;
const DELETE = -10;
const INSERT = -11;
const PAGE_UP = -12;
const PAGE_DOWN = -13;
const HOME = -14;
const END = -15;
const ESC = 27;
const TAB = 9;
const ENTER = 13;
const SPACE = 32;
const BACKSPACE = 127;
const KP_ENTER = 57414;

/** Kitty keypad keys reported as the keys they stand for. */
function keypadToKey(cp) {
  if (cp >= 57399 && cp <= 57408) return 48 + (cp - 57399);
  const table = {
    57409: 46,
    57410: 47,
    57411: 42,
    57412: 45,
    57413: 43,
    57415: 61,
    57416: 44,
    57417: LEFT,
    57418: RIGHT,
    57419: UP,
    57420: DOWN,
    57421: PAGE_UP,
    57422: PAGE_DOWN,
    57423: HOME,
    57424: END,
    57425: INSERT,
    57426: DELETE,
  };
  return table[cp] ?? cp;
}

/** Shift+A..Z names the letter key a..z. */
function letterIdentity(cp, mods) {
  return (mods & ~LOCKS & SHIFT) !== 0 && cp >= 65 && cp <= 90 ? cp + 32 : cp;
}

const eventOf = (text) => (text === "2" ? "repeat" : text === "3" ? "release" : "press");
const num = (text) => Number.parseInt(text, 10);

/** Decodes Kitty-style CSI sequences: CSI u, CSI 1;mod A-D/H/F and CSI n;mod ~. */
function decodeKitty(data) {
  let m = data.match(/^\x1b\[(\d+)(?::(\d*))?(?::(\d+))?(?:;(\d+))?(?::(\d+))?u$/);
  if (m) {
    return {
      cp: num(m[1]),
      base: m[3] ? num(m[3]) : undefined,
      mods: (m[4] ? num(m[4]) : 1) - 1,
      event: eventOf(m[5]),
    };
  }
  m = data.match(/^\x1b\[1;(\d+)(?::(\d+))?([ABCD])$/);
  if (m) return { cp: { A: UP, B: DOWN, C: RIGHT, D: LEFT }[m[3]], mods: num(m[1]) - 1, event: eventOf(m[2]) };
  m = data.match(/^\x1b\[(\d+)(?:;(\d+))?(?::(\d+))?~$/);
  if (m) {
    const cp = { 2: INSERT, 3: DELETE, 5: PAGE_UP, 6: PAGE_DOWN, 7: HOME, 8: END }[num(m[1])];
    if (cp !== undefined) return { cp, mods: (m[2] ? num(m[2]) : 1) - 1, event: eventOf(m[3]) };
  }
  m = data.match(/^\x1b\[1;(\d+)(?::(\d+))?([HF])$/);
  if (m) return { cp: m[3] === "H" ? HOME : END, mods: num(m[1]) - 1, event: eventOf(m[2]) };
  return null;
}

/** Decodes xterm modifyOtherKeys: CSI 27 ; mod ; code ~. */
function decodeModifyOtherKeys(data) {
  const m = data.match(/^\x1b\[27;(\d+);(\d+)~$/);
  return m ? { cp: num(m[2]), mods: num(m[1]) - 1 } : null;
}

function kittyIs(data, cp, mods) {
  const got = decodeKitty(data);
  if (!got) return false;
  if ((got.mods & ~LOCKS) !== (mods & ~LOCKS)) return false;
  const have = letterIdentity(keypadToKey(got.cp), got.mods);
  if (have === letterIdentity(keypadToKey(cp), mods)) return true;
  // Non-Latin layouts: the base-layout key counts when the reported key is no Latin letter/symbol.
  if (got.base !== undefined && got.base === cp) {
    return !(have >= 97 && have <= 122) && !isSymbol(String.fromCharCode(have));
  }
  return false;
}

function kittyIsAny(data, cps, mods) {
  return cps.some((cp) => kittyIs(data, cp, mods));
}

function otherKeysIs(data, cp, mods) {
  const got = decodeModifyOtherKeys(data);
  return got !== null && got.cp === cp && got.mods === mods;
}

function otherKeysPrintableIs(data, cp, mods) {
  if (mods === 0) return false;
  const got = decodeModifyOtherKeys(data);
  return got !== null && got.mods === mods && letterIdentity(got.cp, got.mods) === letterIdentity(cp, mods);
}

function inWindowsTerminal() {
  const env = process.env;
  return Boolean(env.WT_SESSION) && !env.SSH_CONNECTION && !env.SSH_CLIENT && !env.SSH_TTY;
}

/** Plain sequences of the navigation keys, and their legacy shift/ctrl forms (rxvt). */
const PLAIN = {
  up: ["\x1b[A", "\x1bOA"],
  down: ["\x1b[B", "\x1bOB"],
  right: ["\x1b[C", "\x1bOC"],
  left: ["\x1b[D", "\x1bOD"],
  home: ["\x1b[H", "\x1bOH", "\x1b[1~", "\x1b[7~"],
  end: ["\x1b[F", "\x1bOF", "\x1b[4~", "\x1b[8~"],
  insert: ["\x1b[2~"],
  delete: ["\x1b[3~"],
  pageup: ["\x1b[5~", "\x1b[[5~"],
  pagedown: ["\x1b[6~", "\x1b[[6~"],
  clear: ["\x1b[E", "\x1bOE"],
  f1: ["\x1bOP", "\x1b[11~", "\x1b[[A"],
  f2: ["\x1bOQ", "\x1b[12~", "\x1b[[B"],
  f3: ["\x1bOR", "\x1b[13~", "\x1b[[C"],
  f4: ["\x1bOS", "\x1b[14~", "\x1b[[D"],
  f5: ["\x1b[15~", "\x1b[[E"],
  f6: ["\x1b[17~"],
  f7: ["\x1b[18~"],
  f8: ["\x1b[19~"],
  f9: ["\x1b[20~"],
  f10: ["\x1b[21~"],
  f11: ["\x1b[23~"],
  f12: ["\x1b[24~"],
};
const RXVT_FINAL = { up: "a", down: "b", right: "c", left: "d", clear: "e" };
const RXVT_NUMBER = { insert: 2, delete: 3, pageup: 5, pagedown: 6, home: 7, end: 8 };

/** The rxvt shift (`$`/lower-case) or ctrl (`^`/SS3 lower-case) sequence of a navigation key. */
function rxvtIs(data, key, mods) {
  if (mods !== SHIFT && mods !== CTRL) return false;
  if (RXVT_FINAL[key]) return data === (mods === SHIFT ? `\x1b[${RXVT_FINAL[key]}` : `\x1bO${RXVT_FINAL[key]}`);
  if (RXVT_NUMBER[key]) return data === `\x1b[${RXVT_NUMBER[key]}${mods === SHIFT ? "$" : "^"}`;
  return false;
}

const NAV_CODES = { up: UP, down: DOWN, left: LEFT, right: RIGHT, home: HOME, end: END, insert: INSERT, delete: DELETE, pageup: PAGE_UP, pagedown: PAGE_DOWN };

function navigationIs(data, key, mods) {
  const code = NAV_CODES[key];
  if (mods === ALT && (key === "up" || key === "down")) {
    return data === (key === "up" ? "\x1bp" : "\x1bn") || kittyIs(data, code, ALT);
  }
  if (mods === ALT && (key === "left" || key === "right")) {
    const [csi, upper, lower] = key === "left" ? ["\x1b[1;3D", "\x1bB", "\x1bb"] : ["\x1b[1;3C", "\x1bF", "\x1bf"];
    return data === csi || (!kittyActive && data === upper) || data === lower || kittyIs(data, code, ALT);
  }
  if (mods === CTRL && (key === "left" || key === "right")) {
    return data === (key === "left" ? "\x1b[1;5D" : "\x1b[1;5C") || rxvtIs(data, key, CTRL) || kittyIs(data, code, CTRL);
  }
  if (mods === 0) return PLAIN[key].includes(data) || kittyIs(data, code, 0);
  return rxvtIs(data, key, mods) || kittyIs(data, code, mods);
}

/** ctrl+key as a C0 control byte (letters and [ \ ] _, with - as _), or null. */
function controlByte(key) {
  const ch = key.toLowerCase();
  const code = ch.charCodeAt(0);
  if ((code >= 97 && code <= 122) || "[\\]_".includes(ch)) return String.fromCharCode(code & 0x1f);
  if (ch === "-") return "\x1f";
  return null;
}

function printableIs(data, key, mods) {
  const cp = key.charCodeAt(0);
  const control = controlByte(key);
  const letter = key >= "a" && key <= "z";
  const digit = key >= "0" && key <= "9";
  if (mods === (CTRL | ALT) && !kittyActive && control && data === `\x1b${control}`) return true;
  if (mods === ALT && !kittyActive && (letter || digit) && data === `\x1b${key}`) return true;
  if (mods === CTRL && control && data === control) return true;
  if (mods === SHIFT && letter && data === key.toUpperCase()) return true;
  if (mods === 0) return data === key || kittyIs(data, cp, 0);
  return kittyIs(data, cp, mods) || otherKeysPrintableIs(data, cp, mods);
}

function enterIs(data, mods) {
  const kitty = kittyIsAny(data, [ENTER, KP_ENTER], mods);
  if (mods === SHIFT) return kitty || otherKeysIs(data, ENTER, SHIFT) || (kittyActive && (data === "\x1b\r" || data === "\n"));
  if (mods === ALT) return kitty || otherKeysIs(data, ENTER, ALT) || (!kittyActive && data === "\x1b\r");
  if (mods === 0) return data === "\r" || (!kittyActive && data === "\n") || data === "\x1bOM" || kitty;
  return kitty || otherKeysIs(data, ENTER, mods);
}

function backspaceIs(data, mods) {
  const encoded = kittyIs(data, BACKSPACE, mods) || otherKeysIs(data, BACKSPACE, mods);
  if (mods === ALT) return data === "\x1b\x7f" || data === "\x1b\b" || encoded;
  if (mods === CTRL) return (data === "\x08" && inWindowsTerminal()) || encoded;
  if (mods === 0) return data === "\x7f" || (data === "\x08" && !inWindowsTerminal()) || encoded;
  return encoded;
}

/** Whether the input bytes are the key `keyId` ("ctrl+c", "shift+enter", Key.up, …). */
export function matchesKey(data, keyId) {
  const parts = keyId.toLowerCase().split("+");
  const key = parts[parts.length - 1];
  if (!key) return false;
  let mods = 0;
  if (parts.includes("shift")) mods |= SHIFT;
  if (parts.includes("alt")) mods |= ALT;
  if (parts.includes("ctrl")) mods |= CTRL;
  if (parts.includes("super")) mods |= SUPER;

  switch (key) {
    case "escape":
    case "esc":
      return mods === 0 && (data === "\x1b" || kittyIs(data, ESC, 0) || otherKeysIs(data, ESC, 0));
    case "space":
      if (!kittyActive && ((mods === CTRL && data === "\x00") || (mods === ALT && data === "\x1b "))) return true;
      return (mods === 0 && data === " ") || kittyIs(data, SPACE, mods) || otherKeysIs(data, SPACE, mods);
    case "tab":
      if (mods === SHIFT) return data === "\x1b[Z" || kittyIs(data, TAB, SHIFT) || otherKeysIs(data, TAB, SHIFT);
      if (mods === 0) return data === "\t" || kittyIs(data, TAB, 0);
      return kittyIs(data, TAB, mods) || otherKeysIs(data, TAB, mods);
    case "enter":
    case "return":
      return enterIs(data, mods);
    case "backspace":
      return backspaceIs(data, mods);
    case "clear":
      return mods === 0 ? PLAIN.clear.includes(data) : rxvtIs(data, "clear", mods);
    default:
      break;
  }
  if (NAV_CODES[key] !== undefined) return navigationIs(data, key, mods);
  if (/^f(?:[1-9]|1[0-2])$/.test(key)) return mods === 0 && PLAIN[key].includes(data);
  if (key.length === 1 && ((key >= "a" && key <= "z") || (key >= "0" && key <= "9") || isSymbol(key))) {
    return printableIs(data, key, mods);
  }
  return false;
}

// --- parseKey --------------------------------------------------------------------------------

const CODE_NAMES = new Map([
  [ESC, "escape"],
  [TAB, "tab"],
  [ENTER, "enter"],
  [KP_ENTER, "enter"],
  [SPACE, "space"],
  [BACKSPACE, "backspace"],
  [DELETE, "delete"],
  [INSERT, "insert"],
  [HOME, "home"],
  [END, "end"],
  [PAGE_UP, "pageUp"],
  [PAGE_DOWN, "pageDown"],
  [UP, "up"],
  [DOWN, "down"],
  [LEFT, "left"],
  [RIGHT, "right"],
]);

function nameOf(cp, mods, base) {
  const identity = letterIdentity(keypadToKey(cp), mods);
  const ch = String.fromCharCode(identity);
  const known = (identity >= 97 && identity <= 122) || (identity >= 48 && identity <= 57) || isSymbol(ch);
  const effective = known ? identity : (base ?? identity);
  let name = CODE_NAMES.get(effective);
  if (name === undefined) {
    const c = String.fromCharCode(effective);
    if ((effective >= 48 && effective <= 57) || (effective >= 97 && effective <= 122) || isSymbol(c)) name = c;
  }
  if (name === undefined) return undefined;
  const active = mods & ~LOCKS;
  if ((active & ~(SHIFT | CTRL | ALT | SUPER)) !== 0) return undefined;
  const names = [];
  if (active & SHIFT) names.push("shift");
  if (active & CTRL) names.push("ctrl");
  if (active & ALT) names.push("alt");
  if (active & SUPER) names.push("super");
  return names.length > 0 ? `${names.join("+")}+${name}` : name;
}

/** Fixed sequences and their names, whatever the Kitty state. */
const SEQUENCE_NAMES = {
  "\x1bOA": "up",
  "\x1bOB": "down",
  "\x1bOC": "right",
  "\x1bOD": "left",
  "\x1bOH": "home",
  "\x1bOF": "end",
  "\x1b[E": "clear",
  "\x1bOE": "clear",
  "\x1bOe": "ctrl+clear",
  "\x1b[e": "shift+clear",
  "\x1b[2~": "insert",
  "\x1b[2$": "shift+insert",
  "\x1b[2^": "ctrl+insert",
  "\x1b[3$": "shift+delete",
  "\x1b[3^": "ctrl+delete",
  "\x1b[[5~": "pageUp",
  "\x1b[[6~": "pageDown",
  "\x1b[a": "shift+up",
  "\x1b[b": "shift+down",
  "\x1b[c": "shift+right",
  "\x1b[d": "shift+left",
  "\x1bOa": "ctrl+up",
  "\x1bOb": "ctrl+down",
  "\x1bOc": "ctrl+right",
  "\x1bOd": "ctrl+left",
  "\x1b[5$": "shift+pageUp",
  "\x1b[6$": "shift+pageDown",
  "\x1b[7$": "shift+home",
  "\x1b[8$": "shift+end",
  "\x1b[5^": "ctrl+pageUp",
  "\x1b[6^": "ctrl+pageDown",
  "\x1b[7^": "ctrl+home",
  "\x1b[8^": "ctrl+end",
  "\x1bOP": "f1",
  "\x1bOQ": "f2",
  "\x1bOR": "f3",
  "\x1bOS": "f4",
  "\x1b[11~": "f1",
  "\x1b[12~": "f2",
  "\x1b[13~": "f3",
  "\x1b[14~": "f4",
  "\x1b[[A": "f1",
  "\x1b[[B": "f2",
  "\x1b[[C": "f3",
  "\x1b[[D": "f4",
  "\x1b[[E": "f5",
  "\x1b[15~": "f5",
  "\x1b[17~": "f6",
  "\x1b[18~": "f7",
  "\x1b[19~": "f8",
  "\x1b[20~": "f9",
  "\x1b[21~": "f10",
  "\x1b[23~": "f11",
  "\x1b[24~": "f12",
  "\x1bb": "alt+left",
  "\x1bf": "alt+right",
  "\x1bp": "alt+up",
  "\x1bn": "alt+down",
  "\x1b": "escape",
  "\x1c": "ctrl+\\",
  "\x1d": "ctrl+]",
  "\x1f": "ctrl+-",
  "\x1b\x1b": "ctrl+alt+[",
  "\x1b\x1c": "ctrl+alt+\\",
  "\x1b\x1d": "ctrl+alt+]",
  "\x1b\x1f": "ctrl+alt+-",
  "\t": "tab",
  "\r": "enter",
  "\x1bOM": "enter",
  "\x00": "ctrl+space",
  " ": "space",
  "\x7f": "backspace",
  "\x1b[Z": "shift+tab",
  "\x1b\x7f": "alt+backspace",
  "\x1b\b": "alt+backspace",
  "\x1b[A": "up",
  "\x1b[B": "down",
  "\x1b[C": "right",
  "\x1b[D": "left",
  "\x1b[H": "home",
  "\x1b[F": "end",
  "\x1b[3~": "delete",
  "\x1b[5~": "pageUp",
  "\x1b[6~": "pageDown",
};

/** Sequences whose meaning depends on the Kitty protocol being off. */
const LEGACY_ONLY_NAMES = { "\n": "enter", "\x1b\r": "alt+enter", "\x1b ": "alt+space", "\x1bB": "alt+left", "\x1bF": "alt+right" };

/** The key identifier of the input bytes ("ctrl+c", "shift+enter", "a", …), or undefined. */
export function parseKey(data) {
  const kitty = decodeKitty(data);
  if (kitty) return nameOf(kitty.cp, kitty.mods, kitty.base);
  const other = decodeModifyOtherKeys(data);
  if (other) return nameOf(other.cp, other.mods);
  if (kittyActive && (data === "\x1b\r" || data === "\n")) return "shift+enter";
  if (Object.hasOwn(SEQUENCE_NAMES, data)) return SEQUENCE_NAMES[data];
  if (data === "\x08") return inWindowsTerminal() ? "ctrl+backspace" : "backspace";
  if (!kittyActive) {
    if (Object.hasOwn(LEGACY_ONLY_NAMES, data)) return LEGACY_ONLY_NAMES[data];
    if (data.length === 2 && data[0] === "\x1b") {
      const code = data.charCodeAt(1);
      if (code >= 1 && code <= 26) return `ctrl+alt+${String.fromCharCode(code + 96)}`;
      if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) return `alt+${data[1]}`;
    }
  }
  if (data.length === 1) {
    const code = data.charCodeAt(0);
    if (code >= 1 && code <= 26) return `ctrl+${String.fromCharCode(code + 96)}`;
    if (code >= 32 && code <= 126) return data;
  }
  return undefined;
}

// --- Event types and printable decoding --------------------------------------------------------

function hasEventMarker(data, event) {
  if (data.includes("\x1b[200~")) return false;
  return ["u", "~", "A", "B", "C", "D", "H", "F"].some((final) => data.includes(`:${event}${final}`));
}

/** Whether the bytes are a Kitty key-release event (never inside a bracketed paste). */
export function isKeyRelease(data) {
  return hasEventMarker(data, 3);
}

/** Whether the bytes are a Kitty key-repeat event (never inside a bracketed paste). */
export function isKeyRepeat(data) {
  return hasEventMarker(data, 2);
}

/** The character a Kitty CSI u sequence types (plain or shifted keys only), or undefined. */
export function decodeKittyPrintable(data) {
  const m = data.match(/^\x1b\[(\d+)(?::(\d*))?(?::(\d+))?(?:;(\d+))?(?::(\d+))?u$/);
  if (!m) return undefined;
  const cp = num(m[1] ?? "");
  if (!Number.isFinite(cp)) return undefined;
  const shifted = m[2] && m[2].length > 0 ? num(m[2]) : undefined;
  const modValue = m[4] ? num(m[4]) : 1;
  const mods = Number.isFinite(modValue) ? modValue - 1 : 0;
  if ((mods & ~(SHIFT | LOCKS)) !== 0) return undefined;
  let effective = mods & SHIFT && typeof shifted === "number" ? shifted : cp;
  effective = keypadToKey(effective);
  if (!Number.isFinite(effective) || effective < 32) return undefined;
  try {
    return String.fromCodePoint(effective);
  } catch {
    return undefined;
  }
}

/** The character typed by a printable Kitty or modifyOtherKeys sequence, or undefined. */
export function decodePrintableKey(data) {
  const kitty = decodeKittyPrintable(data);
  if (kitty !== undefined) return kitty;
  const other = decodeModifyOtherKeys(data);
  if (!other) return undefined;
  if (((other.mods & ~LOCKS) & ~SHIFT) !== 0) return undefined;
  if (!Number.isFinite(other.cp) || other.cp < 32) return undefined;
  try {
    return String.fromCodePoint(other.cp);
  } catch {
    return undefined;
  }
}
