#!/usr/bin/env bash
# agents-install.sh: install the agent CLIs that the command-closure tests
# run under `agentbox run` (cmd/agentbox/closure_integration_test.go) and
# the escape self-test drives (launcher/agenttest_integration_test.go), from
# the npm registry, at pinned versions, once per package@version and
# layout, into a cache outside the clone that the next run reuses:
#
#   $CACHE/PKG@VER/prefix  npm install -g --prefix DIR   (DIR/bin, DIR/lib/node_modules)
#   $CACHE/PKG@VER/local   npm install in a project      (node_modules/.bin, the platform
#                                                         package a sibling in node_modules)
#   $CACHE/PKG@VER/nvm     an nvm prefix: this machine's node copied to
#                          versions/node/vX/bin, the CLI installed there with npm -g
#   $CACHE/PKG@VER/pnpm    pnpm add in a project         (node_modules/.pnpm store layout)
#
# CACHE is $AGENTBOX_AGENTS_CACHE, by default /var/cache/agentbox-test/npm.
# A layout is reused when its .done marker is there; a half-made one is
# made again. Only the npm registry is contacted. Needs node and npm.
set -euo pipefail
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.332}"
GEMINI_VERSION="${GEMINI_VERSION:-0.61.0}"
PNPM_VERSION="${PNPM_VERSION:-10.34.8}"
cache="${AGENTBOX_AGENTS_CACHE:-/var/cache/agentbox-test/npm}"
npm_flags=(--no-audit --no-fund --loglevel=error)

log() { echo "agents-install: $*"; }
command -v npm >/dev/null || { log "npm not found; apt-get install -y nodejs npm" >&2; exit 1; }
umask 022
mkdir -p "$cache"
node_version=$(node --version)

# layout PKG@VER NAME: make $cache/PKG@VER/NAME with make_NAME unless done.
layout() {
	local spec=$1 name=$2 dir="$cache/$1/$2"
	[ -e "$dir/.done" ] && return 0
	log "$spec: $name"
	rm -rf "$dir"
	mkdir -p "$dir"
	"make_$name" "$spec" "$dir"
	touch "$dir/.done"
}

make_prefix() { npm install -g "${npm_flags[@]}" --prefix "$2" "$1"; }

make_local() {
	mkdir -p "$2/proj"
	(cd "$2/proj" && echo '{"name":"proj","private":true}' >package.json && npm install "${npm_flags[@]}" "$1")
}

make_nvm() {
	local prefix="$2/versions/node/$node_version"
	mkdir -p "$prefix/bin"
	cp "$(command -v node)" "$prefix/bin/node"
	PATH="$prefix/bin:$PATH" npm install -g "${npm_flags[@]}" --prefix "$prefix" "$1"
}

pnpm_bin="$cache/pnpm@$PNPM_VERSION/bin/pnpm"
make_pnpm() {
	local pkg=${1%@*}
	mkdir -p "$2/proj"
	(cd "$2/proj" && echo '{"name":"proj","private":true}' >package.json &&
		"$pnpm_bin" add --config.store-dir="$2/store" --allow-build="$pkg" --reporter=silent "$1")
}

if [ ! -e "$cache/pnpm@$PNPM_VERSION/.done" ]; then
	log "pnpm@$PNPM_VERSION"
	rm -rf "$cache/pnpm@$PNPM_VERSION"
	npm install -g "${npm_flags[@]}" --prefix "$cache/pnpm@$PNPM_VERSION" "pnpm@$PNPM_VERSION"
	touch "$cache/pnpm@$PNPM_VERSION/.done"
fi
for spec in "@openai/codex@$CODEX_VERSION" "@anthropic-ai/claude-code@$CLAUDE_VERSION"; do
	for name in prefix local nvm pnpm; do
		layout "$spec" "$name"
	done
done
# gemini-cli: the escape self-test's third agent (launcher/agenttest.go); a
# prefix install is all it needs.
layout "@google/gemini-cli@$GEMINI_VERSION" prefix
chmod -R a+rX "$cache"
log "cache ready in $cache"
