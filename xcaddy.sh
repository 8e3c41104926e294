#!/usr/bin/env bash
# Builds Caddy with Promptwall into ./caddy.
#   ./xcaddy.sh        build
#   ./xcaddy.sh run    build, then serve Caddyfile.example
# Uses xcaddy where it is installed, else plain `go build ./cmd/caddy`
# (cmd/caddy is Caddy's standard main with Promptwall's modules).
set -euo pipefail
cd "$(dirname "$0")"

build() {
	if command -v xcaddy >/dev/null 2>&1; then
		xcaddy build --output ./caddy --with github.com/promptwall/promptwall=./
	else
		go build -o ./caddy ./cmd/caddy
	fi
}

# demo_token gives the quick start an API token: the caller's
# PROMPTWALL_BOOTSTRAP_TOKEN if set, else one generated once and kept in
# .promptwall/demo-token (mode 0600) so the README's curl lines can read it.
demo_token() {
	if [ -n "${PROMPTWALL_BOOTSTRAP_TOKEN:-}" ]; then
		return
	fi
	mkdir -p .promptwall
	if [ ! -s .promptwall/demo-token ]; then
		(umask 077 && printf 'pw_%s\n' "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')" > .promptwall/demo-token)
	fi
	PROMPTWALL_BOOTSTRAP_TOKEN=$(cat .promptwall/demo-token)
	export PROMPTWALL_BOOTSTRAP_TOKEN
	echo "API token for this demo: in .promptwall/demo-token" >&2
}

case "${1:-build}" in
build)
	build
	;;
run)
	build
	demo_token
	exec ./caddy run --config Caddyfile.example --adapter caddyfile
	;;
*)
	echo "usage: $0 [build|run]" >&2
	exit 2
	;;
esac
