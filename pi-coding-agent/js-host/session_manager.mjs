// pi's SessionManager over entries the host holds. `ctx.sessionManager` reads the session's
// entries, which the host keeps in step with pi-rs (`syncSession`: only the entries appended since
// the last event are fetched); `newSession({setup})` gets a manager whose appends are recorded and
// replayed by pi-rs on the real session (ids the setup saw are mapped to the real ones).
import { randomUUID } from "node:crypto";
import { rpc } from "./rpc.mjs";

/** The session as pi-rs last sent it. */
const cache = { sessionId: undefined, sessionFile: undefined, sessionDir: undefined, cwd: undefined, header: null, entries: [], leafId: null };
let syncing = Promise.resolve();

/** Brings the cached entries up to the snapshot's `session` (`{sessionId, count, leafId, …}`);
 * resolves `false` when pi-rs could not answer (its session was busy), `true` otherwise. */
export function syncSession(snapshot) {
	const s = snapshot?.session;
	if (!s || typeof s !== "object") return syncing.then(() => true);
	syncing = syncing.then(async () => {
		Object.assign(cache, { sessionFile: s.sessionFile ?? undefined, sessionDir: s.sessionDir ?? undefined, cwd: s.cwd ?? cache.cwd });
		const same = cache.sessionId === s.sessionId;
		if (same && cache.entries.length === s.count) {
			cache.leafId = s.leafId ?? null;
			return true;
		}
		const from = same && cache.entries.length < s.count ? cache.entries.length : 0;
		let answer;
		try {
			answer = await rpc.call("ctx.sessionEntries", { sessionId: s.sessionId, from });
		} catch {
			return false; // the session is busy: asked again later
		}
		if (!answer) return false;
		cache.entries = answer.from === 0 ? answer.entries : cache.entries.slice(0, answer.from).concat(answer.entries);
		Object.assign(cache, { sessionId: answer.sessionId, header: answer.header ?? null, leafId: answer.leafId ?? null });
		return true;
	});
	return syncing;
}

function kindOfEntryLabel(labels, entry) {
	if (entry.type !== "label") return;
	if (entry.label) labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
	else labels.delete(entry.targetId);
}

function sessionPath(entries, leafId, byId) {
	if (leafId === null) return [];
	const leaf = (leafId ? byId.get(leafId) : undefined) ?? entries.at(-1);
	const path = [];
	for (let current = leaf; current; current = current.parentId ? byId.get(current.parentId) : undefined) path.push(current);
	return path.reverse();
}

function contextEntries(entries, leafId, byId) {
	const path = sessionPath(entries, leafId, byId);
	const compaction = path.findLast((e) => e.type === "compaction");
	if (!compaction) return path;
	const at = path.indexOf(compaction);
	const out = [compaction];
	let kept = false;
	for (const entry of path.slice(0, at)) {
		if (entry.id === compaction.firstKeptEntryId) kept = true;
		if (kept && !(entry.type === "message" && entry.message.role === "system")) out.push(entry);
	}
	return out.concat(path.slice(at + 1));
}

function entryMessages(entry) {
	switch (entry.type) {
		case "message": {
			const m = entry.message;
			if (m.role === "system" && m.content == null) return [{ ...m, content: "" }];
			if (["user", "assistant", "toolResult"].includes(m.role) && m.content == null) return [{ ...m, content: [] }];
			return [m];
		}
		case "custom_message":
			return [{ role: "custom", customType: entry.customType, content: entry.content ?? [], display: entry.display, details: entry.details, timestamp: Date.parse(entry.timestamp) }];
		case "branch_summary":
			return entry.summary ? [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: Date.parse(entry.timestamp) }] : [];
		case "compaction": {
			const summary = { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: Date.parse(entry.timestamp) };
			return entry.systemMessage ? [entry.systemMessage, summary] : [summary];
		}
		default:
			return [];
	}
}

function projectEntry(entry, edit) {
	const messages = entryMessages(entry);
	if (!edit) return messages;
	const replacement = edit.replacement;
	if (replacement === null) return [];
	return messages.map((m) => {
		if (!["user", "assistant", "toolResult", "custom"].includes(m.role)) return m;
		const content = (m.role === "assistant" || m.role === "toolResult") && typeof replacement.content === "string" ? [{ type: "text", text: replacement.content }] : replacement.content;
		return { ...m, content };
	});
}

/** pi's read-only SessionManager over `state()` (`{sessionId, sessionFile, sessionDir, cwd, header, entries, leafId}`). */
export function readonlySessionManager(state) {
	const index = () => {
		const s = state();
		const byId = new Map(s.entries.map((e) => [e.id, e]));
		const labels = new Map();
		for (const e of s.entries) kindOfEntryLabel(labels, e);
		return { s, byId, labels };
	};
	return {
		getCwd: () => state().cwd,
		getSessionDir: () => state().sessionDir,
		getSessionId: () => state().sessionId,
		getSessionFile: () => state().sessionFile,
		getSessionName: () => {
			const info = state().entries.findLast((e) => e.type === "session_info");
			return info ? info.name?.trim() || undefined : undefined;
		},
		getLeafId: () => state().leafId,
		getLeafEntry: () => {
			const { s, byId } = index();
			return s.leafId ? byId.get(s.leafId) : undefined;
		},
		getEntry: (id) => index().byId.get(id),
		getChildren: (id) => state().entries.filter((e) => e.parentId === id),
		getLabel: (id) => index().labels.get(id)?.label,
		getBranch: (fromId) => {
			const { s, byId } = index();
			const start = fromId ?? s.leafId;
			return start ? sessionPath(s.entries, start, byId) : [];
		},
		getHeader: () => state().header,
		getEntries: () => [...state().entries],
		getEntryCount: () => state().entries.length,
		getTree: () => {
			const { s, labels } = index();
			const nodes = new Map();
			const roots = [];
			for (const entry of s.entries) {
				const label = labels.get(entry.id);
				nodes.set(entry.id, { entry, children: [], label: label?.label, labelTimestamp: label?.timestamp });
			}
			for (const entry of s.entries) {
				const node = nodes.get(entry.id);
				const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
				(parent ? parent.children : roots).push(node);
			}
			const stack = [...roots];
			while (stack.length > 0) {
				const node = stack.pop();
				node.children.sort((a, b) => new Date(a.entry.timestamp).getTime() - new Date(b.entry.timestamp).getTime());
				stack.push(...node.children);
			}
			return roots;
		},
		buildContextEntries: () => {
			const { s, byId } = index();
			return contextEntries(s.entries, s.leafId, byId);
		},
		buildSessionProjection: () => {
			const { s, byId } = index();
			let thinkingLevel = "off";
			let model = null;
			for (const e of sessionPath(s.entries, s.leafId, byId)) {
				if (e.type === "thinking_level_change") thinkingLevel = e.thinkingLevel;
				else if (e.type === "model_change") model = { provider: e.provider, modelId: e.modelId };
				else if (e.type === "message" && e.message.role === "assistant") model = { provider: e.message.provider, modelId: e.message.model };
			}
			const selected = contextEntries(s.entries, s.leafId, byId);
			const edits = new Map(selected.filter((e) => e.type === "context_edit").map((e) => [e.targetId, e]));
			const entries = selected.map((sourceEntry, i) => ({
				sourceEntry,
				messages: sourceEntry.type === "compaction" && i > 0 ? [] : projectEntry(sourceEntry, edits.get(sourceEntry.id)),
			}));
			return { entries, messages: entries.flatMap((e) => e.messages), thinkingLevel, model };
		},
	};
}

/** `ctx.sessionManager`: the synced session. */
export const sessionManager = readonlySessionManager(() => cache);

/** The manager `newSession({setup})` hands to `setup`: pi's appends on a copy of the new session;
 * `ops` records them for pi-rs. */
export function setupSessionManager(start) {
	const s = { ...start, entries: [...start.entries] };
	const ops = [];
	const view = readonlySessionManager(() => s);
	const newId = () => {
		const taken = new Set(s.entries.map((e) => e.id));
		for (;;) {
			const id = randomUUID().slice(0, 8);
			if (!taken.has(id)) return id;
		}
	};
	const append = (op, fields) => {
		const entry = { id: newId(), parentId: s.leafId, timestamp: new Date().toISOString(), ...fields };
		s.entries.push(entry);
		s.leafId = entry.id;
		ops.push({ ...op, id: entry.id });
		return entry.id;
	};
	const known = (id) => {
		if (!s.entries.some((e) => e.id === id)) throw new Error(`Entry ${id} not found`);
	};
	return {
		ops,
		manager: {
			...view,
			isPersisted: () => Boolean(s.sessionFile),
			appendMessage: (message) => append({ op: "message", message }, { type: "message", message }),
			appendThinkingLevelChange: (thinkingLevel) => append({ op: "thinkingLevel", thinkingLevel }, { type: "thinking_level_change", thinkingLevel }),
			appendModelChange: (provider, modelId) => append({ op: "model", provider, modelId }, { type: "model_change", provider, modelId }),
			appendCustomEntry: (customType, data) => append({ op: "custom", customType, data }, { type: "custom", customType, data }),
			appendSessionInfo: (name) => append({ op: "sessionInfo", name }, { type: "session_info", name: String(name ?? "").trim() }),
			appendCustomMessageEntry: (customType, content, display, details) =>
				append({ op: "customMessage", customType, content, display, details }, { type: "custom_message", customType, content, display, details }),
			appendLabelChange: (targetId, label) => {
				known(targetId);
				return append({ op: "label", targetId, label }, { type: "label", targetId, label });
			},
			branch: (id) => {
				known(id);
				s.leafId = id;
				ops.push({ op: "branch", targetId: id });
			},
			resetLeaf: () => {
				s.leafId = null;
				ops.push({ op: "resetLeaf" });
			},
		},
	};
}

const setups = new Map();
let nextSetup = 1;

/** Keeps a `newSession` `setup` function until pi-rs runs it (`runSetup`). */
export function registerSetup(setup) {
	const id = nextSetup++;
	setups.set(id, setup);
	return id;
}

export function forgetSetup(id) {
	setups.delete(id);
}

/** pi-rs's `session.setup {setupId}`: runs the setup on a copy of the new session and answers the
 * appends it made (`{ops}`). */
export async function runSetup(params) {
	const setup = setups.get(params.setupId);
	if (!setup) throw new Error(`Unknown session setup: ${params.setupId}`);
	setups.delete(params.setupId);
	const { manager, ops } = setupSessionManager(await currentSession());
	await setup(manager);
	return { ops };
}

/** The new session's state for `setup`, fetched from pi-rs. */
async function currentSession() {
	const answer = await rpc.call("ctx.sessionEntries", { from: 0 });
	return {
		sessionId: answer.sessionId,
		sessionFile: answer.sessionFile ?? undefined,
		sessionDir: answer.sessionDir ?? undefined,
		cwd: answer.cwd,
		header: answer.header ?? null,
		entries: answer.entries ?? [],
		leafId: answer.leafId ?? null,
	};
}
