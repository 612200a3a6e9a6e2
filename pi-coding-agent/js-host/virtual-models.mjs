// Virtual models and Markdown transformers of JavaScript extensions, run for pi-rs:
// `virtualModel.route` calls a virtual model's `route(request, ctx)`, and `markdown.transform`
// applies an extension's Markdown transformer (pi's `registerVirtualModel` and
// `registerMarkdownTransformer`).
import { extensions } from "./loader.mjs";
import { createContext } from "./context.mjs";
import { syncModelRegistry } from "./model_registry.mjs";

function extensionOf(params) {
	const ext = extensions.get(params.extensionPath);
	if (!ext) throw new Error(`Extension not loaded in the JavaScript host: ${params.extensionPath}`);
	return ext;
}

/** Runs a router: the model it picked (provider and id), its thinking level, and its state when it
 * returned a new one (returning `undefined` or `request.state` itself keeps the current state). */
export async function runVirtualRoute(params) {
	const ext = extensionOf(params);
	const definition = ext.virtualModels?.get(`${params.provider}/${params.id}`);
	if (!definition) throw new Error(`Virtual model ${params.provider}/${params.id} is not registered.`);
	const snapshot = params.ctx ?? {};
	// The router reads `ctx.modelRegistry` synchronously: bring its copy up to date first, as
	// before an event handler.
	await syncModelRegistry(snapshot);
	const ctx = createContext(ext.path, snapshot);
	const request = { ...params.request, signal: new AbortController().signal };
	const state = request.state;
	const route = await definition.route(request, ctx);
	if (!route || typeof route !== "object" || !route.model) throw new Error("The router returned no model");
	const hasState = route.state !== undefined && route.state !== state;
	return {
		model: { provider: route.model.provider, id: route.model.id },
		thinkingLevel: route.thinkingLevel,
		hasState,
		state: hasState ? JSON.parse(JSON.stringify(route.state)) : null,
	};
}

/** Applies the extension's transformer: `{markdown}` when it returned a string, else `null`. */
export function runMarkdownTransform(params) {
	const ext = extensionOf(params);
	const registration = ext.markdownTransformer;
	if (!registration) return null;
	const transformed = registration.transformer(params.markdown, params.context);
	return typeof transformed === "string" ? { markdown: transformed } : null;
}
