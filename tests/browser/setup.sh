#!/bin/sh
# Install the browser tests' npm packages (playwright-core: a driver only,
# it downloads no browser; speedscope: the viewer's release build;
# @firefox-devtools/profiler-cli: the Firefox Profiler's own profile
# processing and call tree, bundled, no dependencies) exactly
# as package-lock.json pins them.  Run by `make deps`; does nothing when
# node_modules already matches the lock file.
set -eu
cd "$(dirname "$0")"
stamp=node_modules/.sfp-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp" &&
   [ -f node_modules/playwright-core/package.json ] &&
   [ -f node_modules/speedscope/package.json ] &&
   [ -f node_modules/@firefox-devtools/profiler-cli/package.json ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "deps: npm missing (Debian package nodejs); browser tests cannot run" >&2
	exit 1
fi
echo "deps: npm ci (tests/browser)"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts \
	--loglevel=error >/dev/null
cp package-lock.json "$stamp"
