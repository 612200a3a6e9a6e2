// A provider's JavaScript `streamSimple` run for pi-rs (`provider.stream`): each event of the
// stream it returns goes back as a `provider.event` notification (with the partial's block at
// `contentIndex`), in order and before the answer; `provider.abort` aborts its `signal`.
import { extensions } from "./loader.mjs";
import { rpc } from "./rpc.mjs";

const controllers = new Map();

/** The event as pi-rs reads it. Producers mutate one partial message, so it is read as of the
 * event: a start carries no content yet, a block starts empty and ends with the event's text. */
function wire(event) {
	const { partial, ...rest } = event;
	if (event.type === "start") return { ...rest, partial: { ...partial, content: [] } };
	const block = partial?.content?.[event.contentIndex];
	switch (event.type) {
		case "text_start":
			return { ...rest, block: { ...block, text: "" } };
		case "thinking_start":
			return { ...rest, block: { ...block, thinking: "" } };
		case "toolcall_start":
			return { ...rest, block: { ...block, arguments: {} } };
		case "text_end":
			return { ...rest, block: { ...block, text: event.content ?? block?.text ?? "" } };
		case "thinking_end":
			return { ...rest, block: { ...block, thinking: event.content ?? block?.thinking ?? "" } };
		default:
			return rest;
	}
}

export async function runProviderStream(params) {
	const ext = extensions.get(params.extensionPath);
	const streamSimple = ext?.providerStreams?.get(params.provider);
	if (!streamSimple) throw new Error(`Provider ${params.provider} has no streamSimple in the JavaScript host`);
	const controller = new AbortController();
	controllers.set(params.streamId, controller);
	try {
		const options = { ...params.options, signal: controller.signal };
		const stream = await streamSimple(params.model, params.context, options);
		for await (const event of stream) {
			rpc.send({ method: "provider.event", params: { streamId: params.streamId, event: wire(event) } });
		}
		return null;
	} finally {
		controllers.delete(params.streamId);
	}
}

export function abortProviderStream(streamId) {
	controllers.get(streamId)?.abort();
}
