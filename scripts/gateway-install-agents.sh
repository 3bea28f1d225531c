#!/usr/bin/env bash
# gateway-install-agents.sh — install the real agent CLIs that the gateway's
# end-to-end tests drive (netpolicy/fakemodel, build tag integration): the
# Codex CLI and Claude Code, from the npm registry, at the versions the
# adapters were checked against. Idempotent: a CLI already at its version is
# left alone. Needs node and npm (Debian: apt-get install nodejs npm).
set -euo pipefail
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.332}"

have() { # have CMD VERSION: is CMD on PATH and does --version mention VERSION?
  command -v "$1" >/dev/null 2>&1 && "$1" --version 2>/dev/null | grep -qF "$2"
}

install() { # install PKG@VERSION
  echo "gateway-install-agents: npm install -g $1"
  npm install -g --no-audit --no-fund "$1"
}

command -v npm >/dev/null || { echo "gateway-install-agents: npm not found; apt-get install -y nodejs npm" >&2; exit 1; }
have codex "$CODEX_VERSION" || install "@openai/codex@$CODEX_VERSION"
have claude "$CLAUDE_VERSION" || install "@anthropic-ai/claude-code@$CLAUDE_VERSION"
codex --version
claude --version
