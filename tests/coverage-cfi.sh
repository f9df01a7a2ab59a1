#!/bin/sh
# Coverage of `sfprof sframe build` over every ELF object of this machine
# (not part of make check; takes a minute or two).
#
#   sh tests/coverage-cfi.sh [SFPROF] [VERSION] [DIR...]
#
# Defaults: build/sfprof, SFrame version 3, /usr/lib/x86_64-linux-gnu and
# /usr/bin.  Each file gets 30 s; a crash (signal) or a timeout is a
# failure and makes the script exit 1.  Prints the share of FDEs and text
# bytes covered and the skip reasons, most frequent first.
set -u
SFPROF=${1:-build/sfprof}
VERSION=${2:-3}
[ $# -ge 2 ] && shift 2 || set --
[ $# -eq 0 ] && set -- /usr/lib/x86_64-linux-gnu /usr/bin
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

find "$@" -type f 2>/dev/null | while read -r f; do
	head -c 4 "$f" 2>/dev/null | grep -q 'ELF' || continue
	timeout 30 "$SFPROF" sframe build --stats --version "$VERSION" "$f" \
		> "$TMP/out" 2> "$TMP/err"
	rc=$?
	if grep -q "relocatable object" "$TMP/err"; then
		echo "REL $f"
		continue
	fi
	echo "RC $rc $f"
	cat "$TMP/out"
done > "$TMP/all"

awk -v version="$VERSION" '
/^REL / { rel++; next }
/^RC / {
	files++
	rc = $2
	if (rc == 0) ok++
	else if (rc == 1) invalid++
	else if (rc >= 124) { bad++; badlist = badlist "\n    rc " rc ": " $3 }
	else other++
	next
}
/^  FDEs:/ { fdes += $2 }
/^  emitted:/ { emitted += $2; flex += $NF }
/^  PLT FDEs:/ { plt += $3 }
/^  text bytes:/ { covered += $3; text += $6 }
/^    [a-z-]+ +[0-9]+$/ { reason[$1] += $2; skipped += $2 }
END {
	printf "SFrame v%s over %d ELF files (+%d relocatable objects, not convertible): %d built, %d without usable CFI or not x86-64, %d other errors, %d crashes/timeouts%s\n",
		version, files, rel, ok, invalid, other, bad, badlist
	printf "FDEs: %d, emitted %d (%.2f%%), of which flexible %d; PLT FDEs added %d\n",
		fdes, emitted, fdes ? 100 * emitted / fdes : 0, flex, plt
	printf "text bytes: %d of %d covered (%.2f%%)\n", covered, text,
		text ? 100 * covered / text : 0
	printf "skipped FDEs: %d\n", skipped
	n = 0
	for (r in reason) names[n++] = r
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (reason[names[j]] > reason[names[i]]) {
				t = names[i]; names[i] = names[j]; names[j] = t
			}
	for (i = 0; i < n; i++)
		printf "  %-18s %8d (%.2f%% of FDEs)\n", names[i], reason[names[i]],
			100 * reason[names[i]] / fdes
	exit bad ? 1 : 0
}' "$TMP/all"
