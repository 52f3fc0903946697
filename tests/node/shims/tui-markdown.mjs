// pi-tui.mjs's Markdown against the real pi-tui: the same lines from render(width) for a corpus
// of markdown inputs (every block and inline construct pi's assistants and extensions write,
// and edge cases) at several widths, with pi's markdown theme shape, a code highlighter, a
// default text style with and without background, and padding.
import { finish, ours, real, same } from "./harness.mjs";

const mine = await ours("pi-tui.mjs");
const theirs = await real("@mariozechner/pi-tui/dist/index.js");

const sgr = (open, close) => (s) => `\x1b[${open}m${s}\x1b[${close}m`;
const theme = {
  heading: sgr(33, 39),
  link: sgr(34, 39),
  linkUrl: sgr(90, 39),
  code: sgr(36, 39),
  codeBlock: sgr(32, 39),
  codeBlockBorder: sgr(90, 39),
  quote: sgr(37, 39),
  quoteBorder: sgr(90, 39),
  hr: sgr(90, 39),
  listBullet: sgr(36, 39),
  bold: sgr(1, 22),
  italic: sgr(3, 23),
  underline: sgr(4, 24),
  strikethrough: sgr(9, 29),
};
const highlighted = { ...theme, codeBlockIndent: "| ", highlightCode: (code, lang) => code.split("\n").map((l) => `\x1b[35m${lang ?? "-"}:${l}\x1b[0m`) };
const plainTheme = Object.fromEntries(Object.keys(theme).map((k) => [k, (s) => s]));
const styles = {
  none: undefined,
  color: { color: sgr(31, 39) },
  styled: { color: sgr(31, 39), bold: true, italic: true },
  background: { bgColor: sgr(44, 49), color: sgr(37, 39) },
};

const long = "The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun.";
const corpus = {
  empty: "",
  blank: "  \n \n",
  plain: long,
  softBreaks: "line one\nline two\n  indented three",
  paragraphs: `first paragraph\n\nsecond ${long}\n\n\nthird after two blanks`,
  trailingBlank: "text\n\n",
  leadingBlank: "\n\ntext",
  headings: `# One\n## Two\n### Three *em* \`code\`\n#### Four ##\n##### Five\n###### Six\n####### seven\nafter`,
  headingSpacing: "# Title\n\nbody\n## Sub\nbody two",
  setext: "Title\n=====\n\nSub\n---\ntext",
  emphasis: "*em* _em_ **strong** __strong__ ***both*** ~~del~~ ~single~ a*b*c snake_case_name **nested *em* here**",
  unmatched: "a * b ** c _ d ~~ e ` f",
  code: "use `let x = 1;` and ``a ` b`` or `` `tick` ``",
  escapes: "\\*not em\\* \\# \\[x\\] back\\\\slash",
  links: "see [pi](https://example.com/pi) and <https://example.com> and https://bare.example.com/path. also [same](same) mail <me@example.com>",
  linkStyled: "[**bold** link](http://x.y/z \"title\") after",
  breaks: "hard  \nbreak and\\\nbackslash",
  fenced: "```ts\nconst a = 1;\n\nconst b = 2;\n```\nafter",
  fencedTilde: "~~~\nplain\n~~~\n\n```\nno lang\n```",
  fencedUnclosed: "```py\nprint(1)",
  indentedCode: "para\n\n    code line\n    more\n\nafter",
  bullets: "- one\n- two *em*\n- three\n\nafter",
  star: "* a\n* b\n+ c",
  ordered: "1. first\n2. second\n3. third",
  orderedStart: "7. seven\n8. eight",
  nested: "- a\n  - b\n    - c\n  - d\n- e\n  1. x\n  2. y",
  looseList: "- a\n\n- b\n\n- c",
  listContinuation: "- item\n  continued\nlazy line\n- next",
  listWithCode: "- item\n\n  ```js\n  x()\n  ```\n- other",
  listThenPara: "- a\n- b\n\npara",
  paraThenList: "para\n- a\n- b",
  tasks: "- [ ] todo\n- [x] done",
  longItems: `- ${long}\n  1. ${long}`,
  quote: `> quoted *text*\n> more ${long}\n\nafter`,
  quoteLazy: "> a\nlazy\n\n> b",
  quoteNested: "> outer\n>\n> > inner\n> - list in quote\n> ```\n> code\n> ```",
  quoteCode: "> `code` and **bold**",
  hr: "a\n\n---\n\nb\n***\n___",
  table: "| Name | Value |\n|------|------:|\n| a | 1 |\n| `b` | **2** |",
  tableWide: `| Column | Description |\n|---|---|\n| one | ${long} |\n| two | short |\n\nafter`,
  tableNoPipes: "a | b\n--|--\n1 | 2\nnext",
  tableRagged: "| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 |",
  tableEnd: "| a |\n|---|\n| 1 |\n\n",
  html: "<div>\nblock html\n</div>\n\ntext <b>inline</b> <br/> end",
  comment: "<!-- a comment -->\nafter",
  wide: "中文字符 and emoji 🎉 in a paragraph with **粗体** text",
  tabs: "\tindented\ttab",
  entities: "a &amp; b &lt;tag&gt; &copy; AT&T",
  intraword: "a_b_c snake__case **a**b *a **b** c* __a__b",
  emphasisEdges: "** not bold ** and *not em * and ***a** b* and **unclosed",
  delEdges: "~~ spaced ~~ ~~a~~b ~~~three~~~ ~~multi word~~",
  linkEdges: "[a](<url with spaces>) [b](url(with)parens) [c]() [d](x 'single') [e] [f][ref] ![img](pic.png)",
  autolinkEdges: "visit www.example.com, or https://x.com/a_(b). https://x.com/end) done",
  emptyItems: "-\n- a\n-\n\n1.\n2. b",
  emptyHeading: "#\n## \nx",
  emptyQuote: ">\n> \n",
  parenOrdered: "1) one\n2) two\n3. other",
  deepIndent: "- a\n    - four spaces\n        - eight",
  orderedNested: "1. one\n   - sub a\n   - sub b\n2. two\n\n   para in item\n3. three",
  tableAlign: "| l | c | r |\n|:--|:-:|--:|\n| `x|y` | a \\| b | [l](u) |",
  tableNarrow: "| aaaaaaaaaa | bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb | c |\n|---|---|---|\n| 1 | 2 | 3 |",
  longWord: `${"x".repeat(50)} https://example.com/${"very-long-path/".repeat(5)}`,
  codeEdges: "``` \n  keep indent\n```\n````\n```inner```\n````\n  ```sh\n  indented fence\n  ```",
  inlineHtmlLines: "a <span\nclass=\"x\">b</span> c",
  hrVariants: "- - -\n\n* * *\n\n_____\n\nnot---hr",
  headingThenCode: "## Code\n```\nx\n```\n# After",
  quoteThenList: "> q\n- a\n\n---\n> q2",
  references: "See [the docs][docs], [Docs][] and [docs] or [missing][nope].\n\n[docs]: https://example.com/docs \"Title\"\n[other]: <http://x.y>\n\nafter [other]",
  trailingSpaces: "- a\n- b  \n\nsetext  \n===\nquote:\n> x  \n\n- item\nlazy\n</div>",
  notADefinition: "para\n[ref]: http://r\n\nuse [ref]",
  setextRefused: "b\n2. two\n===\n\n|---|---|\n---",
  mixed: `# Report\n\nSummary with **bold**, *em* and \`code\`.\n\n## Steps\n\n1. Read the file\n2. Change it:\n   - keep tests\n   - run \`cargo test\`\n\n> Note: ${long}\n\n| Key | Meaning |\n|---|---|\n| a | ${long} |\n\n---\n\nDone.`,
};

const widths = [10, 25, 40, 80];
let cases = 0;
const setups = [
  ["theme", theme, 0, 0, "none"],
  ["theme pad", theme, 1, 1, "color"],
  ["highlight", highlighted, 2, 0, "styled"],
  ["plain", plainTheme, 0, 1, "background"],
];
for (const [name, text] of Object.entries(corpus)) {
  for (const [label, th, px, py, style] of setups) {
    const a = new mine.Markdown(text, px, py, th, styles[style]);
    const b = new theirs.Markdown(text, px, py, th, styles[style]);
    for (const w of widths) {
      cases++;
      same(`${name} / ${label} @${w}`, a.render(w), b.render(w));
    }
  }
}
// setText and invalidate keep the cache honest.
const a = new mine.Markdown("# a", 0, 0, theme);
const b = new theirs.Markdown("# a", 0, 0, theme);
for (const step of [(m) => m.render(20), (m) => m.setText("*b*"), (m) => m.render(20), (m) => m.invalidate(), (m) => m.render(5)]) {
  cases++;
  same(`steps ${cases}`, step(a), step(b));
}
console.log(`${cases} markdown cases compared`);
finish("pi-tui Markdown");
