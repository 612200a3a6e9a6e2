// pi-tui's fuzzy matching: the query's characters in order, scored so runs, word starts and early
// matches rank first (lower is better); space- or slash-separated tokens must all match.

const WORD_BREAK = /[\s\-_./:]/;

function scoreOf(text, positions) {
	let score = 0;
	let last = -1;
	let run = 0;
	for (const i of positions) {
		if (last === i - 1) score -= ++run * 5;
		else {
			run = 0;
			if (last >= 0) score += (i - last - 1) * 2;
		}
		if (i === 0 || WORD_BREAK.test(text[i - 1])) score -= 10;
		score += i * 0.1;
		last = i;
	}
	return score;
}

function matchLower(query, text) {
	if (query.length === 0) return { matches: true, score: 0 };
	if (query.length > text.length) return { matches: false, score: 0 };
	const positions = [];
	let from = 0;
	for (const ch of query) {
		const i = text.indexOf(ch, from);
		if (i === -1) return { matches: false, score: 0 };
		positions.push(i);
		from = i + 1;
	}
	let score = scoreOf(text, positions);
	// A contiguous occurrence may align better than the greedy one.
	for (let at = text.indexOf(query); at !== -1; at = text.indexOf(query, at + 1)) {
		score = Math.min(score, scoreOf(text, Array.from({ length: query.length }, (_, k) => at + k)));
	}
	if (query === text) score -= 100;
	return { matches: true, score };
}

export function fuzzyMatch(query, text) {
	const q = String(query).toLowerCase();
	const t = String(text).toLowerCase();
	const direct = matchLower(q, t);
	if (direct.matches) return direct;
	// "abc12" also finds "12abc", and the other way round, a little worse.
	const m = /^([a-z]+)([0-9]+)$/.exec(q) ?? /^([0-9]+)([a-z]+)$/.exec(q);
	if (!m) return direct;
	const swapped = matchLower(m[2] + m[1], t);
	return swapped.matches ? { matches: true, score: swapped.score + 5 } : direct;
}

export function fuzzyFilter(items, query, getText = (x) => String(x)) {
	const tokens = String(query).trim().split(/[\s/]+/).filter(Boolean);
	if (tokens.length === 0) return items;
	const scored = [];
	for (const item of items) {
		const text = getText(item);
		let total = 0;
		let ok = true;
		for (const token of tokens) {
			const m = fuzzyMatch(token, text);
			if (!m.matches) {
				ok = false;
				break;
			}
			total += m.score;
		}
		if (ok) scored.push({ item, total });
	}
	return scored.sort((a, b) => a.total - b.total).map((s) => s.item);
}
