#!/bin/sh
# An image with another libc6 build than the host's, at the host's own
# path (issue 35): the other libc6 version the Debian archive carries
# (apt-cache madison; bookworm-security holds an older one than the
# host's bookworm point release), downloaded with `apt-get download` at
# test time (the .deb kept under $SFP_BUILD/debs for reruns), unpacked as
# a merged-/usr image root, so that its program maps
# /usr/lib/x86_64-linux-gnu/libc.so.6 exactly as the host's processes do.
# One program (tests/data/containers/libc-work.c: its time in libc's
# strverscmp, which starts at another address in each build) runs in
# the image (mount+pid namespaces, a tmpfs root, pivot_root) and on the host,
# at once.
#  - sfprof agent, a pull of each pid: the libc mapping carries that
#    process's own libc build-id (readelf -n of its file); the leaf of
#    its libc samples is named as `nm -D` of its own libc names that
#    offset, and the stacks reach main through the program's functions
#    (the unwind table of the right libc);
#  - record -a + script: each libc leaf named "sym+off" exactly as nm -D
#    of the process's own libc gives for the address (the maps give the
#    file offset), stacks to main; while both run and after they are gone
#    (from the build-id cache, which holds the image's libc byte for
#    byte);
#  - report --sort pid,dso: each process's libc row marked with its own
#    short build-id; export pprof: libc's mappings carry exactly the two
#    build-ids.
# A failed download is a FAIL with apt's message.  Needs root, unshare(1)
# that can make the namespaces, apt-get, dpkg-deb, gcc, nm,
# readelf, pivot_root, curl, protoc with the pprof schema.
# checks: 11
. "$(dirname "$0")/test-subr.sh"
. "$(dirname "$0")/containers-subr.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROTO=$ROOT/../shared/testdata/proto
NCHECKS=11
N="containers, another libc at the host's path"

skip_all() {
	for i in $(seq $NCHECKS); do skip "$N $i" "$1"; done
	exit 0
}
fail_all() {
	for i in $(seq $NCHECKS); do fail "$N: $1"; done
	[ -n "$2" ] && sed 's/^/  /' "$2" | tail -5
	exit 0
}
ct_usable || skip_all "$CT_WHY"
for t in gcc nm readelf apt-get apt-cache dpkg-deb pivot_root curl protoc python3 perf; do
	command -v $t > /dev/null || skip_all "$t missing (make deps)"
done
[ -f "$PROTO/pprof/profile.proto" ] || skip_all "$PROTO/pprof/profile.proto missing"

# The program, on the host and in the image (one binary).
SRC=$SFP_TEST_DATA/containers/libc-work.c
gcc -O2 -fomit-frame-pointer -fno-inline -o "$TMP/libc-work" "$SRC" \
	2> "$TMP/cc.err" || fail_all "build libc-work" "$TMP/cc.err"
# The host's libc as the program maps it.
"$TMP/libc-work" > "$TMP/host.out" 2>&1 &
HPID=$!
CT_PIDS="$CT_PIDS $HPID"
i=0
while ! grep -q ready "$TMP/host.out" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
LIBC=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' /proc/$HPID/maps)
[ -n "$LIBC" ] || fail_all "the host's program maps no libc.so.6"

# The other libc6 version of the archive: an older one than the host's.
ARCH=$(dpkg --print-architecture)
HOSTVER=$(dpkg-query -W -f '${Version}' "libc6:$ARCH")
apt-cache madison libc6 > "$TMP/madison" 2>&1
OLDVER=
for v in $(awk -F'|' '{ gsub(/ /, "", $2); print $2 }' "$TMP/madison" | sort -u); do
	if dpkg --compare-versions "$v" lt "$HOSTVER"; then
		OLDVER=$v
		break
	fi
done
[ -n "$OLDVER" ] ||
	fail_all "apt-cache madison libc6 lists no version older than the host's $HOSTVER" "$TMP/madison"
DEBS=${SFP_BUILD:-$TMP}/debs
mkdir -p "$DEBS"
DEB=$DEBS/libc6_$(echo "$OLDVER" | sed 's/:/%3a/')_$ARCH.deb
if [ ! -s "$DEB" ]; then
	# apt-get download writes into the current directory (as root, it
	# warns that _apt cannot: harmless)
	if ! (cd "$DEBS" && apt-get download "libc6:$ARCH=$OLDVER") > "$TMP/apt.log" 2>&1 ||
	   [ ! -s "$DEB" ]; then
		rm -f "$DEB"
		fail_all "apt-get download libc6:$ARCH=$OLDVER failed" "$TMP/apt.log"
	fi
fi
# The image: libc6's files in a merged-/usr root, and the program.
IMGSRC=$TMP/image
mkdir -p "$IMGSRC/x" "$IMGSRC/usr" "$IMGSRC/srv"
if ! dpkg-deb -x "$DEB" "$IMGSRC/x" 2> "$TMP/deb.err"; then
	rm -f "$DEB"	# not a package: fetched again next time
	fail_all "dpkg-deb -x $DEB" "$TMP/deb.err"
fi
for d in "$IMGSRC"/x/*; do
	b=${d##*/}
	case $b in
	lib*)	mkdir -p "$IMGSRC/usr/$b"
		cp -a "$d/." "$IMGSRC/usr/$b/"
		ln -s "usr/$b" "$IMGSRC/$b" ;;
	*)	cp -a "$d" "$IMGSRC/" ;;
	esac
done
rm -rf "$IMGSRC/x"
cp "$TMP/libc-work" "$IMGSRC/srv/libc-work"
ILIBC=$IMGSRC$LIBC
[ -f "$ILIBC" ] || fail_all "libc6 $OLDVER has no $LIBC (merged /usr)"
HBID=$(ct_bid "$LIBC")
IBID=$(ct_bid "$ILIBC")
if [ -z "$HBID" ] || [ -z "$IBID" ] || [ "$HBID" = "$IBID" ]; then
	fail_all "two libc builds with two build-ids (host $HOSTVER: $HBID; image $OLDVER: $IBID)"
fi
# nm -D's text symbols of each: "start size name" (decimal)
syms() {
	nm -D -S --defined-only "$1" | awk '$3 ~ /^[TtWwi]$/ && NF == 4 { print $1, $2, $4 }' |
		while read -r a s n; do echo "$((0x$a)) $((0x$s)) ${n%%@*}"; done > "$2"
}
syms "$LIBC" "$TMP/host.syms"
syms "$ILIBC" "$TMP/image.syms"
hs=$(awk '$3 == "strverscmp" { print $1; exit }' "$TMP/host.syms")
is=$(awk '$3 == "strverscmp" { print $1; exit }' "$TMP/image.syms")
if [ -z "$hs" ] || [ -z "$is" ] || [ "$hs" = "$is" ]; then
	fail_all "strverscmp at another address in the two builds (nm -D: host ${hs:-?}, image ${is:-?})"
fi

# The container: the image copied into a tmpfs, made its root.
IMG=$TMP/root
mkdir -p "$IMG"
# pivot_root as container runtimes do: the program's paths are the
# image's own also as seen from out here (a plain chroot would show the
# host's path to the image in /proc/PID/maps).  (The old root stays
# mounted at /old: the image has no umount to run.)
ct_run img "mount --make-rprivate / && mount -t tmpfs tmpfs '$IMG' &&
	cp -a '$IMGSRC/.' '$IMG/' && mkdir '$IMG/old' && cd '$IMG' &&
	pivot_root . old && exec /srv/libc-work"
CPID=$PID_img
[ -n "$CPID" ] || fail_all "the image's program did not start" "$TMP/img.out"
# Both map libc at the one path; the container's is the image's build.
grep -q " $LIBC\$" /proc/$CPID/maps ||
	fail_all "the image's program maps no $LIBC" /proc/$CPID/maps
[ "$(ct_bid "/proc/$CPID/root$LIBC")" = "$IBID" ] ||
	fail_all "the image's program's $LIBC is not the image's build"
# the maps' libc lines of each, kept for after they are gone
grep " $LIBC\$" /proc/$CPID/maps > "$TMP/$CPID.maps"
grep " $LIBC\$" /proc/$HPID/maps > "$TMP/$HPID.maps"
eval "SYMS_$CPID=\$TMP/image.syms SYMS_$HPID=\$TMP/host.syms"

# judge PID [leaf]: of PID's samples read from stdin ("pid offset name
# stack"; offset hex in libc's file, name "sym+0xoff" or "sym"), those
# with a libc leaf: "total right" where right = the name is nm -D's for
# that offset in PID's own libc and the stack reaches main through the
# program's chain (with leaf: the name only; field 4 is then a key).
# The wrong lines are added to $TMP/wrong, the right ones to $TMP/right.
judge() {
	eval "_syms=\$SYMS_$1"
	awk -v pid="$1" -v syms="$_syms" -v wrong="$TMP/wrong" \
		-v good="$TMP/right" -v leaf="$2" '
	function hex(s,   i, c, v) {
		s = tolower(s); sub(/^0x/, "", s); v = 0
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
	# is name (sym or sym+0xoff) what nm says of offset a?
	function right(a, name,   i, s, o, p) {
		p = index(name, "+")
		s = p ? substr(name, 1, p - 1) : name
		o = p ? hex(substr(name, p + 1)) : -1
		for (i = 1; i <= ns; i++)
			if (a >= st[i] && a < st[i] + sz[i] && nm[i] == s &&
			    (o < 0 || o == a - st[i]))
				return 1
		return 0
	}
	$1 == pid {
		n++
		if (right(hex($2), $3) &&
		    (leaf || $4 ~ /(^|;)main;work_outer;work_inner;[^;]+$/)) {
			g++
			print >> good
		} else {
			print >> wrong
		}
	}
	END { print n + 0, g + 0 }'
}

# script_leaves SCRIPT-OUTPUT: "pid offset name stack" of each sample
# whose leaf is in libc (offset from the pid's maps lines)
script_leaves() {
	for p in $CPID $HPID; do
		awk -v pid="$p" -v maps="$TMP/$p.maps" -v lib="($LIBC)" '
		function hex(s,   i, c, v) {
			s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		BEGIN {
			while ((getline l < maps) > 0) {
				split(l, f, " "); split(f[1], r, "-"); nm++
				lo[nm] = hex(r[1]); hi[nm] = hex(r[2]); off[nm] = hex(f[3])
			}
		}
		function flush(   i, a, o) {
			if (!cur || !nf) return
			if (file[1] == lib) {
				# sfprof script prints the address in the object
				# (perf script: in the process); either way the
				# offset in the file (text: p_vaddr == p_offset)
				a = hex(addr[1]); o = a
				for (i = 1; i <= nm; i++)
					if (a >= lo[i] && a < hi[i]) o = a - lo[i] + off[i]
				s = fn[nf]
				for (i = nf - 1; i >= 1; i--) s = s ";" fn[i]
				printf "%s %x %s %s\n", pid, o, fn[1], s
			}
		}
		/^[^ \t]/ { flush(); cur = ($2 == pid); nf = 0; next }
		/^$/ { flush(); cur = 0; next }
		cur { nf++; addr[nf] = $1; fn[nf] = $2; file[nf] = $NF
		      sub(/\+0x[0-9a-f]+$/, "", fn[nf])
		      if (nf == 1) fn[nf] = $2 }
		END { flush() }' "$1"
	done
}
# the stack's own frames without offsets, the leaf with its offset
# (judge reads "sym+0xoff" in field 3 and the plain chain in field 4)

# both_right FILE-OF-LEAVES [leaf]: "pid total right" per process, and 0
# when each has >= 20 libc samples, >= 99 % right
both_right() {
	_ok=0
	_f=$1
	_leaf=$2
	WHY=
	: > "$TMP/wrong"
	: > "$TMP/right"
	for p in $CPID $HPID; do
		set -- $(judge "$p" $_leaf < "$_f")
		[ $p = "$CPID" ] && w=image || w=host
		WHY="$WHY $w: $2 of $1 right;"
		[ "$1" -ge 20 ] && [ $(($2 * 100)) -ge $(($1 * 99)) ] || _ok=1
	done
	return $_ok
}

# --- sfprof agent: a pull of each pid, at once ---
. "$HERE/agent-subr.sh"
EXTRA_CLEANUP=ct_kill
agent_start -F 199 --interval 1h --comm '^libc-work$'
[ -n "$APORT" ] || fail_all "the agent did not start" "$TMP/agent.err"
# The pulls once both libcs' tables are built (agent-subr.sh).
tables_ready || echo "  the agent's tables still pending after 60 s"
for p in $CPID $HPID; do
	curl -sf -m 60 -o "$TMP/pull$p.pb.gz" \
		"http://127.0.0.1:$APORT/debug/pprof/profile?seconds=4&pid=$p" &
	eval "CURL_$p=$!"
done
for p in $CPID $HPID; do
	eval "wait \$CURL_$p" || echo "  curl for pid $p: exit $?"
done
kill -TERM "$AGENT_PID"
agent_end 20 || echo "  agent: exit $rc"
ok=1 why=
: > "$TMP/pulls"
for p in $CPID $HPID; do
	[ $p = "$CPID" ] && want=$IBID || want=$HBID
	if ! gunzip -c "$TMP/pull$p.pb.gz" > "$TMP/pull$p.pb" 2>/dev/null ||
	   ! protoc --proto_path="$PROTO/pprof" --decode perftools.profiles.Profile \
		"$PROTO/pprof/profile.proto" < "$TMP/pull$p.pb" > "$TMP/pull$p.txt" 2> "$TMP/protoc.err"; then
		ok=0 why="$why pid $p: no pprof ($(head -1 "$TMP/protoc.err"));"
		continue
	fi
	got=$(python3 "$HERE/push-check.py" buildids-pprof "$TMP/pull$p.txt" |
		awk -v l="$LIBC" '$1 == l { print $2 }' | sort -u | tr '\n' ' ')
	[ "$got" = "$want " ] || ok=0
	why="$why pid $p: libc $got(want $want);"
	# one line per sample: "pid offset name stack" (the value: as many lines)
	python3 "$HERE/push-check.py" leaves-pprof "$TMP/pull$p.txt" |
		awk -v p="$p" -v l="$LIBC" '$1 == l { for (i = 0; i < $6; i++) print p, $3, $4, $5 }' \
		>> "$TMP/pulls"
done
if [ $ok = 1 ]; then
	pass "$N: agent: each pull's libc mapping carries its own libc's build-id (readelf -n)"
else
	fail "$N: agent: each pull's libc mapping carries its own libc's build-id"
	echo " $why"
fi
if both_right "$TMP/pulls"; then
	pass "$N: agent: each process's libc leaves named as nm -D of its own libc, stacks to main ($WHY)"
else
	fail "$N: agent: each process's libc leaves named by its own libc, stacks to main"
	echo " $WHY"
	sort "$TMP/wrong" | uniq -c | sort -rn | head -6 | sed 's/^/  /'
fi

# --- record -a, script/report/export while they run ---
BID=$TMP/bid
sfp record -a -F 499 --duration 3 --buildid-dir "$BID" -o "$TMP/rec.data" \
	> "$TMP/rec.log" 2>&1
sfp script -i "$TMP/rec.data" --buildid-dir "$BID" > "$TMP/live.txt" 2> "$TMP/live.err"
script_leaves "$TMP/live.txt" > "$TMP/live.leaves"
if both_right "$TMP/live.leaves"; then
	pass "$N: record -a + script while they run: each libc leaf named as nm -D of its own libc at that offset, stacks to main ($WHY)"
else
	fail "$N: record -a + script while they run: libc leaves named by each process's own libc"
	echo " $WHY"
	sort "$TMP/wrong" | uniq -c | sort -rn | head -6 | sed 's/^/  /'
fi
sfp report -i "$TMP/rec.data" --buildid-dir "$BID" --sort pid,dso \
	--no-children -g none --comm libc-work > "$TMP/rep.txt" 2>&1
ok=1
for p in $CPID $HPID; do
	[ $p = "$CPID" ] && b=$IBID || b=$HBID
	grep -Eq "^ +[0-9.]+% +$p:libc-work +libc\.so\.6 \[$(echo "$b" | cut -c1-8)\]\$" \
		"$TMP/rep.txt" || ok=0
done
if [ $ok = 1 ]; then
	pass "$N: report --sort pid,dso: each process's libc row marked with its own short build-id"
else
	fail "$N: report --sort pid,dso marks each process's libc with its own short build-id"
	grep -v '^#' "$TMP/rep.txt" | grep . | head -8 | sed 's/^/  /'
fi
sfp export -i "$TMP/rec.data" --buildid-dir "$BID" --format pprof \
	-o "$TMP/exp.pb.gz" > /dev/null 2>&1
gunzip -c "$TMP/exp.pb.gz" > "$TMP/exp.pb" 2>/dev/null
protoc --proto_path="$PROTO/pprof" --decode perftools.profiles.Profile \
	"$PROTO/pprof/profile.proto" < "$TMP/exp.pb" > "$TMP/exp.txt" 2> "$TMP/protoc.err"
python3 "$HERE/push-check.py" buildids-pprof "$TMP/exp.txt" 2>&1 |
	awk -v l="$LIBC" '$1 == l { print $2 }' | sort -u > "$TMP/exp.ids"
printf '%s\n' "$HBID" "$IBID" | sort > "$TMP/exp.want"
if cmp -s "$TMP/exp.ids" "$TMP/exp.want"; then
	pass "$N: export pprof: $LIBC's mappings carry exactly the two builds' build-ids"
else
	fail "$N: export pprof: $LIBC's mappings carry exactly the two builds' build-ids"
	diff "$TMP/exp.want" "$TMP/exp.ids" | head -6 | sed 's/^/  /'
	head -2 "$TMP/protoc.err" | sed 's/^/  /'
fi

# --- perf's own recording of the two processes: a second opinion ---
# perf 6.1 with --buildid-mmap: each MMAP2 carries its file's build-id,
# and perf script reads each process's libc.so.6 as that process's own
# (while they run).  Without --buildid-mmap perf gets the host process
# wrong: its header lists both build-ids under the one path, perf script
# keeps one DSO per path and names both processes' libc samples from one
# of the two builds (the image's, in -p and -a runs, either -p order:
# the host's strverscmp+0x67 came out as "strxfrm+0x7", nm -D's name of
# that offset in the image's libc, and others as [unknown]).  So perf is
# asked with --buildid-mmap, and judged per sample: where its name is
# nm -D's for the offset in the process's own libc, sfprof script on the
# same file must print the same name for the same sample.  No -g: the
# leaf is what is compared (program and libc lack frame pointers).
# line_leaves SCRIPT-OUTPUT: "pid offset name time" of each one-line
# sample (no call chain) of the two processes whose address is in libc
line_leaves() {
	for p in $CPID $HPID; do
		awk -v pid="$p" -v maps="$TMP/$p.maps" -v lib="($LIBC)" '
		function hex(s,   i, v) {
			s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		BEGIN {
			while ((getline l < maps) > 0) {
				split(l, f, " "); split(f[1], r, "-"); nm++
				lo[nm] = hex(r[1]); hi[nm] = hex(r[2]); off[nm] = hex(f[3])
			}
		}
		$2 == pid && $NF == lib {
			t = ""
			for (i = 3; i < NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/) t = $i
			# the address in the process (perf) or in the file
			a = hex($(NF - 2)); o = a
			for (i = 1; i <= nm; i++)
				if (a >= lo[i] && a < hi[i]) o = a - lo[i] + off[i]
			printf "%s %x %s %s\n", pid, o, $(NF - 1), t
		}' "$1"
	done
}
HOME=$TMP perf record -q --buildid-mmap -p "$CPID,$HPID" -F 499 \
	-o "$TMP/perf.data" -- sleep 3 > "$TMP/perf-rec.log" 2>&1
prc=$?
HOME=$TMP perf script -i "$TMP/perf.data" > "$TMP/perf.txt" 2> "$TMP/perf-s.err"
psc=$?
HOME=$TMP sfp script -i "$TMP/perf.data" > "$TMP/sfp-perf.txt" 2> "$TMP/sfp-perf.err"
line_leaves "$TMP/perf.txt" > "$TMP/perf.leaves"
line_leaves "$TMP/sfp-perf.txt" > "$TMP/sfp-perf.leaves"
if [ $prc != 0 ] || [ $psc != 0 ]; then
	fail "$N: perf record --buildid-mmap + perf script (exit $prc, $psc)"
	cat "$TMP/perf-rec.log" "$TMP/perf-s.err" | tail -4 | sed 's/^/  /'
	: > "$TMP/right"
elif both_right "$TMP/perf.leaves" leaf; then
	pass "$N: perf's recording: perf script names each process's libc leaf as nm -D of its own libc at that offset ($WHY)"
else
	fail "$N: perf's recording: perf script names each process's libc leaf by its own libc"
	echo " $WHY"
	sort "$TMP/wrong" | cut -d' ' -f1-3 | uniq -c | sort -rn | head -6 | sed 's/^/  /'
fi
# the samples perf names right: sfprof's line for each is the same
sort -u "$TMP/right" > "$TMP/perf.right"
sort -u "$TMP/sfp-perf.leaves" > "$TMP/sfp-perf.sorted"
comm -23 "$TMP/perf.right" "$TMP/sfp-perf.sorted" > "$TMP/differ"
nc=$(awk -v p="$CPID" '$1 == p' "$TMP/perf.right" | wc -l)
nh=$(awk -v p="$HPID" '$1 == p' "$TMP/perf.right" | wc -l)
if [ "$nc" -ge 20 ] && [ "$nh" -ge 20 ] && [ ! -s "$TMP/differ" ]; then
	pass "$N: sfprof script on perf's recording names each of those samples as perf script does (image $nc, host $nh)"
else
	fail "$N: sfprof script on perf's recording names the samples perf names right alike (image $nc, host $nh; $(wc -l < "$TMP/differ") differ)"
	head -3 "$TMP/differ" | while read -r p o n t; do
		echo "  perf: $p $o $n $t; sfprof: $(grep " $t\$" "$TMP/sfp-perf.leaves" | head -1)"
	done
	head -3 "$TMP/sfp-perf.err" | sed 's/^/  /'
fi

# --- no build-id cache: each file read through its process ---
# record --no-buildid-cache, script with an empty cache while they run:
# the image's libc (and its program) only through the process's root,
# taken because its build-id is the one the MMAP2 records carry.
NOBID=$TMP/nobid
mkdir -p "$NOBID"
sfp record -p "$CPID,$HPID" -F 499 --duration 2 --no-buildid-cache \
	-o "$TMP/nc.data" > "$TMP/nc-rec.log" 2>&1
sfp script -i "$TMP/nc.data" --buildid-dir "$NOBID" > "$TMP/nc-live.txt" \
	2> "$TMP/nc-live.err"
script_leaves "$TMP/nc-live.txt" > "$TMP/nc-live.leaves"
if both_right "$TMP/nc-live.leaves" && ! grep -q "left unnamed" "$TMP/nc-live.err" &&
   [ -z "$(ls -A "$NOBID")" ]; then
	pass "$N: record --no-buildid-cache + script while they run, empty cache: each libc leaf named as nm -D of its own libc, stacks to main ($WHY)"
else
	fail "$N: record --no-buildid-cache + script while they run: libc leaves named by each process's own libc (through its root)"
	echo " $WHY"
	sort "$TMP/wrong" | uniq -c | sort -rn | head -6 | sed 's/^/  /'
	grep -v "lost" "$TMP/nc-live.err" | head -3 | sed 's/^/  /'
fi

# --- gone: only the build-id cache has the image's libc ---
ct_kill
wait 2>/dev/null
sfp script -i "$TMP/rec.data" --buildid-dir "$BID" > "$TMP/gone.txt" 2> "$TMP/gone.err"
script_leaves "$TMP/gone.txt" > "$TMP/gone.leaves"
if both_right "$TMP/gone.leaves"; then
	pass "$N: script after they are gone (build-id cache): the same ($WHY)"
else
	fail "$N: script after they are gone: libc leaves named by each process's own libc"
	echo " $WHY"
	sort "$TMP/wrong" | uniq -c | sort -rn | head -6 | sed 's/^/  /'
fi
c=$BID/.build-id/$(echo "$IBID" | cut -c1-2)/$(echo "$IBID" | cut -c3-)/elf
# ... and without the cache: the image's libc is nowhere with its
# build-id; the host's file at that path is another build, never used
# (its names at the image's offsets would be wrong ones), and said.
sfp script -i "$TMP/nc.data" --buildid-dir "$NOBID" > "$TMP/nc-gone.txt" \
	2> "$TMP/nc-gone.err"
script_leaves "$TMP/nc-gone.txt" > "$TMP/nc-gone.leaves"
ni=$(awk -v p="$CPID" '$1 == p' "$TMP/nc-gone.leaves" | wc -l)
named=$(awk -v p="$CPID" '$1 == p && $3 != "[unknown]"' "$TMP/nc-gone.leaves" | wc -l)
set -- $(judge "$HPID" < "$TMP/nc-gone.leaves")
said=$(sed -n 's/.*: \([0-9][0-9]*\) files left unnamed: the files at their paths.* other build-ids .*/\1/p' "$TMP/nc-gone.err")
if [ "$ni" -ge 20 ] && [ "$named" = 0 ] && [ "$1" -ge 20 ] &&
   [ $(($2 * 100)) -ge $(($1 * 99)) ] && [ "${said:-0}" -ge 1 ]; then
	pass "$N: gone, no cache: the image's $ni libc leaves unnamed, not by the host's libc at that path, and said ($said files left unnamed); the host's $2 of $1 named"
else
	fail "$N: gone, no cache: the image's libc leaves unnamed (not by the host's file) and said so"
	echo "  image: $named of $ni named; host: $2 of $1 right; said: ${said:-nothing}"
	awk -v p="$CPID" '$1 == p' "$TMP/nc-gone.leaves" | cut -d' ' -f3 | sort | uniq -c | head -4 | sed 's/^/  /'
	grep -v "lost" "$TMP/nc-gone.err" | head -3 | sed 's/^/  /'
fi
if cmp -s "$c" "$ILIBC"; then
	pass "$N: the build-id cache holds the image's libc ($OLDVER) byte for byte"
else
	fail "$N: the build-id cache holds the image's libc ($OLDVER)"
	ls -l "$c" 2>&1 | sed 's/^/  /'
fi
exit 0
