package dns_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/proctest"
)

// goResolver is Go's pure resolver, asking only addr.
func goResolver(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// TestGoResolver: Go's pure resolver gets the active NameNode first, its
// host name back by address, and after a failover the new active first.
func TestGoResolver(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s.URL())
	register(t, c, nameNodes()...)
	r := goResolver(s.dns)
	const name = "hdfs-namenode.prod.service.heureka."
	got, err := r.LookupHost(ctx(t), name)
	if err != nil || !slices.Equal(got, []string{"192.0.2.2", "192.0.2.1", "192.0.2.3"}) {
		t.Fatalf("LookupHost: %v %v; want the active 192.0.2.2, the standby, the observer", got, err)
	}
	hosts, err := r.LookupAddr(ctx(t), got[0])
	if err != nil || !slices.Equal(hosts, []string{"nn2.example.com."}) {
		t.Errorf("LookupAddr(%s): %v %v; want nn2.example.com.", got[0], hosts, err)
	}
	_, srvs, err := r.LookupSRV(ctx(t), "", "", name)
	if err != nil || len(srvs) != 3 || srvs[0].Target != "nn2.example.com." || srvs[0].Port != 8020 {
		t.Errorf("LookupSRV: %v %v", srvs, err)
	}
	if _, err := r.LookupHost(ctx(t), "nope.service.heureka."); err == nil || !err.(*net.DNSError).IsNotFound {
		t.Errorf("an unknown application: %v; want not found", err)
	}

	failover(t, c)
	got, err = r.LookupHost(ctx(t), name)
	if err != nil || len(got) != 3 || got[0] != "192.0.2.1" {
		t.Errorf("after the failover: %v %v; want the new active 192.0.2.1 first", got, err)
	}
}

// netns is a network namespace made for one test, with its own
// resolv.conf and hosts file (ip netns exec mounts /etc/netns/NAME/* over
// /etc/*), and only its loopback up.
type netns struct {
	name string
}

func newNetns(t *testing.T, resolvConf, hosts string) *netns {
	t.Helper()
	need(t, "ip", "iproute2")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("network-namespace tests need root, and CI runs as root")
		}
		t.Skip("skipping: network namespaces need root")
	}
	n := &netns{name: "hdns" + strconv.Itoa(os.Getpid())}
	dir := filepath.Join("/etc/netns", n.name)
	_ = exec.Command("ip", "netns", "del", n.name).Run() // a leftover of a killed run with this pid
	run(t, "ip", "netns", "add", n.name)
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", n.name).Run()
		_ = os.RemoveAll(dir)
	})
	run(t, "ip", "-n", n.name, "link", "set", "lo", "up")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, body := range map[string]string{"resolv.conf": resolvConf, "hosts": hosts} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// cmd returns a command that runs in the namespace.
func (n *netns) cmd(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.name, name}, args...)...)
}

func (n *netns) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	return run(t, "ip", append([]string{"netns", "exec", n.name, name}, args...)...)
}

// javaResolve is what Hadoop's DNSDomainNameResolver does
// (hadoop-common, org.apache.hadoop.net.DNSDomainNameResolver):
// getAllByDomainName is InetAddress.getAllByName, and getHostnameByIP is
// getCanonicalHostName without a trailing dot. It prints one line per
// address: the address and its host name.
const javaResolve = `import java.net.InetAddress;

public class Resolve {
    public static void main(String[] args) throws Exception {
        for (InetAddress a : InetAddress.getAllByName(args[0])) {
            String host = a.getCanonicalHostName();
            if (host != null && host.endsWith(".")) {
                host = host.substring(0, host.length() - 1);
            }
            System.out.println(a.getHostAddress() + " " + host);
        }
    }
}
`

// TestOperatingSystemResolver runs heureka and dnsmasq in a network
// namespace whose resolv.conf names dnsmasq, which forwards the zone and
// the NameNodes' reverse zone to heureka and knows the NameNodes' host
// names forward only (as a site's own DNS would). There, glibc's resolver
// (getent ahosts) and a Java program compiled with javac, calling
// InetAddress as Hadoop's DNSDomainNameResolver does, get the active
// NameNode first and its host name back by a PTR lookup that only heureka
// can answer; after a failover, a fresh lookup lists the new active first.
func TestOperatingSystemResolver(t *testing.T) {
	dnsmasq := need(t, "dnsmasq", "dnsmasq-base")
	need(t, "getent", "libc-bin")
	need(t, "curl", "curl")
	javac := need(t, "javac", "openjdk-17-jdk-headless")
	java := need(t, "java", "openjdk-17-jre-headless")
	n := newNetns(t, "nameserver 127.0.0.1\noptions timeout:2 attempts:2\n", "127.0.0.1 localhost\n")

	// heureka inside the namespace: DNS on 127.0.0.1:5354 there.
	srv := proctest.StartCmd(t, "server", n.cmd(proctest.Bin(t), "server", "--listen", "127.0.0.1:8761", "--dns-listen", "127.0.0.1:5354"))
	srv.WaitFor(dnsRE, 20*time.Second)
	fwd := []string{"--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll", "--listen-address=127.0.0.1", "--bind-interfaces",
		"--port=53", "--cache-size=0", "--log-facility=-",
		"--server=/heureka/127.0.0.1#5354", "--server=/2.0.192.in-addr.arpa/127.0.0.1#5354",
		"--address=/nn1.example.com/192.0.2.1", "--address=/nn2.example.com/192.0.2.2", "--address=/nn3.example.com/192.0.2.3"}
	proctest.StartCmd(t, "dnsmasq", n.cmd(dnsmasq, fwd...))
	// Registrations go in through curl inside the namespace.
	for _, in := range nameNodes() {
		body := `{"instance":{"instanceId":"` + in.ID + `","hostName":"` + in.HostName + `","app":"` + in.App + `","ipAddr":"` + in.IPAddr +
			`","status":"UP","port":{"$":8020,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},` +
			`"leaseInfo":{"durationInSecs":600},"metadata":{"role_state":"` + in.Metadata.Get(heureka.MetaRoleState) + `"}}}`
		n.run(t, "curl", "-sSf", "--retry", "20", "--retry-connrefused", "--retry-delay", "1", "-X", "POST",
			"-H", "Content-Type: application/json", "-d", body, "http://127.0.0.1:8761/eureka/apps/"+in.App)
	}
	const name = "hdfs-namenode.prod.service.heureka"
	proctest.Retry(t, 20*time.Second, "dnsmasq to forward the zone", func() error {
		return n.cmd("getent", "hosts", name).Run()
	})

	ahosts := func() []string {
		var order []string
		for _, l := range lines(n.run(t, "getent", "ahosts", name)) {
			if f := fields(l); len(f) > 0 && !slices.Contains(order, f[0]) {
				order = append(order, f[0])
			}
		}
		return order
	}
	if got := ahosts(); !slices.Equal(got, []string{"192.0.2.2", "192.0.2.1", "192.0.2.3"}) {
		t.Errorf("getent ahosts: %v; want the active 192.0.2.2 first, then the standby and the observer", got)
	}
	if got := fields(n.run(t, "getent", "hosts", "192.0.2.2")); len(got) < 2 || got[1] != "nn2.example.com" {
		t.Errorf("getent hosts 192.0.2.2 (PTR through dnsmasq to heureka): %v; want nn2.example.com", got)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Resolve.java"), []byte(javaResolve), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, javac, "-d", dir, filepath.Join(dir, "Resolve.java"))
	resolve := func() []string {
		return lines(n.run(t, java, "-cp", dir, "Resolve", name))
	}
	want := []string{"192.0.2.2 nn2.example.com", "192.0.2.1 nn1.example.com", "192.0.2.3 nn3.example.com"}
	if got := resolve(); !slices.Equal(got, want) {
		t.Errorf("Java InetAddress: %q; want %q", got, want)
	} else {
		t.Logf("Java InetAddress.getAllByName + getCanonicalHostName: %q", got)
	}

	// The failover, through curl; a fresh JVM resolves afresh.
	for id, st := range map[string]string{"nn2.example.com": "standby", "nn1.example.com": "active"} {
		n.run(t, "curl", "-sSf", "-X", "PUT", "http://127.0.0.1:8761/eureka/apps/"+nnApp+"/"+id+"/metadata?role_state="+st)
	}
	if got := ahosts(); len(got) != 3 || got[0] != "192.0.2.1" {
		t.Errorf("getent ahosts after the failover: %v; want the new active 192.0.2.1 first", got)
	}
	if got := resolve(); len(got) != 3 || got[0] != "192.0.2.1 nn1.example.com" {
		t.Errorf("Java after the failover: %q; want 192.0.2.1 nn1.example.com first", got)
	}
	if out := n.run(t, "curl", "-sS", "http://127.0.0.1:8761/metrics"); !strings.Contains(out, `heureka_dns_queries_total{qtype="PTR",rcode="NOERROR"}`) {
		t.Errorf("no PTR counted in /metrics: the host names did not come from heureka")
	}
}
