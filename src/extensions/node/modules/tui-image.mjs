// Inline images for extensions: pi-tui's `Image` component and its terminal-image helpers.
//
// The terminal is chosen from the environment by the same rules pi-rs uses for its own images
// (src/modes/interactive/images.rs): Kitty graphics for kitty, Ghostty and WezTerm, iTerm2's
// inline images for iTerm2, none inside tmux/screen or elsewhere. An `Image` renders as pi-tui's
// does: `rows - 1` empty lines, then one line that moves up, writes the image and (Kitty) moves
// back down. pi-rs recognises that line and writes it to the terminal unchanged, once per
// placement; anything else in a line is never passed through. Where images are not drawn, the
// component renders pi's one-line note (`[Image: [image/png] 800x600]`).

let capabilities = null;
// The host does not see the terminal's answer to the cell size query: pi-tui's default.
let cellDimensions = { widthPx: 9, heightPx: 18 };

export function getCellDimensions() {
  return cellDimensions;
}

export function setCellDimensions(dims) {
  cellDimensions = dims;
}

export function detectCapabilities() {
  const env = process.env;
  const termProgram = (env.TERM_PROGRAM || "").toLowerCase();
  const term = (env.TERM || "").toLowerCase();
  const colorTerm = (env.COLORTERM || "").toLowerCase();
  const trueColor = colorTerm === "truecolor" || colorTerm === "24bit";
  if (env.TMUX || term.startsWith("tmux") || term.startsWith("screen")) {
    return { images: null, trueColor, hyperlinks: false };
  }
  const kitty =
    env.KITTY_WINDOW_ID ||
    termProgram === "kitty" ||
    termProgram === "ghostty" ||
    term.includes("ghostty") ||
    env.GHOSTTY_RESOURCES_DIR ||
    env.WEZTERM_PANE ||
    termProgram === "wezterm";
  if (kitty) return { images: "kitty", trueColor: true, hyperlinks: true };
  if (env.ITERM_SESSION_ID || termProgram === "iterm.app") {
    return { images: "iterm2", trueColor: true, hyperlinks: true };
  }
  if (termProgram === "vscode" || termProgram === "alacritty") {
    return { images: null, trueColor: true, hyperlinks: true };
  }
  return { images: null, trueColor, hyperlinks: false };
}

export function getCapabilities() {
  if (!capabilities) capabilities = detectCapabilities();
  return capabilities;
}

export function resetCapabilitiesCache() {
  capabilities = null;
}

export function setCapabilities(caps) {
  capabilities = caps;
}

export function allocateImageId() {
  return Math.floor(Math.random() * 0xfffffffe) + 1;
}

export function encodeKitty(base64Data, options = {}) {
  const chunkSize = 4096;
  const params = ["a=T", "f=100", "q=2"];
  if (options.moveCursor === false) params.push("C=1");
  if (options.columns) params.push(`c=${options.columns}`);
  if (options.rows) params.push(`r=${options.rows}`);
  if (options.imageId) params.push(`i=${options.imageId}`);
  const head = params.join(",");
  if (base64Data.length <= chunkSize) return `\x1b_G${head};${base64Data}\x1b\\`;
  let out = "";
  for (let at = 0; at < base64Data.length; at += chunkSize) {
    const chunk = base64Data.slice(at, at + chunkSize);
    const last = at + chunkSize >= base64Data.length;
    if (at === 0) out += `\x1b_G${head},m=1;${chunk}\x1b\\`;
    else out += `\x1b_Gm=${last ? 0 : 1};${chunk}\x1b\\`;
  }
  return out;
}

export function deleteKittyImage(imageId) {
  return `\x1b_Ga=d,d=I,i=${imageId},q=2\x1b\\`;
}

export function deleteAllKittyImages() {
  return "\x1b_Ga=d,d=A,q=2\x1b\\";
}

export function encodeITerm2(base64Data, options = {}) {
  const params = [`inline=${options.inline === false ? 0 : 1}`];
  if (options.width !== undefined) params.push(`width=${options.width}`);
  if (options.height !== undefined) params.push(`height=${options.height}`);
  if (options.name) params.push(`name=${Buffer.from(options.name).toString("base64")}`);
  if (options.preserveAspectRatio === false) params.push("preserveAspectRatio=0");
  return `\x1b]1337;File=${params.join(";")}:${base64Data}\x07`;
}

export function calculateImageRows(imageDimensions, targetWidthCells, cell = { widthPx: 9, heightPx: 18 }) {
  const scaledHeight = imageDimensions.heightPx * ((targetWidthCells * cell.widthPx) / imageDimensions.widthPx);
  return Math.max(1, Math.ceil(scaledHeight / cell.heightPx));
}

function decode(base64Data) {
  try {
    return Buffer.from(base64Data, "base64");
  } catch {
    return Buffer.alloc(0);
  }
}

export function getPngDimensions(base64Data) {
  const b = decode(base64Data);
  if (b.length < 24 || b[0] !== 0x89 || b[1] !== 0x50 || b[2] !== 0x4e || b[3] !== 0x47) return null;
  return { widthPx: b.readUInt32BE(16), heightPx: b.readUInt32BE(20) };
}

export function getJpegDimensions(base64Data) {
  const b = decode(base64Data);
  if (b.length < 2 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  let at = 2;
  while (at < b.length - 9) {
    if (b[at] !== 0xff) {
      at++;
      continue;
    }
    const marker = b[at + 1];
    if (marker >= 0xc0 && marker <= 0xc2) {
      return { widthPx: b.readUInt16BE(at + 7), heightPx: b.readUInt16BE(at + 5) };
    }
    const length = b.readUInt16BE(at + 2);
    if (length < 2) return null;
    at += 2 + length;
  }
  return null;
}

export function getGifDimensions(base64Data) {
  const b = decode(base64Data);
  if (b.length < 10) return null;
  const sig = b.subarray(0, 6).toString("ascii");
  if (sig !== "GIF87a" && sig !== "GIF89a") return null;
  return { widthPx: b.readUInt16LE(6), heightPx: b.readUInt16LE(8) };
}

export function getWebpDimensions(base64Data) {
  const b = decode(base64Data);
  if (b.length < 30) return null;
  if (b.subarray(0, 4).toString("ascii") !== "RIFF" || b.subarray(8, 12).toString("ascii") !== "WEBP") return null;
  const chunk = b.subarray(12, 16).toString("ascii");
  if (chunk === "VP8 ") return { widthPx: b.readUInt16LE(26) & 0x3fff, heightPx: b.readUInt16LE(28) & 0x3fff };
  if (chunk === "VP8L") {
    const bits = b.readUInt32LE(21);
    return { widthPx: (bits & 0x3fff) + 1, heightPx: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") {
    return {
      widthPx: (b[24] | (b[25] << 8) | (b[26] << 16)) + 1,
      heightPx: (b[27] | (b[28] << 8) | (b[29] << 16)) + 1,
    };
  }
  return null;
}

export function getImageDimensions(base64Data, mimeType) {
  switch (mimeType) {
    case "image/png":
      return getPngDimensions(base64Data);
    case "image/jpeg":
      return getJpegDimensions(base64Data);
    case "image/gif":
      return getGifDimensions(base64Data);
    case "image/webp":
      return getWebpDimensions(base64Data);
    default:
      return null;
  }
}

export function renderImage(base64Data, imageDimensions, options = {}) {
  const caps = getCapabilities();
  if (!caps.images) return null;
  const maxWidth = options.maxWidthCells ?? 80;
  const rows = calculateImageRows(imageDimensions, maxWidth, getCellDimensions());
  if (caps.images === "kitty") {
    const sequence = encodeKitty(base64Data, {
      columns: maxWidth,
      rows,
      imageId: options.imageId,
      moveCursor: options.moveCursor,
    });
    return { sequence, rows, imageId: options.imageId };
  }
  if (caps.images === "iterm2") {
    const sequence = encodeITerm2(base64Data, {
      width: maxWidth,
      height: "auto",
      preserveAspectRatio: options.preserveAspectRatio ?? true,
    });
    return { sequence, rows };
  }
  return null;
}

export function hyperlink(text, url) {
  return `\x1b]8;;${url}\x1b\\${text}\x1b]8;;\x1b\\`;
}

export function imageFallback(mimeType, dimensions, filename) {
  const parts = [];
  if (filename) parts.push(filename);
  parts.push(`[${mimeType}]`);
  if (dimensions) parts.push(`${dimensions.widthPx}x${dimensions.heightPx}`);
  return `[Image: ${parts.join(" ")}]`;
}

export class Image {
  constructor(base64Data, mimeType, theme, options = {}, dimensions) {
    this.base64Data = base64Data;
    this.mimeType = mimeType;
    this.theme = theme;
    this.options = options;
    this.dimensions = dimensions || getImageDimensions(base64Data, mimeType) || { widthPx: 800, heightPx: 600 };
    this.imageId = options.imageId;
    this.cachedLines = undefined;
    this.cachedWidth = undefined;
  }

  getImageId() {
    return this.imageId;
  }

  invalidate() {
    this.cachedLines = undefined;
    this.cachedWidth = undefined;
  }

  render(width) {
    if (this.cachedLines && this.cachedWidth === width) return this.cachedLines;
    const maxWidth = Math.min(width - 2, this.options.maxWidthCells ?? 60);
    const caps = getCapabilities();
    let lines;
    if (caps.images) {
      if (caps.images === "kitty" && this.imageId === undefined) this.imageId = allocateImageId();
      const result = renderImage(this.base64Data, this.dimensions, {
        maxWidthCells: maxWidth,
        imageId: this.imageId,
        moveCursor: false,
      });
      if (result) {
        if (result.imageId) this.imageId = result.imageId;
        lines = [];
        for (let i = 0; i < result.rows - 1; i++) lines.push("");
        const up = result.rows - 1;
        const moveUp = up > 0 ? `\x1b[${up}A` : "";
        const moveDown = caps.images === "kitty" && up > 0 ? `\x1b[${up}B` : "";
        lines.push(moveUp + result.sequence + moveDown);
      }
    }
    if (!lines) {
      const note = imageFallback(this.mimeType, this.dimensions, this.options.filename);
      lines = [this.theme?.fallbackColor ? this.theme.fallbackColor(note) : note];
    }
    this.cachedLines = lines;
    this.cachedWidth = width;
    return lines;
  }
}
