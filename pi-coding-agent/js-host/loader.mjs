// Loading an extension module and the `pi` object (pi's ExtensionAPI) it registers on.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";
import { rpc, errorMessage } from "./rpc.mjs";
import { bus } from "./bus.mjs";
import { validateProvider } from "./provider-validate.mjs";
import { noteRegistration, noteUnregistration } from "./model_registry.mjs";

/** A native pi-ai Provider as a registration's config: its name, base URL, models and API. */
function nativeConfig(provider) {
	const models = typeof provider?.getModels === "function" ? provider.getModels() : [];
	return {
		name: provider?.name,
		baseUrl: provider?.baseUrl,
		api: models[0]?.api,
		models: models.map(({ provider: _p, ...model }) => model),
		// pi checks a native provider's own auth (its `auth.apiKey` resolves in the host): pi-rs
		// counts one with an API-key method as configured, and does not check its registration.
		native: { apiKey: Boolean(provider?.auth?.apiKey) },
	};
}

/** Loaded extensions by the path pi-rs knows them by. */
export const extensions = new Map();
let generation = 0;
let nextHandlerId = 1;

function resolveEntry(file) {
	if (!fs.existsSync(file) || !fs.statSync(file).isDirectory()) return file;
	const manifest = path.join(file, "package.json");
	if (fs.existsSync(manifest)) {
		try {
			const pkg = JSON.parse(fs.readFileSync(manifest, "utf8"));
			const declared = pkg?.pi?.extensions;
			if (Array.isArray(declared) && declared.length > 0) return path.resolve(file, declared[0]);
		} catch {
			// fall through to index files
		}
	}
	for (const index of ["index.ts", "index.js"]) {
		const candidate = path.join(file, index);
		if (fs.existsSync(candidate)) return candidate;
	}
	return file;
}

/** `{file, line, column}` from a V8 syntax error's header (`path:line`, source line, carets). */
function locate(text) {
	const lines = String(text ?? "").split("\n");
	const where = /^((?:file:\/\/)?\/.+):(\d+)$/.exec(lines[0] ?? "");
	if (!where) return undefined;
	const caret = (lines[2] ?? "").indexOf("^");
	return { file: where[1].replace(/^file:\/\//, ""), line: Number(where[2]), column: Math.max(0, caret) };
}

/** A load error's text; syntax errors name the file and position, as pi's `ParseError`s do. */
function describeLoadError(error, resolved) {
	const message = errorMessage(error);
	if (!(error instanceof Error) || error.name !== "SyntaxError") return message;
	let where = locate(error.stack);
	if (!where) {
		// Module syntax errors carry no position; Node's syntax check prints it.
		const check = spawnSync(process.execPath, [...process.execArgv, "--check", resolved], { encoding: "utf8" });
		where = locate(check.stderr);
	}
	if (!where) return `ParseError: ${message}`;
	return `ParseError: ${message}\n ${where.file}:${where.line}:${where.column}`;
}

class LoadedExtension {
	constructor(extensionPath, resolvedPath) {
		this.path = extensionPath;
		this.resolvedPath = resolvedPath;
		this.handlers = new Map();
		this.handlerList = [];
		this.tools = new Map();
		this.commands = new Map();
		this.flags = new Map();
		this.flagValues = new Map();
		this.shortcuts = new Map();
		this.messageRenderers = new Map();
		this.entryRenderers = new Map();
		this.toolRenderers = [];
		this.markdownTransformer = undefined;
		this.state = "loading";
		this.busUnsubscribers = [];
	}

	setFlagValues(values) {
		for (const [name, value] of Object.entries(values)) {
			if (this.flags.has(name)) this.flagValues.set(name, value);
		}
	}

	registrations() {
		return {
			handlers: this.handlerList.map(({ event, id }) => ({ event, id })),
			events: [...this.handlers.keys()],
			tools: [...this.tools.values()].map((t) => ({
				name: t.name,
				label: t.label,
				description: t.description ?? "",
				parameters: JSON.parse(JSON.stringify(t.parameters ?? {})),
				promptSnippet: t.promptSnippet,
				promptGuidelines: t.promptGuidelines,
				constrainedSampling: t.constrainedSampling === undefined ? undefined : JSON.parse(JSON.stringify(t.constrainedSampling)),
				hasRenderCall: typeof t.renderCall === "function",
				hasRenderResult: typeof t.renderResult === "function",
			})),
			commands: [...this.commands.values()].map((c) => ({ name: c.name, description: c.description })),
			flags: [...this.flags.values()].map((f) => ({
				name: f.name,
				type: f.type,
				default: f.default,
				description: f.description,
			})),
			shortcuts: [...this.shortcuts.values()].map((s) => ({ shortcut: s.shortcut, description: s.description })),
			messageRenderers: [...this.messageRenderers.keys()],
			entryRenderers: [...this.entryRenderers.keys()],
			toolRenderers: this.toolRenderers.length,
			markdownTransformer: this.markdownTransformer !== undefined,
			markdownTransformerTypes: this.markdownTransformer?.messageTypes ?? (this.markdownTransformer ? ["user", "assistant", "assistant-thinking"] : undefined),
		};
	}
}

function createApi(ext, cwd) {
	const assertActive = () => {
		if (ext.state === "failed") {
			throw new Error(`Extension "${ext.path}" failed to load and its API is no longer active.`);
		}
	};
	const act = (method, params) => {
		assertActive();
		if (!rpc.state.bound) {
			throw new Error("Extension runtime not initialized. Action methods cannot be called during extension loading.");
		}
		return rpc.fire(method, { extensionPath: ext.path, ...params }, ext.path);
	};
	// Runtime changes (providers, MCP servers, virtual models) are allowed while loading, as pi
	// queues them until the load commits.
	const change = (method, params) => {
		assertActive();
		return rpc.fire(method, { extensionPath: ext.path, ...params }, ext.path);
	};
	const state = () => rpc.state;
	return {
		on(event, handler) {
			assertActive();
			const id = nextHandlerId++;
			const entry = { event, id, handler };
			const list = ext.handlers.get(event) ?? [];
			list.push(entry);
			ext.handlers.set(event, list);
			ext.handlerList.push(entry);
			return () => {
				const handlers = ext.handlers.get(event);
				if (!handlers) return;
				const index = handlers.indexOf(entry);
				if (index !== -1) handlers.splice(index, 1);
			};
		},
		registerTool(tool) {
			assertActive();
			if (typeof tool.parameters !== "object" || tool.parameters === null || Array.isArray(tool.parameters)) {
				throw new Error(`Tool "${tool.name}" registered by extension "${ext.path}" must define an object parameter schema.`);
			}
			ext.tools.set(tool.name, tool);
		},
		registerCommand(name, options) {
			assertActive();
			if (typeof name !== "string" || name.length === 0) {
				throw new Error(`Command registered by extension "${ext.path}" must have a non-empty string name. Use pi.registerCommand("name", { description, handler }).`);
			}
			if (typeof options?.handler !== "function") {
				throw new Error(`Command "/${name}" registered by extension "${ext.path}" must define handler().`);
			}
			ext.commands.set(name, { name, ...options });
		},
		registerShortcut(shortcut, options) {
			assertActive();
			ext.shortcuts.set(shortcut, { shortcut, extensionPath: ext.path, ...options });
		},
		registerFlag(name, options) {
			assertActive();
			if (options.default !== undefined && typeof options.default !== options.type) {
				throw new Error(`Invalid default for flag "${name}": expected ${options.type}, got ${typeof options.default}`);
			}
			ext.flags.set(name, { name, extensionPath: ext.path, ...options });
			if (options.default !== undefined && !ext.flagValues.has(name)) ext.flagValues.set(name, options.default);
		},
		registerMessageRenderer(customType, renderer) {
			assertActive();
			ext.messageRenderers.set(customType, renderer);
		},
		registerMarkdownTransformer(transformer, options) {
			assertActive();
			ext.markdownTransformer = { transformer, messageTypes: options?.messageTypes };
		},
		registerEntryRenderer(customType, renderer) {
			assertActive();
			ext.entryRenderers.set(customType, renderer);
		},
		registerToolRenderer(resolver) {
			assertActive();
			ext.toolRenderers.push(resolver);
		},
		getFlag(name) {
			assertActive();
			if (!ext.flags.has(name)) return undefined;
			const set = rpc.state.flags?.[name];
			return set !== undefined ? set : ext.flagValues.get(name);
		},
		sendMessage(message, options) {
			act("pi.sendMessage", { message, options });
		},
		sendUserMessage(content, options) {
			act("pi.sendUserMessage", { content, options });
		},
		appendEntry(customType, data) {
			act("pi.appendEntry", { customType, data });
		},
		setSessionName(name) {
			rpc.state.sessionName = name;
			act("pi.setSessionName", { name });
		},
		getSessionName() {
			assertActive();
			return state().sessionName ?? undefined;
		},
		setLabel(entryId, label) {
			act("pi.setLabel", { entryId, label });
		},
		exec(command, args, options) {
			assertActive();
			const { signal, ...rest } = options ?? {};
			return rpc.call("pi.exec", { extensionPath: ext.path, command, args: args ?? [], options: { cwd, ...rest } });
		},
		getActiveTools() {
			assertActive();
			return [...(state().activeTools ?? [])];
		},
		getAllTools() {
			assertActive();
			return structuredClone(state().allTools ?? []);
		},
		getSettings() {
			assertActive();
			return structuredClone(state().settings ?? {});
		},
		setActiveTools(toolNames) {
			rpc.state.activeTools = [...toolNames];
			act("pi.setActiveTools", { toolNames });
		},
		getCommands() {
			assertActive();
			return structuredClone(state().commands ?? []);
		},
		setModel(model) {
			assertActive();
			return rpc.call("pi.setModel", { extensionPath: ext.path, provider: model?.provider, id: model?.id }).then(Boolean);
		},
		getThinkingLevel() {
			assertActive();
			return state().thinkingLevel ?? "off";
		},
		setThinkingLevel(level) {
			rpc.state.thinkingLevel = level;
			act("pi.setThinkingLevel", { level });
		},
		registerProvider(providerOrName, config) {
			assertActive();
			if (typeof providerOrName === "string" && !config) throw new Error("Provider config is required when registering by name");
			// pi's `registerProvider(provider)` takes a native pi-ai Provider (`id`, `getModels`,
			// `stream`, `streamSimple`); its models and functions are registered as a config's.
			const native = typeof providerOrName !== "string";
			const name = native ? providerOrName?.id : providerOrName;
			const impl = native ? providerOrName : config;
			const cfg = native ? nativeConfig(providerOrName) : config;
			// Once bound, pi registers at once and a rejected registration throws here; while
			// loading it queues them, and pi-rs reports a rejected one when the load commits.
			if (state().bound && !native) validateProvider(name, impl?.streamSimple ? { ...cfg, streamSimple: true } : cfg, state().providerBases);
			// A JavaScript `streamSimple` (and a native provider's `stream`) stays here; pi-rs asks
			// for it (`provider.stream`).
			const streams = (ext.providerStreams ??= new Map());
			if (typeof impl?.streamSimple === "function") {
				const stream = native && typeof impl.stream === "function" ? impl.stream.bind(impl) : undefined;
				streams.set(name, { streamSimple: impl.streamSimple.bind(impl), stream });
			}
			// So does its `oauth` (pi-rs offers it in `/login` and asks for its functions).
			const oauths = (ext.providerOAuth ??= new Map());
			if (typeof cfg?.oauth?.login === "function") oauths.set(name, cfg.oauth);
			// So do its `refreshModels` and `oauth.modifyModels`: the config sent marks them, and
			// pi-rs asks for them (`provider.refreshModels`, `provider.oauth.modifyModels`).
			const refreshers = (ext.providerRefresh ??= new Map());
			const refreshes = !native && typeof impl?.refreshModels === "function";
			if (refreshes) refreshers.set(name, impl.refreshModels.bind(impl));
			let sent = typeof impl?.streamSimple === "function" ? { ...cfg, streamSimple: true } : cfg;
			if (refreshes) sent = { ...sent, refreshModels: true };
			if (typeof cfg?.oauth?.login === "function" && typeof cfg.oauth.modifyModels === "function") {
				sent = { ...sent, oauth: { ...cfg.oauth, modifyModels: true } };
			}
			change("pi.registerProvider", { name, config: sent });
			if (state().bound) noteRegistration(name, cfg);
		},
		unregisterProvider(name) {
			ext.providerStreams?.delete(name);
			ext.providerOAuth?.delete(name);
			ext.providerRefresh?.delete(name);
			change("pi.unregisterProvider", { name });
			if (state().bound) noteUnregistration(name, state().providerBases?.builtinIds);
		},
		registerMcpServer(name, config) {
			change("pi.registerMcpServer", { name, config });
		},
		unregisterMcpServer(name) {
			change("pi.unregisterMcpServer", { name });
		},
		getMcpServers() {
			assertActive();
			return structuredClone(state().mcpServers ?? []);
		},
		registerVirtualModel(model) {
			assertActive();
			(ext.virtualModels ??= new Map()).set(`${model?.provider}/${model?.id}`, model);
			change("pi.registerVirtualModel", { model: { ...model, route: undefined } });
		},
		unregisterVirtualModel(provider, id) {
			ext.virtualModels?.delete(`${provider}/${id}`);
			change("pi.unregisterVirtualModel", { provider, id });
		},
		events: {
			emit(channel, data) {
				assertActive();
				bus.emit(channel, data);
			},
			on(channel, handler) {
				assertActive();
				const unsubscribe = bus.on(channel, async (data) => {
					try {
						await handler(data);
					} catch (error) {
						rpc.send({
							method: "pi.reportError",
							params: { extensionPath: ext.path, event: `events:${channel}`, error: errorMessage(error) },
						});
					}
				});
				ext.busUnsubscribers.push(unsubscribe);
				return unsubscribe;
			},
		},
	};
}

/** Imports and runs an extension's factory; throws the load error's text. */
export async function loadExtension({ extensionPath, cwd, providerBases }) {
	if (providerBases) rpc.state.providerBases = providerBases;
	const previous = extensions.get(extensionPath);
	if (previous) {
		for (const unsubscribe of previous.busUnsubscribers) unsubscribe();
		extensions.delete(extensionPath);
	}
	const resolved = resolveEntry(path.resolve(cwd ?? process.cwd(), extensionPath));
	const ext = new LoadedExtension(extensionPath, resolved);
	let module;
	try {
		generation += 1;
		module = await import(`${pathToFileURL(resolved).href}?pi-load=${generation}`);
	} catch (error) {
		throw new Error(describeLoadError(error, resolved));
	}
	let factory = module.default;
	if (factory && typeof factory === "object" && typeof factory.default === "function") factory = factory.default;
	if (typeof factory !== "function") {
		throw new Error(`Extension does not export a valid factory function: ${extensionPath}`);
	}
	const api = createApi(ext, cwd ?? process.cwd());
	try {
		await factory(api);
	} catch (error) {
		ext.state = "failed";
		for (const unsubscribe of ext.busUnsubscribers) unsubscribe();
		throw error;
	}
	ext.state = "active";
	extensions.set(extensionPath, ext);
	return ext;
}
