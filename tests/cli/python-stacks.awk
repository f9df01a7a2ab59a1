# Stacks of a `perf script` / `sfprof script` listing of a Python
# workload (tests/cli/run-python-perf.sh): header lines start a sample,
# tab-indented lines are its frames, leaf first, "ADDR SYM[+OFF] (DSO)".
# Variables: map (the interpreter's /tmp/perf-PID.map), wl (the workload's
# path), depth (its recursion depth).  Prints
#   "SAMPLES ROOT PYFRAMES NAMED ORDER_CHECKED ORDER_BAD"
# ROOT: samples whose outermost frame is _start, or ld.so's _dl_start_user
# for samples taken in the loader before the program's _start runs (the
# workload is one thread, so every stack belongs to the main thread).
# PYFRAMES: frames in the perf map's memory; NAMED: those named by an
# entry of the map, "py::..." as written there.  ORDER: the Python frames
# of root-reaching samples inside the workload's functions, leaf to root,
# must be [py::leaf] py::rec x (depth + 1, all of them when leaf is there)
# py::<module>, nothing after it.
function name_of(line,   s) {
	s = line
	sub(/^\t */, "", s)
	sub(/^[0-9a-f]+ /, "", s)
	sub(/ \([^()]*\)$/, "", s)
	sub(/\+0x[0-9a-f]+$/, "", s)
	return s
}
function dso_of(line,   s) {
	if (!match(line, /\([^()]*\)$/))
		return ""
	return substr(line, RSTART + 1, RLENGTH - 2)
}
function finish(   i, j, k, recs, leaf) {
	if (!insample)
		return
	samples++
	if (nf > 0 && (fr[nf] == "_start" || fr[nf] == "_dl_start_user")) {
		root++
		if (np > 0 && (py[1] == LEAF || py[1] == REC)) {
			checked++
			i = 1
			leaf = py[1] == LEAF
			if (leaf)
				i++
			for (recs = 0; i <= np && py[i] == REC; i++)
				recs++
			if (recs < 1 || recs > depth + 1 ||
			    (leaf && recs != depth + 1) || i != np ||
			    py[i] != MOD) {
				bad++
				if (shown++ < 3) {
					printf "ORDER %d:", samples > "/dev/stderr"
					for (k = 1; k <= np; k++)
						printf " %s", py[k] > "/dev/stderr"
					printf "\n" > "/dev/stderr"
				}
			}
		}
	}
	nf = np = 0
}
BEGIN {
	LEAF = "py::leaf:" wl
	REC = "py::rec:" wl
	MOD = "py::<module>:" wl
	while ((getline l < map) > 0) {
		sub(/^[0-9a-fA-F]+ [0-9a-fA-F]+ /, "", l)
		inmap[l] = 1
	}
}
/^[^\t]/ { finish(); insample = 1; next }
/^\t/ {
	n = name_of($0)
	fr[++nf] = n
	if (dso_of($0) == map) {
		pyframes++
		if (n in inmap && n ~ /^py::/)
			named++
		else if (unnamed++ < 3)
			print "UNNAMED " $0 > "/dev/stderr"
		py[++np] = n
	}
}
END {
	finish()
	printf "%d %d %d %d %d %d\n", samples, root, pyframes, named, checked, bad
}
