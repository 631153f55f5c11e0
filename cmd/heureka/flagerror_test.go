package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

// TestConfigErrorsNameTheFlag: a setting that a package's Config.Validate
// (or a file its Open reads) refuses is reported under the flag the user
// typed, as are the other settings its reason names, for every command
// that fills a Config from its flags.
func TestConfigErrorsNameTheFlag(t *testing.T) {
	t.Setenv(registryEnv, "")
	t.Setenv(tokenEnv, "")
	dead := "http://127.0.0.1:1/eureka" // nothing is dialled before the flags are checked
	hdfsAgent := []string{"agent", "--role", "datanode", "--cluster", "prod", "--registry", dead, "--jmx", "http://127.0.0.1:1",
		"--host", "dn1", "--ip", "127.0.0.1", "--rack", "/r1"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		// server.Config, its parts, and the files Open reads (a failure, 1).
		{[]string{"server", "--read-timeout", "0s"}, 2, "heureka: --read-timeout 0s: must be a positive duration\n"},
		{[]string{"server", "--delta-retention", "-1s"}, 2, "--delta-retention -1s: must be a positive duration"},
		{[]string{"server", "--sync-timeout", "0s"}, 2, "--sync-timeout 0s: must be a positive duration"},
		{[]string{"server", "--self-preservation", "always"}, 2, `--self-preservation "always": want off, eureka or smart`},
		{[]string{"server", "--auth-file", "a.json", "--auth-poll", "0s"}, 2, "--auth-poll 0s: must be a positive duration while --auth-file is set"},
		{[]string{"server", "--write-burst", "0"}, 2, "--write-burst 0: want at least 1"},
		{[]string{"server", "--dns-listen", "127.0.0.1:0", "--dns-domain", "."}, 2, `--dns-domain ".": want a domain name`},
		{[]string{"server", "--dns-listen", "127.0.0.1:0", "--auth-file", "a.json"}, 2, "--dns-allow: is empty while --auth-file turns authentication on"},
		{[]string{"server", "--dns-allow", "10.0.0.0/33"}, 2, `--dns-allow: "10.0.0.0/33" is not a network`},
		{[]string{"server", "--listen", "127.0.0.1:0", "--peer-ca", "/nonexistent/ca.pem"}, 1, "heureka: --peer-ca: open /nonexistent/ca.pem"},
		// agent.Config, the role's config, the client's.
		{append(hdfsAgent, "--lease-duration", "5s"), 2, "--lease-duration 5s: must be longer than --renew-interval 10s"},
		{append(hdfsAgent, "--pid", "12", "--systemd-unit", "dn"), 2, `--pid 12: is set with --pid-file "" or --systemd-unit "dn": give at most one of the three`},
		{append(hdfsAgent, "--registry", "ftp://h/eureka"), 2, `--registry: "ftp://h/eureka": want an http:// or https:// URL`},
		{append(hdfsAgent, "--ca-file", "/nonexistent/ca.pem"), 2, `--ca-file "/nonexistent/ca.pem": cannot be read: no such file or directory`},
		{[]string{"agent", "--role", "zookeeper", "--cluster", "prod", "--registry", dead, "--url", "ftp://zk1"}, 2, `--url "ftp://zk1"`},
		// sim.Config.
		{[]string{"sim", "datanode", "--hostname", "a b"}, 2, `--hostname "a b": must be a host name`},
		// alert.Config and its client's.
		{[]string{"alert", "--webhook", "http://127.0.0.1:1/", "--status-interval", "0s"}, 2, "--status-interval 0s: must be a positive duration"},
		{[]string{"alert", "--webhook", "http://127.0.0.1:1/", "--for", "HeurekaNodeDown=1m"}, 2, `--for "HeurekaNodeDown=1m0s": no such alert`},
		{[]string{"alert", "--webhook", "ftp://hook"}, 2, `--webhook "ftp://hook": is not an http(s) URL`},
		// webhdfs.ServerConfig and the connection's ctl.Config.
		{[]string{"gateway", "--cluster", "prod", "--failover-wait", "1h"}, 2, "--failover-wait 1h0m0s: must be 0 or more and less than --request-timeout 15s"},
		{[]string{"gateway", "--cluster", "prod", "--fullness", "2"}, 2, "--fullness 2: is not in (0, 1]"},
		{[]string{"gateway", "--cluster", "prod", "--timeout", "0s"}, 2, "--timeout 0s: must be a positive duration"},
		// demo.Config.
		{[]string{"demo", "--datanodes", "0"}, 2, "--datanodes 0: want 1 to 50"},
		// The operator commands: ctl.Config, the client's, their options.
		{[]string{"apps", "--timeout", "-1s"}, 2, "--timeout -1s: must be a positive duration"},
		{[]string{"apps", "--ca-file", "/nonexistent/ca.pem"}, 2, `--ca-file "/nonexistent/ca.pem": cannot be read`},
		{[]string{"instances", "--registry", "127.0.0.1:8761", "APP"}, 2, `--registry "127.0.0.1:8761": is not a URL like`},
		{[]string{"pick", "--cluster", "prod", "-n", "65"}, 2, "-n 65: want 1 to 64 (0: the default)"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("heureka %q: exit %d, stderr %q; want exit %d with %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// TestFieldTablesNameRealFlags: every flag a command's field table names
// is one the command has, so that no message names a flag that is not
// there.
func TestFieldTablesNameRealFlags(t *testing.T) {
	for _, c := range []struct {
		help   []string
		fields map[string]string
	}{
		{[]string{"server"}, serverFields},
		{[]string{"agent"}, agentFields},
		{[]string{"sim"}, simFields},
		{[]string{"alert"}, alertFields},
		{[]string{"gateway"}, gatewayFields},
		{[]string{"apps"}, connFields},
		{[]string{"hadoop", "hosts"}, hadoopFields},
	} {
		_, out, errOut := runCLI(t, append(c.help, "-h")...)
		help := out + errOut
		for field, flag := range c.fields {
			if strings.HasPrefix(flag, "$") {
				continue // an environment variable
			}
			if flag == "--nameservice" && c.help[1] == "hosts" {
				continue // hdfs-site's; the table is the hadoop commands'
			}
			if !strings.Contains(help, "\n  "+flag+" ") && !strings.Contains(help, "\n  "+flag+"\n") {
				t.Errorf("heureka %s: %s maps to %s, which its help does not list", strings.Join(c.help, " "), field, flag)
			}
		}
	}
}

// TestFlagError: a config error comes back as a usage error in the
// flags' terms, any other error as it is.
func TestFlagError(t *testing.T) {
	fields := map[string]string{"URLs": "--registry", "Gateway.FailoverWait": "--failover-wait", "Gateway.RequestTimeout": "--request-timeout", "RequestTimeout": "--wrong"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{heureka.InvalidConfig("URLs[2]", "x", "is not a URL"), `--registry "x": is not a URL`},
		{heureka.InvalidConfig("Gateway.FailoverWait", "1h", "is not less than RequestTimeout 15s"), `--failover-wait "1h": is not less than --request-timeout 15s`},
		{heureka.InvalidConfig("Clock", nil, "is nil; start from DefaultConfig"), "Clock: is nil; start from DefaultConfig"},
	} {
		got := flagError(c.err, fields)
		if _, ok := errors.AsType[*usageError](got); !ok || got.Error() != c.want {
			t.Errorf("%v: got %v (%T), want the usage error %q", c.err, got, got, c.want)
		}
	}
	plain := errors.New("not a config error")
	if flagError(plain, fields) != plain {
		t.Error("an error that is not a *heureka.ConfigError was changed")
	}
}
