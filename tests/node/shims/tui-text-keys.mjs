// tui-text.mjs and tui-keys.mjs against the real pi-tui: the same widths, truncations and
// wrapped lines (escape codes included) for a grid of texts, and the same answer from
// matchesKey/parseKey/isKeyRelease for every input × key identifier, Kitty protocol on and off.
import { both, finish, ours, real, same } from "./harness.mjs";

const text = await ours("tui-text.mjs");
const keys = await ours("tui-keys.mjs");
const tui = await real("@mariozechner/pi-tui/dist/index.js");

const RED = "\x1b[31m";
const BOLD = "\x1b[1m";
const UL = "\x1b[4m";
const RESET = "\x1b[0m";
const LINK = "\x1b]8;;https://example.com\x07";
const LINK_END = "\x1b]8;;\x07";
const samples = [
  "",
  "plain ascii text",
  "hello world this is a longer line that needs wrapping at some point",
  "tab\tseparated\tvalues",
  "中文字符和English混合",
  "emoji 😀 and 👍🏽 and 👨‍👩‍👧 family 🇩🇪 flag",
  "combining e\u0301 and a\u0300 marks",
  "zero\u200bwidth\u200djoiners",
  "halfwidth ｶﾀｶﾅ and fullwidth ＡＢＣ",
  "voiced ｶﾞｷﾞ and か\uFF9E joined",
  "thai ำ and ลำ",
  `${RED}red text${RESET} then plain`,
  `${BOLD}${RED}bold red that goes on and on and on across the width${RESET}`,
  `${UL}underlined words that wrap around the line end${RESET} after`,
  `${LINK}a hyperlink label that is long enough to wrap${LINK_END} tail`,
  `\x1b[38;5;240mgrey 256${RESET} \x1b[48;2;10;20;30mrgb bg here${RESET}`,
  `${RED}multi\nline${RESET}\nthird ${BOLD}bold\nfourth`,
  "averyveryverylongwordwithoutanyspacesthatmustbebrokenintopieces",
  `${RED}averyveryverylongredwordwithoutspaces${RESET} and more`,
  "   leading and trailing spaces   ",
  "word  double  spaces",
  "\x1b_pi:c\x07cursor marker",
  "\x1b[2Kclear line code",
  "lone \x1b escape",
  "中".repeat(30),
  "a中".repeat(20),
  `${RED}中文${RESET}\t${BOLD}tab${RESET}`,
];
const widths = [1, 2, 3, 5, 8, 10, 13, 20, 40, 80];
for (const s of samples) {
  same(`visibleWidth ${JSON.stringify(s)}`, text.visibleWidth(s), tui.visibleWidth(s));
  for (const w of widths) {
    same(`wrap ${w} ${JSON.stringify(s)}`, text.wrapTextWithAnsi(s, w), tui.wrapTextWithAnsi(s, w));
    for (const [ellipsis, pad] of [["...", false], ["", false], ["…", true], ["...", true], ["a long ellipsis", false]]) {
      same(`truncate ${w} ${JSON.stringify(ellipsis)} ${pad} ${JSON.stringify(s)}`, text.truncateToWidth(s, w, ellipsis, pad), tui.truncateToWidth(s, w, ellipsis, pad));
    }
  }
}
for (const s of samples) same(`truncate 0 ${JSON.stringify(s)}`, text.truncateToWidth(s, 0), tui.truncateToWidth(s, 0));

// Every code point's width where pi-tui's table has an opinion (sampled densely).
const mismatched = [];
for (let cp = 0x20; cp < 0x40000; cp += cp < 0x3000 ? 1 : 7) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const ch = String.fromCodePoint(cp);
  if (text.visibleWidth(ch) !== tui.visibleWidth(ch)) mismatched.push(cp.toString(16));
}
same("per-code-point widths", mismatched.slice(0, 20), []);

// Keys: every input against every key id.
const inputs = [
  "\x1b", "\r", "\n", "\t", " ", "\x7f", "\x08", "\x00", "\x1b[Z", "\x1b\r", "\x1b ", "\x1b\x7f", "\x1b\b",
  "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D", "\x1bOA", "\x1bOD", "\x1b[H", "\x1b[F", "\x1bOH", "\x1b[1~", "\x1b[4~",
  "\x1b[2~", "\x1b[3~", "\x1b[5~", "\x1b[6~", "\x1b[[5~", "\x1b[E", "\x1bOe", "\x1b[e", "\x1b[a", "\x1bOa", "\x1b[5$", "\x1b[3^",
  "\x1bOP", "\x1b[11~", "\x1b[15~", "\x1b[24~", "\x1b[[A", "\x1bOM",
  "\x1bb", "\x1bf", "\x1bp", "\x1bn", "\x1bB", "\x1bF", "\x1ba", "\x1bz", "\x1b5", "\x1b\x03", "\x1b\x1b", "\x1b\x1c", "\x1b\x1f",
  "a", "A", "z", "Z", "0", "9", "/", "-", "_", "?", "~", "\x01", "\x03", "\x05", "\x0b", "\x1a", "\x1c", "\x1d", "\x1f",
  "\x1b[1;5A", "\x1b[1;3D", "\x1b[1;5D", "\x1b[1;2C", "\x1b[1;5H", "\x1b[1;2F", "\x1b[3;5~", "\x1b[5;2~", "\x1b[1;5:3A",
  "\x1b[27u", "\x1b[13u", "\x1b[13;2u", "\x1b[13;3u", "\x1b[13;5u", "\x1b[57414u", "\x1b[57414;2u", "\x1b[9;2u", "\x1b[32;5u",
  "\x1b[127;3u", "\x1b[127;5u", "\x1b[99;5u", "\x1b[99;5:3u", "\x1b[99;5:2u", "\x1b[65;2u", "\x1b[97;2u", "\x1b[97:65;2u",
  "\x1b[1089::99;5u", "\x1b[1089;5u", "\x1b[107::118;5u", "\x1b[47;5u", "\x1b[57399u", "\x1b[57417;5u", "\x1b[99;69u", "\x1b[99;261u",
  "\x1b[27;5;99~", "\x1b[27;2;13~", "\x1b[27;3;13~", "\x1b[27;1;27~", "\x1b[27;2;65~", "\x1b[27;6;99~", "\x1b[27;5;127~",
  "\x1b[200~paste:3u\x1b[201~", "hello", "é", "\x1b[97;1:3u", "\x1b[1;1:2A",
];
const ids = [
  "escape", "esc", "enter", "return", "tab", "space", "backspace", "delete", "insert", "clear", "home", "end", "pageUp", "pageDown",
  "up", "down", "left", "right", "f1", "f5", "f12", "a", "z", "0", "/", "-", "_", "?", "[", "]", "\\",
  "shift+enter", "alt+enter", "ctrl+enter", "shift+tab", "ctrl+tab", "ctrl+space", "alt+space", "alt+backspace", "ctrl+backspace",
  "shift+up", "ctrl+up", "alt+up", "alt+down", "alt+left", "ctrl+left", "alt+right", "ctrl+right", "shift+right", "ctrl+home",
  "shift+end", "ctrl+delete", "shift+delete", "shift+pageUp", "ctrl+pageDown", "ctrl+clear", "shift+clear", "alt+home",
  "ctrl+a", "ctrl+c", "ctrl+e", "ctrl+k", "ctrl+z", "ctrl+/", "ctrl+-", "ctrl+_", "ctrl+]", "ctrl+\\", "ctrl+[",
  "alt+a", "alt+z", "alt+5", "alt+b", "ctrl+alt+c", "ctrl+alt+[", "ctrl+alt+]", "shift+a", "shift+z", "ctrl+shift+c", "super+c",
  "ctrl+super+k", "shift+alt+a", "ctrl+shift+alt+x", "Ctrl+C", "bogus", "", "shift+",
];
for (const kitty of [false, true]) {
  keys.setKittyProtocolActive(kitty);
  tui.setKittyProtocolActive(kitty);
  const differ = [];
  for (const data of inputs) {
    for (const id of ids) {
      if (keys.matchesKey(data, id) !== tui.matchesKey(data, id)) differ.push(`${JSON.stringify(data)} ${id}: ours ${keys.matchesKey(data, id)}`);
    }
    same(`parseKey kitty=${kitty} ${JSON.stringify(data)}`, keys.parseKey(data), tui.parseKey(data));
    same(`isKeyRelease ${JSON.stringify(data)}`, keys.isKeyRelease(data), tui.isKeyRelease(data));
    same(`isKeyRepeat ${JSON.stringify(data)}`, keys.isKeyRepeat(data), tui.isKeyRepeat(data));
    same(`decodeKittyPrintable ${JSON.stringify(data)}`, keys.decodeKittyPrintable(data), tui.decodeKittyPrintable(data));
  }
  same(`matchesKey kitty=${kitty} (${inputs.length * ids.length} pairs)`, differ.slice(0, 30), []);
}
keys.setKittyProtocolActive(false);
tui.setKittyProtocolActive(false);
same("Key helper", JSON.stringify(Object.entries(keys.Key).map(([k, v]) => [k, typeof v === "function" ? v("x") : v]).sort()), JSON.stringify(Object.entries(tui.Key).map(([k, v]) => [k, typeof v === "function" ? v("x") : v]).sort()));

finish("tui text and keys");
