#!/usr/bin/env bash
# Starts throwaway PostgreSQL and Redis servers for the tests that need them,
# on free loopback ports with temporary data directories, and exports
#   PROMPTWALL_TEST_PG_DSN     postgres://...@127.0.0.1:PORT/promptwall_test
#   PROMPTWALL_TEST_REDIS_ADDR 127.0.0.1:PORT
# Source it (`. .ci/services.sh`), then call services_stop when done; it also
# registers an EXIT trap that stops both. Missing servers are installed from
# Debian's packages postgresql and redis-server when running as root.
#
# Standalone: `bash .ci/services.sh -- go test ./store/...` runs the command
# with both servers up and stops them afterwards.

services_dir=""
services_pg_bin=""

services_install() { # <command-or-path> <debian package>
	[ -x "$1" ] || command -v "$1" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "services: $1 is missing and this is not root: install Debian's $2" >&2
		return 1
	fi
	echo "services: installing $2" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null; }
}

services_free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "services: no free loopback port found" >&2
	return 1
}

services_find_pg_bin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# services_as_owner runs a command as the owner of the data directory:
# PostgreSQL refuses to run as root, so under root it runs as "postgres".
services_as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
	else
		"$@"
	fi
}

services_start() {
	services_install redis-server redis-server || return 1
	services_pg_bin=$(services_find_pg_bin) ||
		{ services_install /usr/lib/postgresql postgresql && services_pg_bin=$(services_find_pg_bin); } ||
		{ echo "services: PostgreSQL's initdb not found after installing postgresql" >&2; return 1; }

	services_dir=$(mktemp -d /tmp/promptwall-services.XXXXXX)
	chmod 755 "$services_dir"

	local rport pport
	rport=$(services_free_port) || return 1
	mkdir -p "$services_dir/redis"
	redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$services_dir/redis" --daemonize yes \
		--pidfile "$services_dir/redis/redis.pid" --logfile "$services_dir/redis/redis.log" >/dev/null ||
		{ echo "services: redis-server failed to start" >&2; return 1; }

	pport=$(services_free_port) || return 1
	mkdir -p "$services_dir/pg"
	[ "$(id -u)" -eq 0 ] && chown postgres "$services_dir/pg"
	services_as_owner "$services_pg_bin/initdb" -D "$services_dir/pg/data" -U postgres \
		--auth=trust -E UTF8 --no-locale >"$services_dir/initdb.log" 2>&1 ||
		{ echo "services: initdb failed:" >&2; cat "$services_dir/initdb.log" >&2; return 1; }
	# fsync off: the data is thrown away, and the tests measure behaviour,
	# not durability of this throwaway server.
	services_as_owner "$services_pg_bin/pg_ctl" -D "$services_dir/pg/data" -w -t 60 \
		-l "$services_dir/pg/server.log" \
		-o "-p $pport -c listen_addresses=127.0.0.1 -k $services_dir/pg -c fsync=off -c max_connections=200" \
		start >/dev/null ||
		{ echo "services: PostgreSQL failed to start:" >&2; cat "$services_dir/pg/server.log" >&2; return 1; }
	services_as_owner "$services_pg_bin/../bin/psql" -q -h 127.0.0.1 -p "$pport" -U postgres \
		-c 'CREATE DATABASE promptwall_test' postgres >/dev/null 2>&1 ||
		psql -q -h 127.0.0.1 -p "$pport" -U postgres -c 'CREATE DATABASE promptwall_test' postgres >/dev/null ||
		{ echo "services: creating the test database failed" >&2; return 1; }

	for _ in $(seq 1 50); do
		redis-cli -h 127.0.0.1 -p "$rport" ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	export PROMPTWALL_TEST_PG_DSN="postgres://postgres@127.0.0.1:$pport/promptwall_test?sslmode=disable"
	export PROMPTWALL_TEST_REDIS_ADDR="127.0.0.1:$rport"
	# Redis's directory (redis.pid), for tests that stop and restart it.
	export PROMPTWALL_TEST_REDIS_DIR="$services_dir/redis"
	# The PostgreSQL binaries, for tests that stop and restart the server.
	export PROMPTWALL_TEST_PG_CTL="$services_pg_bin/pg_ctl"
	export PROMPTWALL_TEST_PG_DATA="$services_dir/pg/data"
	echo "services: PostgreSQL on 127.0.0.1:$pport, Redis on 127.0.0.1:$rport (data in $services_dir)" >&2
	trap services_stop EXIT
}

services_stop() {
	[ -n "$services_dir" ] || return 0
	if [ -f "$services_dir/redis/redis.pid" ]; then
		kill "$(cat "$services_dir/redis/redis.pid")" 2>/dev/null || true
	fi
	if [ -d "$services_dir/pg/data" ]; then
		services_as_owner "$services_pg_bin/pg_ctl" -D "$services_dir/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$services_dir"
	services_dir=""
	unset PROMPTWALL_TEST_PG_DSN PROMPTWALL_TEST_REDIS_ADDR PROMPTWALL_TEST_REDIS_DIR PROMPTWALL_TEST_PG_CTL PROMPTWALL_TEST_PG_DATA
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	services_start
	if [ "${1:-}" = "--" ]; then
		shift
		status=0
		"$@" || status=$?
		services_stop
		exit "$status"
	fi
	echo "PROMPTWALL_TEST_PG_DSN=$PROMPTWALL_TEST_PG_DSN"
	echo "PROMPTWALL_TEST_REDIS_ADDR=$PROMPTWALL_TEST_REDIS_ADDR"
	trap - EXIT
fi
