#!/bin/sh
# The agent's 30-minute soak (issue 15): tests/cli/run-agent-soak.sh run
# for SOAK_SECONDS (default 1800) with the backend killed and restarted
# every 2 minutes, 20 short-lived programs without frame pointers a second
# and a busy one, and the RSS baseline taken after 5 minutes; targets: no
# crash, every window delivered or counted as dropped, RSS growth after
# the first 5 minutes <= 5 %.  Prints the checks and the RSS series.
# SOAK_AGENT_ARGS adds options to the agent's (e.g. --no-symbolize); the
# peak resident size (VmHWM) is printed as well.
# Usage: sh bench/agent-soak.sh [BUILD]   (root, python3; a built tree)
set -u
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$B" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/tmp"
SOAK_SECONDS=${SOAK_SECONDS:-1800} SOAK_LIFE=${SOAK_LIFE:-120} \
SOAK_WARMUP=${SOAK_WARMUP:-300} SOAK_RSS_PCT=${SOAK_RSS_PCT:-5} \
SOAK_RSS_LOG=$T/rss \
SFPROF=$B/sfprof SFP_BUILD=$B SFP_TEST_DATA=$ROOT/tests/data \
SFP_TEST_TMP=$T/tmp SFPROF_CACHE_DIR=$T/tmp/cache \
	sh "$ROOT/tests/cli/run-agent-soak.sh"
rc=$?
echo "RSS (seconds since start, kB), every minute:"
awk '$1 % 60 == 0 { print $1, $2 }' "$T/rss" 2>/dev/null | tr '\n' ';' | sed 's/;$/\n/'
awk '$3 > h { h = $3 } END { printf "peak (VmHWM): %d kB\n", h }' "$T/rss" 2>/dev/null
exit $rc
