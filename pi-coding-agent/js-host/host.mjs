// The pi-rs JavaScript extension host: loads unmodified pi extensions (.ts, .mts, .js, .mjs or a
// folder) into one Node.js process and speaks pi-rs's extension protocol (version 2, JSON-RPC 2.0
// lines; pi-coding-agent/docs/extension-protocol.md) on stdin/stdout. One host serves every
// JavaScript extension of a session; each message names its extension with `extensionPath`.
import { register } from "node:module";
import { createInterface } from "node:readline";
import { rpc } from "./rpc.mjs";
import { loadExtension, extensions } from "./loader.mjs";
import { applyCompletion, dispose, focusComponent, inputComponent, invalidateComponent, mouseComponent, overlayVisible, renderComponent, scheduleSweep, suggest, terminalInput } from "./components.mjs";
import { queueUpdate, runEvent, runTool, runCommand, runRender, runShortcut, cancelTool } from "./dispatch.mjs";
import { runMarkdownTransform, runVirtualRoute } from "./virtual-models.mjs";
import { abortProviderStream, runProviderStream } from "./provider-stream.mjs";
import {
	abortOAuthLogin,
	runOAuthApiKey,
	runOAuthLogin,
	runOAuthModifyModels,
	runOAuthRefresh,
	runRefreshModels,
} from "./provider-oauth.mjs";
import { deliverRegistryEvent } from "./model_registry.mjs";
import { abortRun } from "./signals.mjs";
import { bus } from "./bus.mjs";
import { runSetup } from "./session_manager.mjs";

register("./hooks.mjs", import.meta.url);

const PROTOCOL_VERSION = 2;

const methods = {
	async initialize(params) {
		const ext = await loadExtension(params);
		return { protocolVersion: PROTOCOL_VERSION, ...ext.registrations() };
	},
	event: (params) => (params.event === "message_update" ? queueUpdate(params) : runEvent(params)),
	"tool.execute": (params) => runTool(params),
	"command.run": (params) => runCommand(params),
	"shortcut.run": (params) => runShortcut(params),
	render: (params) => runRender(params),
	"virtualModel.route": (params) => runVirtualRoute(params),
	"markdown.transform": (params) => runMarkdownTransform(params),
	"provider.stream": (params) => runProviderStream(params),
	"provider.abort": (params) => {
		abortProviderStream(params.streamId);
		return null;
	},
	"provider.oauth.login": (params) => runOAuthLogin(params),
	"provider.oauth.abort": (params) => {
		abortOAuthLogin(params.loginId);
		return null;
	},
	"provider.oauth.refresh": (params) => runOAuthRefresh(params),
	"provider.oauth.apiKey": (params) => runOAuthApiKey(params),
	"provider.oauth.modifyModels": (params) => runOAuthModifyModels(params),
	"provider.refreshModels": (params) => runRefreshModels(params),
	"modelRegistry.event": (params) => {
		deliverRegistryEvent(params);
		return null;
	},
	"flags.set": (params) => {
		for (const ext of extensions.values()) ext.setFlagValues(params.values ?? {});
		return null;
	},
	"state.set": (params) => {
		rpc.updateState(params);
		return null;
	},
	"component.render": (params) => renderComponent(params),
	"component.input": (params) => inputComponent(params),
	"component.invalidate": (params) => invalidateComponent(params),
	"component.focus": (params) => focusComponent(params),
	"component.mouse": (params) => mouseComponent(params),
	"terminal.input": (params) => terminalInput(params),
	"autocomplete.suggest": (params) => suggest(params),
	"autocomplete.apply": (params) => applyCompletion(params),
	"overlay.visible": (params) => overlayVisible(params),
	"component.dispose": (params) => {
		dispose(params.id);
		return null;
	},
	"session.setup": (params) => runSetup(params),
	"events.emit": (params) => {
		if (typeof params.bound === "boolean") rpc.state.bound = params.bound;
		bus.emitLocal(params.channel, params.data);
		return null;
	},
	"signal.abort": (params) => {
		abortRun(params.run);
		return null;
	},
	"tool.cancel": (params) => {
		cancelTool(params.toolCallId);
		return null;
	},
};

rpc.serve(methods);
for (const m of ["signal.abort", "provider.abort", "provider.oauth.abort", "provider.oauth.apiKey", "modelRegistry.event", "markdown.transform", "component.render", "component.input", "component.invalidate", "component.dispose", "component.focus", "component.mouse", "terminal.input", "autocomplete.suggest", "autocomplete.apply", "overlay.visible"]) {
	rpc.immediate.add(m);
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
// Whatever a message ran may have changed a drawn component (`sweep`); drawing itself does not.
input.on("line", (line) => {
	rpc.receive(line);
	if (!line.includes('"component.render"')) scheduleSweep();
});
input.on("close", () => process.exit(0));
