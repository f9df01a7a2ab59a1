#!/bin/sh
# Containers whose images put different builds at one path (issue 35, the
# recording side): four "images" of tests/data/containers/ns-work.c, each
# built with its own layout (code moved by PAD bytes, frames of FRAME
# bytes) and its own function names, each copied to the SAME path in its
# own tmpfs and run at once in its own mount+pid namespace; the fourth
# binary deleted once it runs; a fifth container runs the first image's
# build at another path.  Then, of sfprof record -a and of record -p:
#  - >= 99 % of each container's samples have a stack whose frames in
#    the program are its own build's chain (leaf/middle/outer) up to its
#    main, read by address against `nm` of that build (what the
#    recording's unwinder made; naming is the readers' side);
#  - perf script of the record -a file: the same (a second opinion);
#  - every MMAP2 of each container's program carries that build's id
#    (`readelf -n`), as `perf script --show-mmap-events` reads them;
#  - (record -p) the build-id cache holds each build's file, byte for
#    byte;
#  - the two paths of one build-id shared one unwind table (record -v
#    says which modules were loaded: one for that build-id).
# Needs root, unshare(1) that can make the namespaces, gcc, nm, readelf;
# perf for the MMAP2 check.
# checks: 18
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/containers-subr.sh"

ct_usable || skip_rest "containers-shared-path" "$CT_WHY"
SRC=$SFP_TEST_DATA/containers/ns-work.c
# name PAD FRAME: four layouts
IMAGES="c1:0:1 c2:4096:200 c3:12288:40 c4:8192:1000"
for im in $IMAGES; do
	set -- $(echo "$im" | tr : ' ')
	v=$1 pad=$2 frame=$3
	if ! ct_build $v -DPAD=$pad -DFRAME=$frame; then
		fail "containers-shared-path: build $v ($(head -1 "$TMP/cc.err"))"
		exit 0
	fi
done

NS=$TMP/nsroot		# empty here; a tmpfs in each namespace
mkdir -p "$NS"

# Each BINARY as $NS/FILE, pid 1 of new namespaces ($TMP/NAME.pid: its
# pid out here).
PIDS=
for c in c1:c1:server c2:c2:server c3:c3:server c4:c4:server c5:c1:alt; do
	set -- $(echo "$c" | tr : ' ')
	ct_start $1 "$TMP/$2" $3
	p=$(cat "$TMP/$1.pid")
	if [ -z "$p" ]; then
		fail "containers-shared-path: $1 did not start in its namespaces"
		sed 's/^/  /' "$TMP/$1.out" | head -5
		exit 0
	fi
	PIDS=${PIDS:+$PIDS,}$p
done
# The fourth image's binary deleted while it runs.
if ! nsenter -t "$(cat "$TMP/c4.pid")" -m rm "$NS/server" ||
   ! grep -q "(deleted)" /proc/"$(cat "$TMP/c4.pid")"/maps; then
	fail "containers-shared-path: delete c4's binary inside its namespace"
	exit 0
fi

# Each build's id and text symbols (decimal start, size, name).
for v in c1 c2 c3 c4; do
	ct_bid "$TMP/$v" > "$TMP/$v.bid"
	nm -S --defined-only "$TMP/$v" |
		awk '$3 ~ /^[Tt]$/ { print $1, $2, $4 }' |
		while read -r a s n; do
			echo "$((0x$a)) $((0x$s)) $n"
		done > "$TMP/$v.syms"
	if [ ! -s "$TMP/$v.bid" ] || [ ! -s "$TMP/$v.syms" ]; then
		fail "containers-shared-path: readelf/nm of $v"
		exit 0
	fi
done
cp "$TMP/c1.bid" "$TMP/c5.bid"
cp "$TMP/c1.syms" "$TMP/c5.syms"

# own_stacks PID BUILD FILE < script: "samples complete": complete = the
# frames in the program up to main are BUILD's chain functions (by
# address, nm's table), and main is reached.
own_stacks() {
	awk -v pid="$1" -v pfx="$2" -v file="$3" -v syms="$TMP/$2.syms" '
	function hex(s,   i, c, v) {
		s = tolower(s); v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1))
			if (!c) return -1
			v = v * 16 + c - 1
		}
		return v
	}
	BEGIN {
		while ((getline l < syms) > 0) {
			split(l, f, " "); ns++
			st[ns] = f[1]; sz[ns] = f[2]; nm[ns] = f[3]
		}
	}
	function fn(a,   i) {
		for (i = 1; i <= ns; i++)
			if (a >= st[i] && a < st[i] + sz[i]) return nm[i]
		return ""
	}
	function flush() {
		if (!cur) return
		n++; if (ok && m) good++
		cur = 0
	}
	/^[^ \t]/ { flush(); cur = ($2 == pid); ok = 1; m = 0; next }
	/^$/ { flush(); next }
	cur && !m && index($0, "/nsroot/" file) {
		name = fn(hex($1))
		if (name == "main") m = 1
		else if (name != pfx "_leaf" && name != pfx "_middle" &&
			 name != pfx "_outer") ok = 0
	}
	END { flush(); printf "%d %d\n", n, good }'
}

# check_stacks NAME SCRIPT_OUTPUT: every container's stacks its own,
# complete; "quiet": only the failures said (the caller passes once).
check_stacks() {
	name=$1 out=$2 mode=$3
	for c in c1 c2 c3 c4 c5; do
		file=server
		[ $c = c5 ] && file=alt
		build=$c
		[ $c = c5 ] && build=c1
		set -- $(own_stacks "$(cat "$TMP/$c.pid")" "$build" "$file" < "$out")
		if [ "$1" -ge 10 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ]; then
			[ "$mode" = quiet ] || pass "$name: $c's stacks complete, in its own build"
		else
			fail "$name: $c's stacks complete, in its own build"
			echo "  $1 samples of pid $(cat "$TMP/$c.pid"), $2 complete in build $build (need >= 10 and 99 %)"
			awk -v p="$(cat "$TMP/$c.pid")" '/^[^ \t]/ { s = ($2 == p) } s' \
				"$out" | head -8 | sed 's/^/  /'
			BAD=1
		fi
	done
}

# sfprof_stacks NAME DATA: check_stacks on sfprof script's output.
sfprof_stacks() {
	name=$1 data=$2
	if ! sfp script -i "$data" > "$TMP/script.out" 2>"$TMP/script.err"; then
		fail "$name: sfprof script failed"
		sed 's/^/  /' "$TMP/script.err" | head -5
		return
	fi
	check_stacks "$name" "$TMP/script.out"
	# Names: the readers (perf/machine.c, the symbolizer) keep each
	# container's file its own: its samples name its own build's
	# functions and never another build's.
	bad=
	for c in c1 c2 c3 c4 c5; do
		build=$c
		[ $c = c5 ] && build=c1
		set -- $(awk -v p="$(cat "$TMP/$c.pid")" -v b="$build" '
			function flush() { if (s) { n++; g += h; w += x } }
			/^[^ \t]/ { flush(); s = ($2 == p); h = x = 0; next }
			s && index($0, " " b "_leaf+") { h = 1 }
			s && match($0, / c[0-9]_[a-z]+\+/) &&
			     substr($0, RSTART + 1, 2) != b { x = 1 }
			END { flush(); print n + 0, g + 0, w + 0 }' \
			"$TMP/script.out")
		if [ "$1" -lt 10 ] || [ $(($2 * 100)) -lt $(($1 * 95)) ] ||
		   [ "$3" != 0 ]; then
			bad="$bad $c($2 of $1 named ${build}_leaf, $3 with another build's names)"
		fi
	done
	if [ -z "$bad" ]; then
		pass "$name: sfprof script names each container's samples by its own build"
	else
		fail "$name: sfprof script names each container's samples by its own build:$bad"
		BAD=1
	fi
}

# check_mmaps NAME DATA: each container's program MMAP2s carry its id.
check_mmaps() {
	name=$1 data=$2
	if ! command -v perf > /dev/null 2>&1; then
		skip "$name: MMAP2 build-ids" "perf not installed"
		return
	fi
	if ! perf script -i "$data" --show-mmap-events > "$TMP/mmap.out" \
		2>"$TMP/mmap.err"; then
		fail "$name: MMAP2 build-ids (perf script failed)"
		sed 's/^/  /' "$TMP/mmap.err" | head -5
		return
	fi
	bad=
	for c in c1 c2 c3 c4 c5; do
		p=$(cat "$TMP/$c.pid")
		id=$(cat "$TMP/$c.bid")
		set -- $(awk -v p="$p" -v id="$id" '
			/PERF_RECORD_MMAP2/ && index($0, " " p "/") && index($0, "/nsroot/") {
				n++; if (index($0, "<" id ">")) g++ }
			END { print n + 0, g + 0 }' "$TMP/mmap.out")
		if [ "$1" -eq 0 ] || [ "$1" -ne "$2" ]; then
			bad="$bad $c($2 of $1 with $id)"
		fi
	done
	if [ -z "$bad" ]; then
		pass "$name: every MMAP2 of each container's program carries its build-id"
	else
		fail "$name: every MMAP2 of each container's program carries its build-id:$bad"
		grep "PERF_RECORD_MMAP2.*/nsroot/" "$TMP/mmap.out" | head -6 | sed 's/^/  /'
	fi
}

# check_cache NAME DIR: each build's file in the build-id cache.
check_cache() {
	name=$1 dir=$2
	bad=
	for v in c1 c2 c3 c4; do
		id=$(cat "$TMP/$v.bid")
		f=$dir/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)/elf
		cmp -s "$f" "$TMP/$v" || bad="$bad $v"
	done
	if [ -z "$bad" ]; then
		pass "$name: the build-id cache holds each build's file"
	else
		fail "$name: the build-id cache holds each build's file (missing or wrong:$bad)"
		find "$dir" -path '*nsroot*' | head -8 | sed 's/^/  /'
	fi
}

# record -a, in the inline form that perf 6.1 reads: a few seconds, the
# machine's other processes too.
# (The build-id cache is checked with record -p: one code path, and -a
# would copy every DSO of the machine.)
check_rc "containers-shared-path: record -a" 0 "$SFPROF" record -v -a \
	--inline --duration 3 -o "$TMP/a.data" --no-buildid-cache
cp "$TMP/rc.out" "$TMP/a.err"
sfprof_stacks "containers-shared-path: record -a" "$TMP/a.data"
# perf script of the same recording, the containers still running (perf
# reads their files in their namespaces): the same stacks.
if ! command -v perf > /dev/null 2>&1; then
	skip "containers-shared-path: perf script of record -a" "perf not installed"
elif ! perf script -i "$TMP/a.data" > "$TMP/perf.out" 2> "$TMP/perf.err"; then
	fail "containers-shared-path: perf script of record -a (perf script failed)"
	sed 's/^/  /' "$TMP/perf.err" | head -5
else
	BAD=
	check_stacks "containers-shared-path: perf script of record -a" \
		"$TMP/perf.out" quiet
	[ -n "$BAD" ] ||
		pass "containers-shared-path: perf script of record -a: each container's stacks complete, in its own build"
fi
check_mmaps "containers-shared-path: record -a" "$TMP/a.data"
# One build at two paths (c1 and c5), in two mount namespaces: one file
# for the unwinder, one table loaded.
id1=$(cat "$TMP/c1.bid")
n=$(grep -c "^sfprof: debug: module .* (build-id $id1) loaded" "$TMP/a.err")
if [ "$n" -eq 1 ]; then
	pass "containers-shared-path: one build at two paths, one table loaded"
else
	fail "containers-shared-path: one build at two paths, one table loaded ($n loads)"
	grep "build-id $id1" "$TMP/a.err" | head -4 | sed 's/^/  /'
fi

# record -p of the five programs, in the deferred form (sfprof's own,
# which perf 6.1 cannot read: no perf check of this file).
check_rc "containers-shared-path: record -p" 0 "$SFPROF" record -q \
	-p "$PIDS" --duration 2 -o "$TMP/p.data" --buildid-dir "$TMP/bid-p"
sfprof_stacks "containers-shared-path: record -p" "$TMP/p.data"
check_cache "containers-shared-path: record -p" "$TMP/bid-p"
