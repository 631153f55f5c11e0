package hbase

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	active, err := ParseMaster(readFile(t, "own/master-active.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !active.Active || active.RoleState() != RoleActive || active.NumRegionServers != 2 || active.NumDeadRegionServers != 1 ||
		len(active.LiveRegionServers) != 2 || active.DeadRegionServers[0] != "rs3.example.net,16020,1717000000003" || active.ClusterID != "5d9d9b3e-6a63-4c49-bd8e-0e5f3c7a9f10" {
		t.Errorf("active: %+v", active)
	}
	backup, err := ParseMaster(readFile(t, "own/master-backup.json"))
	if err != nil {
		t.Fatal(err)
	}
	if backup.Active || backup.RoleState() != RoleBackup {
		t.Errorf("backup: %+v", backup)
	}
	if ok, _ := backup.Health(); !ok {
		t.Error("a backup master is unhealthy")
	}
	rs, err := ParseRegionServer(readFile(t, "own/regionserver.json"))
	if err != nil || rs.RegionCount != 13 || rs.StoreFileCount != 41 || rs.ServerName != "rs1.example.net,16020,1718000001001" || rs.RoleState() != RoleServing {
		t.Fatalf("%+v, %v", rs, err)
	}
	if ok, _ := rs.Health(&active); !ok {
		t.Error("a live RegionServer is unhealthy")
	}
	rs.ServerName = "rs3.example.net,16020,1717000000003"
	if ok, cause := rs.Health(&active); ok || !strings.Contains(cause, "counts regionserver rs3.example.net,16020,1717000000003 dead") {
		t.Errorf("dead RegionServer: %v %q", ok, cause)
	}
}

func TestParseBad(t *testing.T) {
	for _, tc := range []struct {
		in, want, code string
	}{
		{"<html>", "not /jmx JSON", heureka.EINVALID},
		{`{"beans":[]}`, "has no " + MasterBean, heureka.ENOTFOUND},
		{string(readFile(t, "own/regionserver.json")), "has no " + MasterBean, heureka.ENOTFOUND},
		{`{"beans":[{"name":"` + MasterBean + `","tag.isActiveMaster":"maybe"}]}`, `tag.isActiveMaster is "\"maybe\""`, heureka.EINVALID},
		{`{"beans":[{"name":"` + MasterBean + `","tag.isActiveMaster":"true"}]}`, "no tag.serverName", heureka.EINVALID},
	} {
		_, err := ParseMaster([]byte(tc.in))
		if heureka.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), MasterPath) {
			t.Errorf("%.40q: %v, want %s %q", tc.in, err, tc.code, tc.want)
		}
	}
}

func TestRead(t *testing.T) {
	master := readFile(t, "own/master-active.json")
	for _, tc := range []struct {
		name       string
		h          func(http.ResponseWriter, *http.Request)
		want       string
		code, text string
	}{
		{name: "same cluster", want: "5d9d9b3e-6a63-4c49-bd8e-0e5f3c7a9f10"},
		{name: "another cluster", want: "0000", code: heureka.ECONFLICT, text: `belongs to cluster "5d9d9b3e`},
		{name: "garbage", h: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{\"beans\":[{\"name\":")) }, code: heureka.EINVALID, text: "not /jmx JSON"},
		{name: "huge", h: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(strings.Repeat(" ", MaxAnswerBytes+1))) }, code: heureka.ETOOLARGE, text: "larger than"},
		{name: "slow", h: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, code: heureka.EUNAVAILABLE, text: "no answer before the deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/jmx" || r.URL.Query().Get("qry") != MasterBean {
					http.NotFound(w, r)
					return
				}
				if tc.h != nil {
					tc.h(w, r)
					return
				}
				w.Write(master)
			}))
			defer srv.Close()
			timeout := 10 * time.Second
			if tc.name == "slow" {
				timeout = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			m, err := ReadMaster(ctx, srv.Client(), srv.URL, tc.want)
			if tc.code != "" {
				if heureka.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), srv.URL) {
					t.Fatalf("%v (code %q), want %s naming the master with %q", err, heureka.ErrorCode(err), tc.code, tc.text)
				}
				return
			}
			if err != nil || !m.Active {
				t.Fatalf("%+v, %v", m, err)
			}
		})
	}
}
