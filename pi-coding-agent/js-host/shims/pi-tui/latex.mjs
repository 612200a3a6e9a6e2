// pi-tui's renderLatex for extensions: LaTeX math as terminal text, inline or in display mode
// (stacked fractions, limits, scripts, matrices, cases). The same renderer as pi-rs's
// pi-tui/src/latex/ (checked on the same corpus, recorded from pi-tui 1.6.0); undefined for
// unsupported or malformed input.
import * as T from "./latex-tables.mjs";
import { visibleWidth } from "./text.mjs";

const OP_START = "\u{f0004}";
const OP_END = "\u{f0005}";
const NODE_START = "\u{f0000}";
const NODE_END = "\u{f0001}";
const KEEP_SPACE = "\u{f0002}";
const NEGATIVE_SPACE = "\u0000";
const MAX_DEPTH = 400;
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
const SIMPLE_WORD = /^[\p{L}\p{N}.]+$/u;

function normalizeScriptValue(value) {
	return value.trim().replace(/\s*([=+-])\s*/g, "$1");
}

function unicodeScript(value, kind) {
	const table = kind === "sub" ? T.subscript : T.superscript;
	let out = "";
	for (const c of normalizeScriptValue(value)) {
		const mapped = table.get(c);
		if (mapped === undefined) return undefined;
		out += mapped;
	}
	return out;
}

function script(value, kind) {
	const v = normalizeScriptValue(value);
	const unicode = unicodeScript(v, kind);
	if (unicode !== undefined) return unicode;
	const prefix = kind === "sub" ? "_" : "^";
	return [...v].length === 1 || (kind === "sub" && /^[A-Za-z]+$/.test(v)) ? prefix + v : `${prefix}(${v})`;
}

function fraction(numerator, denominator) {
	const n = numerator.trim();
	const d = denominator.trim();
	const simpleDenominator = /^[\p{N}.]+$/u.test(d) || [...d].length === 1;
	return `${SIMPLE_WORD.test(n) ? n : `(${n})`}/${simpleDenominator ? d : `(${d})`}`;
}

function root(value, symbol) {
	const v = value.trim();
	return SIMPLE_WORD.test(v) ? symbol + v : `${symbol}(${v})`;
}

function normalizeOutput(value) {
	let spaced = "";
	let previous = "";
	for (const c of value) {
		if (c === OP_START) {
			if (previous && (LETTER_OR_NUMBER.test(previous) || ")]}".includes(previous) || previous === NODE_END)) spaced += " ";
		} else spaced += c;
		previous = c;
	}
	const chars = [...spaced];
	let joined = "";
	chars.forEach((c, i) => {
		if (c !== OP_END) {
			joined += c;
			return;
		}
		const next = chars[i + 1];
		if (next !== undefined && (LETTER_OR_NUMBER.test(next) || next === "√" || next === NODE_START)) joined += " ";
	});
	const lines = joined.split("\n").map((line) => line.replace(/[ \t]+/g, " ").trim());
	return lines.filter((line, i) => line.length > 0 || (i > 0 && i < lines.length - 1)).join("\n").trim();
}

// ---- layout ----------------------------------------------------------------------------------

function pad(line, width, centered) {
	const padding = Math.max(0, width - visibleWidth(line));
	const left = centered ? Math.floor(padding / 2) : 0;
	return " ".repeat(left) + line + " ".repeat(padding - left);
}

function textLayout(text) {
	return { lines: [text], width: visibleWidth(text), baseline: 0 };
}

function join(layouts) {
	if (layouts.length === 0) return { lines: [""], width: 0, baseline: 0 };
	let baseline = 0;
	let below = -Infinity;
	for (const l of layouts) {
		baseline = Math.max(baseline, l.baseline);
		below = Math.max(below, l.lines.length - l.baseline - 1);
	}
	const lines = [];
	for (let row = 0; row <= baseline + below; row++) {
		let line = "";
		for (const l of layouts) {
			const r = row - baseline + l.baseline;
			line += r >= 0 && r < l.lines.length ? pad(l.lines[r], l.width, false) : " ".repeat(l.width);
		}
		lines.push(line.trimEnd());
	}
	return { lines, width: layouts.reduce((sum, l) => sum + l.width, 0), baseline };
}

function nodeLayout(node, nodes) {
	if (node.kind === "fraction") {
		const top = layout(node.numerator, nodes);
		const bottom = layout(node.denominator, nodes);
		const content = Math.max(top.width, bottom.width, 1);
		const width = content + 2;
		const lines = [...top.lines.map((l) => pad(l, width, true)), ` ${"─".repeat(content)} `, ...bottom.lines.map((l) => pad(l, width, true))];
		return { lines, width, baseline: top.lines.length };
	}
	if (node.kind === "operator") {
		const widthOf = (v) => (v === undefined ? 0 : visibleWidth(v));
		const content = Math.max(visibleWidth(node.operator), widthOf(node.lower), widthOf(node.upper));
		const lines = [node.upper, node.operator, node.lower].filter((v) => v !== undefined).map((v) => `${pad(v, content, true)} `);
		return { lines, width: content + 1, baseline: node.upper === undefined ? 0 : 1 };
	}
	if (node.kind === "script") {
		const upper = node.upper === undefined ? undefined : layout(node.upper, nodes);
		const lower = node.lower === undefined ? undefined : layout(node.lower, nodes);
		const width = Math.max(upper?.width ?? 0, lower?.width ?? 0);
		const lines = [...(upper?.lines ?? []).map((l) => pad(l, width, false)), " ".repeat(width), ...(lower?.lines ?? []).map((l) => pad(l, width, false))];
		return { lines, width, baseline: upper?.lines.length ?? 0 };
	}
	const width = node.lines.reduce((w, l) => Math.max(w, visibleWidth(l)), 0);
	return { lines: node.lines.map((l) => pad(l, width, false)), width, baseline: node.baseline };
}

const startsWithSpace = (s) => /^\s/.test(s);
const endsWithSpace = (s) => /\s$/.test(s);

function layout(source, nodes) {
	const rendered = [];
	let firstBaseline = 0;
	for (const line of source.split("\n")) {
		const layouts = [];
		let position = 0;
		let previous;
		for (const match of line.matchAll(/\u{f0000}(\d+)\u{f0001}/gu)) {
			const node = nodes[Number(match[1])];
			if (!node) continue;
			if (match.index > position) {
				const sliced = line.slice(position, match.index);
				const trimmed = (previous ? sliced.trimStart() : sliced).trimEnd();
				const leading = previous?.kind === "matrix" && startsWithSpace(sliced);
				const trailing = node.kind === "matrix" && endsWithSpace(sliced);
				const text = trimmed ? `${leading ? " " : ""}${trimmed}${trailing ? " " : ""}` : leading || trailing ? " " : "";
				layouts.push(textLayout(text));
			}
			layouts.push(nodeLayout(node, nodes));
			position = match.index + match[0].length;
			previous = node;
		}
		if (position < line.length) {
			const sliced = line.slice(position);
			const trimmed = previous ? sliced.trimStart() : sliced;
			layouts.push(textLayout(previous?.kind === "matrix" && startsWithSpace(sliced) ? ` ${trimmed}` : trimmed));
		}
		const joined = join(layouts);
		if (rendered.length === 0) firstBaseline = joined.baseline;
		rendered.push(...joined.lines);
	}
	return { lines: rendered, width: rendered.reduce((w, l) => Math.max(w, visibleWidth(l)), 0), baseline: firstBaseline };
}

// ---- parser ----------------------------------------------------------------------------------

const ALIGNED = new Set(["aligned", "align", "align*", "alignedat", "alignat", "alignat*", "gather", "gathered", "multline", "multline*", "split"]);
const MATRICES = new Set(["array", "matrix", "smallmatrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix"]);
const DELIMITERS = {
	pmatrix: ["⎛", "⎞", "⎜", "⎟", "⎝", "⎠"],
	bmatrix: ["⎡", "⎤", "⎢", "⎥", "⎣", "⎦"],
	Bmatrix: ["⎧", "⎫", "⎨", "⎬", "⎩", "⎭"],
	vmatrix: Array(6).fill("│"),
	Vmatrix: Array(6).fill("║"),
};

const splitRows = (body) => body.split(/\\\\(?:\[[^\]\n]*\])?/);
const stripLeadingGroup = (body) => body.replace(/^\s*\{[^}]*\}/, "");
const stripTrailingComma = (value) => value.replace(/,\s*$/, "");

class Parser {
	constructor(source, nodes, display, depth) {
		this.source = source;
		this.nodes = nodes;
		this.display = display;
		this.depth = depth;
		this.position = 0;
		this.supported = true;
		this.stackFractions = true;
		this.scriptDepth = 0;
	}

	render() {
		const rendered = this.sequence(undefined);
		return this.supported && this.position === this.source.length ? normalizeOutput(rendered) : undefined;
	}

	at(i) {
		return this.source[i];
	}

	marker(node) {
		this.nodes.push(node);
		return `${NODE_START}${this.nodes.length - 1}${NODE_END}`;
	}

	sequence(end) {
		if (++this.depth > MAX_DEPTH) {
			this.supported = false;
			this.position = this.source.length;
			this.depth--;
			return "";
		}
		const result = this.sequenceBody(end);
		this.depth--;
		return result;
	}

	sequenceBody(end) {
		let result = "";
		while (this.position < this.source.length) {
			const c = this.source[this.position];
			if (end !== undefined && c === end) {
				this.position++;
				return result;
			}
			if (c === "}") {
				this.supported = false;
				return result;
			}
			if (c === "{") {
				this.position++;
				result += this.sequence("}");
			} else if (c === "\\") {
				const command = this.command();
				if (command === NEGATIVE_SPACE) {
					result = result.trimEnd();
					if (result.endsWith(OP_END)) result = result.slice(0, -OP_END.length);
				} else result += command;
			} else if (c === "^" || c === "_") {
				this.position++;
				result = result.trimEnd();
				const scripts = this.scripts(c);
				result = result.endsWith(OP_END) ? result.slice(0, -OP_END.length) + scripts + OP_END : result + scripts;
			} else if (/\s/.test(c)) {
				while (this.position < this.source.length && /\s/.test(this.source[this.position])) this.position++;
				result += " ";
			} else if (c === "=" || c === "<" || c === ">") {
				result = `${result.trimEnd()} ${c} `;
				this.position++;
			} else if (c === "&") {
				this.position++;
			} else if (c === "~") {
				this.position++;
				result += " ";
			} else if (c === "." && this.appendToTrailingMatrix(result)) {
				this.position++;
			} else {
				result += c;
				this.position++;
			}
		}
		if (end !== undefined) this.supported = false;
		return result;
	}

	appendToTrailingMatrix(result) {
		const match = /\u{f0000}(\d+)\u{f0001}$/u.exec(result);
		const node = match ? this.nodes[Number(match[1])] : undefined;
		if (node?.kind !== "matrix") return false;
		node.lines[node.lines.length - 1] += ".";
		return true;
	}

	scripts(initial) {
		const values = {};
		const order = [];
		const parse = (marker) => {
			const kind = marker === "_" ? "sub" : "sup";
			this.scriptDepth++;
			values[kind] = this.requiredArgument(false);
			this.scriptDepth--;
			order.push(kind);
		};
		parse(initial);
		let next = this.position;
		while (next < this.source.length && /\s/.test(this.source[next])) next++;
		const marker = this.source[next];
		if ((marker === "^" || marker === "_") && marker !== initial) {
			this.position = next + 1;
			parse(marker);
		}
		const unicode = {
			sub: values.sub === undefined ? undefined : unicodeScript(values.sub, "sub"),
			sup: values.sup === undefined ? undefined : unicodeScript(values.sup, "sup"),
		};
		const blocksLayout = (v) => v !== undefined && (v.includes("/") || (!v.includes(NODE_START) && [...v].length > 1 && !/[A-Z*∗]/.test(v)));
		const canUseLayout = !blocksLayout(values.sub) && !blocksLayout(values.sup);
		const missing = (kind) => values[kind] !== undefined && unicode[kind] === undefined;
		if (!(this.display && canUseLayout && (this.scriptDepth > 0 || missing("sub") || missing("sup")))) {
			return order.map((kind) => unicode[kind] ?? script(values[kind] ?? "", kind)).join("");
		}
		return this.marker({
			kind: "script",
			lower: values.sub === undefined ? undefined : normalizeOutput(values.sub),
			upper: values.sup === undefined ? undefined : normalizeOutput(values.sup),
		});
	}

	requiredArgument(stackFractions) {
		const previous = this.stackFractions;
		this.stackFractions = previous && stackFractions;
		const value = this.requiredArgumentValue();
		this.stackFractions = previous;
		return value;
	}

	requiredArgumentValue() {
		while (this.position < this.source.length && /\s/.test(this.source[this.position])) this.position++;
		const c = this.source[this.position];
		if (c === undefined) {
			this.supported = false;
			return "";
		}
		if (c === "{") {
			this.position++;
			return this.sequence("}");
		}
		if (c === "\\") return this.command();
		this.position++;
		return c;
	}

	skipBlanks(position) {
		while (this.source[position] === " " || this.source[position] === "\t") position++;
		return position;
	}

	optionalArgument() {
		this.position = this.skipBlanks(this.position);
		if (this.source[this.position] !== "[") return undefined;
		const end = this.source.indexOf("]", this.position + 1);
		if (end < 0) {
			this.supported = false;
			return undefined;
		}
		const value = this.source.slice(this.position + 1, end);
		this.position = end + 1;
		return this.nested(value, true);
	}

	rawGroup() {
		this.position = this.skipBlanks(this.position);
		if (this.source[this.position] !== "{") {
			this.supported = false;
			return undefined;
		}
		const start = ++this.position;
		let depth = 1;
		while (this.position < this.source.length) {
			const c = this.source[this.position];
			if (c === "\\") {
				this.position += 2;
				continue;
			}
			if (c === "{") depth++;
			if (c === "}") depth--;
			if (depth === 0) return this.source.slice(start, this.position++);
			this.position++;
		}
		this.supported = false;
		return undefined;
	}

	nested(source, stackFractions) {
		const rendered = new Parser(source, this.nodes, this.display && stackFractions, this.depth + 1).render();
		if (rendered !== undefined) return rendered;
		this.supported = false;
		return source;
	}

	// ---- commands ----

	command() {
		this.position++;
		if (this.position >= this.source.length) {
			this.supported = false;
			return "";
		}
		const first = this.source[this.position];
		if (first === "\n" || first === "\r") {
			this.position++;
			if (first === "\r" && this.source[this.position] === "\n") this.position++;
			return " ";
		}
		let name = first;
		if (/[A-Za-z]/.test(first)) {
			const start = this.position;
			while (this.position < this.source.length && /[A-Za-z]/.test(this.source[this.position])) this.position++;
			name = this.source.slice(start, this.position);
		} else this.position++;
		return this.simpleCommand(name) ?? this.argumentCommand(name);
	}

	simpleCommand(name) {
		if (name === "\\") return "\n";
		if (T.spacing.has(name)) return " ";
		if (T.negativeSpacing.has(name)) return NEGATIVE_SPACE;
		if (T.fontSwitches.has(name)) {
			while (this.position < this.source.length && /\s/.test(this.source[this.position])) this.position++;
			return "";
		}
		if (T.ignored.has(name)) return "";
		if ("{}$%#_&".includes(name) && name.length === 1) return name;
		if (name === "|") return "‖";
		return undefined;
	}

	argumentCommand(name) {
		if (name === "not") return this.not();
		if (T.limitOperators.has(name)) return this.operator(name, "bracket", true, true);
		const symbol = T.symbols.get(name);
		if (symbol !== undefined) {
			if (T.displayLimitSymbols.has(name)) return this.operator(symbol, "script", true, false);
			return name === "cdot" || name === "times" || T.relations.has(name) ? ` ${symbol} ` : symbol;
		}
		if (T.namedOperators.has(name)) return OP_START + name + OP_END;
		if (T.sizes.has(name)) return "";
		if (name === "left" || name === "middle" || name === "right") {
			if (this.source[this.position] === ".") this.position++;
			return "";
		}
		switch (name) {
			case "frac":
			case "dfrac":
			case "tfrac":
				return this.fraction(name);
			case "sqrt":
				return this.root();
			case "boxed":
			case "fbox":
				return `[${this.requiredArgument(true).trim()}]`;
			case "binom":
			case "dbinom":
			case "tbinom": {
				const n = this.requiredArgument(true);
				const k = this.requiredArgument(true);
				return `(${n} choose ${k})`;
			}
		}
		return this.wrapperCommand(name);
	}

	wrapperCommand(name) {
		const mark = T.accents.get(name);
		if (mark !== undefined) {
			const value = this.requiredArgument(true);
			return [...value].length === 1 ? value + mark : `${name}(${value})`;
		}
		switch (name) {
			case "mathbb":
				return Array.from(this.requiredArgument(true), (c) => T.blackboard.get(c) ?? c).join("");
			case "operatorname": {
				const starred = this.source[this.position] === "*";
				if (starred) this.position++;
				const operator = normalizeOutput(this.requiredArgument(true)).trim();
				return this.operator(operator, "bracket", starred, true);
			}
			case "mod":
			case "bmod":
				return " mod ";
			case "pmod":
			case "pod": {
				const value = this.requiredArgument(true).trim();
				return name === "pmod" ? ` (mod ${value})` : ` (${value})`;
			}
			case "overset":
			case "stackrel":
			case "underset": {
				const over = this.requiredArgument(true);
				const value = this.requiredArgument(true).trim();
				return value + script(over, name === "underset" ? "sub" : "sup");
			}
		}
		if (T.plainWrappers.has(name)) {
			const value = this.requiredArgument(true);
			return name.startsWith("text") || name === "mbox" ? value : value.trim();
		}
		if (name === "begin") return this.environment();
		this.supported = false;
		return name === "end" ? "" : `\\${name}`;
	}

	not() {
		const value = this.requiredArgument(false).trim();
		const negated = T.negated.get(value);
		if (negated !== undefined) return ` ${negated} `;
		const chars = [...value];
		if (chars.length === 0) {
			this.supported = false;
			return "";
		}
		return ` ${chars[0]}\u0338${chars.slice(1).join("")} `;
	}

	fraction(name) {
		const stack = this.display && this.stackFractions && name !== "tfrac";
		const numerator = this.requiredArgument(!stack);
		const denominator = this.requiredArgument(!stack);
		if (!stack) return fraction(numerator, denominator);
		return this.marker({ kind: "fraction", numerator: normalizeOutput(numerator), denominator: normalizeOutput(denominator) });
	}

	root() {
		const degree = this.optionalArgument()?.trim();
		const value = this.requiredArgument(true);
		if (degree === undefined || degree === "2") return root(value, "√");
		if (degree === "3") return root(value, "∛");
		if (degree === "4") return root(value, "∜");
		return script(degree, "sup") + root(value, "√");
	}

	operator(operator, lowerStyle, displayLimits, spaced) {
		let limits = displayLimits;
		const at = this.skipBlanks(this.position);
		const modifier = /^\\(limits|nolimits)(?![A-Za-z])/.exec(this.source.slice(at));
		if (modifier) {
			limits = modifier[1] === "limits";
			this.position = at + modifier[0].length;
		}
		let lower;
		let upper;
		for (;;) {
			const at = this.skipBlanks(this.position);
			const kind = this.source[at];
			if (kind !== "_" && kind !== "^") break;
			this.position = at + 1;
			const value = normalizeOutput(this.requiredArgument(false)).replaceAll(" ", "");
			if ((kind === "_" ? lower : upper) !== undefined) this.supported = false;
			if (kind === "_") lower = value;
			else upper = value;
		}
		if (this.display && limits && (lower !== undefined || upper !== undefined)) {
			return this.marker({ kind: "operator", operator, lower, upper });
		}
		let rendered = operator;
		if (lower !== undefined) rendered += lowerStyle === "bracket" ? `[${lower}]` : script(lower, "sub");
		if (upper !== undefined) rendered += script(upper, "sup");
		return spaced ? ` ${rendered} ` : rendered;
	}

	// ---- environments ----

	environment() {
		const name = this.rawGroup();
		if (!name) return "";
		const endMarker = `\\end{${name}}`;
		const end = this.source.indexOf(endMarker, this.position);
		if (end < 0) {
			this.supported = false;
			return "";
		}
		const body = this.source.slice(this.position, end);
		this.position = end + endMarker.length;
		if (name === "equation" || name === "equation*" || name === "displaymath") return this.nested(body, true).trim();
		if (ALIGNED.has(name)) return this.aligned(name, body);
		if (name === "cases" || name === "cases*") return this.cases(body);
		if (MATRICES.has(name)) return this.matrix(name, name === "array" ? stripLeadingGroup(body) : body);
		this.supported = false;
		return body;
	}

	aligned(name, body) {
		const alignedAt = name === "alignedat" || name === "alignat" || name === "alignat*";
		return splitRows(alignedAt ? stripLeadingGroup(body) : body)
			.map((row) => {
				const cells = row.split("&");
				let source = cells.join("");
				if (alignedAt) {
					const pairs = [];
					for (let i = 0; i < cells.length; i += 2) pairs.push(cells.slice(i, i + 2).join(""));
					source = pairs.join(" ");
				}
				return this.nested(source, true).trim();
			})
			.filter(Boolean)
			.join("\n");
	}

	cells(body) {
		return splitRows(body)
			.map((row) => row.split("&").map((cell) => this.nested(cell, false).trim()))
			.filter((row) => row.some(Boolean));
	}

	cases(body) {
		const rows = this.cells(body);
		const valueWidth = rows.reduce((w, row) => Math.max(w, visibleWidth(stripTrailingComma(row[0]))), 0);
		const contents = rows.map((row) => {
			const value = stripTrailingComma(row[0]);
			const condition = row[1] ?? "";
			if (!condition) return value;
			const prefix = /^(?:if|when|for|otherwise)\b/i.test(condition) ? " " : " if ";
			return value + KEEP_SPACE.repeat(valueWidth - visibleWidth(value)) + prefix + condition;
		});
		if (contents.length <= 1) return contents.length === 0 ? "" : `⎧ ${contents[0]}`;
		const middle = Math.floor(contents.length / 2);
		const visual = [...contents];
		if (contents.length % 2 === 0) visual.splice(middle, 0, undefined);
		const lines = visual.map((content, i) => {
			const delimiter = i === 0 ? "⎧" : i === visual.length - 1 ? "⎩" : "⎨";
			return content === undefined ? delimiter : `${delimiter} ${content}`;
		});
		return this.marker({ kind: "matrix", lines, baseline: middle });
	}

	matrix(name, body) {
		const matrix = this.cells(body);
		const columns = matrix.reduce((n, row) => Math.max(n, row.length), 0);
		const widths = Array.from({ length: columns }, (_, c) => matrix.reduce((w, row) => Math.max(w, visibleWidth(row[c] ?? "")), 0));
		const rows = matrix.map((row) =>
			widths.map((width, c) => {
				const cell = row[c] ?? "";
				return cell + KEEP_SPACE.repeat(Math.max(0, width - visibleWidth(cell)));
			}).join(" │ "),
		);
		const d = DELIMITERS[name];
		const lines = d
			? rows.map((row, i) => {
					const [left, right] = i === 0 ? [d[0], d[1]] : i === rows.length - 1 ? [d[4], d[5]] : [d[2], d[3]];
					return `${left} ${row} ${right}`;
				})
			: rows;
		if (lines.length <= 1) return lines[0] ?? "";
		return this.marker({ kind: "matrix", lines, baseline: 0 });
	}
}

/**
 * Render a basic LaTeX math expression as terminal-friendly Unicode text.
 * Returns undefined when the expression contains unsupported or malformed syntax.
 */
export function renderLatex(source, options = {}) {
	const nodes = [];
	const rendered = new Parser(String(source), nodes, options?.display === true, 0).render();
	if (rendered === undefined) return undefined;
	if (nodes.length === 0) return rendered.replaceAll(KEEP_SPACE, " ");
	const lines = layout(rendered, nodes).lines;
	const indents = lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length);
	const indentation = indents.length > 0 ? Math.min(...indents) : Number.POSITIVE_INFINITY;
	return lines
		.map((l) => l.slice(indentation).trimEnd())
		.join("\n")
		.trimEnd()
		.replaceAll(KEEP_SPACE, " ");
}
