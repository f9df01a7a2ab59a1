// Check a Gecko-format profile (sfprof export --format firefox) against the
// points of the format that the Firefox Profiler's importer reads, then
// print its stacks as folded lines without the comm ("root;...;leaf N",
// named like sfprof's folded export) for the caller to compare.
// Usage: node firefox-check.js PROFILE.json TIDS_OUT
//   TIDS_OUT gets "pid tid samples name" per thread.
// Exits 1 with the reasons on stderr when a check fails.
'use strict';
const fs = require('fs');
const [, , file, tidsOut] = process.argv;
// the profiler decodes the file as strict UTF-8 (fatal on bad bytes)
const prof = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(file)));
const errs = [];
const want = (cond, msg) => { if (!cond) errs.push(msg); };
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

const meta = prof.meta || {};
want(meta.version === 24, 'meta.version is not 24');
want(isNum(meta.interval) && meta.interval > 0, 'meta.interval not a positive number');
want(isNum(meta.startTime), 'meta.startTime not a number');
want(meta.presymbolicated === true, 'meta.presymbolicated not true');
want(typeof meta.product === 'string' && meta.product.length > 0, 'no meta.product');
for (const k of ['stackwalk', 'debug', 'gcpoison', 'asyncstack', 'processType'])
	want(isNum(meta[k]), 'meta.' + k + ' missing');
const cats = meta.categories || [];
want(cats.length === 2 && cats[0].name === 'User' && cats[1].name === 'Kernel' &&
     cats.every((c) => typeof c.color === 'string' && Array.isArray(c.subcategories) &&
			c.subcategories.length > 0),
     'meta.categories are not [User, Kernel] with colours and subcategories');
for (const k of ['libs', 'threads', 'processes', 'pausedRanges'])
	want(Array.isArray(prof[k]), k + ' is not an array');

const sameSchema = (got, exp) => JSON.stringify(got) === JSON.stringify(exp);
const folded = new Map();
const tids = [];
const seen = new Set();
for (const th of prof.threads || []) {
	const id = 'thread ' + th.tid;
	want(typeof th.name === 'string' && typeof th.processName === 'string', id + ': names');
	want(Number.isInteger(th.pid) && Number.isInteger(th.tid), id + ': pid/tid');
	want(!seen.has(th.pid + '/' + th.tid + '/' + th.name), id + ': twice');
	seen.add(th.pid + '/' + th.tid + '/' + th.name);
	want(th.processType === 'default' && isNum(th.registerTime) &&
	     th.unregisterTime === null, id + ': processType/registerTime');
	want(th.markers && sameSchema(th.markers.schema,
		{ name: 0, startTime: 1, endTime: 2, phase: 3, category: 4, data: 5 }),
	     id + ': markers schema');
	const smp = th.samples || {}, stk = th.stackTable || {}, frm = th.frameTable || {};
	const strs = th.stringTable || [];
	want(sameSchema(smp.schema, { stack: 0, time: 1, responsiveness: 2 }), id + ': samples schema');
	want(sameSchema(stk.schema, { prefix: 0, frame: 1 }), id + ': stackTable schema');
	want(sameSchema(frm.schema, { location: 0, relevantForJS: 1, innerWindowID: 2,
		implementation: 3, optimizations: 4, line: 5, column: 6, category: 7,
		subcategory: 8 }), id + ': frameTable schema');
	want(Array.isArray(strs) && strs.every((s) => typeof s === 'string'), id + ': stringTable');
	const frames = frm.data || [], stacks = stk.data || [];
	frames.forEach((f, i) => {
		want(f.length === 9 && Number.isInteger(f[0]) && f[0] >= 0 && f[0] < strs.length,
		     id + ': frame ' + i + ' location');
		want(f[7] === 0 || f[7] === 1, id + ': frame ' + i + ' category');
		want(f[8] === 0, id + ': frame ' + i + ' subcategory');
		want(f[5] === null || (Number.isInteger(f[5]) && f[5] > 0), id + ': frame ' + i + ' line');
		const loc = strs[f[0]] || '';
		want(/ \(in .+\)$/.test(loc), id + ': frame ' + i + ' location "' + loc + '"');
		const kernel = /\(in \[kernel\.kallsyms\]\)$/.test(loc);
		if (kernel) want(f[7] === 1, id + ': kernel frame not in Kernel category: ' + loc);
	});
	stacks.forEach((s, i) => {
		want(s.length === 2 && (s[0] === null || (Number.isInteger(s[0]) && s[0] < i)),
		     id + ': stack ' + i + ' prefix must be null or an earlier stack');
		want(Number.isInteger(s[1]) && s[1] >= 0 && s[1] < frames.length,
		     id + ': stack ' + i + ' frame');
	});
	const name = (fi) => {
		const loc = strs[frames[fi][0]];
		const m = / \(in (.+)\)$/.exec(loc);
		let n = loc.slice(0, m.index);
		if (n === '[unknown]' && m[1] !== '[unknown]') n = '[' + m[1].replace(/.*\//, '') + ']';
		return n.replace(/;/g, ':').replace(/[\x00-\x1f\x7f]/g, '_');
	};
	let last = -Infinity;
	for (const [s, t, r] of smp.data || []) {
		want(isNum(t) && t >= last && t >= 0, id + ': sample times not increasing from 0');
		want(r === 0, id + ': responsiveness');
		last = t;
		const names = [];
		for (let k = s; k !== null && k !== undefined; k = stacks[k][0]) names.push(name(stacks[k][1]));
		const key = names.reverse().join(';');
		folded.set(key, (folded.get(key) || 0) + 1);
	}
	tids.push(th.pid + ' ' + th.tid + ' ' + (smp.data || []).length + ' ' + th.name);
	if (errs.length > 20) break;
}
fs.writeFileSync(tidsOut, tids.join('\n') + '\n');
if (errs.length) {
	console.error(errs.slice(0, 20).join('\n'));
	process.exit(1);
}
for (const [k, v] of folded) console.log(k + ' ' + v);
