// Module resolution for extensions run by the pi-rs JavaScript host: pi's own packages and
// typebox resolve to the host's modules (as pi aliases them), extensionless relative imports try
// TypeScript and JavaScript files, everything else resolves normally.
import { existsSync, readFileSync, statSync } from "node:fs";
import * as nodeModule from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = new URL("./", import.meta.url);
const shim = (file) => new URL(`shims/${file}`, here).href;

const ALIASES = new Map([
	["pi-coding-agent", shim("pi-coding-agent.mjs")],
	["pi-agent-core", shim("pi-agent-core.mjs")],
	["pi-tui", shim("pi-tui.mjs")],
	["pi-ai", shim("pi-ai.mjs")],
]);

function alias(specifier) {
	if (specifier === "typebox" || specifier === "@sinclair/typebox" || specifier.startsWith("typebox/") || specifier.startsWith("@sinclair/typebox/")) {
		return shim("typebox.mjs");
	}
	const m = /^@(earendil-works|mariozechner)\/(pi-[a-z-]+)(\/.*)?$/.exec(specifier);
	if (!m) return undefined;
	return ALIASES.get(m[2]);
}

const EXTENSIONS = [".ts", ".mts", ".js", ".mjs", ".cjs", "/index.ts", "/index.js"];

function isFile(p) {
	try {
		return statSync(p).isFile();
	} catch {
		return false;
	}
}

export async function resolve(specifier, context, nextResolve) {
	const target = alias(specifier);
	if (target) return { url: target, shortCircuit: true };
	try {
		return await nextResolve(specifier, context);
	} catch (error) {
		const relative = specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("/");
		if (!relative || !context.parentURL?.startsWith("file:")) throw error;
		const base = fileURLToPath(new URL(specifier, context.parentURL));
		// `./utils.js` written for a `./utils.ts` file, as TypeScript projects do.
		const candidates = EXTENSIONS.map((ext) => base + ext);
		if (base.endsWith(".js")) candidates.unshift(base.slice(0, -3) + ".ts");
		for (const candidate of candidates) {
			if (existsSync(candidate) && isFile(candidate)) {
				return { url: pathToFileURL(candidate).href, shortCircuit: true };
			}
		}
		throw error;
	}
}

/** TypeScript under node_modules (extensions installed as packages): Node refuses to strip it
 * there, so the host transforms it itself. */
export async function load(url, context, nextLoad) {
	if (url.startsWith("file:") && url.includes("/node_modules/") && /\.m?ts(\?|$)/.test(url)) {
		const transform = nodeModule.stripTypeScriptTypes;
		if (typeof transform === "function") {
			const source = readFileSync(fileURLToPath(url.split("?")[0]), "utf8");
			return { format: "module", source: transform(source, { mode: "transform", sourceUrl: url }), shortCircuit: true };
		}
	}
	return nextLoad(url, context);
}
