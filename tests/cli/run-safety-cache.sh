#!/bin/sh
# `sframe cache clear` removes only its own files from its own directory
# (common/cachedir.h): a symbolic link another user planted higher up
# the path (in a sticky world-writable directory, as /tmp) is not
# followed, one of root's or ours there is; a trailing slash does not
# make a linked cache directory followed; and only names of the cache's
# form ("<build-id hex>-g<N>-v<N>.sframe", "h<16 hex>-g<N>-v<N>.sframe",
# ".tmp-<pid>-<hex>") are removed, never another *.sframe.
# checks: 7
. "$(dirname "$0")/test-subr.sh"

ok() { if [ "$2" = 1 ]; then pass "$1"; else fail "$1"; fi; }
show() { sed 's/^/  /' "$1" | head -6; }

OWN="0123abcd-g1-v2.sframe h0123456789abcdef-g1-v3.sframe .tmp-12-abc"
OTHER="victim.sframe 0123ABCD-g1-v2.sframe abc-g1-v2.sframe x-g1-v1.sframe notes.txt"
fill() {	# dir
	mkdir -p "$1"
	chmod 700 "$1"
	for f in $OWN $OTHER; do echo data > "$1/$f"; done
}
left() { ls -A "$1" | sort | tr '\n' ' '; }
OTHER_SORTED=$(for f in $OTHER; do echo "$f"; done | sort | tr '\n' ' ')
ALL_SORTED=$(for f in $OWN $OTHER; do echo "$f"; done | sort | tr '\n' ' ')

# --- only the cache's own names ------------------------------------------
fill "$TMP/c1"
SFPROF_CACHE_DIR=$TMP/c1 "$SFPROF" sframe cache clear > "$TMP/o" 2>&1
rc=$?
ok "cache clear removes its own entries and temporaries, no other *.sframe" \
	$([ $rc = 0 ] && [ "$(left "$TMP/c1")" = "$OTHER_SORTED" ] &&
	  grep -q "removed 3 files" "$TMP/o" && echo 1)
[ $rc = 0 ] && [ "$(left "$TMP/c1")" = "$OTHER_SORTED" ] ||
	{ echo "  exit $rc, left: $(left "$TMP/c1")"; show "$TMP/o"; }
fill "$TMP/c2"
SFPROF_CACHE_DIR=$TMP/c2/ "$SFPROF" sframe cache clear > "$TMP/o" 2>&1
rc=$?
ok "cache clear on DIR/ (a real directory) works" \
	$([ $rc = 0 ] && [ "$(left "$TMP/c2")" = "$OTHER_SORTED" ] && echo 1)

# --- a trailing slash on a linked cache directory --------------------------
fill "$TMP/c3"
ln -s c3 "$TMP/c3-link"
for sfx in / //; do
	SFPROF_CACHE_DIR=$TMP/c3-link$sfx "$SFPROF" sframe cache clear > "$TMP/o" 2>&1
	rc=$?
	ok "cache clear on LINK$sfx refuses (exit 2), nothing removed" \
		$([ $rc = 2 ] && [ "$(left "$TMP/c3")" = "$ALL_SORTED" ] &&
		  grep -q "symbolic link" "$TMP/o" && echo 1)
	[ $rc = 2 ] || { echo "  exit $rc"; show "$TMP/o"; }
done

# --- a link higher up the path ---------------------------------------------
# $TMP/pub is sticky and world-writable (as /tmp); $TMP/pub/x -> $TMP/real,
# whose cache/ is ours: what a root clear must not reach through a link
# another user made.
mkdir -p "$TMP/pub" "$TMP/real"
chmod 1777 "$TMP/pub"
fill "$TMP/real/cache"
ln -s "$TMP/real" "$TMP/pub/x"
if chown -h 65534 "$TMP/pub/x" 2>/dev/null &&
   [ "$(stat -c %u "$TMP/pub/x")" = 65534 ] && [ "$(id -u)" != 65534 ]; then
	SFPROF_CACHE_DIR=$TMP/pub/x/cache "$SFPROF" sframe cache clear > "$TMP/o" 2>&1
	rc=$?
	ok "cache clear through another user's link higher up refuses (exit 2), nothing removed" \
		$([ $rc = 2 ] && [ "$(left "$TMP/real/cache")" = "$ALL_SORTED" ] &&
		  grep -q "$TMP/pub/x on its path is a symbolic link" "$TMP/o" && echo 1)
	[ $rc = 2 ] || { echo "  exit $rc"; show "$TMP/o"; }
	SFPROF_CACHE_DIR=$TMP/pub/x/cache "$SFPROF" sframe cache list > "$TMP/o" 2>&1
	rc=$?
	ok "cache list through another user's link higher up refuses (exit 2)" \
		$([ $rc = 2 ] && echo 1)
else
	skip "cache clear through another user's link" "cannot chown a link here"
	skip "cache list through another user's link" "cannot chown a link here"
fi
# the same link, ours: followed (a cache under a linked home works)
rm "$TMP/pub/x"
ln -s "$TMP/real" "$TMP/pub/x"
SFPROF_CACHE_DIR=$TMP/pub/x/cache "$SFPROF" sframe cache clear > "$TMP/o" 2>&1
rc=$?
ok "cache clear through our own link higher up works" \
	$([ $rc = 0 ] && [ "$(left "$TMP/real/cache")" = "$OTHER_SORTED" ] && echo 1)
[ $rc = 0 ] || { echo "  exit $rc"; show "$TMP/o"; }
