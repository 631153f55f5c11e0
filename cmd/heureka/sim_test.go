package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/proctest"
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
