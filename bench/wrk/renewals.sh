#!/usr/bin/env bash
# renewals.sh: heureka's heartbeats against a bare net/http handler, as an
# outside user measures them: wrk with a Lua script, taskset, nothing of
# heureka's own harness (bench/soak) in the loop.
#
#   cd bench/wrk && ./renewals.sh            # builds heureka and the bare handler
#   HEUREKA_BIN=/path/to/heureka N=100000 ROUNDS=3 ./renewals.sh
#
# Steps: heureka (and, beside it, ./bare) start pinned to SERVER_CPU; wrk,
# pinned to WRK_CPU, registers N instances (register.lua, 16 connections,
# leases of an hour so none expires while it waits); after SETTLE, ROUNDS
# alternating rounds of DUR each, wrk -t1 -cCONNS sending renew.lua's
# heartbeats first to the bare handler, then to heureka. Every answer must
# be a 2xx. The load average is printed beside each round.
#
# Settings (environment): N (100000), APPS (1: applications the instances
# are spread over), ORDER (ordered: heartbeats in registration order;
# shuffled: in a fixed random order), SETTLE (120), ROUNDS (3), DUR (6s),
# CONNS (64), SERVER_CPU (1), WRK_CPU (0), HEUREKA_BIN, HEUREKA_ARGS (extra
# flags for 'heureka server'), PROFILE (seconds: take a CPU profile of
# heureka during its last round, into $OUT/heureka.pprof), OUT (a
# directory to keep the logs in; a temporary one otherwise), PRIORITY (1:
# run in a session of its own whose autogroup has nice -20; needs root).
#
# Why PRIORITY: with the kernel's autogroups on (/proc/sys/kernel/
# sched_autogroup_enabled), CPU time is shared between sessions first, and
# a process's nice value ranks it only within its own session, so
# `nice -n -20` does not keep other sessions' compilers off the servers'
# core. A session's own autogroup nice value does.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if [[ ${PRIORITY:-} == 1 && -z ${RENEWALS_SESSION:-} ]]; then
	exec setsid -w env RENEWALS_SESSION=1 bash -c 'echo -20 >/proc/self/autogroup && exec "$0"' "$(pwd)/renewals.sh"
fi

N=${N:-100000}
APPS=${APPS:-1}
ORDER=${ORDER:-ordered}
SETTLE=${SETTLE:-120}
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-6s}
CONNS=${CONNS:-64}
SERVER_CPU=${SERVER_CPU:-1}
WRK_CPU=${WRK_CPU:-0}
PROFILE=${PROFILE:-}
for tool in wrk taskset go curl; do
	if ! command -v "$tool" >/dev/null; then
		echo "renewals.sh: $tool is not installed (Debian: wrk, util-linux, curl)" >&2
		exit 1
	fi
done

OUT=${OUT:-$(mktemp -d -t heureka-wrk-XXXXXX)}
mkdir -p "$OUT"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

if [[ -z ${HEUREKA_BIN:-} ]]; then
	HEUREKA_BIN=$OUT/heureka
	(cd ../.. && go build -o "$HEUREKA_BIN" ./cmd/heureka)
fi
go build -o "$OUT/bare" ./bare

# waitlog FILE PATTERN: the address logged after PATTERN, within 30 s.
waitlog() {
	for _ in $(seq 300); do
		if a=$(grep -o "$2[^ ]*" "$1" 2>/dev/null | head -1) && [[ -n $a ]]; then
			echo "${a#"$2"}"
			return
		fi
		sleep 0.1
	done
	echo "renewals.sh: nothing matched $2 in $1" >&2
	exit 1
}

debug=()
[[ -n $PROFILE ]] && debug=(--debug-listen 127.0.0.1:0)
# shellcheck disable=SC2086
taskset -c "$SERVER_CPU" "$HEUREKA_BIN" server --listen 127.0.0.1:0 "${debug[@]}" ${HEUREKA_ARGS:-} 2>"$OUT/heureka.log" &
heureka_pid=$!
pids+=($!)
taskset -c "$SERVER_CPU" "$OUT/bare" >"$OUT/bare.addr" 2>"$OUT/bare.log" &
bare_pid=$!
pids+=($!)
heureka=$(waitlog "$OUT/heureka.log" "addr=")
bare=$(waitlog "$OUT/bare.addr" "")
[[ -n $PROFILE ]] && pprof=$(waitlog "$OUT/heureka.log" "at=")

export WRK_N=$N WRK_APPS=$APPS WRK_ORDER=$ORDER WRK_LDT=$(($(date +%s) * 1000))
echo "heureka $heureka, bare handler $bare; registering $N instances in $APPS application(s)"
start=$(date +%s.%N)
taskset -c "$WRK_CPU" wrk -t1 -c16 -d300s -s register.lua "http://$heureka" >"$OUT/register.out" 2>&1 &
reg=$!
pids+=("$reg")
# wrk runs for a fixed time; it is killed once heureka has accepted every
# registration (register.lua reports a refused one on wrk's stderr).
while :; do
	held=$(curl -fsS "http://$heureka/metrics" | awk '$1 == "heureka_registrations_total" {print int($2)}')
	[[ ${held:-0} -ge $N ]] && break
	if ! kill -0 "$reg" 2>/dev/null; then
		echo "renewals.sh: wrk stopped with ${held:-0} of $N registered" >&2
		cat "$OUT/register.out" >&2
		exit 1
	fi
	sleep 0.2
done
kill "$reg"
wait "$reg" 2>/dev/null || true
echo "registered $N in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s; resting ${SETTLE}s"
sleep "$SETTLE"

# round TARGET NAME PID: one wrk run; prints renewals/s, and the server's
# CPU (user and system, from /proc/PID/stat) in microseconds per renewal.
round() {
	local out=$OUT/round-$2-$r.out cpu0 cpu1
	cpu0=$(cputicks "$3")
	taskset -c "$WRK_CPU" wrk -t1 -c"$CONNS" -d"$DUR" --latency -s renew.lua "http://$1" >"$out" 2>&1
	cpu1=$(cputicks "$3")
	if grep -q 'Non-2xx' "$out"; then
		cat "$out" >&2
		exit 1
	fi
	awk -v c=$((cpu1 - cpu0)) -v hz="$(getconf CLK_TCK)" '
		/^ +[0-9]+ requests in/ {n = $1}
		/Requests\/sec/ {rps = $2}
		END {printf "%s %.1f\n", rps, c / hz * 1e6 / n}' "$out"
}

# cputicks PID: the user and system time PID has used, in clock ticks.
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

printf '| round | load average | bare handler, renewals/s | heureka, renewals/s | heureka ÷ bare | CPU µs per renewal: bare, heureka |\n|---|---|---|---|---|---|\n'
for r in $(seq "$ROUNDS"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	read -r b bcpu < <(round "$bare" bare "$bare_pid")
	[[ -n ${bcpu:-} ]] || exit 1
	if [[ -n $PROFILE && $r == "$ROUNDS" ]]; then
		curl -fsS -o "$OUT/heureka.pprof" "http://$pprof/debug/pprof/profile?seconds=$PROFILE" &
		prof=$!
	fi
	read -r h hcpu < <(round "$heureka" heureka "$heureka_pid")
	[[ -n ${hcpu:-} ]] || exit 1
	[[ -n ${prof:-} ]] && wait "$prof"
	awk -v r="$r" -v l="$load" -v b="$b" -v h="$h" -v bc="$bcpu" -v hc="$hcpu" \
		'BEGIN {printf "| %d | %s | %.0f | %.0f | %.2f× | %s, %s |\n", r, l, b, h, h / b, bc, hc}'
done
echo "logs and wrk output in $OUT"
