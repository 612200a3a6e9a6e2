// pi-tui's Markdown, drawn by pi-rs's pi-tui (the same lines as pi-tui 1.6.0's for the same text,
// width and theme). The component crosses as a `markdown` node: its theme's styles are sampled
// (each function applied to a marker: the text around it), a `highlightCode` asks for pi-rs's
// highlighter. Inside a renderer's tree pi-rs draws it directly; where an extension calls
// `render(width)` itself (a custom component), the lines are asked for once per text, width and
// theme (`ui.renderMarkdown`, answered asynchronously and cached): until the answer comes, the
// text is shown wrapped, then the drawn components render again (`sweep`) and pi-rs draws a frame.
// A theme function that is not a wrap (sampling it on two texts tells) and an extension's own
// `highlightCode` run here: pi-rs answers which spans it needs (`missing`), they are styled here
// and pi-rs is asked again with them (`styled`, `highlighted`), until nothing is missing; inside a
// renderer's tree the node carries what was answered so far for the same text and theme.
import { Text, TREE_CLASSES } from "./basic.mjs";
import { sampleStyle } from "./text.mjs";

const THEME_KEYS = ["heading", "link", "linkUrl", "code", "codeBlock", "codeBlockBorder", "quote", "quoteBorder", "hr", "listBullet", "bold", "italic", "strikethrough", "underline"];

/** Rendered lines by request key; pending requests hold `null`. Bounded: the oldest go first. */
const cache = new Map();
const CACHE_LIMIT = 500;

/** Host-answered spans by the node they belong to (without its answers): `{styled, highlighted}`. */
const answers = new Map();
const ANSWERS_LIMIT = 200;

/** pi-coding-agent's own `highlightCode` (getMarkdownTheme) carries this: pi-rs highlights. */
export const NATIVE_HIGHLIGHT = Symbol.for("pi-rs.nativeHighlight");

/** Texts a wrap leaves alone and most other functions change (case, spaces at either end,
 * Markdown punctuation, digits). */
const PROBES = [" xY 9 `*_-.#>[]()|~\u0000 q ", "\u0000Ab", "a b\u0000"];

/** Whether `fn` only puts the same text around what it is given (a wrap pi-rs can apply). */
function wrapOf(fn) {
	const style = sampleStyle(fn);
	if (!style) return undefined;
	return PROBES.every((probe) => String(fn(probe)) === `${style.prefix}${probe}${style.suffix}`) ? style : undefined;
}

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
		const node = this.baseTree(width);
		// pi-rs needs this Markdown's own functions: the spans answered so far for this text and
		// theme go with the node; those of this width are asked for now (once) and come with a frame.
		if (node.highlight === "call" || Object.values(node.theme).some((style) => style.call)) this.render(width);
		const known = answers.get(JSON.stringify(node));
		return known ? { ...node, ...known } : node;
	}
	/** The node without host answers. */
	baseTree(width) {
		const theme = {};
		for (const key of THEME_KEYS) {
			const fn = this.theme?.[key];
			if (typeof fn !== "function") continue;
			theme[key] = wrapOf(fn) ?? { call: true };
		}
		const highlight = this.theme?.highlightCode;
		const d = this.defaultTextStyle;
		const transform = this.options?.transform;
		const inner = Math.max(1, (width ?? 80) - this.paddingX * 2);
		return {
			type: "markdown",
			text: String(typeof transform === "function" ? transform(String(this.text ?? ""), inner) : (this.text ?? "")),
			paddingX: this.paddingX,
			paddingY: this.paddingY,
			theme,
			highlight: typeof highlight === "function" ? (highlight[NATIVE_HIGHLIGHT] ? true : "call") : false,
			codeBlockIndent: typeof this.theme?.codeBlockIndent === "string" ? this.theme.codeBlockIndent : undefined,
			options: {
				preserveOrderedListMarkers: Boolean(this.options?.preserveOrderedListMarkers),
				preserveBackslashEscapes: Boolean(this.options?.preserveBackslashEscapes),
				renderLatex: this.options?.renderLatex !== false,
			},
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
	/** Runs this Markdown's own functions on the spans pi-rs asked for, into `known`. */
	answer(missing, known) {
		for (const { key, text } of missing) {
			if (key === "highlightCode") {
				const at = text.indexOf("\u0000");
				const lines = this.theme.highlightCode(text.slice(at + 1), text.slice(0, at));
				known.highlighted[text] = Array.from(lines ?? [], String);
			} else {
				known.styled[key] ??= {};
				known.styled[key][text] = String(this.theme[key](text));
			}
		}
	}
	/** The node's lines from pi-rs, answering the spans it asks for until none is missing. */
	async resolve(node, width) {
		const base = JSON.stringify(node);
		const known = answers.get(base) ?? { styled: {}, highlighted: {} };
		for (let round = 0; ; round++) {
			const answer = await host.render({ ...node, ...known }, width);
			const missing = Array.isArray(answer?.missing) ? answer.missing : [];
			if (missing.length === 0 || round >= 20) {
				answers.set(base, known);
				if (answers.size > ANSWERS_LIMIT) answers.delete(answers.keys().next().value);
				return Array.isArray(answer?.lines) ? answer.lines.map(String) : [];
			}
			this.answer(missing, known);
		}
	}
	render(width) {
		if (!this.text || String(this.text).trim() === "") return [];
		const tree = this.baseTree(width);
		const key = `${width}\u0000${JSON.stringify(tree)}`;
		const lines = cache.get(key);
		if (lines) return lines;
		const fallback = new Text(tree.text, this.paddingX, this.paddingY, this.defaultTextStyle?.bgColor).render(width);
		if (lines === undefined && host) {
			cache.set(key, null);
			if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value);
			this.resolve(tree, width).then(
				(lines) => {
					cache.set(key, lines);
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
