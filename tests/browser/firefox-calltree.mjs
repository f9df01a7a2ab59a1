// Load a Gecko profile (sfprof export -f firefox) into the Firefox
// Profiler's own code — its importer, upgraders, call tree and CPU-usage
// logic, as the profiler's team ships them in @firefox-devtools/profiler-cli
// — and write what the profiler shows, for the caller to compare with the
// program's own figures:
//
//   meta interval_ms I
//   thread TID cpu_ms C samples N off_samples M markers K
//   fn TID NAME on_ns X off_ns Y
//
// cpu_ms: the thread's CPU use as the profiler computes it (threadCPUDelta);
// off_samples: samples whose stack ends in the "Off-CPU" leaf; markers:
// the thread's Off-CPU markers; per function (every function of the
// thread's top-down call tree, each counted once per path), the samples
// under it with and without the Off-CPU leaf, times the interval.
//
// Usage: node firefox-calltree.mjs PROFILE.json OUT
// The profiler CLI answers through a daemon that holds the loaded profile.
// Its `load` gives a daemon 500 ms to start, which a busy machine misses:
// the daemon is started here in its foreground form (the command the CLI
// itself suggests for that case) in a session directory of the test's
// own, waited for as long as it takes, stopped at the end, and a daemon
// that dies by itself is a failure.  Exits 1 when the profiler fails or
// refuses the file.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const require = createRequire(import.meta.url);
const cli = require.resolve('@firefox-devtools/profiler-cli/dist/profiler-cli.js');
const [, , file, out] = process.argv;
const dir = join(process.env.SFP_TEST_TMP || '/tmp', 'profiler-cli');
mkdirSync(dir, { recursive: true });
const session = 'sfp' + process.pid;
const env = { ...process.env, HOME: dir, PROFILER_CLI_SESSION_DIR: dir };
const pq = (...args) => execFileSync(process.execPath, [cli, ...args, '--session', session],
	{ env, encoding: 'utf8', timeout: 120000, maxBuffer: 256 << 20,
	  stdio: ['ignore', 'pipe', 'pipe'] });
const pqj = (...args) => JSON.parse(pq(...args, '--json'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const daemon = spawn(process.execPath, [cli, '--daemon', resolve(file), '--session', session],
	{ env, stdio: ['ignore', 'ignore', 'pipe'] });
let daemonErr = '', exited = null;
daemon.stderr.on('data', (d) => { daemonErr += d; });
const gone = new Promise((r) => daemon.on('exit', (code, sig) => { exited = { code, sig }; r(); }));

let rc = 0;
try {
	// The daemon writes SESSION.json, then listens on SESSION.sock
	// (SESSION.error if the load fails).  A CLI call that finds the json
	// but cannot connect takes the session for a dead one and deletes
	// its json: every later call then says "Unknown session ...: no
	// metadata found" while the daemon runs on.  On a busy machine that
	// window is wide, so the CLI is first run once both files exist,
	// watched here for up to four minutes (also sparing the daemon the
	// CPU of a CLI start every half second).
	const metaFile = join(dir, session + '.json'), sockFile = join(dir, session + '.sock');
	const errFile = join(dir, session + '.error');
	for (let i = 0; !existsSync(metaFile) || !existsSync(sockFile); i++) {
		if (exited)
			throw new Error('the daemon exited while loading: ' + JSON.stringify(exited) + ' ' + daemonErr);
		if (existsSync(errFile))
			throw new Error('the daemon failed to load the file: ' + readFileSync(errFile, 'utf8'));
		if (i >= 1200)
			throw new Error('the daemon did not start within 240 s');
		await sleep(200);
	}
	// its answer: a few tries
	for (let i = 0; ; i++) {
		try {
			pqj('profile', 'meta');
			break;
		} catch (e) {
			if (i >= 20 || exited)
				throw e;
			await sleep(500);
		}
	}
	const meta = pqj('profile', 'meta');
	const iv = meta.interval;
	const lines = [`meta interval_ms ${iv}`];
	const info = pqj('profile', 'info', '--all');
	for (const proc of info.processes)
		for (const th of proc.threads) {
			const h = th.threadHandle;
			const tree = pqj('thread', 'samples-top-down', '--thread', h,
				'--include-idle').regularCallTree;
			const on = new Map(), off = new Map();
			let offN = 0;
			// every node: its Off-CPU leaf samples and the rest, added to
			// each function on its path once
			const walk = (node, path) => {
				const kids = node.children || [];
				const isOff = node.name === 'Off-CPU';
				const p = node.name === '<root>' ? path : new Set([...path, node.name]);
				const self = node.selfSamples || 0;
				if (self) {
					const m = isOff ? off : on;
					for (const fn of p) m.set(fn, (m.get(fn) || 0) + self);
					if (isOff) offN += self;
				}
				for (const k of kids) walk(k, p);
			};
			walk(tree, new Set());
			const mk = pqj('thread', 'markers', '--thread', h);
			const nOff = (mk.byType || []).filter((t) => t.markerName.startsWith('Off-CPU'))
				.reduce((a, t) => a + t.count, 0);
			lines.push(`thread ${th.tid} cpu_ms ${th.cpuMs} samples ${tree.totalSamples} ` +
				`off_samples ${offN} markers ${nOff}`);
			const fns = new Set([...on.keys(), ...off.keys()]);
			for (const fn of fns)
				if (!/\s/.test(fn))
					lines.push(`fn ${th.tid} ${fn} on_ns ${Math.round((on.get(fn) || 0) * iv * 1e6)} ` +
						`off_ns ${Math.round((off.get(fn) || 0) * iv * 1e6)}`);
		}
	writeFileSync(out, lines.join('\n') + '\n');
} catch (e) {
	console.error('firefox profiler: ' + (e.stderr || e.message || e));
	try {
		// the daemon's own log, its last lines
		const log = readFileSync(join(dir, session + '.log'), 'utf8').trim().split('\n');
		console.error('firefox profiler: daemon log: ' + log.slice(-5).join('\n  '));
	} catch {}
	if (daemonErr)
		console.error('firefox profiler: daemon stderr: ' + daemonErr.trim().split('\n').slice(-5).join('\n  '));
	rc = 1;
} finally {
	if (exited) {
		console.error('firefox profiler: the daemon died: ' + JSON.stringify(exited) + ' ' + daemonErr);
		rc = 1;
	} else {
		try {
			pq('stop');
		} catch (e) {
			console.error('firefox profiler: stop: ' + (e.stderr || e.message));
		}
		const t = setTimeout(() => daemon.kill('SIGKILL'), 10000);
		await gone;
		clearTimeout(t);
		if (exited.code !== 0) {
			console.error('firefox profiler: the daemon ended with ' + JSON.stringify(exited));
			rc = 1;
		}
	}
}
process.exit(rc);
