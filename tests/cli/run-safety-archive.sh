#!/bin/sh
# sfprof archive's -o follows the rules of every output (README, "Outputs";
# common/outfile.h): a device node at -o is written in place and kept, a
# planted symlink is replaced and not followed, a write that fails (here
# past `ulimit -f`) leaves the existing file, a name with a colon is a
# local file (no remote archive as tar(1) took it), a read-only directory
# is exit 2 with one line naming the output, and the archive is not its
# own input.  And the archive is still perf archive's: the same entries
# as GNU tar packs from the same cache (a DSO path long enough to need a
# pax header included), unpacked it equals the cache, and perf reads the
# unpacked cache.  Real device nodes (mknod here, never the system's),
# real symlinks, a real file size limit, another user through setpriv.
# checks: 15
. "$(dirname "$0")/test-subr.sh"

SPIN=$SFP_BUILD/tests/progs/record-spin
BID=$TMP/bid

ok() { if [ "$2" = 1 ]; then pass "$1"; else fail "$1"; fi; }
no_tmp() { ! ls -a "$1" | grep -q '\.tmp-'; }
show() { sed 's/^/  /' "$1" | head -8; }

# A DSO whose recorded path is over 255 bytes: no ustar name/prefix
# split holds it.
LONG=$TMP/$(printf 'd%.0s' $(seq 90))/$(printf 'e%.0s' $(seq 90))/$(printf 'f%.0s' $(seq 90))
mkdir -p "$LONG"
cp "$SPIN" "$LONG/record-spin"
if ! sfp record -q --buildid-dir "$BID" -o "$TMP/in.data" -- \
		"$LONG/record-spin" flat 300 > "$TMP/rec.log" 2>&1; then
	fail "record of the input file"
	show "$TMP/rec.log"
	exit 0
fi

# --- the archive's content: what `tar -cjf OUT -C BID LINKS TARGETS` made --
sfp archive -i "$TMP/in.data" --buildid-dir "$BID" -o "$TMP/a.tar.bz2" \
	> "$TMP/a.log" 2>&1
rc=$?
ok "archive: exit 0, a bzip2 file" \
	$([ $rc = 0 ] && bzip2 -t "$TMP/a.tar.bz2" 2>/dev/null && echo 1)
# the reference: GNU tar over the .build-id links of the file's build-ids
# and the directories they point at
: > "$TMP/list"
perf_ids() {
	# the build-ids the file names (its HEADER_BUILD_ID), from perf
	perf buildid-list -i "$TMP/in.data" 2>/dev/null | awk '{print $1}' | sort
}
if ! command -v perf > /dev/null; then
	# without perf, every link in the fresh cache is the file's
	ls "$BID/.build-id"/*/* | sed 's|.*/\.build-id/\(..\)/|\1|' | sort > "$TMP/ids"
else
	perf_ids > "$TMP/ids"
fi
# (the header names every file mapped, the cache those samples hit)
: > "$TMP/ids.cached"
while read -r id; do
	l=.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)
	[ -L "$BID/$l" ] || continue
	echo "$id" >> "$TMP/ids.cached"
	t=$(cd "$BID" && realpath --relative-to=. "$l")
	printf '%s\n%s\n' "$l" "$t" >> "$TMP/list"
done < "$TMP/ids"
if [ ! -s "$TMP/list" ]; then
	fail "archive: the cache holds none of the file's build-ids"
elif ! tar -c -j -f "$TMP/ref.tar.bz2" -C "$BID" -T "$TMP/list" 2> "$TMP/tar.err"; then
	fail "archive: GNU tar could not make the reference archive"
	show "$TMP/tar.err"
else
	tar tvjf "$TMP/ref.tar.bz2" | sort > "$TMP/ref.lst"
	tar tvjf "$TMP/a.tar.bz2" 2> "$TMP/tar.err" | sort > "$TMP/a.lst"
	if grep -q "$(basename "$LONG")/record-spin/" "$TMP/ref.lst" &&
	   cmp -s "$TMP/ref.lst" "$TMP/a.lst" && [ ! -s "$TMP/tar.err" ]; then
		pass "archive: the entries tar tvjf lists equal GNU tar's from the same cache (long path too)"
	else
		fail "archive: the entries tar tvjf lists equal GNU tar's from the same cache (long path too)"
		diff "$TMP/ref.lst" "$TMP/a.lst" | cut -c1-200 | head -10 | sed 's/^/  /'
		show "$TMP/tar.err"
	fi
fi
mkdir "$TMP/un"
if tar xjf "$TMP/a.tar.bz2" -C "$TMP/un" 2> "$TMP/tar.err"; then
	# everything unpacked is the cache's, byte for byte
	(cd "$TMP/un" && find . ! -type d | sort) > "$TMP/un.lst"
	bad=0
	while read -r p; do
		if [ -L "$TMP/un/$p" ]; then
			[ "$(readlink "$TMP/un/$p")" = "$(readlink "$BID/$p")" ] || bad=1
		else
			cmp -s "$TMP/un/$p" "$BID/$p" || bad=1
		fi
	done < "$TMP/un.lst"
	ok "archive: unpacked with tar xjf, every entry equals the cache's" \
		$([ $bad = 0 ] && [ -s "$TMP/un.lst" ] && echo 1)
else
	fail "archive: unpacked with tar xjf"
	show "$TMP/tar.err"
fi
if command -v perf > /dev/null; then
	perf --buildid-dir "$TMP/un" buildid-cache -l > "$TMP/pl.out" 2> "$TMP/pl.err"
	rc=$?
	awk '{print $1}' "$TMP/pl.out" | sort > "$TMP/pl.ids"
	if [ $rc = 0 ] && [ -s "$TMP/ids.cached" ] && cmp -s "$TMP/ids.cached" "$TMP/pl.ids"; then
		pass "archive: perf buildid-cache -l on the unpacked archive lists every build-id of the file it holds"
	else
		fail "archive: perf buildid-cache -l on the unpacked archive lists every build-id of the file (exit $rc)"
		diff "$TMP/ids.cached" "$TMP/pl.ids" | head -5 | sed 's/^/  /'
		show "$TMP/pl.err"
	fi
else
	skip "archive: perf reads the unpacked archive" "perf not installed"
fi

arch() {	# -o target, then more arguments
	_o=$1
	shift
	"$SFPROF" archive -i "$TMP/in.data" --buildid-dir "$BID" -o "$_o" "$@"
}

# --- devices: written in place, never removed ---------------------------
if mknod "$TMP/full" c 1 7 2>/dev/null && [ -c "$TMP/full" ]; then
	arch "$TMP/full" > "$TMP/e.log" 2>&1
	rc=$?
	ok "archive -o DEVICE (full): exit 2, the node survives, no space said naming it" \
		$([ $rc = 2 ] && [ -c "$TMP/full" ] &&
		  grep -q "$TMP/full: No space left on device" "$TMP/e.log" &&
		  no_tmp "$TMP" && echo 1)
	[ $rc = 2 ] || show "$TMP/e.log"
else
	skip "archive -o DEVICE (full)" "mknod not permitted here"
fi
if mknod "$TMP/null" c 1 3 2>/dev/null && [ -c "$TMP/null" ]; then
	arch "$TMP/null" > "$TMP/e.log" 2>&1
	rc=$?
	ok "archive -o DEVICE (null): exit 0, written in place, the node kept" \
		$([ $rc = 0 ] && [ -c "$TMP/null" ] && no_tmp "$TMP" && echo 1)
	[ $rc = 0 ] || show "$TMP/e.log"
else
	skip "archive -o DEVICE (null)" "mknod not permitted here"
fi

# --- a planted symlink is replaced, its target left alone ----------------
echo victim > "$TMP/victim.txt"
ln -s victim.txt "$TMP/planted.tar.bz2"
arch "$TMP/planted.tar.bz2" > "$TMP/e.log" 2>&1
rc=$?
ok "archive -o PLANTED-SYMLINK: the link's target is left alone" \
	$([ $rc = 0 ] && [ "$(cat "$TMP/victim.txt")" = victim ] && echo 1)
ok "archive -o PLANTED-SYMLINK: the link is replaced by the archive" \
	$([ -f "$TMP/planted.tar.bz2" ] && [ ! -L "$TMP/planted.tar.bz2" ] &&
	  cmp -s "$TMP/a.lst" "$(tar tvjf "$TMP/planted.tar.bz2" | sort > "$TMP/p.lst"; echo "$TMP/p.lst")" &&
	  echo 1)

# --- a failed write leaves the existing output ---------------------------
# 1 block of ulimit -f is far less than the archive: the write fails
# (EFBIG; SIGXFSZ would kill a program that does not ignore it).
echo "old archive" > "$TMP/prev.tar.bz2"
sh -c 'ulimit -f 1 && exec "$@"' sh "$SFPROF" archive -i "$TMP/in.data" \
	--buildid-dir "$BID" -o "$TMP/prev.tar.bz2" > "$TMP/e.log" 2>&1
rc=$?
ok "archive past ulimit -f: exit 2, says File too large naming the output" \
	$([ $rc = 2 ] && grep -q "$TMP/prev.tar.bz2: File too large" "$TMP/e.log" && echo 1)
[ $rc = 2 ] || { echo "  exit $rc"; show "$TMP/e.log"; }
ok "archive past ulimit -f: the existing output is kept, no temporary left" \
	$([ "$(cat "$TMP/prev.tar.bz2")" = "old archive" ] && no_tmp "$TMP" && echo 1)

# --- host:x is a file name, not tar's remote archive ----------------------
mkdir "$TMP/cwd"
(cd "$TMP/cwd" && exec "$SFPROF" archive -i "$TMP/in.data" --buildid-dir "$BID" \
	-o host:x.tar.bz2) > "$TMP/e.log" 2>&1
rc=$?
ok "archive -o host:x.tar.bz2 writes the local file host:x.tar.bz2" \
	$([ $rc = 0 ] && [ -f "$TMP/cwd/host:x.tar.bz2" ] &&
	  tar tjf "$TMP/cwd/host:x.tar.bz2" > /dev/null 2>&1 && echo 1)
[ $rc = 0 ] || show "$TMP/e.log"

# --- the input itself ------------------------------------------------------
cp "$TMP/in.data" "$TMP/F.data"
"$SFPROF" archive -i "$TMP/F.data" --buildid-dir "$BID" -o "$TMP/F.data" \
	> "$TMP/e.log" 2>&1
rc=$?
ok "archive -i F -o F refuses (exit 2) and leaves F as it was" \
	$([ $rc = 2 ] && cmp -s "$TMP/in.data" "$TMP/F.data" &&
	  grep -q "is the input file" "$TMP/e.log" && echo 1)

# --- a read-only directory: exit 2, one line ----------------------------
mkdir "$TMP/ro"
chmod 755 "$TMP"
chmod 555 "$TMP/ro"
chmod 644 "$TMP/in.data"
if command -v setpriv > /dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups \
	sh -c "test -x '$SFPROF' && test -r '$TMP/in.data' && ! test -w '$TMP/ro'" \
	2>/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$SFPROF" archive -i "$TMP/in.data" --buildid-dir "$BID" \
		-o "$TMP/ro/x.tar.bz2" > "$TMP/e.out" 2> "$TMP/e.log"
	rc=$?
	ok "archive -o <read-only dir>/x: exit 2, one line naming the output and the errno" \
		$([ $rc = 2 ] && [ "$(wc -l < "$TMP/e.log")" = 1 ] &&
		  grep -qx "sfprof: cannot create $TMP/ro/x.tar.bz2: Permission denied" "$TMP/e.log" &&
		  [ ! -s "$TMP/e.out" ] && echo 1)
	[ $rc = 2 ] || echo "  exit $rc"
	[ "$(wc -l < "$TMP/e.log")" = 1 ] || show "$TMP/e.log"
	ok "archive -o <read-only dir>/x: nothing created there" \
		$([ -z "$(ls -A "$TMP/ro")" ] && echo 1)
else
	skip "archive -o <read-only dir>/x" "cannot run as another user here"
	skip "archive -o <read-only dir>/x: nothing created" "cannot run as another user here"
fi

# --- standard output, as tar -f - did ------------------------------------
(cd "$TMP/cwd" && exec "$SFPROF" archive -i "$TMP/in.data" --buildid-dir "$BID" \
	-o -) > "$TMP/stdout.tar.bz2" 2> "$TMP/e.log"
rc=$?
ok "archive -o - writes the archive to standard output, no file named -" \
	$([ $rc = 0 ] && [ ! -e "$TMP/cwd/-" ] &&
	  [ "$(tar tvjf "$TMP/stdout.tar.bz2" | sort)" = "$(cat "$TMP/a.lst")" ] && echo 1)
