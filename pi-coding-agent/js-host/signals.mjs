// `ctx.signal`: the agent's abort signal of the current run (pi's `agent.signal`), one
// AbortController per run. The snapshot names the run (`signal: {run, aborted}`, absent while the
// agent is idle); pi-rs sends `signal.abort {run}` when that run is aborted.

const controllers = new Map();

function controllerOf(run) {
	let controller = controllers.get(run);
	if (!controller) {
		controller = new AbortController();
		controllers.set(run, controller);
		// Only the latest runs can still be aborted.
		for (const old of [...controllers.keys()]) if (old < run - 4) controllers.delete(old);
	}
	return controller;
}

/** The signal a snapshot's `signal` field stands for (`undefined` when the agent is idle). */
export function signalOf(described) {
	if (!described || typeof described !== "object" || typeof described.run !== "number") return undefined;
	const controller = controllerOf(described.run);
	if (described.aborted && !controller.signal.aborted) controller.abort();
	return controller.signal;
}

/** pi-rs's `signal.abort`: the run was aborted. */
export function abortRun(run) {
	if (typeof run === "number") controllerOf(run).abort();
}
