# Where sfprof's frame names differ from perf 6.1's on purpose (the rules
# of docs/perf-names.md), each differing line must be one of them, and
# sfprof's name must be the one an independent tool gives:
#
#  plt-stub   sfprof "NAME@plt+0xOFF", perf "[unknown]", "_init+0x..." or
#             another "...@plt+0x...": objdump -d labels the stub at the
#             address minus OFF "<NAME@plt>".
#  plt-header sfprof ".plt+0xOFF", perf "[unknown]" or "_init+0x...": the
#             address minus OFF is where readelf puts the .plt section,
#             and OFF is inside its 16-byte lazy-binding header.
#  a2l-order  a run of "(inlined)" lines whose level names differ only
#             as addr2line's state makes them differ: BFD names a C++
#             function instance without a linkage name by the ELF symbol
#             the first time it is the innermost level of a lookup, by
#             DWARF's name afterwards (docs/perf-names.md), so the names
#             depend on which addresses were asked before, and the two
#             unwinders do not find the same frames (sfprof goes on where
#             perf's unwinder gives up).  GNU addr2line itself, asked the
#             frames of the DSO in the order of perf's --no-inline output
#             up to the address, gives perf's names; asked them in the
#             order of sfprof's output, sfprof's.  Needs A2L_DATA (the
#             perf.data file) or A2L_PERF_FRAMES and A2L_SFP_FRAMES (both
#             tools' script --no-inline outputs of it).
#
# explain_names DIFFS: DIFFS holds perf-names.awk's DIFF lines; prints
# "EXPLAINED UNEXPLAINED RULE=COUNT,..." (the count of each rule that
# explained a pair, "-" for none) and each unexplained pair on stderr.
# Needs $TMP (scratch) and objdump / readelf.

# virtual address of file offset $2 in ELF $1 (its PT_LOAD segments)
file_off_to_vaddr() {
	readelf -lW "$1" 2>/dev/null | awk -v off=$((0x$2)) '
		$1 == "LOAD" {
			o = strtonum_($2); v = strtonum_($3); sz = strtonum_($5)
			if (off >= o && off < o + sz) { printf "%x\n", off - o + v; exit }
		}
		function strtonum_(h,   i, c, r) {
			sub(/^0x/, "", h); r = 0
			for (i = 1; i <= length(h); i++) {
				c = index("0123456789abcdef", substr(h, i, 1)) - 1
				r = r * 16 + c
			}
			return r
		}'
}

# objdump's PLT labels of ELF $1, "hexaddr name" lines, cached in $TMP
plt_labels() {
	f="$TMP/plt.$(printf '%s' "$1" | md5sum | cut -c1-12)"
	if [ ! -f "$f" ]; then
		objdump -d -j .plt -j .plt.sec -j .plt.got "$1" 2>/dev/null |
			sed -n 's/^0*\([0-9a-f][0-9a-f]*\) <\(.*\)>:$/\1 \2/p' > "$f"
	fi
	cat "$f"
}

# "hexaddr" of ELF $1's section $2
section_addr() {
	readelf -SW "$1" 2>/dev/null |
		awk -v s="$2" '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == s { sub(/^0*/, "", $3); print ($3 == "" ? "0" : $3); exit }'
}

# rule name for one pair, or nothing
name_rule() {
	p=$1 s=$2
	addr=${s%% *}
	dso=${s##*(}
	dso=${dso%)}
	pname=${p#* }
	pname=${pname% (*}
	sname=${s#* }
	sname=${sname% (*}
	[ "${p%% *}" = "$addr" ] && [ "${p##*(}" = "${s##*(}" ] || return 0
	[ -f "$dso" ] || return 0
	off=${sname##*+0x}
	base=${sname%+0x*}
	case "$pname" in
	"[unknown]"|_init+0x*|*@plt+0x*) ;;
	*) return 0 ;;
	esac
	va=$(file_off_to_vaddr "$dso" "$addr")
	[ -n "$va" ] || return 0
	start=$(printf '%x' $((0x$va - 0x$off)))
	case "$base" in
	.plt)
		case "$pname" in *@plt+0x*) return 0 ;; esac
		[ "$(section_addr "$dso" .plt)" = "$start" ] &&
			[ $((0x$off)) -lt 16 ] && echo plt-header
		;;
	*@plt)
		plt_labels "$dso" | grep -qxF "$start $base" && echo plt-stub
		;;
	esac
}

# the level names of a run of frame lines joined by " | " ("ADDR NAME+0xOFF
# (...)"), one a line
run_names() {
	printf '%s\n' "$1" | awk '{
		n = split($0, l, / \| /)
		for (i = 1; i <= n; i++) {
			t = l[i]
			sub(/^[0-9a-f]+ /, "", t)
			sub(/ \([^()]*\)$/, "", t)
			sub(/\+0x[0-9a-f]+$/, "", t)
			print t
		}
	}'
}

# what GNU addr2line, one process for the DSO as perf runs it, names the
# levels of the last address asked, when asked (once each) the addresses
# of FRAMES' frames in DSO in their order up to the first ADDR: one
# name a line, demangled without parameters as perf demangles
a2l_replay() {
	frames=$1 dso=$2 addr=$3
	id=$(readelf -n "$dso" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
	file=$dso
	dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	[ -n "$id" ] && [ -f "$dbg" ] && file=$dbg
	readelf -lW "$dso" > "$TMP/a2l.load" 2>/dev/null
	awk -v dso="$dso" -v want="$addr" '
		function hex(h,   i, r) {
			sub(/^0x/, "", h); r = 0
			for (i = 1; i <= length(h); i++)
				r = r * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return r
		}
		NR == FNR {
			if ($1 == "LOAD") {
				nl++; lo[nl] = hex($2); va[nl] = hex($3); sz[nl] = hex($5)
			}
			next
		}
		/^[ \t]+[0-9a-f]+ / {
			d = $0; sub(/.*\(/, "", d); sub(/\)$/, "", d)
			if (d != dso || seen[$1]++)
				next
			off = hex($1)
			for (i = 1; i <= nl; i++)
				if (off >= lo[i] && off < lo[i] + sz[i]) {
					printf "%x\n", off - lo[i] + va[i]
					break
				}
			if ($1 == want)
				exit
		}' "$TMP/a2l.load" "$frames" > "$TMP/a2l.in"
	addr2line -a -f -i -e "$file" < "$TMP/a2l.in" 2>/dev/null |
		awk '/^0x[0-9a-f]+$/ { n = 0; odd = 1; next }
		     odd { f[++n] = $0 }
		     { odd = !odd }
		     END { for (i = 1; i <= n; i++) print f[i] }' |
		c++filt -p
}

# a2l-order for one pair, or nothing
a2l_order_rule() {
	p=$1 s=$2
	addr=${p%% *}
	[ "${s%% *}" = "$addr" ] || return 0
	dso=$(printf '%s | %s\n' "$s" "$p" | awk '{
		n = split($0, l, / \| /)
		for (i = 1; i <= n; i++)
			if (l[i] ~ / \(\/[^()]*\)$/) {
				sub(/.* \(/, "", l[i]); sub(/\)$/, "", l[i])
				print l[i]; exit
			}
	}')
	[ -f "$dso" ] || return 0
	if [ -z "${A2L_PERF_FRAMES:-}" ] && [ -n "${A2L_DATA:-}" ]; then
		perf script --no-inline -i "$A2L_DATA" > "$TMP/a2l.perf" 2>/dev/null
		sfp script --no-inline -i "$A2L_DATA" > "$TMP/a2l.sfp" 2>/dev/null
		A2L_PERF_FRAMES=$TMP/a2l.perf A2L_SFP_FRAMES=$TMP/a2l.sfp
	fi
	[ -f "${A2L_PERF_FRAMES:-}" ] && [ -f "${A2L_SFP_FRAMES:-}" ] || return 0
	run_names "$p" > "$TMP/a2l.pn"
	run_names "$s" > "$TMP/a2l.sn"
	[ "$(wc -l < "$TMP/a2l.pn")" = "$(wc -l < "$TMP/a2l.sn")" ] || return 0
	cmp -s "$TMP/a2l.pn" "$TMP/a2l.sn" && return 0
	a2l_replay "$A2L_PERF_FRAMES" "$dso" "$addr" > "$TMP/a2l.pr"
	a2l_replay "$A2L_SFP_FRAMES" "$dso" "$addr" > "$TMP/a2l.sr"
	cmp -s "$TMP/a2l.pn" "$TMP/a2l.pr" && cmp -s "$TMP/a2l.sn" "$TMP/a2l.sr" &&
		echo a2l-order
}

explain_names() {
	ok=0 bad=0 n_stub=0 n_header=0 n_a2l=0
	while IFS='	' read -r tag p s; do
		[ "$tag" = DIFF ] || continue
		r=$(name_rule "$p" "$s")
		[ -n "$r" ] || r=$(a2l_order_rule "$p" "$s")
		case "$r" in
		a2l-order) n_a2l=$((n_a2l + 1)) ;;
		plt-stub) n_stub=$((n_stub + 1)) ;;
		plt-header) n_header=$((n_header + 1)) ;;
		esac
		if [ -n "$r" ]; then
			ok=$((ok + 1))
		else
			bad=$((bad + 1))
			[ $bad -le 5 ] && printf '  perf:   %s\n  sfprof: %s\n' "$p" "$s" >&2
		fi
	done < "$1"
	echo "$ok $bad plt-stub=$n_stub,plt-header=$n_header,a2l-order=$n_a2l"
}
