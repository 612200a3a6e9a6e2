// `ctx.modelRegistry` (pi's ModelRegistry as extensions see it), backed by pi-rs's registry over
// the protocol: the models and the ones with configured auth are fetched (`ctx.modelRegistry`)
// before a handler runs whenever the snapshot's `modelsVersion` changed, so the synchronous
// members answer from that copy; `refresh()` fetches it again. Auth lookups ask pi-rs
// (`ctx.modelRegistry.auth`); `stream` / `streamSimple` / `complete` run the request in pi-rs
// (`ctx.modelRegistry.stream`), whose events come back as `modelRegistry.event` notifications;
// `classify` / `generateImages` run in pi-rs too (`ctx.modelRegistry.classify` /
// `ctx.modelRegistry.generateImages`), and the image and classifier models come with the snapshot.
import { createAssistantMessageEventStream } from "./shims/pi-ai.mjs";
import { rpc, errorMessage } from "./rpc.mjs";
import { validateProvider } from "./provider-validate.mjs";

let cache;
let cachedVersion;

async function fetchRegistry() {
	const answer = await rpc.call("ctx.modelRegistry", {});
	cache = {
		models: [...(answer?.models ?? []), ...(answer?.typedModels ?? [])],
		available: new Set(answer?.available ?? []),
		oauth: new Set(answer?.oauth ?? []),
		providers: answer?.providers ?? {},
	};
}

/** Brings the copy up to date for a handler about to run with `snapshot` (bound sessions only). */
export async function syncModelRegistry(snapshot) {
	if (!snapshot?.bound || (cache && cachedVersion === snapshot.modelsVersion)) return;
	cachedVersion = snapshot.modelsVersion;
	try {
		await fetchRegistry();
	} catch {
		// An older pi-rs without the method: the registry stays empty, as before.
		cache = cache ?? { models: [], available: new Set(), oauth: new Set(), providers: {} };
	}
}

const key = (model) => `${model.provider}/${model.id}`;

/** The variables a configured value names (`$NAME`, `${NAME}`; `$$` and `$!` escape), none for a `!command`. */
function configEnvNames(value) {
	if (value.startsWith("!")) return [];
	const names = [];
	for (const match of value.matchAll(/\$(\$|!|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g)) {
		const name = match[2] ?? match[3];
		if (name && !names.includes(name)) names.push(name);
	}
	return names;
}

/** Whether a registration's own `apiKey` configures auth (pi's `hasConfiguredAuth`): a command
 * counts without running, variables only when set; `undefined` when it has none. */
function configuredKey(config) {
	if (typeof config?.apiKey !== "string") return undefined;
	return configEnvNames(config.apiKey).every((name) => Boolean(process.env[name]));
}

/** pi registers a provider at once when the session is bound, so the registry shows it in the
 * same handler: the copy takes its models as pi's `applyExtension` makes them (definitions with
 * their api, provider and baseUrl, defaults from the provider's current models) until pi-rs's
 * next snapshot replaces it. */
export function noteRegistration(name, config) {
	if (!cache || typeof name !== "string" || !config) return;
	const existing = models().filter((m) => m.provider === name);
	let added = existing;
	if (Array.isArray(config.models)) {
		added = config.models.map((definition) => {
			const kind = typeOf(definition);
			const same = existing.filter((m) => typeOf(m) === kind);
			const found =
				same.find((m) => m.id === definition.id) ??
				(definition.api ? same.find((m) => m.api === definition.api) : undefined) ??
				(kind === "chat" ? same.find((m) => m.api === "openai-completions") : undefined) ??
				same[0];
			const api = definition.api ?? (kind === "chat" ? config.api : undefined) ?? found?.api;
			return { ...definition, api, provider: name, baseUrl: definition.baseUrl ?? config.baseUrl ?? found?.baseUrl };
		});
	} else if (config.baseUrl) {
		added = existing.map((m) => ({ ...m, baseUrl: config.baseUrl }));
	}
	const wasAvailable = existing.some((m) => cache.available.has(key(m)));
	const available = configuredKey(config) ?? (config.oauth ? false : wasAvailable);
	for (const m of existing) cache.available.delete(key(m));
	cache.models = [...models().filter((m) => m.provider !== name), ...JSON.parse(JSON.stringify(added))];
	if (available) for (const m of added) cache.available.add(key(m));
	const info = cache.providers[name] ?? {};
	cache.providers[name] = {
		...info,
		name: config.name ?? info.name ?? name,
		registered: true,
		config: JSON.parse(JSON.stringify(config)),
		status: available ? { configured: true, source: "configured API key" } : (info.status ?? { configured: false }),
	};
}

/** `unregisterProvider` in a bound session: a provider only an extension defined leaves the copy
 * at once (a built-in one keeps its models until pi-rs's next snapshot restores them). */
export function noteUnregistration(name, builtinIds) {
	if (!cache?.providers?.[name]?.registered) return;
	if ((builtinIds ?? []).includes(name)) {
		cache.providers[name] = { ...cache.providers[name], registered: false, config: undefined };
		return;
	}
	for (const m of models().filter((m) => m.provider === name)) cache.available.delete(key(m));
	cache.models = models().filter((m) => m.provider !== name);
	delete cache.providers[name];
}

const models = () => cache?.models ?? [];
const typeOf = (model) => model.type ?? "chat";

/** Requests running in pi-rs, by id: the stream the extension reads and the partial message. */
const requests = new Map();
let nextRequest = 1;

/** One event from pi-rs, as pi-ai's: deltas applied to the request's partial message. */
export function deliverRegistryEvent(params) {
	const request = requests.get(params.requestId);
	const event = params.event;
	if (!request || !event) return;
	const partial = request.partial;
	const i = event.contentIndex;
	switch (event.type) {
		case "start":
			request.partial = { ...event.partial, content: [...(event.partial?.content ?? [])] };
			request.stream.push({ type: "start", partial: request.partial });
			return;
		case "text_start":
		case "thinking_start":
		case "toolcall_start":
			partial.content[i] = event.type === "toolcall_start" ? { ...event.block, partialJson: "" } : { ...event.block };
			break;
		case "text_delta":
			partial.content[i].text += event.delta;
			break;
		case "thinking_delta":
			partial.content[i].thinking += event.delta;
			break;
		case "toolcall_delta":
			partial.content[i].partialJson += event.delta;
			break;
		case "text_end":
		case "thinking_end":
			partial.content[i] = { ...event.block };
			break;
		case "toolcall_end":
			partial.content[i] = { ...event.block };
			request.stream.push({ type: "toolcall_end", contentIndex: i, toolCall: event.block, partial });
			return;
		case "done":
			request.stream.push({ type: "done", reason: event.reason, message: event.message });
			return;
		case "error":
			request.stream.push({ type: "error", reason: event.reason, error: event.error });
			return;
		default:
			return;
	}
	const out = { type: event.type, contentIndex: i, partial };
	if (event.delta !== undefined) out.delta = event.delta;
	if (event.type === "text_end") out.content = event.block.text;
	if (event.type === "thinking_end") out.content = event.block.thinking;
	request.stream.push(out);
}

/** A request run by pi-rs: the stream at once, its events as they come. */
function runRequest(extensionPath, simple, model, context, options = {}) {
	const stream = createAssistantMessageEventStream();
	const requestId = nextRequest++;
	const { signal, onPayload, onResponse, onProviderStreamEvent, ...sent } = options ?? {};
	const plain = JSON.parse(JSON.stringify(sent));
	requests.set(requestId, { stream, partial: undefined });
	const abort = () => rpc.send({ method: "ctx.modelRegistry.abort", params: { requestId } });
	signal?.addEventListener?.("abort", abort, { once: true });
	const fail = (message) => {
		const reason = signal?.aborted ? "aborted" : "error";
		const error = {
			role: "assistant",
			content: [],
			api: model?.api,
			provider: model?.provider,
			model: model?.id,
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: reason,
			errorMessage: message,
			timestamp: Date.now(),
		};
		stream.push({ type: "error", reason, error });
	};
	rpc
		.call("ctx.modelRegistry.stream", { extensionPath, requestId, simple, model, context, options: plain, aborted: Boolean(signal?.aborted) })
		.catch((error) => fail(errorMessage(error)))
		.finally(() => {
			requests.delete(requestId);
			signal?.removeEventListener?.("abort", abort);
			stream.end();
		});
	return stream;
}

/** pi's error result of a typed request that could not reach pi-rs. */
function typedError(model, type, message, aborted) {
	const result = { api: model?.api, provider: model?.provider, model: model?.id };
	if (type === "classifier") result.answers = {};
	else result.output = [];
	return { ...result, stopReason: aborted ? "aborted" : "error", errorMessage: message, timestamp: Date.now() };
}

/** `classify` / `generateImages`, run by pi-rs with request-time auth; never rejects (pi's). */
async function runTyped(extensionPath, method, type, model, context, options = {}) {
	const requestId = nextRequest++;
	const { signal, onPayload, onResponse, ...sent } = options ?? {};
	const abort = () => rpc.send({ method: "ctx.modelRegistry.abort", params: { requestId } });
	signal?.addEventListener?.("abort", abort, { once: true });
	try {
		const plain = JSON.parse(JSON.stringify({ model, context, options: sent }));
		return await rpc.call(method, { extensionPath, requestId, ...plain, aborted: Boolean(signal?.aborted) });
	} catch (error) {
		return typedError(model, type, errorMessage(error), signal?.aborted);
	} finally {
		signal?.removeEventListener?.("abort", abort);
	}
}

/** The registry object of `ctx.modelRegistry` for the extension at `extensionPath`. */
export function modelRegistry(extensionPath) {
	const call = (method, params) => rpc.call(method, { extensionPath, ...params });
	const auth = (provider, model) => rpc.call("ctx.modelRegistry.auth", { extensionPath, provider, model });
	const ofType = (type, provider) => models().filter((m) => typeOf(m) === type && (provider === undefined || m.provider === provider));
	const registry = {
		refresh: async () => {
			await fetchRegistry();
			return { aborted: false, errors: new Map() };
		},
		getError: () => undefined,
		getAll: () => structuredClone(ofType("chat")),
		getAvailable: () => structuredClone(ofType("chat").filter((m) => cache.available.has(key(m)))),
		find: (provider, modelId) => structuredClone(ofType("chat").find((m) => m.provider === provider && m.id === modelId)),
		findOfType: (type, provider, modelId) => structuredClone(ofType(type, provider).find((m) => m.id === modelId)),
		getModelOfType: (type, provider, modelId) => structuredClone(ofType(type, provider).find((m) => m.id === modelId)),
		getModelsOfType: (type, provider) => structuredClone(ofType(type, provider)),
		getAvailableOfType: async (type, provider) => structuredClone(ofType(type, provider).filter((m) => cache.available.has(key(m)))),
		hasConfiguredAuth: (model) => Boolean(cache?.available.has(key(model)) || models().some((m) => m.provider === model?.provider && cache.available.has(key(m)))),
		isUsingOAuth: (model) => Boolean(cache?.oauth.has(model?.provider)),
		getProviderDisplayName: (provider) => cache?.providers?.[provider]?.name ?? provider,
		getProviderAuthStatus: (provider) => structuredClone(cache?.providers?.[provider]?.status ?? { configured: false }),
		getProvider: (provider) => {
			const info = cache?.providers?.[provider];
			if (!info && !models().some((m) => m.provider === provider)) return undefined;
			return { id: provider, name: info?.name ?? provider, getModels: () => structuredClone(ofType("chat", provider)) };
		},
		getRegisteredProviderIds: () => Object.keys(cache?.providers ?? {}).filter((id) => cache.providers[id].registered),
		getRegisteredProviderConfig: (provider) => structuredClone(cache?.providers?.[provider]?.config),
		/** pi's `{ok: true, apiKey, headers}` or `{ok: false, error}`. */
		getApiKeyAndHeaders: async (model) => {
			try {
				const answer = await auth(model?.provider, model);
				return answer?.result ?? { ok: false, error: `No API key found for "${model?.provider}"` };
			} catch (error) {
				return { ok: false, error: errorMessage(error) };
			}
		},
		getProviderAuth: async (provider) => (await auth(provider))?.auth ?? undefined,
		getApiKeyForProvider: async (provider) => {
			try {
				return (await auth(provider))?.auth?.auth?.apiKey ?? undefined;
			} catch {
				return undefined;
			}
		},
		stream: (model, context, options) => runRequest(extensionPath, false, model, context, options),
		streamSimple: (model, context, options) => runRequest(extensionPath, true, model, context, options),
		complete: (model, context, options) => runRequest(extensionPath, false, model, context, options).result(),
		classify: (model, context, options) => runTyped(extensionPath, "ctx.modelRegistry.classify", "classifier", model, context, options),
		generateImages: (model, context, options) => runTyped(extensionPath, "ctx.modelRegistry.generateImages", "image", model, context, options),
		registerProvider: (providerOrName, config) => {
			const name = typeof providerOrName === "string" ? providerOrName : providerOrName?.id;
			if (typeof providerOrName === "string" && !config) throw new Error("Provider config is required when registering by name");
			validateProvider(name, config ?? providerOrName, rpc.state.providerBases);
			noteRegistration(name, config ?? providerOrName);
			void call("pi.registerProvider", { name, config: config ?? providerOrName }).then(() => {
				cachedVersion = undefined;
			});
		},
		unregisterProvider: (name) => {
			noteUnregistration(name, rpc.state.providerBases?.builtinIds);
			void call("pi.unregisterProvider", { name }).then(() => {
				cachedVersion = undefined;
			});
		},
	};
	return registry;
}
