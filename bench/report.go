package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// seriesOrder fixes each system's place (and colour) in every chart.
var seriesOrder = []string{heurekaWatch.name, heurekaTuned.name, heurekaStock.name, etcdSystem.name, zkSystem.name}

func seriesOf(name string) int { return max(0, slices.Index(seriesOrder, name)) }

// writeReport writes the Markdown page and, in DIR/benchmarks/ beside it,
// one PNG per workload.
// keptMarker starts the part of the report that other benchmarks (the
// soak, the gateway's, the agent's) write by hand: writeReport keeps it.
const keptMarker = "<!-- kept by bench: sections below come from other benchmarks -->"

func writeReport(out string, res *results) error {
	chartDir := filepath.Join(filepath.Dir(out), strings.TrimSuffix(filepath.Base(out), filepath.Ext(out)))
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		return err
	}
	rel := func(name string) string { return filepath.Base(chartDir) + "/" + name }
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p := res.Plan

	w("# Benchmarks: heureka, etcd and ZooKeeper on the same workloads\n\n")
	w("Measured side by side in one run on one machine by `bench/` (issue 7). Every server was started by the\n")
	w("benchmark on 127.0.0.1 with a temp data dir and stopped after its workload; each system was driven\n")
	w("through its usual Go client. Regenerate this page with the command below; the numbers are this run's,\n")
	w("not hand-edited.\n\n")
	w("| | |\n|---|---|\n")
	w("| command | `%s` |\n", strings.TrimSpace(res.Command))
	w("| mode | %s (%s) |\n", p.Mode, modeNote(p))
	w("| date | %s |\n", res.Date.Format("2006-01-02 15:04 MST"))
	w("| run time | %v |\n", res.Elapsed.Round(time.Second))
	w("| machine | %d cores (%s), %.1f GiB memory (/proc/meminfo), Linux %s |\n", res.Machine.Cores, res.Machine.CPU, float64(res.Machine.Memory)/(1<<30), res.Machine.Kernel)
	w("| load average | %s at the start, %s at the end (the machine is shared: see the *others* columns) |\n", res.LoadStart, res.LoadEnd)
	w("| software | heureka (this tree, %s), %s, %s; clients go.etcd.io/etcd/client/v3 %s, github.com/go-zookeeper/zk %s |\n",
		runtime.Version(), etcdVersion(), zkVersion(), modVersion("go.etcd.io/etcd/client/v3"), modVersion("github.com/go-zookeeper/zk"))
	if len(res.Missing) > 0 {
		w("| not run | %s |\n", strings.Join(res.Missing, "; "))
	}
	w("\n")

	writeTargets(w, res)

	// One section per workload that ran: its table, then its chart.
	for _, sec := range []struct {
		ran   bool
		png   string
		write func(writer, *results, string)
		chart func(*results) chart
	}{
		{len(res.Storm) > 0, "storm.png", writeStorm, stormChart},
		{len(res.Steady) > 0, "steady.png", writeSteady, steadyChart},
		{len(res.Prop) > 0, "propagation.png", writeProp, propChart},
		{len(res.Failures) > 0, "failure.png", writeFailures, failureChart},
	} {
		if !sec.ran {
			continue
		}
		sec.write(w, res, rel(sec.png))
		if err := sec.chart(res).render(filepath.Join(chartDir, sec.png)); err != nil {
			return err
		}
	}
	writeMethod(w, res)
	// Sections measured by other tools follow keptMarker; a new run
	// replaces only what comes before it.
	if old, err := os.ReadFile(out); err == nil {
		if i := bytes.Index(old, []byte(keptMarker)); i >= 0 {
			b.WriteString("\n")
			b.Write(old[i:])
		}
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

func modeNote(p plan) string {
	switch p.Mode {
	case "quick":
		return "scaled down to finish in ≤ 5 min on 2 cores: storm and steady state at N = 10k only (not 100k), " +
			"a 10 s steady window after 2 s of heartbeats (not 30 s after 10 s), no stock-timer steady run, " +
			"5 changes per watcher count (not 20), 20 observers per configuration (not 50), 2 repetitions of each " +
			"fast failure scenario (1 with 30 s polling), one silent host loss per system, and none with the stock 90 s lease"
	case "tiny":
		return "smoke test: N = 200, W = 20, heureka only, no slow scenario"
	}
	return "issue 7's sizes: N = 10k and 100k, W = 1k and 5k, every scenario and configuration"
}

type writer func(format string, args ...any)

// writeTargets lists the targets set in the issues and whether this run
// met them, by how much and why not.
func writeTargets(w writer, res *results) {
	w("## Targets from the issues\n\n")
	w("| target | heureka measured | met? | margin | notes |\n|---|---|---|---|---|\n")
	// Registration throughput: the largest N.
	if st := pick(res.Storm, func(s stormResult) bool { return s.System == heurekaWatch.name && s.Skipped == "" }); len(st) > 0 {
		s := st[len(st)-1]
		met := s.Rate >= 10_000
		w("| registration storm ≥ 10,000/s | %s/s at N = %s | %s | %s | %s |\n", fmtCount(s.Rate), fmtCount(float64(s.N)), yes(met),
			margin(s.Rate/10_000, true), stormWhy(s, met))
	}
	for _, t := range []struct {
		w     int
		limit time.Duration
	}{{1000, 50 * time.Millisecond}, {5000, 250 * time.Millisecond}} {
		for _, pr := range pick(res.Prop, func(p propResult) bool { return p.System == heurekaWatch.name && p.W == t.w && p.Skipped == "" }) {
			met := pr.Lat.P99 <= t.limit && pr.Lat.Missed == 0
			w("| one change → %s watchers, p99 ≤ %v | p99 %s (p50 %s, max %s) | %s | %s | %s |\n", fmtCount(float64(t.w)), t.limit,
				ms(pr.Lat.P99), ms(pr.Lat.P50), ms(pr.Lat.Max), yes(met), margin(float64(t.limit)/float64(max(pr.Lat.P99, 1)), true), propWhy(pr, met))
		}
	}
	for _, t := range []struct {
		key, what string
		limit     time.Duration
	}{
		{"crash", "DataNode daemon killed → DOWN seen, p99 ≤ 1.5 s", 1500 * time.Millisecond},
		{"drain", "SIGTERM → OUT_OF_SERVICE seen, p99 ≤ 100 ms", 100 * time.Millisecond},
		{"failover", "NameNode change resolved ≤ 1.5 s (p99)", 1500 * time.Millisecond},
	} {
		for _, fr := range pick(res.Failures, func(f failureResult) bool { return f.System == heurekaWatch.name && f.Scenario == t.key }) {
			if fr.Skipped != "" {
				w("| %s | not measured | – | – | %s |\n", t.what, fr.Skipped)
				continue
			}
			met := fr.Lat.P99 <= t.limit && fr.Lat.Missed == 0
			w("| %s | p99 %s (p50 %s, max %s; %d samples) | %s | %s | %s |\n", t.what, ms(fr.Lat.P99), ms(fr.Lat.P50), ms(fr.Lat.Max),
				fr.Lat.N, yes(met), margin(float64(t.limit)/float64(max(fr.Lat.P99, 1)), true), failureWhy(t.key, fr, met))
		}
	}
	w("\nThe targets apply to heureka's defaults (agent + watching clients); the polling configurations are in\n")
	w("the failure table below. *Margin*: the room left (target ÷ measured for times, measured ÷ target for\n")
	w("rates), or by how much the measurement exceeds the target.\n\n")
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// margin is target ÷ measured (times) or measured ÷ target (rates).
func margin(f float64, _ bool) string {
	if f >= 1 {
		return fmt.Sprintf("%.2f× room", f)
	}
	return fmt.Sprintf("missed by %.0f%%", 100*(1/f-1))
}

func stormWhy(s stormResult, met bool) string {
	perReg := s.CPU / time.Duration(max(1, s.Done))
	capacity := float64(time.Second) / float64(max(perReg, 1))
	note := fmt.Sprintf("server CPU %v per registration (one core would do ≈ %s/s); the load generator took %.1f cores and other processes %.1f of the 2",
		perReg.Round(time.Microsecond), fmtCount(capacity), s.BenchCores, s.Others)
	if met {
		return note
	}
	return "missed because the 2 cores are shared: " + note
}

func propWhy(p propResult, met bool) string {
	note := fmt.Sprintf("%d client.Cache watchers (one TCP stream, decode and snapshot each) in the benchmark process on the same 2 cores; other processes took %.1f cores", p.W, p.Others)
	if met {
		return note
	}
	return "missed: the fan-out is bounded by CPU, which the watchers themselves share with the server: " + note
}

func failureWhy(key string, f failureResult, met bool) string {
	switch key {
	case "crash":
		if met {
			return "agent probe every 1 s, second failure confirmed 0.25 s later, then pushed"
		}
		return "the agent needs up to 1 s (probe interval) + 0.25 s (recheck) to call the daemon dead; the rest is registration + push on a busy machine"
	case "drain":
		if met {
			return "the agent sets the OUT_OF_SERVICE override at once; the watch stream pushes it"
		}
		return "the override is one HTTP call; time above it is scheduling on the shared machine"
	case "failover":
		if met {
			return "the agent reads the HA state on every 1 s probe and reports a change at once"
		}
		return "bounded below by the 1 s probe interval; the rest is scheduling on the shared machine"
	}
	return ""
}

func pick[T any](s []T, f func(T) bool) []T {
	var out []T
	for _, x := range s {
		if f(x) {
			out = append(out, x)
		}
	}
	return out
}

// ratio formats a ÷ b, or – when either is missing.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func peerValue[T any](rows []T, sys string, match func(T) bool, val func(T) float64, name func(T) string) float64 {
	for _, r := range rows {
		if name(r) == sys && match(r) {
			return val(r)
		}
	}
	return 0
}

func writeStorm(w writer, res *results, png string) {
	w("## 1. Registration storm\n\n")
	w("N instances register as fast as %d concurrent writers can: heureka through `client.Register` (Eureka\n", res.Plan.Workers)
	w("`POST /eureka/apps/{APP}`, JSON, HTTP/1.1 keep-alive); etcd with a lease grant and a put under the lease\n")
	w("(two Raft writes per instance, %d writers per gRPC connection); ZooKeeper with one ephemeral `create` per\n", 16)
	w("instance on a pool of %d sessions (ZooKeeper's liveness is per session; the writers share them). Each\n", res.Plan.ZKSessions)
	w("instance is a DataNode record of ≈ 1 KiB of Eureka JSON with the agent's metadata keys, %d per application.\n\n", res.Plan.PerApp)
	w("| N | system | registrations/s | p50 | p99 | errors | server CPU | server RSS after | rate × etcd | rate × ZooKeeper | load generator | others |\n")
	w("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.Storm {
		if s.Skipped != "" {
			w("| %s | %s | skipped: %s |||||||||\n", fmtCount(float64(s.N)), s.System, oneLine(s.Skipped))
			continue
		}
		match := func(x stormResult) bool { return x.N == s.N && x.Skipped == "" }
		val := func(x stormResult) float64 { return x.Rate }
		name := func(x stormResult) string { return x.System }
		cut := ""
		if s.Cut {
			cut = fmt.Sprintf(" (cut at %v: %d done)", res.Plan.StormLimit, s.Done)
		}
		w("| %s | %s | **%s**%s | %s | %s | %d | %.1f s | %s | %s | %s | %.1f cores | %.1f cores |\n",
			fmtCount(float64(s.N)), s.System, fmtCount(s.Rate), cut, ms(s.Lat.P50), ms(s.Lat.P99), s.Errors, s.CPU.Seconds(), mib(s.RSS),
			ratio(s.Rate, peerValue(res.Storm, etcdSystem.name, match, val, name)),
			ratio(s.Rate, peerValue(res.Storm, zkSystem.name, match, val, name)), s.BenchCores, s.Others)
	}
	for _, s := range res.Storm {
		if s.FirstErr != "" {
			w("\nFirst error (%s, N = %d): `%s`\n", s.System, s.N, oneLine(s.FirstErr))
		}
	}
	w("\n*Server CPU* is the server process's user+system time during the storm (/proc/PID/stat); *load generator*\n")
	w("and *others* are the benchmark's own CPU and everything else on the machine, in cores, over the same interval.\n\n")
	w("![registration storm](%s)\n\n", png)
}

func writeSteady(w writer, res *results, png string) {
	w("## 2. Steady state\n\n")
	w("N registered instances heartbeat every renewal period, evenly spread, while %d readers follow the whole\n", res.Plan.Readers)
	w("registry the way each system's clients do. The server's CPU (percent of one core) and resident memory are\n")
	w("read from /proc over a %v window after %v of heartbeats.\n\n", res.Plan.SteadyWindow, res.Plan.SteadyWarm)
	w("| N | system | heartbeat | readers | server CPU | server RSS | heartbeats in window | heartbeat p99 | CPU × etcd | RSS × etcd | CPU × ZooKeeper | RSS × ZooKeeper | others |\n")
	w("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.Steady {
		if s.Skipped != "" {
			w("| %s | %s | skipped: %s |||||||||||\n", fmtCount(float64(s.N)), s.System, oneLine(s.Skipped))
			continue
		}
		match := func(x steadyResult) bool { return x.N == s.N && x.Skipped == "" }
		name := func(x steadyResult) string { return x.System }
		cpu := func(x steadyResult) float64 { return x.CPUPct }
		rss := func(x steadyResult) float64 { return float64(x.RSS) }
		hb := fmt.Sprintf("%d (%d failed)", s.Sent, s.Failed)
		p99 := ms(s.Lat.P99)
		if s.System == zkSystem.name {
			hb, p99 = fmt.Sprintf("≈ %d session pings", int(float64(min(s.N, 2000))*s.Window.Seconds()/(s.Renew.Seconds()))), "–"
		}
		w("| %s | %s | every %v | %d × %s | **%.1f%%** | **%s** | %s | %s | %s | %s | %s | %s | %.1f cores |\n",
			fmtCount(float64(s.N)), s.System, s.Renew, s.Readers, s.ReaderHow, s.CPUPct, mib(s.RSS), hb, p99,
			ratio(s.CPUPct, peerValue(res.Steady, etcdSystem.name, match, cpu, name)),
			ratio(float64(s.RSS), peerValue(res.Steady, etcdSystem.name, match, rss, name)),
			ratio(s.CPUPct, peerValue(res.Steady, zkSystem.name, match, cpu, name)),
			ratio(float64(s.RSS), peerValue(res.Steady, zkSystem.name, match, rss, name)), s.Others)
	}
	w("\nHow each system heartbeats:\n\n")
	seen := map[string]bool{}
	for _, s := range res.Steady {
		if s.HowNote != "" && !seen[s.System] {
			seen[s.System] = true
			w("- %s: %s.\n", s.System, s.HowNote)
		}
	}
	w("\nThe two heureka configurations differ here only in their readers: polling readers fetch `/apps/delta`\n")
	w("every interval (and the whole registry when a delta's hash code does not match), which competes with the\n")
	w("heartbeats for the 2 shared cores and shows in the heartbeat p99; watching readers send nothing while\n")
	w("nothing changes.\n")
	w("\nZooKeeper's heartbeat is per session, not per znode: its %s instances are held by one session each up to\n", "N")
	w("2,000 sessions, then shared, so at N = 10k each session owns 5 znodes. etcd and heureka renew every\n")
	w("instance's lease. ZooKeeper runs in a JVM with its default heap sizing, which dominates its RSS.\n\n")
	w("![steady state](%s)\n\n", png)
}

func writeProp(w writer, res *results, png string) {
	w("## 3. Propagation: one change to W watchers\n\n")
	w("W consumers, each with its own connection, follow one application of 10 DataNodes; one instance's\n")
	w("metadata changes (heureka: the instance registers again, as an agent reports a change; etcd: a put;\n")
	w("ZooKeeper: a setData), %d times, and each consumer's view is timed from just before the write until it\n", res.Plan.Rounds)
	w("holds the new value. heureka's consumers are `client.Cache` on `/v1/watch` (SSE); etcd's a Watch on the\n")
	w("app's prefix; ZooKeeper's a child watch plus a data watch per znode, re-armed after every event with a\n")
	w("re-read (watches are one-shot and carry no data, so the view changes only when the re-read returns).\n\n")
	w("| W | system | p50 | p99 | max | samples | missed | server RSS with W connected | p99 × etcd | p99 × ZooKeeper | watchers connected in | others |\n")
	w("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.Prop {
		if s.Skipped != "" {
			w("| %s | %s | skipped: %s |||||||||\n", fmtCount(float64(s.W)), s.System, oneLine(s.Skipped))
			continue
		}
		match := func(x propResult) bool { return x.W == s.W && x.Skipped == "" }
		name := func(x propResult) string { return x.System }
		p99 := func(x propResult) float64 { return float64(x.Lat.P99) }
		w("| %s | %s | %s | **%s** | %s | %d | %d | %s | %s | %s | %s | %.1f cores |\n",
			fmtCount(float64(s.W)), s.System, ms(s.Lat.P50), ms(s.Lat.P99), ms(s.Lat.Max), s.Lat.N, s.Lat.Missed, mib(s.RSS),
			ratio(float64(s.Lat.P99), peerValue(res.Prop, etcdSystem.name, match, p99, name)),
			ratio(float64(s.Lat.P99), peerValue(res.Prop, zkSystem.name, match, p99, name)), ms(s.Setup), s.Others)
	}
	w("\nAll W consumers live in the benchmark process, on the same 2 cores as the server: the times include\n")
	w("each client decoding the event and publishing its new view. A missed sample (none above if 0) is a\n")
	w("consumer that had not seen the change after 10 s.\n\n")
	w("![propagation](%s)\n\n", png)
}

func writeFailures(w writer, res *results, png string) {
	w("## 4. Failure scenarios\n\n")
	w("Each scenario is timed from the event until **every** observing client's view has changed. The daemon is\n")
	w("heureka's HDFS simulator (`sim`: /jmx and a data port, stopped like a dead process); beside it runs the\n")
	w("agent (`agent` package, the sidecar's code, in a process of its own so that it can be killed: probe every\n")
	w("1 s, DOWN after 2 failures 0.25 s apart, OUT_OF_SERVICE then a 5 s drain on SIGTERM). For etcd and ZooKeeper\n")
	w("the same agent reports through an `agent.Registry` written here (etcd: lease + put, keep-alive per renewal;\n")
	w("ZooKeeper: an ephemeral znode on the agent's own session), so every system hears the same thing at the\n")
	w("same moment and only the registry differs. %d observers per configuration; polling observers start spread\n", res.Plan.Observers)
	w("over one poll interval, as real clients are. 100 background DataNodes renew on the same timers. Events are\n")
	w("placed at a random point of the agent's 1 s probe cycle. A silent host loss is staged a second or two\n")
	w("after the agent registered, so its lease (or TTL, or session) has nearly all of its 30 s still to run.\n\n")
	if res.HeurekaAgent {
		w("heureka's agents were `heureka agent` processes (the shipped subcommand); etcd's and ZooKeeper's are the\n")
		w("benchmark binary running the same `agent` package.\n\n")
	} else {
		w("`heureka agent` was not in this build, so every agent is the benchmark binary running the `agent` package.\n\n")
	}
	w("| scenario | system | expected from the timers | samples (observers × reps) | p50 | p99 | max | missed | p99 × etcd | p99 × ZooKeeper |\n")
	w("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sc := range scenarios {
		for _, f := range pick(res.Failures, func(f failureResult) bool { return f.Scenario == sc.key }) {
			if f.Skipped != "" {
				w("| %s | %s | %s | skipped: %s |||||||\n", sc.key, f.System, f.Expected, oneLine(f.Skipped))
				continue
			}
			match := func(x failureResult) bool { return x.Scenario == f.Scenario && x.Skipped == "" }
			name := func(x failureResult) string { return x.System }
			p99 := func(x failureResult) float64 { return float64(x.Lat.P99) }
			w("| %s | %s | %s | %d × %d | %s | **%s** | %s | %d | %s | %s |\n", sc.key, f.System, f.Expected, f.Observers, f.Reps,
				ms(f.Lat.P50), ms(f.Lat.P99), ms(f.Lat.Max), f.Lat.Missed,
				ratio(float64(f.Lat.P99), peerValue(res.Failures, etcdSystem.name, match, p99, name)),
				ratio(float64(f.Lat.P99), peerValue(res.Failures, zkSystem.name, match, p99, name)))
		}
	}
	w("\nScenarios: ")
	for i, sc := range scenarios {
		if i > 0 {
			w("; ")
		}
		w("**%s**: %s", sc.key, sc.title)
	}
	w(".\n\nFor comparison, from DESIGN.md's field report (stock Eureka, tuned to 10 s renew / 30 s lease / 5 s fetch):\n")
	w("failover 25–35 s, graceful drain 1–2 s, NameNode failover 22 s; with Eureka's defaults research/peers.md\n")
	w("computes 2.5–5.5 min for a dead node (180 s effective lease, 60 s eviction tick, 30 s response cache,\n")
	w("30 s client fetch). The *stock Eureka timers* rows are heureka with Eureka's client timers; heureka has no\n")
	w("response cache, no doubled lease and a 0.5 s eviction sweep, so a real Eureka server would be slower still.\n\n")
	w("![failure scenarios](%s)\n\n", png)
}

func writeMethod(w writer, res *results) {
	w("## Method and caveats\n\n")
	w("- **One machine, shared.** Servers, load generators, agents and observers share %d cores, and other\n", res.Machine.Cores)
	w("  processes may run meanwhile (the *others* columns, from /proc/stat minus the benchmark and the server).\n")
	w("  Ratios are between systems measured minutes apart under comparable conditions, not in isolation.\n")
	w("  A storm or propagation measurement during which other processes took more than half a core is\n")
	w("  repeated (twice at most in full mode, once in the first 100 s of a quick run) and the least disturbed\n")
	w("  run is kept.\n")
	w("- **Durability differs by design.** etcd and ZooKeeper write every change to a WAL / transaction log and\n")
	w("  fsync it (temp dirs on the machine's disk); heureka keeps soft state in memory (DESIGN.md: AP, rebuilt from\n")
	w("  peers and re-registration). That is part of what each choice costs, not a handicap added here.\n")
	w("- **One server each.** No replication: a 3-node etcd/ZooKeeper quorum or heureka peer set adds a network\n")
	w("  round trip per write for the former and an asynchronous replication batch for the latter.\n")
	w("- **Configurations.** heureka *stock Eureka timers*: 30 s renew, 90 s lease, clients polling `/apps/delta`\n")
	w("  every 30 s, Eureka's self-preservation; *field-tuned*: 10 s renew, 30 s lease, 5 s polling,\n")
	w("  self-preservation off; *defaults + watch*: 10 s renew, 30 s lease, clients on `/v1/watch`, smart\n")
	w("  self-preservation. etcd: 30 s lease TTL renewed every 10 s (clientv3's TTL/3); ZooKeeper: 30 s session\n")
	w("  timeout (tickTime 2 s), pinged every 10 s by the client library.\n")
	w("- **Bounded.** Every load loop has a count and a deadline (plan.go); a storm that hits its deadline is\n")
	w("  reported as cut. Open files: %d.\n", res.FDLimit)
	w("- **Charts** are drawn by the benchmark (Go standard library `image/png`, `basicfont` labels).\n")
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func etcdVersion() string {
	out, err := exec.Command(etcdBin, "--version").Output()
	if err != nil {
		return "etcd (not installed)"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return "etcd " + strings.TrimSpace(strings.TrimPrefix(line, "etcd Version:"))
}

func zkVersion() string {
	jars, _ := filepath.Glob(filepath.Join(filepath.Dir(zookeeperJar), "zookeeper-[0-9]*.jar"))
	if len(jars) == 0 {
		return "ZooKeeper (version unknown)"
	}
	return "ZooKeeper " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jars[0]), "zookeeper-"), ".jar")
}

func modVersion(path string) string {
	if bi, ok := readBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(see bench/go.mod)"
}

// Charts.

func stormChart(res *results) chart {
	c := chart{title: "Registration storm: registrations per second (higher is better)", series: seriesOrder}
	p := panel{ylabel: "registrations/s", format: fmtCount}
	for _, n := range res.Plan.StormN {
		g := barGroup{label: "N = " + fmtCount(float64(n))}
		for _, s := range pick(res.Storm, func(s stormResult) bool { return s.N == n }) {
			bv := barValue{series: seriesOf(s.System), value: s.Rate}
			if s.Skipped != "" {
				bv.note = "skipped"
			}
			g.bars = append(g.bars, bv)
		}
		p.groups = append(p.groups, g)
	}
	c.panels = []panel{p}
	return c
}

func steadyChart(res *results) chart {
	c := chart{title: "Steady state: server CPU and memory with N heartbeating instances and readers (lower is better)", series: seriesOrder}
	cpu := panel{ylabel: "server CPU, % of one core", format: fmtPercent}
	rss := panel{ylabel: "server RSS, MiB", format: fmtMiB}
	for _, n := range res.Plan.SteadyN {
		gc := barGroup{label: "N = " + fmtCount(float64(n))}
		gr := gc
		for _, s := range pick(res.Steady, func(s steadyResult) bool { return s.N == n }) {
			note := ""
			if s.Skipped != "" {
				note = "skipped"
			}
			gc.bars = append(gc.bars, barValue{series: seriesOf(s.System), value: s.CPUPct, note: note})
			gr.bars = append(gr.bars, barValue{series: seriesOf(s.System), value: float64(s.RSS) / (1 << 20), note: note})
		}
		cpu.groups = append(cpu.groups, gc)
		rss.groups = append(rss.groups, gr)
	}
	c.panels = []panel{cpu, rss}
	return c
}

func propChart(res *results) chart {
	c := chart{title: "Propagation: one change to W watchers, p50 and p99 (lower is better)", series: seriesOrder}
	for _, q := range []struct {
		name string
		f    func(dist) time.Duration
	}{{"p50", func(d dist) time.Duration { return d.P50 }}, {"p99", func(d dist) time.Duration { return d.P99 }}} {
		p := panel{ylabel: q.name + " latency", format: fmtMillis}
		for _, w := range res.Plan.Watchers {
			g := barGroup{label: "W = " + fmtCount(float64(w))}
			for _, s := range pick(res.Prop, func(s propResult) bool { return s.W == w }) {
				bv := barValue{series: seriesOf(s.System), value: float64(q.f(s.Lat)) / float64(time.Millisecond)}
				if s.Skipped != "" {
					bv.note = "skipped"
				}
				g.bars = append(g.bars, bv)
			}
			p.groups = append(p.groups, g)
		}
		c.panels = append(c.panels, p)
	}
	return c
}

func failureChart(res *results) chart {
	c := chart{title: "Failure scenarios: p99 time until every client's view changed (log scale, lower is better)", series: seriesOrder}
	p := panel{ylabel: "p99, log scale", log: true, format: fmtMillis}
	for _, sc := range scenarios {
		g := barGroup{label: sc.key}
		for _, f := range pick(res.Failures, func(f failureResult) bool { return f.Scenario == sc.key }) {
			bv := barValue{series: seriesOf(f.System), value: float64(f.Lat.P99) / float64(time.Millisecond)}
			if f.Skipped != "" {
				bv.note = "n/a"
			}
			g.bars = append(g.bars, bv)
		}
		p.groups = append(p.groups, g)
	}
	c.panels = []panel{p}
	return c
}
