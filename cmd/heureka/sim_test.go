package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/sim"
)

func TestSimCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"sim"}, 2, "datanode or namenode"},
		{[]string{"sim", "-h"}, 0, "SIMULATOR"},
		{[]string{"sim", "journalnode"}, 2, "journalnode"},
		{[]string{"sim", "datanode", "--capacity", "lots"}, 2, "--capacity"},
		{[]string{"sim", "datanode", "--blocks", "-1"}, 2, "--blocks"},
		{[]string{"sim", "datanode", "--capacity", "1G", "--used", "2G"}, 2, "--used 2147483648: is more than --capacity 1073741824"},
		{[]string{"sim", "namenode", "--ha-state", "leader"}, 2, `--ha-state "leader": is not one of`},
		{[]string{"sim", "datanode", "extra"}, 2, "unexpected argument"},
		{[]string{"sim", "--system", "cassandra"}, 2, "not one of yarn, hbase"},
		{[]string{"sim", "--system"}, 2, "needs an argument"},
		{[]string{"sim", "--system=kafka", "--members", "0"}, 2, "Members 0"},
		{[]string{"sim", "--system", "yarn", "--regionservers", "2"}, 2, "only HBase"},
		{[]string{"sim", "--system", "yarn", "-h"}, 0, "SIMULATED cluster"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.err) {
			t.Errorf("%q: exit %d, stderr %q; want %d with %q", c.args, code, errs, c.code, c.err)
		}
	}
	if code, out, _ := runCLI(t, "help", "sim"); code != 0 || !strings.Contains(out, "/sim/stop") {
		t.Errorf("help sim: %d %s", code, out)
	}
}

// TestSimInProcess runs `heureka sim namenode`, reads its addresses from
// its log line, fails it over through the control API and stops it.
func TestSimInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr proctest.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sim", "namenode", "--hostname", "nn1", "--capacity", "1T", "--ha-state", "standby"}, io.Discard, &stderr)
	}()
	re := regexp.MustCompile(`heureka sim listening.*simulated=true http=(\S+) port=(\S+) control=(\S+)`)
	var m []string
	proctest.Eventually(t, 10*time.Second, "the sim's listening line", func() bool {
		m = re.FindStringSubmatch(stderr.String())
		return m != nil
	})
	get := func(url string) string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if body := get("http://" + m[1] + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus"); !strings.Contains(body, `"State" : "standby"`) ||
		!strings.Contains(body, `"HostAndPort" : "nn1:`) {
		t.Errorf("jmx: %s", body)
	}
	resp, err := http.Post("http://"+m[3]+"/sim/ha?state=active", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if body := get("http://" + m[1] + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus"); !strings.Contains(body, `"State" : "active"`) {
		t.Errorf("after failover: %s", body)
	}
	expectSimStopped(t, cancel, done, &stderr)
}

// TestSimClusterInProcess runs `heureka sim --system S` for every system:
// it logs the control address and one line per member (as many as the
// system's default cluster has), every member answers its role's real
// endpoint (a Kafka broker accepts a connection), a failover through the
// control API moves the lead to another member, and cancelling (as
// SIGINT does) stops it with exit code 0 and every member gone.
func TestSimClusterInProcess(t *testing.T) {
	for _, c := range []struct {
		system, path, lead string
		members            int
	}{
		{"yarn", "/ws/v1/cluster/info", "active", 2},
		{"hbase", "/jmx", "active", 5},
		{"elasticsearch", "/_nodes/_local", "master", 3},
		{"zookeeper", "/commands/mntr", "leader", 3},
		{"kafka", "", "controller", 3},
	} {
		t.Run(c.system, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr proctest.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{"sim", "--system", c.system, "--log-format", "text"}, io.Discard, &stderr)
			}()
			re := regexp.MustCompile(`(?m)msg="heureka sim member" .*member=(\S+) role=(\S+) addr=(\S+) rack=\S* state=(\S+) control=(\S+)$`)
			var ms [][]string
			proctest.Eventually(t, 20*time.Second, "a line per member", func() bool {
				ms = re.FindAllStringSubmatch(stderr.String(), -1)
				return len(ms) == c.members
			})
			if !regexp.MustCompile(`msg="heureka sim listening" .*system=` + c.system + ` simulated=true control=` + regexp.QuoteMeta(ms[0][5])).MatchString(stderr.String()) {
				t.Errorf("no listening line with the control address %s:\n%s", ms[0][5], stderr.String())
			}
			lead, other := "", ""
			for _, m := range ms {
				if c.path != "" {
					resp, err := http.Get("http://" + m[3] + c.path)
					if err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Heureka-Simulator") != "true" {
						t.Errorf("%s %s: %v %v", m[1], c.path, err, resp)
					} else {
						resp.Body.Close()
					}
				} else if conn, err := net.Dial("tcp", m[3]); err != nil {
					t.Errorf("broker %s: %v", m[1], err)
				} else {
					conn.Close()
				}
				switch {
				case m[4] == c.lead:
					lead = m[1]
				case other == "" && m[2] == ms[0][2]:
					other = m[1]
				}
			}
			if lead == "" || other == "" {
				t.Fatalf("no member is %s, or none other of its role:\n%s", c.lead, stderr.String())
			}
			resp, err := http.Post("http://"+ms[0][5]+"/sim/role?member="+other+"&state="+c.lead, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			var st sim.ClusterState
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || !st.Simulated {
				t.Fatalf("failover to %s: %d %v", other, resp.StatusCode, err)
			}
			for _, m := range st.Members {
				if (m.Name == other) != (m.State == c.lead) {
					t.Errorf("after failing over to %s, %s is %s", other, m.Name, m.State)
				}
			}
			expectSimStopped(t, cancel, done, &stderr)
			if conn, err := net.Dial("tcp", ms[0][3]); err == nil {
				conn.Close()
				t.Errorf("%s still accepts connections after the sim stopped", ms[0][1])
			}
		})
	}
}

// expectSimStopped cancels a sim that run runs in this process and
// expects run to return 0 within 10 s, having logged that it stopped.
func expectSimStopped(t *testing.T, cancel context.CancelFunc, done <-chan int, stderr *proctest.Buffer) {
	t.Helper()
	cancel()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stderr.String(), "heureka sim stopped") {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sim did not stop")
	}
}
