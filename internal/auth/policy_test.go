package auth

import (
	"regexp"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

func principal(t *testing.T, name string, roles []Role, apps, instances []string) *Principal {
	t.Helper()
	p := &Principal{Name: name, Method: "basic", roles: roles, appSrc: apps}
	for _, a := range apps {
		p.apps = append(p.apps, mustPattern(t, a))
	}
	for _, i := range instances {
		p.instances = append(p.instances, mustPattern(t, i))
	}
	return p
}

func mustPattern(t *testing.T, p string) *regexp.Regexp {
	t.Helper()
	re, err := heureka.CompilePattern(p)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

// TestAuthorize is the rule table: each role against each kind of request.
func TestAuthorize(t *testing.T) {
	dn := principal(t, "dn-agent", []Role{RoleAgent}, []string{`HDFS-DATANODE\..*`}, nil)
	dn1 := principal(t, "dn1", []Role{RoleAgent}, []string{`HDFS-DATANODE\..*`}, []string{`prod-dn1-.*`})
	ops := principal(t, "ops", []Role{RoleOperator}, nil, nil)
	peer := principal(t, "peer", []Role{RolePeer}, nil, nil)
	reader := principal(t, "grafana", []Role{RoleReader}, nil, nil)
	both := principal(t, "dn-ops", []Role{RoleAgent, RoleOperator}, []string{`HDFS-DATANODE\..*`}, nil)

	dnWrite := Request{Action: Write, Verb: "cancel", App: "HDFS-DATANODE.PROD", ID: "prod-dn1-r1"}
	dn2Write := Request{Action: Write, Verb: "cancel", App: "HDFS-DATANODE.PROD", ID: "prod-dn2-r1"}
	nnWrite := Request{Action: Write, Verb: "set the status of", App: "HDFS-NAMENODE.PROD", ID: "nn1"}
	register := Request{Action: Write, Verb: "register", App: "hdfs-datanode.prod"}
	read := Request{Action: Read}
	repl := Request{Action: Replicate, Verb: "replicate"}
	operate := Request{Action: Operate, Verb: "PATCH /x"}

	type want int
	const (
		allow want = iota
		audit
		e401
		e403
	)
	for _, c := range []struct {
		name  string
		reads Reads
		p     *Principal
		req   Request
		want  want
		msg   string // the error must mention it
	}{
		{"anonymous read, open", ReadsOpen, nil, read, allow, ""},
		{"anonymous read, authenticated", ReadsAuthenticated, nil, read, e401, "send credentials"},
		{"anonymous write", ReadsOpen, nil, dnWrite, e401, "to cancel HDFS-DATANODE.PROD/prod-dn1-r1, send credentials"},
		{"anonymous replicate", ReadsOpen, nil, repl, e401, "Bearer"},

		{"agent writes its app", ReadsOpen, dn, dnWrite, allow, ""},
		{"agent registers its app, any case", ReadsOpen, dn, register, allow, ""},
		{"DataNode agent cannot touch the NameNode", ReadsOpen, dn, nnWrite, e403, `user "dn-agent" (agent for HDFS-DATANODE\..*) may not set the status of HDFS-NAMENODE.PROD/nn1`},
		{"agent scoped to its instance", ReadsOpen, dn1, dnWrite, allow, ""},
		{"agent scoped away from another instance", ReadsOpen, dn1, dn2Write, e403, "instances matching prod-dn2-r1"},
		{"agent reads", ReadsAuthenticated, dn, read, allow, ""},
		{"agent cannot replicate", ReadsOpen, dn, repl, e403, "peer role"},
		{"agent cannot operate", ReadsOpen, dn, operate, e403, "operator role"},

		{"operator writes anything, audited", ReadsOpen, ops, nnWrite, audit, ""},
		{"operator registers, audited", ReadsOpen, ops, register, audit, ""},
		{"operator operates, audited", ReadsOpen, ops, operate, audit, ""},
		{"operator cannot replicate", ReadsOpen, ops, repl, e403, "peer role"},
		{"agent+operator in scope: not an operator action", ReadsOpen, both, dnWrite, allow, ""},
		{"agent+operator out of scope: audited", ReadsOpen, both, nnWrite, audit, ""},

		{"peer replicates", ReadsOpen, peer, repl, allow, ""},
		{"peer reads", ReadsAuthenticated, peer, read, allow, ""},
		{"peer cannot write as a client", ReadsOpen, peer, dnWrite, e403, "operator role"},

		{"reader reads", ReadsAuthenticated, reader, read, allow, ""},
		{"reader cannot write", ReadsOpen, reader, dnWrite, e403, `user "grafana" (reader) may not cancel`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dec, err := authorize(c.reads, c.p, c.req)
			var got want
			switch e, _ := err.(*Error); {
			case err == nil && dec.Audit:
				got = audit
			case err == nil:
				got = allow
			case e != nil && e.Kind == Unauthenticated:
				got = e401
			case e != nil && e.Kind == Forbidden:
				got = e403
			default:
				t.Fatalf("unexpected error %T %v", err, err)
			}
			if got != c.want {
				t.Fatalf("got %d (err %v), want %d", got, err, c.want)
			}
			if c.msg != "" && !strings.Contains(err.Error(), c.msg) {
				t.Errorf("message %q lacks %q", err, c.msg)
			}
		})
	}
}
