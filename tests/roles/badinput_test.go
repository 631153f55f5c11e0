package roles_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/elasticsearch"
	"github.com/heureka-project/heureka/hbase"
	"github.com/heureka-project/heureka/internal/proctest"
	"github.com/heureka-project/heureka/kafka"
	"github.com/heureka-project/heureka/sim"
	"github.com/heureka-project/heureka/sim/simtest"
	"github.com/heureka-project/heureka/yarn"
	"github.com/heureka-project/heureka/zookeeper"
)

// garbageHTTP answers every request with a page no daemon writes, as a
// proxy's login page or another program on the port would.
func garbageHTTP(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html><body>Please log in</body></html>"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// slowHTTP passes requests to target after 2 s: a real answer, too late
// for any probe (800 ms).
func slowHTTP(t *testing.T, target string) string {
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
			proxy.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// tcpServer accepts connections and gives each to serve, until the test
// ends.
func tcpServer(t *testing.T, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// TestBadDaemons: for every role, a daemon that answers garbage, one that
// answers too slowly and one of another cluster. Each agent logs why, and
// its instance is DOWN with the cause and was never UP: "probe failed",
// "not answering" after --hang-after, and "another cluster's daemon" with
// both identities and no role state.
func TestBadDaemons(t *testing.T) {
	t.Parallel()
	reg := startServer(t)
	apps := []string{}
	for _, r := range []string{yarn.RoleName, hbase.MasterRoleName, elasticsearch.RoleName, zookeeper.RoleName, kafka.RoleName} {
		apps = append(apps, heureka.RoleApp(r, "prod"))
	}
	w := newWatcher(t, reg, apps...)

	yarnOther := simtest.Open(t, sim.SystemYARN, func(c *sim.ClusterConfig) { c.ClusterID = "yarn-other"; c.Members = 1 })
	hbaseOther := simtest.Open(t, sim.SystemHBase, func(c *sim.ClusterConfig) { c.ClusterID = "hbase-other"; c.Members, c.RegionServers = 1, 0 })
	esOther := simtest.Open(t, sim.SystemElasticsearch, func(c *sim.ClusterConfig) { c.ClusterID = "esOtherUUID"; c.Members = 1 })
	zkProd := simtest.Open(t, sim.SystemZooKeeper, func(c *sim.ClusterConfig) { c.ClusterID = "zk-prod" })
	zkOther := simtest.Open(t, sim.SystemZooKeeper, func(c *sim.ClusterConfig) { c.ClusterID = "zk-other" })
	kafkaOther := simtest.Open(t, sim.SystemKafka, func(c *sim.ClusterConfig) { c.ClusterID = "kafka-other"; c.Members = 1 })
	ensemble := zkProd.State().Ensemble

	garbageKafka := tcpServer(t, func(c net.Conn) {
		buf := make([]byte, 512)
		if _, err := c.Read(buf); err == nil {
			io.WriteString(c, "\x00\x00\x00\x08HTTP/1.1 400 Bad Request\r\n\r\n")
		}
	})
	silentKafka := tcpServer(t, func(net.Conn) {})

	type bad struct {
		role, host string
		args       []string
		want, log  string // the DOWN cause, and the agent's log line
	}
	hang := []string{"--hang-after", "2s"}
	cases := []bad{
		{yarn.RoleName, "yarn-garbage", []string{"--url", garbageHTTP(t)}, `probe failed`, `not the cluster-info JSON`},
		{yarn.RoleName, "yarn-slow", append([]string{"--url", slowHTTP(t, simtest.URL(t, yarnOther, "rm1"))}, hang...), `not answering`, `does not answer \(paused`},
		{yarn.RoleName, "yarn-other", []string{"--url", simtest.URL(t, yarnOther, "rm1"), "--cluster-id", "yarn-prod"}, `another cluster's daemon: .*"yarn-other".*"yarn-prod"`, `cause="another cluster's daemon`},
		{hbase.MasterRoleName, "hbase-garbage", []string{"--url", garbageHTTP(t)}, `probe failed`, `not /jmx JSON`},
		{hbase.MasterRoleName, "hbase-slow", append([]string{"--url", slowHTTP(t, simtest.URL(t, hbaseOther, "master1"))}, hang...), `not answering`, `does not answer \(paused`},
		{hbase.MasterRoleName, "hbase-other", []string{"--url", simtest.URL(t, hbaseOther, "master1"), "--cluster-id", "hbase-prod"}, `another cluster's daemon: .*"hbase-other".*"hbase-prod"`, `cause="another cluster's daemon`},
		{elasticsearch.RoleName, "es-garbage", []string{"--url", garbageHTTP(t), "--rack", "/r"}, `probe failed`, `not the nodes-info JSON`},
		{elasticsearch.RoleName, "es-slow", append([]string{"--url", slowHTTP(t, simtest.URL(t, esOther, "es1")), "--rack", "/r"}, hang...), `not answering`, `does not answer \(paused`},
		{elasticsearch.RoleName, "es-other", []string{"--url", simtest.URL(t, esOther, "es1"), "--cluster-id", "esProdUUID", "--rack", "/r"}, `another cluster's daemon: .*esOtherUUID.*esProdUUID`, `cause="another cluster's daemon`},
		{zookeeper.RoleName, "zk-garbage", []string{"--url", garbageHTTP(t), "--ensemble", ensemble}, `probe failed`, `not the AdminServer's JSON`},
		{zookeeper.RoleName, "zk-slow", append([]string{"--url", slowHTTP(t, simtest.URL(t, zkProd, "zk1")), "--ensemble", ensemble}, hang...), `not answering`, `does not answer \(paused`},
		{zookeeper.RoleName, "zk-other", []string{"--url", simtest.URL(t, zkOther, "zk1"), "--ensemble", ensemble}, `another cluster's daemon: .*zk-other.*zk-prod`, `cause="another cluster's daemon`},
		{kafka.RoleName, "kafka-garbage", []string{"--broker", garbageKafka, "--broker-id", "0", "--rack", "/r"}, `probe failed`, `ApiVersions`},
		{kafka.RoleName, "kafka-slow", append([]string{"--broker", silentKafka, "--broker-id", "0", "--rack", "/r"}, hang...), `not answering`, `does not answer \(paused`},
		{kafka.RoleName, "kafka-other", []string{"--broker", simtest.Addr(t, kafkaOther, "broker0"), "--broker-id", "0", "--cluster-id", "kafka-prod", "--rack", "/r"}, `another cluster's daemon: .*"kafka-other".*"kafka-prod"`, `cause="another cluster's daemon`},
	}
	agents := make([]*proctest.Proc, len(cases))
	for i, c := range cases {
		agents[i] = startAgent(t, reg, c.role, c.host+".test", c.args...)
	}
	for i, c := range cases {
		rack := ""
		if strings.Contains(strings.Join(c.args, " "), "--rack /r") {
			rack = "/r"
		}
		in := id(c.host+".test", rack)
		w.await(t, 0, in, `^DOWN down_cause=`+c.want, settle)
		agents[i].WaitFor(regexp.MustCompile(c.log), settle)
		for _, st := range w.states(0, in) {
			if strings.HasPrefix(st, "UP") || strings.Contains(st, heureka.MetaRoleState) {
				t.Errorf("%s was %s", in, st)
			}
		}
	}
}
