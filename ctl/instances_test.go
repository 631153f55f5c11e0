package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/server/servertest"
)

// TestInstancesByHost: Hosts is answered by the server's host lookup,
// without reading the application, and the same from a server without
// the lookup by filtering the application here.
func TestInstancesByHost(t *testing.T) {
	s := servertest.Open(t, nil)
	const n = 200
	var ids []string
	for i := range n {
		dn := node{role: hdfs.RoleDataNode, host: fmt.Sprintf("dn%03d.example.com", i), ip: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1),
			rack: "/dc1/rack-a", usedPct: 50}.instance()
		servertest.Register(t, s, dn)
		ids = append(ids, dn.ID)
	}
	const app = "HDFS-DATANODE.PROD"
	// dn007 by its name in another case, dn042 by its address.
	hosts := []string{"DN007.example.com", "10.1.0.43"}
	want := ids[7] + "," + ids[42]

	for _, noLookup := range []bool{false, true} {
		p := newCountingProxy(t, s, noLookup)
		c := openConn(t, p.URL+"/eureka")
		var o output
		if err := Instances(context.Background(), c, o.out(true), InstancesOptions{App: "hdfs-datanode.prod", Hosts: hosts}); err != nil {
			t.Fatalf("noLookup=%v: %v\n%s", noLookup, err, o.notes.String())
		}
		var views []View
		if err := json.Unmarshal(o.w.Bytes(), &views); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range views {
			got = append(got, v.ID)
			if v.LastRenewal == nil || v.Rack != "/dc1/rack-a" {
				t.Errorf("noLookup=%v: %s without its renewal or rack: %+v", noLookup, v.ID, v)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("noLookup=%v: instances %v, want %s", noLookup, got, want)
		}
		lookups, appReads := p.count("GET /v1/instances"), p.count("GET /eureka/apps/"+app)
		if noLookup {
			if lookups != 1 || appReads != 1 {
				t.Errorf("without the lookup: %d lookups, %d application reads; want one of each (the fallback)", lookups, appReads)
			}
			continue
		}
		if lookups != 1 || appReads != 0 || p.count("GET /v1/replication/apps/"+app) != 0 {
			t.Errorf("with the lookup: requests %v; want one lookup and no read of the whole application", p.seen)
		}
		if live := p.count("GET /eureka/apps/"+app+"/"+ids[7]) + p.count("GET /eureka/apps/"+app+"/"+ids[42]); live != 2 {
			t.Errorf("with the lookup: %d single-instance reads for live renewals, want 2; requests %v", live, p.seen)
		}

		err := Instances(context.Background(), c, o.out(false), InstancesOptions{App: app, Hosts: []string{"nowhere.example.com"}})
		if _, ok := errors.AsType[*NotFoundError](err); !ok || !strings.Contains(err.Error(), "no instances on nowhere.example.com") {
			t.Errorf("an unknown host: %v; want a NotFoundError naming the host", err)
		}
	}
}

// TestOptionsNameTheirField: each option that cannot work is a
// *heureka.ConfigError naming its field, for the CLI to name its flag.
func TestOptionsNameTheirField(t *testing.T) {
	many := make([]string, MaxHosts+1)
	for field, err := range map[string]error{
		"App":          InstancesOptions{}.Validate(),
		"Hosts":        InstancesOptions{App: "a", Hosts: many}.Validate(),
		"Status":       InstancesOptions{App: "a", Status: "SLEEPY"}.Validate(),
		"Cluster":      DefaultPickOptions().Validate(),
		"N":            PickOptions{Cluster: "c", N: 65, Fullness: 0.9, ProbeTimeout: 1}.Validate(),
		"Fullness":     PickOptions{Cluster: "c", N: 3, Fullness: 1.5, ProbeTimeout: 1}.Validate(),
		"ProbeTimeout": PickOptions{Cluster: "c", N: 3, Fullness: 0.9}.Validate(),
		"Writer":       PickOptions{Cluster: "c", N: 3, Fullness: 0.9, ProbeTimeout: 1, Writer: "w", Rack: "/r"}.Validate(),
		"URLs[0]":      Config{URLs: []string{"127.0.0.1:8761"}, Timeout: 1}.Validate(),
		"URLs":         Config{Timeout: 1}.Validate(),
		"Timeout":      Config{URLs: []string{DefaultURL}}.Validate(),
	} {
		ce, ok := errors.AsType[*heureka.ConfigError](err)
		if !ok || ce.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}
