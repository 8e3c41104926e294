#!/usr/bin/env bash
# Runs the gateway benchmark (go run ./bench) from anywhere in the repository.
#
#   bash bench/run.sh                 # full run, ~20 minutes on 2 cores
#   bash bench/run.sh -quick          # smoke run
#   bash bench/run.sh -h              # every option
#
# Installs wrk (closed-loop load) and promtool (checks the /metrics
# exposition) from Debian when they are missing and this runs as root;
# otherwise the benchmark uses its built-in Go load generator and skips the
# metrics check.
set -euo pipefail
cd "$(dirname "$0")/.."

install_if_missing() { # <command> <debian package>
	command -v "$1" >/dev/null && return 0
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		echo "== installing $2 (for $1)" >&2
		apt-get install -y -q "$2" >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "$2" >/dev/null 2>&1; } ||
			echo "could not install $2" >&2
	else
		echo "$1 not found: install it with 'sudo apt-get install $2'" >&2
	fi
}

install_if_missing wrk wrk
install_if_missing promtool prometheus

# The program checks its /metrics snapshots with promtool when installed.
exec go run ./bench "$@"
