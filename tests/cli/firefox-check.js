// Check a Gecko-format profile (sfprof export --format firefox) against the
// points of the format that the Firefox Profiler's importer reads, then
// print its stacks as folded lines without the comm ("root;...;leaf N",
// named like sfprof's folded export) for the caller to compare.
// Usage: node firefox-check.js PROFILE.json TIDS_OUT [OFF_OUT]
//   TIDS_OUT gets "pid tid samples name" per thread.
//   OFF_OUT (a profile with off-CPU markers) gets "tid T interval_ns I
//   summed_ns S cpu_delta_us C" per thread and "fn NAME ns" per function
//   named in the markers' stacks (blocked ns under it, each marker once).
//   The markers are checked as the profiler's importer reads them: a
//   category, a marker schema, intervals (phase 1) that overlap neither
//   each other nor the thread's own samples, instants (phase 0) for sums,
//   and a stack in the shape the importer turns into the marker's cause.
// Exits 1 with the reasons on stderr when a check fails.
'use strict';
const fs = require('fs');
const [, , file, tidsOut, offOut] = process.argv;
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
// an off-CPU profile adds a third category for its markers
const offCat = cats.length === 3 && cats[2].name === 'Off-CPU' ? 2 : -1;
want((cats.length === 2 || offCat === 2) && cats[0].name === 'User' && cats[1].name === 'Kernel' &&
     cats.every((c) => typeof c.color === 'string' && Array.isArray(c.subcategories) &&
			c.subcategories.length > 0),
     'meta.categories are not [User, Kernel(, Off-CPU)] with colours and subcategories');
const cpuDelta = !!(meta.sampleUnits && meta.sampleUnits.threadCPUDelta);
if (cpuDelta)
	want(meta.sampleUnits.threadCPUDelta === '\u00b5s' && meta.sampleUnits.time === 'ms',
	     'meta.sampleUnits: threadCPUDelta not in \u00b5s');
const schemas = meta.markerSchema || [];
if (offCat === 2) {
	const ms = schemas.find((m) => m.name === 'OffCPU');
	want(ms && Array.isArray(ms.display) && ms.display.includes('marker-chart') &&
	     ms.display.includes('timeline-overview') &&
	     (ms.data || []).some((d) => d.key === 'blockedMs' && d.format === 'milliseconds'),
	     'meta.markerSchema lacks OffCPU (marker-chart, timeline-overview, blockedMs in ms)');
}
const offLines = [], offFn = new Map();
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
	want(sameSchema(smp.schema, cpuDelta ? { stack: 0, time: 1, responsiveness: 2, threadCPUDelta: 3 }
		: { stack: 0, time: 1, responsiveness: 2 }), id + ': samples schema');
	want(sameSchema(stk.schema, { prefix: 0, frame: 1 }), id + ': stackTable schema');
	want(sameSchema(frm.schema, { location: 0, relevantForJS: 1, innerWindowID: 2,
		implementation: 3, optimizations: 4, line: 5, column: 6, category: 7,
		subcategory: 8 }), id + ': frameTable schema');
	want(Array.isArray(strs) && strs.every((s) => typeof s === 'string'), id + ': stringTable');
	const frames = frm.data || [], stacks = stk.data || [];
	frames.forEach((f, i) => {
		want(f.length === 9 && Number.isInteger(f[0]) && f[0] >= 0 && f[0] < strs.length,
		     id + ': frame ' + i + ' location');
		const loc = strs[f[0]] || '';
		// the leaf of off-CPU samples: a label frame "Off-CPU"
		if (loc === 'Off-CPU' && offCat === 2) {
			want(f[7] === offCat && f[5] === null, id + ': frame ' + i + ' Off-CPU not in its category');
			return;
		}
		want(f[7] === 0 || f[7] === 1, id + ': frame ' + i + ' category');
		want(f[8] === 0, id + ': frame ' + i + ' subcategory');
		want(f[5] === null || (Number.isInteger(f[5]) && f[5] > 0), id + ': frame ' + i + ' line');
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
		if (!m) return loc;
		let n = loc.slice(0, m.index);
		if (n === '[unknown]' && m[1] !== '[unknown]') n = '[' + m[1].replace(/.*\//, '') + ']';
		return n.replace(/;/g, ':').replace(/[\x00-\x1f\x7f]/g, '_');
	};
	// the off-CPU markers: intervals over blocks, instants for sums
	const mk = (th.markers && th.markers.data) || [];
	const ivs = [];
	let ivNs = 0, sumNs = 0, cpuUs = 0;
	for (const [k, m] of mk.entries()) {
		const [nm, st, en, ph, cat, data] = m;
		const mid = id + ': marker ' + k;
		want(m.length === 6 && Number.isInteger(nm) && nm < strs.length, mid + ' name');
		want(cat === offCat && data && data.type === 'OffCPU' && isNum(data.blockedMs) &&
		     data.blockedMs >= 0, mid + ' not an OffCPU marker with blockedMs');
		if (!data || data.type !== 'OffCPU') continue;
		if (ph === 1) {
			want(strs[nm] === 'Off-CPU' && isNum(st) && isNum(en) && en >= st &&
			     Math.abs((en - st) - data.blockedMs) < 1e-3, mid + ' interval not its blocked time');
			ivs.push([st, en]);
			ivNs += data.blockedMs * 1e6;
		} else {
			want(ph === 0 && strs[nm] === 'Off-CPU (summed)' && isNum(st) && en === null,
			     mid + ' neither an interval nor an instant sum');
			sumNs += data.blockedMs * 1e6;
		}
		// the importer's cause: stack.samples.data[0][schema.stack]
		const ss = data.stack && data.stack.samples;
		if (data.stack !== undefined) {
			want(ss && sameSchema(ss.schema, { stack: 0, time: 1, responsiveness: 2 }) &&
			     ss.data.length === 1 && Number.isInteger(ss.data[0][0]) &&
			     ss.data[0][0] >= 0 && ss.data[0][0] < stacks.length && data.stack.tid === th.tid,
			     mid + ' stack not in the importer\'s shape');
			if (ss && ss.data.length === 1 && ss.data[0][0] < stacks.length) {
				const seenFn = new Set();
				for (let q = ss.data[0][0]; q !== null && q !== undefined; q = stacks[q][0])
					seenFn.add(name(stacks[q][1]));
				for (const fn of seenFn) offFn.set(fn, (offFn.get(fn) || 0) + data.blockedMs * 1e6);
			}
		}
	}
	ivs.sort((x, y) => x[0] - y[0]);
	for (let k = 1; k < ivs.length; k++)
		want(ivs[k][0] >= ivs[k - 1][1] - 1e-6, id + ': off-CPU intervals overlap at ' + ivs[k][0]);
	// off-CPU time as samples: a stack ending in the Off-CPU leaf
	const isOffSmp = (s) => s !== null && s !== undefined && s < stacks.length &&
		strs[(frames[stacks[s][1]] || [])[0]] === 'Off-CPU';
	let nOff = 0;
	for (const row of smp.data || []) {
		const t = row[1], off = isOffSmp(row[0]);
		// a thread is not on a CPU while it is blocked: inside a block
		// only its off-CPU samples, which use no CPU
		let lo = 0, hi = ivs.length - 1;
		while (lo <= hi && !off) {
			const mid = (lo + hi) >> 1;
			if (t <= ivs[mid][0]) hi = mid - 1;
			else if (t >= ivs[mid][1]) lo = mid + 1;
			else { want(false, id + ': on-CPU sample at ' + t + ' inside an off-CPU interval'); break; }
		}
		if (off) {
			nOff++;
			want(cpuDelta && row[3] === 0, id + ': off-CPU sample at ' + t + ' has CPU time');
		}
		if (cpuDelta) {
			want(Number.isInteger(row[3]) && row[3] >= 0, id + ': threadCPUDelta not a count of \u00b5s');
			cpuUs += row[3] || 0;
		}
	}
	// one off-CPU sample per interval of blocked time (rounded per stack)
	if (mk.length) {
		const want_n = (ivNs + sumNs) / (meta.interval * 1e6);
		want(Math.abs(nOff - want_n) <= 0.5 * stacks.length + 1,
		     id + ': ' + nOff + ' off-CPU samples for ' + want_n.toFixed(1) + ' intervals of blocked time');
	}
	if (mk.length || cpuDelta)
		offLines.push(`tid ${th.tid} interval_ns ${Math.round(ivNs)} summed_ns ${Math.round(sumNs)} ` +
			`cpu_delta_us ${cpuUs} off_samples ${nOff}`);

	let last = -Infinity;
	for (const [s, t, r] of smp.data || []) {
		want(isNum(t) && t >= last && t >= 0, id + ': sample times not increasing from 0');
		want(r === 0, id + ': responsiveness');
		last = t;
		if (isOffSmp(s)) continue;
		const names = [];
		for (let k = s; k !== null && k !== undefined; k = stacks[k][0]) names.push(name(stacks[k][1]));
		const key = names.reverse().join(';');
		folded.set(key, (folded.get(key) || 0) + 1);
	}
	tids.push(th.pid + ' ' + th.tid + ' ' + ((smp.data || []).length - nOff) + ' ' + th.name);
	if (errs.length > 20) break;
}
fs.writeFileSync(tidsOut, tids.join('\n') + '\n');
if (offOut) {
	for (const [k, v] of offFn) offLines.push(`fn ${k} ${Math.round(v)}`);
	fs.writeFileSync(offOut, offLines.join('\n') + '\n');
}
if (errs.length) {
	console.error(errs.slice(0, 20).join('\n'));
	process.exit(1);
}
for (const [k, v] of folded) console.log(k + ' ' + v);
