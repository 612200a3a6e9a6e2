// pi-tui 1.6.0's Image: a base64 image drawn with the terminal's graphics protocol (Kitty: one
// line holding the sequence, then empty lines for its rows; iTerm2: empty lines, then the
// sequence after a cursor-up), or its text fallback when the terminal shows no images. Kitty takes
// PNG only: another type goes through the registered transcoder, or falls back to text.
import { allocateImageId, getCapabilities, getCellDimensions, getImageDimensions, getPngDimensions, imageFallback, renderImage } from "./terminal-image.mjs";
import { truncateToWidth } from "./text.mjs";

let transcoder;
/** Converted PNGs by source data, least recently used first (at most 32). */
const pngCache = new Map();

export function setImageTranscoder(next) {
	transcoder = next;
	pngCache.clear();
}

function toPng(base64Data, mimeType) {
	if (!transcoder) return null;
	const known = pngCache.get(base64Data);
	const png = known === undefined ? transcoder(base64Data, mimeType) : known;
	pngCache.delete(base64Data);
	pngCache.set(base64Data, png);
	if (pngCache.size > 32) pngCache.delete(pngCache.keys().next().value);
	return png;
}

export class Image {
	constructor(base64Data, mimeType, theme, options = {}, dimensions) {
		this.base64Data = base64Data;
		this.mimeType = mimeType;
		this.theme = theme;
		this.options = options;
		this.dimensions = dimensions || getImageDimensions(base64Data, mimeType) || { widthPx: 800, heightPx: 600 };
		this.imageId = options.imageId;
	}
	getImageId() {
		return this.imageId;
	}
	invalidate() {
		this.cachedLines = undefined;
		this.cachedWidth = undefined;
	}
	fallback(width) {
		return [truncateToWidth(this.theme.fallbackColor(imageFallback(this.mimeType, this.dimensions, this.options.filename)), width)];
	}
	render(width) {
		if (this.cachedLines && this.cachedWidth === width) return this.cachedLines;
		const maxWidth = Math.max(1, Math.min(width - 2, this.options.maxWidthCells ?? 60));
		const cell = getCellDimensions();
		const maxHeight = this.options.maxHeightCells ?? Math.max(1, Math.ceil((maxWidth * cell.widthPx) / cell.heightPx));
		const caps = getCapabilities();
		let data = this.base64Data;
		let dimensions = this.dimensions;
		if (caps.images === "kitty" && this.mimeType !== "image/png") {
			this.pngData ??= toPng(this.base64Data, this.mimeType) ?? undefined;
			data = this.pngData ?? null;
			if (data) dimensions = getPngDimensions(data) ?? dimensions;
		}
		let lines;
		if (caps.images && data) {
			if (caps.images === "kitty" && this.imageId === undefined) this.imageId = allocateImageId();
			const result = renderImage(data, dimensions, { maxWidthCells: maxWidth, maxHeightCells: maxHeight, imageId: this.imageId, moveCursor: false });
			if (result) {
				if (result.imageId) this.imageId = result.imageId;
				const blank = Array.from({ length: result.rows - 1 }, () => "");
				if (caps.images === "kitty") lines = [result.sequence, ...blank];
				else lines = [...blank, `${result.rows > 1 ? `\x1b[${result.rows - 1}A` : ""}${result.sequence}`];
			}
		}
		lines ??= this.fallback(width);
		this.cachedLines = lines;
		this.cachedWidth = width;
		return lines;
	}
}
