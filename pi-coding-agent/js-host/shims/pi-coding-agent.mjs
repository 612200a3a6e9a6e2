// pi-rs's @earendil-works/pi-coding-agent for extensions: what extensions use at run time. The
// built-in tools run in pi-rs; their definitions come from the host.
import * as os from "node:os";
import * as path from "node:path";
import { rpc } from "../rpc.mjs";
import { theme } from "../context.mjs";
import { CancellableLoader, Container, Editor, getKeybindings, Loader, Spacer, Text, truncateToWidth, visibleWidth } from "./pi-tui.mjs";

export const VERSION = "1.6.0";
export const CONFIG_DIR_NAME = ".pi";
export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;

export function getAgentDir() {
	return process.env.PI_CODING_AGENT_DIR || rpc.state.agentDir || path.join(os.homedir(), ".pi", "agent");
}

export function defineTool(tool) {
	return tool;
}

export function isToolCallEventType(toolName, event) {
	return event?.toolName === toolName;
}

export function isBashToolResult(result) {
	return result?.toolName === "bash";
}

/** pi's keyHint: the keys bound to `key` (dim), then the description (muted). */
export function keyHint(key, description) {
	const keys = getKeybindings().getKeys(key);
	return theme.fg("dim", keys.length > 0 ? keys.join("/") : String(key)) + theme.fg("muted", ` ${description}`);
}

export function formatSize(bytes) {
	if (bytes < 1024) return `${bytes}B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

export function formatReadLineRange(offset, limit) {
	if (offset === undefined && limit === undefined) return "";
	const start = offset ?? 1;
	return limit === undefined ? `:${start}` : `:${start}-${start + limit - 1}`;
}

export function truncateHead(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const lines = String(content).split("\n");
	const out = [];
	let bytes = 0;
	for (const line of lines) {
		const size = Buffer.byteLength(line, "utf8") + (out.length > 0 ? 1 : 0);
		if (out.length >= maxLines || bytes + size > maxBytes) break;
		out.push(line);
		bytes += size;
	}
	const truncated = out.length < lines.length;
	return {
		content: out.join("\n"),
		truncated,
		truncatedBy: truncated ? (out.length >= maxLines ? "lines" : "bytes") : null,
		totalLines: lines.length,
		totalBytes: Buffer.byteLength(String(content), "utf8"),
		outputLines: out.length,
		outputBytes: bytes,
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

export const truncateTail = truncateHead;

const queues = new Map();
export async function withFileMutationQueue(file, fn) {
	const key = path.resolve(file);
	const previous = queues.get(key) ?? Promise.resolve();
	let release;
	const current = new Promise((r) => (release = r));
	queues.set(key, previous.then(() => current));
	await previous;
	try {
		return await fn();
	} finally {
		release();
	}
}

function builtinDefinition(name, cwd) {
	const info = (rpc.state.builtinTools ?? []).find((t) => t.name === name) ?? { name, description: name, parameters: { type: "object", properties: {} } };
	return {
		name,
		label: info.label ?? name,
		description: info.description,
		parameters: info.parameters,
		promptSnippet: info.promptSnippet,
		promptGuidelines: info.promptGuidelines,
		async execute(toolCallId, params) {
			return rpc.call("pi.runBuiltinTool", { name, cwd, toolCallId, args: params });
		},
	};
}

for (const name of ["bash", "read", "write", "edit", "grep", "find", "ls"]) {
	// exported below
}
export const createBashToolDefinition = (cwd) => builtinDefinition("bash", cwd);
export const createReadToolDefinition = (cwd) => builtinDefinition("read", cwd);
export const createWriteToolDefinition = (cwd) => builtinDefinition("write", cwd);
export const createEditToolDefinition = (cwd) => builtinDefinition("edit", cwd);
export const createGrepToolDefinition = (cwd) => builtinDefinition("grep", cwd);
export const createFindToolDefinition = (cwd) => builtinDefinition("find", cwd);
export const createLsToolDefinition = (cwd) => builtinDefinition("ls", cwd);
export const createBashTool = createBashToolDefinition;
export const createReadTool = createReadToolDefinition;
export const createWriteTool = createWriteToolDefinition;
export const createEditTool = createEditToolDefinition;
export const createGrepTool = createGrepToolDefinition;
export const createFindTool = createFindToolDefinition;
export const createLsTool = createLsToolDefinition;

function textOf(content) {
	if (typeof content === "string") return content;
	return (content ?? []).map((b) => (b.type === "text" ? b.text : b.type === "image" ? "[image]" : "")).join("");
}

/** The coding agent's message filter: its roles become user messages. */
export function convertToLlm(messages) {
	const out = [];
	for (const m of messages) {
		switch (m.role) {
			case "bashExecution":
				if (!m.excludeFromContext) out.push({ role: "user", content: [{ type: "text", text: `Ran \`${m.command}\`\n\`\`\`\n${m.output}\n\`\`\`` }], timestamp: m.timestamp });
				break;
			case "custom":
				out.push({ role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content, timestamp: m.timestamp });
				break;
			case "branchSummary":
			case "compactionSummary":
				out.push({ role: "user", content: [{ type: "text", text: `<summary>\n${m.summary}\n</summary>` }], timestamp: m.timestamp });
				break;
			case "system":
			case "user":
			case "assistant":
			case "toolResult":
				out.push(m);
				break;
			default:
				break;
		}
	}
	return out;
}

export function serializeConversation(messages) {
	return messages
		.map((m) => {
			if (m.role === "user") return `[User]: ${textOf(m.content)}`;
			if (m.role === "assistant") return `[Assistant]: ${textOf(m.content)}`;
			if (m.role === "toolResult") return `[Tool result]: ${textOf(m.content)}`;
			return "";
		})
		.filter(Boolean)
		.join("\n\n");
}

export class DynamicBorder {
	constructor(color = (s) => s) {
		this.color = color;
	}
	invalidate() {}
	render(width) {
		return [this.color("─".repeat(Math.max(1, width)))];
	}
}

/** pi's BorderedLoader: a loader between two borders; cancellable (the default) with Escape. */
export class BorderedLoader extends Container {
	constructor(tui, theme, message, options) {
		super();
		this.cancellable = options?.cancellable ?? true;
		const border = (s) => theme.fg("border", s);
		const spinner = (s) => theme.fg("accent", s);
		const muted = (s) => theme.fg("muted", s);
		this.addChild(new DynamicBorder(border));
		if (this.cancellable) this.loader = new CancellableLoader(tui, spinner, muted, message);
		else {
			this.signalController = new AbortController();
			this.loader = new Loader(tui, spinner, muted, message);
		}
		this.addChild(this.loader);
		if (this.cancellable) {
			this.addChild(new Spacer(1));
			this.addChild(new Text(keyHint("tui.select.cancel", "cancel"), 1, 0));
		}
		this.addChild(new Spacer(1));
		this.addChild(new DynamicBorder(border));
	}
	get signal() {
		return this.cancellable ? this.loader.signal : (this.signalController?.signal ?? new AbortController().signal);
	}
	set onAbort(fn) {
		if (this.cancellable) this.loader.onAbort = fn;
	}
	handleInput(data) {
		if (this.cancellable) this.loader.handleInput(data);
	}
	dispose() {
		if (typeof this.loader.dispose === "function") this.loader.dispose();
		else this.loader.stop?.();
	}
}

/** pi's CustomEditor. Installed with `ctx.ui.setEditorComponent`, it stands in front of pi-rs's
 * own editor: `super.handleInput(data)` passes keys on to it (app keys included, as pi's
 * CustomEditor runs them), `super.render(width)` is its lines, `getText` / `setText` its text. */
export class CustomEditor extends Editor {
	constructor(tui, theme, keybindings) {
		super(tui, theme);
		this.keybindings = keybindings;
		this.actionHandlers = new Map();
		this.onEscape = undefined;
		this.onCtrlD = undefined;
		this.onPasteImage = undefined;
		this.onExtensionShortcut = undefined;
	}
	onAction(action, handler) {
		this.actionHandlers.set(action, handler);
	}
	handleInput(data) {
		const bridge = this.__editorBridge;
		if (!bridge) return super.handleInput(data);
		bridge.forward?.push(data);
		// The real text comes with pi-rs's next call; plain typing is guessed until then.
		if (data === "\x7f" || data === "\b") bridge.text = bridge.text.slice(0, -1);
		else if (data.length > 0 && !/[\x00-\x1f\x7f]/.test(data)) bridge.text += data;
	}
	render(width) {
		const bridge = this.__editorBridge;
		return bridge ? [...bridge.base] : super.render(width);
	}
	getText() {
		const bridge = this.__editorBridge;
		return bridge ? bridge.text : super.getText();
	}
	getExpandedText() {
		return this.getText();
	}
	setText(text) {
		const bridge = this.__editorBridge;
		if (bridge) bridge.setText(text);
		else super.setText(text);
	}
}

/** pi's getMarkdownTheme: the theme's Markdown colors; `highlightCode` is pi-rs's highlighter
 * (the shim's Markdown asks pi-rs to draw, and it highlights code blocks). */
export function getMarkdownTheme() {
	return {
		heading: (text) => theme.fg("mdHeading", text),
		link: (text) => theme.fg("mdLink", text),
		linkUrl: (text) => theme.fg("mdLinkUrl", text),
		code: (text) => theme.fg("mdCode", text),
		codeBlock: (text) => theme.fg("mdCodeBlock", text),
		codeBlockBorder: (text) => theme.fg("mdCodeBlockBorder", text),
		quote: (text) => theme.fg("mdQuote", text),
		quoteBorder: (text) => theme.fg("mdQuoteBorder", text),
		hr: (text) => theme.fg("mdHr", text),
		listBullet: (text) => theme.fg("mdListBullet", text),
		bold: (text) => theme.bold(text),
		italic: (text) => theme.italic(text),
		underline: (text) => theme.underline(text),
		strikethrough: (text) => theme.strikethrough(text),
		highlightCode: Object.assign((code) => String(code).split("\n").map((line) => theme.fg("mdCodeBlock", line)), { [Symbol.for("pi-rs.nativeHighlight")]: true }),
	};
}

export function getSettingsListTheme() {
	return {
		label: (text, selected) => (selected ? theme.fg("accent", text) : text),
		value: (text, selected) => (selected ? theme.fg("accent", text) : theme.fg("muted", text)),
		description: (text) => theme.fg("dim", text),
		cursor: theme.fg("accent", "→ "),
		hint: (text) => theme.fg("dim", text),
	};
}

export function getSelectListTheme() {
	return {
		selectedPrefix: (text) => theme.fg("accent", text),
		selectedText: (text) => theme.fg("accent", text),
		description: (text) => theme.fg("muted", text),
		scrollInfo: (text) => theme.fg("muted", text),
		noMatch: (text) => theme.fg("muted", text),
	};
}

export function getEditorTheme() {
	return { borderColor: (text) => theme.fg("borderMuted", text), selectList: getSelectListTheme() };
}

export { truncateToWidth, visibleWidth, Text };

/** A YAML scalar of a frontmatter line: quoted strings, numbers, booleans, null, `[a, b]` lists. */
function yamlScalar(raw) {
	const text = raw.trim();
	if (text === "" || text === "~" || text === "null") return text === "" ? null : null;
	if (/^".*"$/.test(text)) {
		try {
			return JSON.parse(text);
		} catch {
			return text.slice(1, -1);
		}
	}
	if (/^'.*'$/.test(text)) return text.slice(1, -1).replace(/''/g, "'");
	if (text === "true" || text === "false") return text === "true";
	if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
	if (/^\[.*\]$/.test(text)) {
		const inner = text.slice(1, -1).trim();
		return inner === "" ? [] : inner.split(",").map((item) => yamlScalar(item));
	}
	return text.replace(/\s+#.*$/, "");
}

/** The frontmatter's YAML: top-level `key: value` pairs, `key:` followed by `- item` lists or by
 * indented / block (`|`, `>`) text. */
function parseYamlBlock(yaml) {
	const out = {};
	const lines = yaml.split("\n");
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i];
		if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
		const m = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(line);
		if (!m) throw new Error(`Unsupported frontmatter line: ${line}`);
		const [, key, rest] = m;
		const value = rest.trim();
		if (value === "|" || value === ">" || value === "|-" || value === ">-") {
			const block = [];
			while (i + 1 < lines.length && (lines[i + 1].startsWith(" ") || lines[i + 1].trim() === "")) block.push(lines[++i].trim());
			const text = value.startsWith("|") ? block.join("\n") : block.join(" ");
			out[key] = value.endsWith("-") ? text.replace(/\n+$/, "") : `${text.replace(/\n+$/, "")}\n`;
		} else if (value === "") {
			const items = [];
			while (i + 1 < lines.length && /^\s+-\s/.test(lines[i + 1])) items.push(yamlScalar(lines[++i].replace(/^\s+-\s/, "")));
			out[key] = items.length > 0 ? items : null;
		} else {
			out[key] = yamlScalar(value);
		}
	}
	return out;
}

/** pi's `parseFrontmatter`: `{frontmatter, body}` of a Markdown file with a `---` YAML header. */
export function parseFrontmatter(content) {
	const normalized = String(content).replace(/^\uFEFF/, "").replace(/\r\n/g, "\n").replace(/\r/g, "\n");
	if (!normalized.startsWith("---")) return { frontmatter: {}, body: normalized };
	const end = normalized.indexOf("\n---", 3);
	if (end === -1) return { frontmatter: {}, body: normalized };
	const yaml = normalized.slice(4, end);
	const body = normalized.slice(end + 4).trim();
	if (!yaml) return { frontmatter: {}, body };
	return { frontmatter: parseYamlBlock(yaml), body };
}

/** pi's `stripFrontmatter`: the body only. */
export function stripFrontmatter(content) {
	return parseFrontmatter(content).body;
}
