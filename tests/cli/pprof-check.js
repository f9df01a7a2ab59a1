// Check a pprof profile decoded by `protoc --decode perftools.profiles.Profile`
// (protobuf text format) and print its stacks as folded lines, named the
// way `sfprof export --format folded` names frames, for the caller to
// compare.  Usage: node pprof-check.js DECODED.txt MAIN_BINARY TOTAL_PERIOD
// Exits 1 with the reasons on stderr when a structural check fails.
'use strict';
const fs = require('fs');
const [, , file, mainBin, totalPeriod, locsOut] = process.argv;
const text = fs.readFileSync(file, 'latin1');

// protobuf text format: `name {` ... `}` and `name: value` lines.
function unescape(s) {
	const out = [];
	for (let i = 0; i < s.length; i++) {
		let c = s[i];
		if (c !== '\\') { out.push(s.charCodeAt(i)); continue; }
		c = s[++i];
		if (/[0-7]/.test(c)) {
			let o = c;
			while (o.length < 3 && /[0-7]/.test(s[i + 1])) o += s[++i];
			out.push(parseInt(o, 8));
		} else if (c === 'x') {
			let h = '';
			while (h.length < 2 && /[0-9a-fA-F]/.test(s[i + 1])) h += s[++i];
			out.push(parseInt(h, 16));
		} else {
			const m = { n: 10, t: 9, r: 13, '"': 34, "'": 39, '\\': 92 };
			out.push(m[c] !== undefined ? m[c] : c.charCodeAt(0));
		}
	}
	return Buffer.from(out).toString('utf8');
}
function parse(txt) {
	const root = {};
	const stack = [root];
	for (const raw of txt.split('\n')) {
		const line = raw.trim();
		if (!line) continue;
		const top = stack[stack.length - 1];
		let m;
		if ((m = /^(\w+) \{$/.exec(line))) {
			const o = {};
			(top[m[1]] = top[m[1]] || []).push(o);
			stack.push(o);
		} else if (line === '}') {
			stack.pop();
		} else if ((m = /^(\w+): (.*)$/.exec(line))) {
			let v = m[2];
			if (v.startsWith('"')) v = unescape(v.slice(1, -1));
			else if (v === 'true' || v === 'false') v = v === 'true';
			else v = BigInt(v);
			(top[m[1]] = top[m[1]] || []).push(v);
		} else {
			throw new Error('unparsed line: ' + line);
		}
	}
	return root;
}

const P = parse(text);
const errs = [];
const one = (o, k, d) => (o[k] ? o[k][0] : d);
const str = P.string_table || [];
const S = (i) => str[Number(i || 0n)];
if (str[0] !== '') errs.push('string_table[0] is not ""');

const st = (P.sample_type || []).map((v) => [S(one(v, 'type', 0n)), S(one(v, 'unit', 0n))]);
if (!st.length || st[0][0] !== 'samples' || st[0][1] !== 'count')
	errs.push('sample_type[0] is not samples/count: ' + JSON.stringify(st));
if (st.length < 2 || st[1][0] !== 'cpu' || st[1][1] !== 'nanoseconds')
	errs.push('sample_type[1] is not cpu/nanoseconds: ' + JSON.stringify(st));
if (S(one(P, 'default_sample_type', 0n)) !== 'cpu') errs.push('default_sample_type is not cpu');
if (!(one(P, 'duration_nanos', 0n) > 0n)) errs.push('no duration_nanos');
const pt = (P.period_type || [])[0];
if (!pt || S(one(pt, 'type', 0n)) !== 'cpu') errs.push('period_type is not cpu');
if (!(one(P, 'period', 0n) > 0n)) errs.push('no period');

function byId(list, what) {
	const m = new Map();
	for (const o of list || []) {
		const id = one(o, 'id', 0n);
		if (id === 0n) errs.push(what + ' with id 0');
		if (m.has(id)) errs.push(what + ' id ' + id + ' twice');
		m.set(id, o);
	}
	return m;
}
const maps = byId(P.mapping, 'mapping');
const locs = byId(P.location, 'location');
const funcs = byId(P.function, 'function');

const m0 = (P.mapping || [])[0];
if (!m0 || S(one(m0, 'filename', 0n)) !== mainBin)
	errs.push('mapping[0] is ' + (m0 && S(one(m0, 'filename', 0n))) + ', not ' + mainBin);
if (m0 && !/^[0-9a-f]{40}$/.test(S(one(m0, 'build_id', 0n))))
	errs.push('mapping[0] has no 20-byte hex build-id: ' + S(one(m0, 'build_id', 0n)));
if (m0 && !one(m0, 'has_functions', false)) errs.push('mapping[0] has_functions unset');

for (const [id, l] of locs) {
	const mid = one(l, 'mapping_id', 0n);
	if (mid !== 0n) {
		const m = maps.get(mid);
		if (!m) { errs.push('location ' + id + ': no mapping ' + mid); continue; }
		const a = one(l, 'address', 0n);
		if (a < one(m, 'memory_start', 0n) || a >= one(m, 'memory_limit', 0n))
			errs.push('location ' + id + ' address outside its mapping');
	}
	if (!(l.line || []).length) errs.push('location ' + id + ' has no line');
	for (const ln of l.line || [])
		if (!funcs.has(one(ln, 'function_id', 0n)))
			errs.push('location ' + id + ': no function ' + one(ln, 'function_id', 0n));
}
if (locsOut) {
	const out = [];
	for (const [, l] of locs) {
		const m = maps.get(one(l, 'mapping_id', 0n));
		if (!m || S(one(m, 'filename', 0n)) !== mainBin) continue;
		const off = one(l, 'address', 0n) - one(m, 'memory_start', 0n) + one(m, 'file_offset', 0n);
		const lines = (l.line || []).map((ln) =>
			S(one(funcs.get(one(ln, 'function_id', 0n)) || {}, 'name', 0n)) + ':' + one(ln, 'line', 0n));
		out.push(off.toString(16) + ' ' + lines.join('|'));
	}
	fs.writeFileSync(locsOut, out.join('\n') + '\n');
}
for (const [id, f] of funcs)
	if (!S(one(f, 'name', 0n)) || !S(one(f, 'system_name', 0n)))
		errs.push('function ' + id + ' lacks name or system_name');

const clean = (s) => s.replace(/;/g, ':').replace(/[\x00-\x1f\x7f]/g, '_');
const folded = new Map();
let period = 0n;
for (const s of P.sample || []) {
	const v = s.value || [];
	if (v.length !== st.length) errs.push('sample with ' + v.length + ' values');
	period += v[1] || 0n;
	let comm = '';
	for (const lb of s.label || [])
		if (S(one(lb, 'key', 0n)) === 'comm') comm = S(one(lb, 'str', 0n));
	const frames = [];
	const ids = (s.location_id || []).slice().reverse();	// root first
	for (const id of ids) {
		const l = locs.get(id);
		if (!l) { errs.push('sample names missing location ' + id); continue; }
		const m = maps.get(one(l, 'mapping_id', 0n));
		for (const ln of (l.line || []).slice().reverse()) {
			let name = S(one(funcs.get(one(ln, 'function_id', 0n)) || {}, 'name', 0n));
			if (name === '[unknown]') {
				const dso = m ? S(one(m, 'filename', 0n)) : '[unknown]';
				name = dso === '[unknown]' ? '[unknown]' : '[' + dso.replace(/.*\//, '') + ']';
			}
			frames.push(clean(name));
		}
	}
	const key = [clean(comm).replace(/ /g, '_'), ...frames].join(';');
	folded.set(key, (folded.get(key) || 0n) + (v[0] || 0n));
}
// TOTAL_PERIOD: the cpu column's sum, or "type=sum,type=sum" per column
if (totalPeriod !== undefined && totalPeriod.includes('=')) {
	for (const kv of totalPeriod.split(',')) {
		const [type, want] = kv.split('=');
		const col = st.findIndex((t) => t[0] === type);
		if (col < 0) { errs.push('no sample_type ' + type); continue; }
		let sum = 0n;
		for (const s of P.sample || []) sum += (s.value || [])[col] || 0n;
		if (sum !== BigInt(want)) errs.push('sum of ' + type + ' values ' + sum + ' != ' + want);
	}
} else if (totalPeriod !== undefined && period !== BigInt(totalPeriod)) {
	errs.push('sum of cpu values ' + period + ' != recorded periods ' + totalPeriod);
}
if (errs.length) {
	console.error(errs.slice(0, 20).join('\n'));
	process.exit(1);
}
for (const [k, v] of folded) console.log(k + ' ' + v);
