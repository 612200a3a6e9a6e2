// `ctx.modelRegistry` (pi's ModelRegistry as extensions see it), backed by pi-rs's registry over
// the protocol: the models and the ones with configured auth are fetched (`ctx.modelRegistry`)
// before a handler runs whenever the snapshot's `modelsVersion` changed, so the synchronous
// members answer from that copy; `refresh()` fetches it again.
import { rpc } from "./rpc.mjs";

let cache;
let cachedVersion;

async function fetchRegistry() {
	const answer = await rpc.call("ctx.modelRegistry", {});
	cache = { models: answer?.models ?? [], available: new Set(answer?.available ?? []) };
}

/** Brings the copy up to date for a handler about to run with `snapshot` (bound sessions only). */
export async function syncModelRegistry(snapshot) {
	if (!snapshot?.bound || (cache && cachedVersion === snapshot.modelsVersion)) return;
	cachedVersion = snapshot.modelsVersion;
	try {
		await fetchRegistry();
	} catch {
		// An older pi-rs without the method: the registry stays empty, as before.
		cache = cache ?? { models: [], available: new Set() };
	}
}

const key = (model) => `${model.provider}/${model.id}`;
const models = () => cache?.models ?? [];

/** The registry object of `ctx.modelRegistry` for the extension at `extensionPath`. */
export function modelRegistry(extensionPath) {
	const call = (method, params) => rpc.call(method, { extensionPath, ...params });
	return {
		refresh: async () => {
			await fetchRegistry();
			return { aborted: false, errors: new Map() };
		},
		getError: () => undefined,
		getAll: () => structuredClone(models()),
		getAvailable: () => structuredClone(models().filter((m) => cache.available.has(key(m)))),
		find: (provider, modelId) => structuredClone(models().find((m) => m.provider === provider && m.id === modelId)),
		hasConfiguredAuth: (model) => Boolean(cache?.available.has(key(model))),
		getProviderDisplayName: (provider) => provider,
		registerProvider: (providerOrName, config) => {
			const name = typeof providerOrName === "string" ? providerOrName : providerOrName?.id;
			if (typeof providerOrName === "string" && !config) throw new Error("Provider config is required when registering by name");
			void call("pi.registerProvider", { name, config: config ?? providerOrName }).then(() => {
				cachedVersion = undefined;
			});
		},
		unregisterProvider: (name) => {
			void call("pi.unregisterProvider", { name }).then(() => {
				cachedVersion = undefined;
			});
		},
	};
}
