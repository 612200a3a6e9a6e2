// pi-tui 1.6.0's terminal image support (terminal-image.js): the terminal's capabilities detected
// from the environment as pi-tui detects them (Kitty/iTerm2 graphics, truecolor, OSC 8
// hyperlinks, and the PI_IMAGE_PROTOCOL / PI_TRUE_COLOR / PI_HYPERLINKS overrides), image sizes
// read from PNG/JPEG/GIF/WebP headers, the cell size an image takes, the Kitty and iTerm2 escape
// sequences, and the text drawn when the terminal shows no images. The host runs with pi-rs's
// environment, so an extension sees the terminal pi-rs draws on.
import { execSync } from "node:child_process";
import { homedir } from "node:os";
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";

let cached = null;
let overrides = {};
let cell = { widthPx: 9, heightPx: 18 };

export function getCellDimensions() {
	return cell;
}
export function setCellDimensions(dims) {
	cell = dims;
}

/** Whether the attached tmux client forwards OSC 8 hyperlinks (its `client_termfeatures`). */
function tmuxForwardsHyperlinks() {
	try {
		const features = execSync("tmux display-message -p '#{client_termfeatures}'", { encoding: "utf8", timeout: 250, stdio: ["ignore", "pipe", "ignore"] });
		return features.split(",").some((f) => f.trim() === "hyperlinks");
	} catch {
		return false;
	}
}

const caps = (images, trueColor, hyperlinks) => ({ images, trueColor, hyperlinks });

function fromEnvironment(probeHyperlinks) {
	const env = process.env;
	const program = env.TERM_PROGRAM?.toLowerCase() || "";
	const emulator = env.TERMINAL_EMULATOR?.toLowerCase() || "";
	const term = env.TERM?.toLowerCase() || "";
	const colorTerm = env.COLORTERM?.toLowerCase() || "";
	const trueColorHint = colorTerm === "truecolor" || colorTerm === "24bit" || term.endsWith("-direct");
	if (env.TMUX || term.startsWith("tmux")) return caps(null, trueColorHint, probeHyperlinks());
	if (term.startsWith("screen")) return caps(null, trueColorHint, false);
	if (program === "herdr") return caps("kitty", trueColorHint, true);
	if (program === "rex") return caps("kitty", true, true);
	if (program === "orca" && env.ORCA_IMAGE_PROTOCOL === "kitty") return caps("kitty", true, true);
	if (env.KITTY_WINDOW_ID || program === "kitty") return caps("kitty", true, true);
	if (program === "ghostty" || term.includes("ghostty") || env.GHOSTTY_RESOURCES_DIR) return caps("kitty", true, true);
	if (env.WEZTERM_PANE || program === "wezterm") return caps("kitty", true, true);
	if (program === "warpterminal" || env.WARP_SESSION_ID || env.WARP_TERMINAL_SESSION_UUID) return caps("kitty", true, true);
	if (env.ITERM_SESSION_ID || program === "iterm.app") return caps("iterm2", true, true);
	if (env.WT_SESSION) return caps(null, true, true);
	const alacritty = program === "alacritty" || term.startsWith("alacritty") || env.ALACRITTY_WINDOW_ID;
	if (alacritty || program === "vscode" || program === "zed") return caps(null, true, true);
	if (emulator === "jetbrains-jediterm") return caps(null, true, false);
	if (process.platform === "win32") return caps(null, true, false);
	return caps(null, trueColorHint, false);
}

const flag = (value) => (value === "1" ? true : value === "0" ? false : undefined);

export function detectCapabilities(probeHyperlinks = tmuxForwardsHyperlinks) {
	const hyperlinks = flag(process.env.PI_HYPERLINKS);
	const detected = fromEnvironment(hyperlinks === undefined ? probeHyperlinks : () => hyperlinks);
	const protocol = process.env.PI_IMAGE_PROTOCOL?.toLowerCase();
	const images = protocol === "kitty" || protocol === "iterm2" ? protocol : protocol === "none" || protocol === "0" ? null : undefined;
	const trueColor = flag(process.env.PI_TRUE_COLOR);
	const out = { ...detected };
	if (images !== undefined) out.images = images;
	if (trueColor !== undefined) out.trueColor = trueColor;
	if (hyperlinks !== undefined) out.hyperlinks = hyperlinks;
	return out;
}

export function getCapabilities() {
	if (!cached) {
		const hyperlinks = overrides.hyperlinks;
		cached = { ...detectCapabilities(hyperlinks === undefined ? undefined : () => hyperlinks), ...overrides };
	}
	return cached;
}
export function getTerminalColorMode(capabilities = getCapabilities()) {
	return capabilities.trueColor ? "truecolor" : "256color";
}
export function resetCapabilitiesCache() {
	cached = null;
}
export function setCapabilityOverrides(next) {
	if (overrides.images === next.images && overrides.trueColor === next.trueColor && overrides.hyperlinks === next.hyperlinks) return;
	overrides = { ...next };
	cached = null;
}
export function setCapabilities(next) {
	cached = next;
}

export function isImageLine(line) {
	return line.includes("\x1b_G") || line.includes("\x1b]1337;File=");
}

/** A random Kitty image id in 1..=0xffffffff (ids from different modules must not collide). */
export function allocateImageId() {
	return Math.floor(Math.random() * 0xfffffffe) + 1;
}

export function encodeKitty(base64Data, options = {}) {
	const CHUNK = 4096;
	const params = ["a=T", "f=100", "q=2"];
	if (options.moveCursor === false) params.push("C=1");
	if (options.columns) params.push(`c=${options.columns}`);
	if (options.rows) params.push(`r=${options.rows}`);
	if (options.imageId) params.push(`i=${options.imageId}`);
	if (base64Data.length <= CHUNK) return `\x1b_G${params.join(",")};${base64Data}\x1b\\`;
	let out = "";
	for (let offset = 0; offset < base64Data.length; offset += CHUNK) {
		const chunk = base64Data.slice(offset, offset + CHUNK);
		const last = offset + CHUNK >= base64Data.length;
		const head = offset === 0 ? `${params.join(",")},m=1` : last ? "m=0" : "m=1";
		out += `\x1b_G${head};${chunk}\x1b\\`;
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
	const params = [`inline=${options.inline !== false ? 1 : 0}`, `size=${Buffer.byteLength(base64Data, "base64")}`];
	if (options.width !== undefined) params.push(`width=${options.width}`);
	if (options.height !== undefined) params.push(`height=${options.height}`);
	if (options.name) params.push(`name=${Buffer.from(options.name).toString("base64")}`);
	if (options.preserveAspectRatio === false) params.push("preserveAspectRatio=0");
	return `\x1b]1337;File=${params.join(";")}:${base64Data}\x07`;
}

/** Of `upper` and `upper - 1` cells, the one nearer to `ideal` (by ratio). */
function lessDistorted(upper, ideal) {
	if (upper <= 1) return upper;
	const lower = upper - 1;
	const distortion = (n) => Math.max(n / ideal, ideal / n);
	return distortion(lower) < distortion(upper) ? lower : upper;
}

export function calculateImageCellSize(dims, maxWidthCells, maxHeightCells, cellDims = { widthPx: 9, heightPx: 18 }, optimizeAspectRatio = false) {
	const maxWidth = Math.max(1, Math.floor(maxWidthCells));
	const maxHeight = maxHeightCells === undefined ? undefined : Math.max(1, Math.floor(maxHeightCells));
	const w = Math.max(1, dims.widthPx);
	const h = Math.max(1, dims.heightPx);
	const widthScale = (maxWidth * cellDims.widthPx) / w;
	const heightScale = maxHeight === undefined ? widthScale : (maxHeight * cellDims.heightPx) / h;
	const scale = Math.min(widthScale, heightScale);
	let columns = Math.max(1, Math.min(maxWidth, Math.ceil((w * scale) / cellDims.widthPx)));
	let rows = Math.max(1, Math.ceil((h * scale) / cellDims.heightPx));
	if (maxHeight !== undefined) rows = Math.min(maxHeight, rows);
	if (!optimizeAspectRatio) return { columns, rows };
	if (widthScale <= heightScale) rows = lessDistorted(rows, (columns * cellDims.widthPx * h) / (w * cellDims.heightPx));
	else columns = lessDistorted(columns, (rows * cellDims.heightPx * w) / (h * cellDims.widthPx));
	return { columns, rows };
}
export function calculateImageRows(dims, targetWidthCells, cellDims = { widthPx: 9, heightPx: 18 }) {
	return calculateImageCellSize(dims, targetWidthCells, undefined, cellDims).rows;
}

/** `read(buffer)` on the decoded data, or null when it is too short or throws. */
function header(base64Data, minLength, read) {
	try {
		const b = Buffer.from(base64Data, "base64");
		return b.length < minLength ? null : read(b);
	} catch {
		return null;
	}
}
export function getPngDimensions(base64Data) {
	return header(base64Data, 24, (b) => (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 ? { widthPx: b.readUInt32BE(16), heightPx: b.readUInt32BE(20) } : null));
}
export function getJpegDimensions(base64Data) {
	return header(base64Data, 2, (b) => {
		if (b[0] !== 0xff || b[1] !== 0xd8) return null;
		let offset = 2;
		while (offset < b.length - 9) {
			if (b[offset] !== 0xff) {
				offset++;
				continue;
			}
			const marker = b[offset + 1];
			if (marker >= 0xc0 && marker <= 0xc2) return { widthPx: b.readUInt16BE(offset + 7), heightPx: b.readUInt16BE(offset + 5) };
			if (offset + 3 >= b.length) return null;
			const length = b.readUInt16BE(offset + 2);
			if (length < 2) return null;
			offset += 2 + length;
		}
		return null;
	});
}
export function getGifDimensions(base64Data) {
	return header(base64Data, 10, (b) => {
		const sig = b.subarray(0, 6).toString("ascii");
		return sig === "GIF87a" || sig === "GIF89a" ? { widthPx: b.readUInt16LE(6), heightPx: b.readUInt16LE(8) } : null;
	});
}
export function getWebpDimensions(base64Data) {
	return header(base64Data, 30, (b) => {
		if (b.subarray(0, 4).toString("ascii") !== "RIFF" || b.subarray(8, 12).toString("ascii") !== "WEBP") return null;
		const chunk = b.subarray(12, 16).toString("ascii");
		if (chunk === "VP8 ") return { widthPx: b.readUInt16LE(26) & 0x3fff, heightPx: b.readUInt16LE(28) & 0x3fff };
		if (chunk === "VP8L") {
			const bits = b.readUInt32LE(21);
			return { widthPx: (bits & 0x3fff) + 1, heightPx: ((bits >> 14) & 0x3fff) + 1 };
		}
		if (chunk === "VP8X") return { widthPx: (b[24] | (b[25] << 8) | (b[26] << 16)) + 1, heightPx: (b[27] | (b[28] << 8) | (b[29] << 16)) + 1 };
		return null;
	});
}
export function getImageDimensions(base64Data, mimeType) {
	const read = { "image/png": getPngDimensions, "image/jpeg": getJpegDimensions, "image/gif": getGifDimensions, "image/webp": getWebpDimensions }[mimeType];
	return read ? read(base64Data) : null;
}

export function renderImage(base64Data, dims, options = {}) {
	const { images } = getCapabilities();
	if (!images) return null;
	const size = calculateImageCellSize(dims, options.maxWidthCells ?? 80, options.maxHeightCells, getCellDimensions(), images === "kitty");
	if (images === "kitty") {
		const sequence = encodeKitty(base64Data, { columns: size.columns, rows: size.rows, imageId: options.imageId, moveCursor: options.moveCursor });
		return { sequence, columns: size.columns, rows: size.rows, imageId: options.imageId };
	}
	if (images === "iterm2") {
		const sequence = encodeITerm2(base64Data, { width: size.columns, height: "auto", preserveAspectRatio: options.preserveAspectRatio ?? true });
		return { sequence, columns: size.columns, rows: size.rows };
	}
	return null;
}

export function hyperlink(text, url) {
	return `\x1b]8;;${url}\x1b\\${text}\x1b]8;;\x1b\\`;
}

/** `~/…` for a path under the home directory. */
function shortPath(filename) {
	const home = homedir();
	if (home && (filename === home || filename.startsWith(`${home}/`) || filename.startsWith(`${home}\\`))) return `~${filename.slice(home.length)}`;
	return filename;
}

/** The text drawn where the terminal shows no image: `[Image: name [mime] WxH]`. */
export function imageFallback(mimeType, dimensions, filename) {
	const parts = [];
	if (filename) {
		const shown = shortPath(filename);
		parts.push(getCapabilities().hyperlinks && isAbsolute(filename) ? hyperlink(shown, pathToFileURL(filename).href) : shown);
	}
	parts.push(`[${mimeType}]`);
	if (dimensions) parts.push(`${dimensions.widthPx}x${dimensions.heightPx}`);
	return `[Image: ${parts.join(" ")}]`;
}
