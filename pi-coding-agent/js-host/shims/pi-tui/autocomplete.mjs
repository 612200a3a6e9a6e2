// pi-tui 1.6.0's CombinedAutocompleteProvider: slash commands (fuzzy on the name, `skill:` names
// on their bare part first) and their argument completions, `@` file attachments found by `fd`
// (scored by name, directories first, at most 20), and path completion from the directory
// listing (`./`, `../`, `~/`, absolute, quoted paths with spaces), with `applyCompletion` and
// `shouldTriggerFileCompletion` as pi-tui answers them. Without `fd` there are no `@` suggestions,
// as in pi.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fuzzyFilter } from "./fuzzy.mjs";

const CJK =
	"[\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}\\p{Script_Extensions=Katakana}\\p{Script_Extensions=Hangul}\\p{Script_Extensions=Bopomofo}]";
const SEPARATOR = `(?:\\s|(?:(?=\\p{Punctuation})${CJK}|[，．：；！？（）［］｛｝“”‘’…—]))`;
const separatorChar = new RegExp(SEPARATOR, "u");
/** Text that ends where a token may start: empty, or after a separator. */
const endsAtTokenStart = new RegExp(`(?:^|${SEPARATOR})$`, "u");
const DELIMITERS = " \t\"'=";
/** Brackets and backquotes that may open a path in prose, with what closes them. */
const WRAPPER_CLOSERS = new Map([
	["(", ")"],
	["[", "]"],
	["{", "}"],
	["<", ">"],
	["`", "`"],
]);
const FD_RESULTS = 100;
const AT_SUGGESTIONS = 20;

const slashes = (text) => text.replaceAll("\\", "/");
const regexLiteral = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, (c) => `\\${c}`);

/** The fd pattern of a query: segments joined by either separator when it names folders. */
function fdPattern(query) {
	const text = slashes(query);
	if (!text.includes("/")) return regexLiteral(text);
	const inner = text.replace(/^\/+/, "").replace(/\/+$/, "");
	if (inner === "") return text;
	const sep = "[\\\\/]";
	const body = inner
		.split("/")
		.filter((s) => s !== "")
		.map(regexLiteral)
		.join(sep);
	return text.endsWith("/") ? body + sep : body;
}

/** The UTF-16 index of the last delimiter (or separator) character of `text`, or -1. */
function lastDelimiterAt(text) {
	let found = -1;
	let end = 0;
	for (const ch of text) {
		end += ch.length;
		if (DELIMITERS.includes(ch) || separatorChar.test(ch)) found = end - 1;
	}
	return found;
}

/** `token` without the opening wrappers before a path whose closer it does not contain. */
function unwrap(token) {
	let start = 0;
	while (start < token.length) {
		const closer = WRAPPER_CLOSERS.get(token[start]);
		if (closer === undefined || token.indexOf(closer, start + 1) !== -1) break;
		start += 1;
	}
	return token.slice(start);
}

/** The token after the last delimiter, unwrapped. */
function lastToken(text) {
	const at = lastDelimiterAt(text);
	return unwrap(at === -1 ? text : text.slice(at + 1));
}

/** Where an unclosed double quote opens, or null. */
function openQuoteAt(text) {
	let open = null;
	for (let i = 0; i < text.length; i++) {
		if (text[i] === '"') open = open === null ? i : null;
	}
	return open;
}

/** Whether a token starting at `index` (after any wrappers) starts a token. */
function startsToken(text, index) {
	let at = index;
	while (at > 0 && WRAPPER_CLOSERS.has(text[at - 1])) at--;
	const before = at > 0 ? text[at - 1] : "";
	return (before !== "" && DELIMITERS.includes(before)) || endsAtTokenStart.test(text.slice(0, at));
}

/** The quoted prefix (`"…` or `@"…`) the cursor is in, or null. */
function quotedPrefixOf(text) {
	const quote = openQuoteAt(text);
	if (quote === null) return null;
	const start = quote > 0 && text[quote - 1] === "@" ? quote - 1 : quote;
	return startsToken(text, start) ? text.slice(start) : null;
}

/** A prefix's parts: the path text, whether it is an `@` attachment, whether it is quoted. */
function splitPrefix(prefix) {
	const at = prefix.startsWith("@");
	const body = at ? prefix.slice(1) : prefix;
	const quoted = body.startsWith('"');
	return { rawPrefix: quoted ? body.slice(1) : body, isAtPrefix: at, isQuotedPrefix: quoted };
}

/** The text inserted for `path`: `@` for attachments, quoted when asked or when it has spaces. */
function completionValue(path, { isAtPrefix, isQuotedPrefix }) {
	const at = isAtPrefix ? "@" : "";
	return isQuotedPrefix || separatorChar.test(path) ? `${at}"${path}"` : `${at}${path}`;
}

/** Runs fd under `baseDir` for `query`: entries (folders end in "/"), [] on any failure. */
function runFd(fdPath, baseDir, query, signal, maxDepth) {
	const args = ["--base-directory", baseDir, "--max-results", String(FD_RESULTS)];
	args.push("--type", "f", "--type", "d", "--follow", "--hidden");
	for (const pattern of [".git", ".git/*", ".git/**"]) args.push("--exclude", pattern);
	if (maxDepth !== undefined) args.push("--max-depth", String(maxDepth));
	if (slashes(query).includes("/")) args.push("--full-path");
	if (query) args.push(fdPattern(query));
	return new Promise((resolve) => {
		if (signal.aborted) return resolve([]);
		const child = spawn(fdPath, args, { stdio: ["ignore", "pipe", "pipe"] });
		let out = "";
		let settled = false;
		const kill = () => {
			if (child.exitCode === null) child.kill("SIGKILL");
		};
		const settle = (entries) => {
			if (settled) return;
			settled = true;
			signal.removeEventListener("abort", kill);
			resolve(entries);
		};
		signal.addEventListener("abort", kill, { once: true });
		child.stdout.setEncoding("utf-8");
		child.stdout.on("data", (chunk) => {
			out += chunk;
		});
		child.on("error", () => settle([]));
		child.on("close", (code) => {
			if (signal.aborted || code !== 0 || !out) return settle([]);
			const entries = [];
			for (const line of out.trim().split("\n")) {
				if (!line) continue;
				const path = slashes(line);
				const bare = path.endsWith("/") ? path.slice(0, -1) : path;
				if (bare === ".git" || bare.startsWith(".git/") || bare.includes("/.git/")) continue;
				entries.push({ path, isDirectory: path.endsWith("/") });
			}
			settle(entries);
		});
	});
}

/** How well `path` matches `query`: its name equal, starting with it, containing it, then the path. */
function matchScore(path, query, isDirectory) {
	const name = basename(path).toLowerCase();
	const q = query.toLowerCase();
	let score = 0;
	if (name === q) score = 100;
	else if (name.startsWith(q)) score = 80;
	else if (name.includes(q)) score = 50;
	else if (path.toLowerCase().includes(q)) score = 30;
	return isDirectory && score > 0 ? score + 10 : score;
}

const depthOf = (path) => slashes(path).split("/").filter(Boolean).length;

/** pi-tui's provider of slash commands, `@` attachments and paths. */
export class CombinedAutocompleteProvider {
	constructor(commands = [], basePath, fdPath = null) {
		this.commands = commands;
		this.basePath = basePath;
		this.fdPath = fdPath;
	}

	async getSuggestions(lines, cursorLine, cursorCol, options) {
		const before = (lines[cursorLine] || "").slice(0, cursorCol);
		const atPrefix = this.extractAtPrefix(before);
		if (atPrefix) {
			const { rawPrefix, isQuotedPrefix } = splitPrefix(atPrefix);
			const items = await this.getFuzzyFileSuggestions(rawPrefix, { isQuotedPrefix, signal: options.signal });
			return items.length === 0 ? null : { items, prefix: atPrefix };
		}
		const command = before.trimStart();
		if (!options.force && command.startsWith("/")) {
			const space = command.indexOf(" ");
			return space === -1 ? this.#commandNames(command) : await this.#commandArguments(command, space);
		}
		const path = this.extractPathPrefix(before, options.force ?? false);
		if (path === null) return null;
		const items = this.getFileSuggestions(path);
		return items.length === 0 ? null : { items, prefix: path };
	}

	#commandNames(command) {
		const query = command.slice(1);
		const entries = this.commands.map((cmd) => {
			const name = "name" in cmd ? cmd.name : cmd.value;
			const hint = "argumentHint" in cmd && cmd.argumentHint ? cmd.argumentHint : undefined;
			const desc = cmd.description ?? "";
			return { name, description: (hint ? (desc ? `${hint} — ${desc}` : hint) : desc) || undefined };
		});
		const isSkill = (e) => e.name.startsWith("skill:");
		const byBareName = fuzzyFilter(entries, query, (e) => (isSkill(e) ? e.name.slice(6) : e.name));
		const seen = new Set(byBareName);
		const byFullName = fuzzyFilter(
			entries.filter((e) => isSkill(e) && !seen.has(e)),
			query,
			(e) => e.name,
		);
		const items = [...byBareName, ...byFullName].map((e) =>
			e.description ? { value: e.name, label: e.name, description: e.description } : { value: e.name, label: e.name },
		);
		return items.length === 0 ? null : { items, prefix: command };
	}

	async #commandArguments(command, space) {
		const name = command.slice(1, space);
		const argument = command.slice(space + 1);
		const found = this.commands.find((cmd) => ("name" in cmd ? cmd.name : cmd.value) === name);
		if (!found || !("getArgumentCompletions" in found) || !found.getArgumentCompletions) return null;
		const items = await found.getArgumentCompletions(argument);
		return Array.isArray(items) && items.length > 0 ? { items, prefix: argument } : null;
	}

	applyCompletion(lines, cursorLine, cursorCol, item, prefix) {
		const line = lines[cursorLine] || "";
		const head = line.slice(0, cursorCol - prefix.length);
		let tail = line.slice(cursorCol);
		const quoted = prefix.startsWith('"') || prefix.startsWith('@"');
		if (quoted && item.value.endsWith('"') && tail.startsWith('"')) tail = tail.slice(1);
		const replaced = (text) => {
			const next = [...lines];
			next[cursorLine] = text;
			return next;
		};
		if (prefix.startsWith("/") && head.trim() === "" && !prefix.slice(1).includes("/")) {
			return {
				lines: replaced(`${head}/${item.value} ${tail}`),
				cursorLine,
				cursorCol: head.length + item.value.length + 2,
			};
		}
		// Inside a folder's quotes the cursor stays before the closing quote.
		const isDirectory = item.label.endsWith("/");
		const end = isDirectory && item.value.endsWith('"') ? item.value.length - 1 : item.value.length;
		if (prefix.startsWith("@")) {
			const space = isDirectory ? "" : " ";
			return {
				lines: replaced(head + item.value + space + tail),
				cursorLine,
				cursorCol: head.length + end + space.length,
			};
		}
		return { lines: replaced(head + item.value + tail), cursorLine, cursorCol: head.length + end };
	}

	extractAtPrefix(text) {
		const quoted = quotedPrefixOf(text);
		if (quoted?.startsWith('@"')) return quoted;
		const token = lastToken(text);
		return token.startsWith("@") ? token : null;
	}

	extractPathPrefix(text, forceExtract = false) {
		const quoted = quotedPrefixOf(text);
		if (quoted) return quoted;
		const token = lastToken(text);
		if (forceExtract) return token;
		if (token.includes("/") || token.startsWith(".") || token.startsWith("~/")) return token;
		return token === "" && text !== "" && endsAtTokenStart.test(text) ? token : null;
	}

	expandHomePath(path) {
		if (path === "~") return homedir();
		if (!path.startsWith("~/")) return path;
		const expanded = join(homedir(), path.slice(2));
		return path.endsWith("/") && !expanded.endsWith("/") ? `${expanded}/` : expanded;
	}

	resolveScopedFuzzyQuery(rawQuery) {
		const text = slashes(rawQuery);
		const slash = text.lastIndexOf("/");
		if (slash === -1) return null;
		const displayBase = text.slice(0, slash + 1);
		const baseDir = displayBase.startsWith("~/")
			? this.expandHomePath(displayBase)
			: displayBase.startsWith("/")
				? displayBase
				: join(this.basePath, displayBase);
		try {
			if (!statSync(baseDir).isDirectory()) return null;
		} catch {
			return null;
		}
		return { baseDir, query: text.slice(slash + 1), displayBase };
	}

	scopedPathForDisplay(displayBase, relativePath) {
		const rel = slashes(relativePath);
		return displayBase === "/" ? `/${rel}` : `${slashes(displayBase)}${rel}`;
	}

	/** The folder listed for `rawPrefix` and the start its entries' names must have. */
	#listingOf(rawPrefix, isAtPrefix) {
		const expanded = rawPrefix.startsWith("~") ? this.expandHomePath(rawPrefix) : rawPrefix;
		const outside = rawPrefix.startsWith("~") || expanded.startsWith("/");
		const whole =
			["", "./", "../", "~", "~/", "/"].includes(rawPrefix) || (isAtPrefix && rawPrefix === "") || rawPrefix.endsWith("/");
		if (whole) return { dir: outside ? expanded : join(this.basePath, expanded), start: "" };
		const dir = dirname(expanded);
		return { dir: outside ? dir : join(this.basePath, dir), start: basename(expanded) };
	}

	/** The path shown for entry `name` listed for `rawPrefix`. */
	#shownPath(rawPrefix, name) {
		if (rawPrefix.endsWith("/")) return rawPrefix + name;
		if (rawPrefix.includes("/") || rawPrefix.includes("\\")) {
			if (rawPrefix.startsWith("~/")) {
				const dir = dirname(rawPrefix.slice(2));
				return `~/${dir === "." ? name : join(dir, name)}`;
			}
			if (rawPrefix.startsWith("/")) {
				const dir = dirname(rawPrefix);
				return dir === "/" ? `/${name}` : `${dir}/${name}`;
			}
			const joined = join(dirname(rawPrefix), name);
			return rawPrefix.startsWith("./") && !joined.startsWith("./") ? `./${joined}` : joined;
		}
		return rawPrefix.startsWith("~") ? `~/${name}` : name;
	}

	getFileSuggestions(prefix) {
		try {
			const { rawPrefix, isAtPrefix, isQuotedPrefix } = splitPrefix(prefix);
			const { dir, start } = this.#listingOf(rawPrefix, isAtPrefix);
			const lowerStart = start.toLowerCase();
			const items = [];
			for (const entry of readdirSync(dir, { withFileTypes: true })) {
				if (!entry.name.toLowerCase().startsWith(lowerStart)) continue;
				let isDirectory = entry.isDirectory();
				if (!isDirectory && entry.isSymbolicLink()) {
					try {
						isDirectory = statSync(join(dir, entry.name)).isDirectory();
					} catch {
						// A broken link is listed as a file.
					}
				}
				const shown = slashes(this.#shownPath(rawPrefix, entry.name));
				items.push({
					value: completionValue(isDirectory ? `${shown}/` : shown, { isAtPrefix, isQuotedPrefix }),
					label: entry.name + (isDirectory ? "/" : ""),
				});
			}
			return items.sort((a, b) => {
				const dirA = a.label.endsWith("/");
				const dirB = b.label.endsWith("/");
				if (dirA !== dirB) return dirA ? -1 : 1;
				return a.label.localeCompare(b.label);
			});
		} catch {
			return [];
		}
	}

	scoreEntry(filePath, query, isDirectory) {
		return matchScore(filePath, query, isDirectory);
	}

	async getBaseDirSuggestions(baseDir, query, signal) {
		if (!this.fdPath || signal.aborted) return [];
		return await runFd(this.fdPath, baseDir, query, signal, 1);
	}

	async getFuzzyFileSuggestions(query, options) {
		if (!this.fdPath || options.signal.aborted) return [];
		try {
			const scoped = this.resolveScopedFuzzyQuery(query);
			const baseDir = scoped?.baseDir ?? this.basePath;
			const fdQuery = scoped?.query ?? query;
			const shallow = await this.getBaseDirSuggestions(baseDir, fdQuery, options.signal);
			const deep = await runFd(this.fdPath, baseDir, fdQuery, options.signal);
			const seen = new Set(shallow.map((e) => e.path));
			const entries = [...shallow];
			for (const entry of deep) {
				if (seen.has(entry.path)) continue;
				seen.add(entry.path);
				entries.push(entry);
			}
			if (options.signal.aborted) return [];
			const ranked = entries
				.map((e) => ({ ...e, score: fdQuery ? this.scoreEntry(e.path, fdQuery, e.isDirectory) : 1 }))
				.filter((e) => e.score > 0)
				.sort(
					(a, b) =>
						b.score - a.score ||
						depthOf(a.path) - depthOf(b.path) ||
						a.path.length - b.path.length ||
						a.path.localeCompare(b.path),
				);
			return ranked.slice(0, AT_SUGGESTIONS).map(({ path, isDirectory }) => {
				const bare = isDirectory ? path.slice(0, -1) : path;
				const shown = scoped ? this.scopedPathForDisplay(scoped.displayBase, bare) : bare;
				return {
					value: completionValue(isDirectory ? `${shown}/` : shown, {
						isAtPrefix: true,
						isQuotedPrefix: options.isQuotedPrefix,
					}),
					label: basename(bare) + (isDirectory ? "/" : ""),
					description: shown,
				};
			});
		} catch {
			return [];
		}
	}

	shouldTriggerFileCompletion(lines, cursorLine, cursorCol) {
		const before = (lines[cursorLine] || "").slice(0, cursorCol).trim();
		return !(before.startsWith("/") && !before.includes(" "));
	}
}
