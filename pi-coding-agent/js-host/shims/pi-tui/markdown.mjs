// pi-tui's Markdown, drawn by pi-rs's pi-tui (the same lines as pi-tui 1.6.0's for the same text,
// width and theme). The component crosses as a `markdown` node: its theme's styles are sampled
// (each function applied to a marker: the text around it), a `highlightCode` asks for pi-rs's
// highlighter. Inside a renderer's tree pi-rs draws it directly; where an extension calls
// `render(width)` itself (a custom component), the lines are asked for once per text, width and
// theme (`ui.renderMarkdown`, answered asynchronously and cached): until the answer comes, the
// text is shown wrapped, then the drawn components render again (`sweep`) and pi-rs draws a frame.
import { Text, TREE_CLASSES } from "./basic.mjs";
import { sampleStyle } from "./text.mjs";

const THEME_KEYS = ["heading", "link", "linkUrl", "code", "codeBlock", "codeBlockBorder", "quote", "quoteBorder", "hr", "listBullet", "bold", "italic", "strikethrough", "underline"];

/** Rendered lines by request key; pending requests hold `null`. Bounded: the oldest go first. */
const cache = new Map();
const CACHE_LIMIT = 500;

/** How the answer reaches pi-rs's screen: set by the host (the shim also runs without one). */
let host;
export function setMarkdownHost(h) {
	host = h;
}

export class Markdown {
	constructor(text = "", paddingX = 1, paddingY = 1, theme, defaultTextStyle, options) {
		this.text = text;
		this.paddingX = paddingX;
		this.paddingY = paddingY;
		this.theme = theme;
		this.defaultTextStyle = defaultTextStyle;
		this.options = options;
	}
	setText(text) {
		this.text = text;
	}
	invalidate() {
		cache.clear();
	}
	/** The node pi-rs draws. */
	toTree(width) {
		const theme = {};
		for (const key of THEME_KEYS) {
			const style = sampleStyle(this.theme?.[key]);
			if (style) theme[key] = style;
		}
		const d = this.defaultTextStyle;
		const transform = this.options?.transform;
		const inner = Math.max(1, (width ?? 80) - this.paddingX * 2);
		return {
			type: "markdown",
			text: String(typeof transform === "function" ? transform(String(this.text ?? ""), inner) : (this.text ?? "")),
			paddingX: this.paddingX,
			paddingY: this.paddingY,
			theme,
			highlight: typeof this.theme?.highlightCode === "function",
			codeBlockIndent: typeof this.theme?.codeBlockIndent === "string" ? this.theme.codeBlockIndent : undefined,
			defaultTextStyle: d
				? {
						color: sampleStyle(d.color),
						bg: sampleStyle(d.bgColor),
						bold: Boolean(d.bold),
						italic: Boolean(d.italic),
						strikethrough: Boolean(d.strikethrough),
						underline: Boolean(d.underline),
					}
				: undefined,
		};
	}
	render(width) {
		if (!this.text || String(this.text).trim() === "") return [];
		const tree = this.toTree(width);
		const key = `${width}\u0000${JSON.stringify(tree)}`;
		const lines = cache.get(key);
		if (lines) return lines;
		const fallback = new Text(tree.text, this.paddingX, this.paddingY, this.defaultTextStyle?.bgColor).render(width);
		if (lines === undefined && host) {
			cache.set(key, null);
			if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value);
			host.render(tree, width).then(
				(answer) => {
					cache.set(key, Array.isArray(answer) ? answer.map(String) : []);
					host.changed();
				},
				(error) => {
					cache.set(key, fallback);
					host.failed(error);
				},
			);
		}
		return fallback;
	}
}

TREE_CLASSES.add(Markdown);
