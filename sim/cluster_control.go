package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Handler returns a Cluster's control API, which Open serves on
// ClusterConfig.ControlAddr. MEMBER is a member's name (GET /sim lists
// them):
//
//	GET  /sim                                  the cluster, its members and the actions, as text
//	GET  /sim/state                            the ClusterState, as JSON
//	POST /sim/stop?member=MEMBER               it dies: its port refuses (Stop)
//	POST /sim/start?member=MEMBER              it comes back on the same address (Start)
//	POST /sim/pause?member=MEMBER              it accepts and answers nothing (Pause)
//	POST /sim/resume?member=MEMBER             it answers again (Resume)
//	POST /sim/role?member=MEMBER&state=STATE   set its role state (SetState):
//	        yarn:          active (a failover) | standby | initializing | stopping
//	        hbase:         a master: active (the backup takes over) | backup;
//	                       a RegionServer: dead (the master counts it dead) | serving
//	        elasticsearch: master (elected) | left (knows no master) | joined
//	        zookeeper:     leader (an election) | follower | not-serving | read-only
//	        kafka:         controller (the controller moves)
//	POST /sim/set?member=MEMBER&KEY=VALUE      change a figure (Set): version=V, and
//	        yarn: zk=connected|lost; elasticsearch: health=green|yellow|red (the cluster's);
//	        hbase: regions=N (a RegionServer's)
//
// Every POST answers with the new ClusterState as JSON, or 400 with what
// was wrong and what is accepted.
func (c *Cluster) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sim", c.writePage)
	mux.HandleFunc("GET /sim/{$}", c.writePage)
	mux.HandleFunc("GET /sim/state", func(w http.ResponseWriter, r *http.Request) { c.writeState(w) })
	for path, f := range map[string]func(string) error{
		"/sim/stop": c.Stop, "/sim/start": c.Start, "/sim/pause": c.Pause, "/sim/resume": c.Resume,
	} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			c.post(w, f(r.FormValue("member")))
		})
	}
	mux.HandleFunc("POST /sim/role", func(w http.ResponseWriter, r *http.Request) {
		c.post(w, c.SetState(r.FormValue("member"), r.FormValue("state")))
	})
	mux.HandleFunc("POST /sim/set", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			c.post(w, err)
			return
		}
		member := r.Form.Get("member")
		n := 0
		for k, vs := range r.Form {
			if k == "member" {
				continue
			}
			n++
			if err := c.Set(member, k, vs[len(vs)-1]); err != nil {
				c.post(w, err)
				return
			}
		}
		if n == 0 {
			c.post(w, fmt.Errorf("sim: set what? give KEY=VALUE, e.g. version=3.3.6"))
			return
		}
		c.post(w, nil)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10) // a form is a few fields
		mux.ServeHTTP(w, r)
	})
}

func (c *Cluster) post(w http.ResponseWriter, err error) {
	if err != nil {
		w.Header().Set("X-Heureka-Simulator", "true")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.writeState(w)
}

func (c *Cluster) writeState(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Heureka-Simulator", "true")
	b, _ := json.MarshalIndent(c.State(), "", "  ")
	_, _ = w.Write(append(b, '\n'))
}

// writePage answers GET /sim, for a terminal.
func (c *Cluster) writePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Heureka-Simulator", "true")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	writeClusterText(w, c.State(), "http://"+r.Host, c.model.states())
}

func writeClusterText(w io.Writer, st ClusterState, base, states string) {
	fmt.Fprintf(w, "SIMULATED %s cluster %s (heureka's simulator, not the real system)\n\n", st.System, st.ClusterID)
	fmt.Fprintf(w, "  %-10s %-22s %-22s %-16s %s\n", "member", "role", "address", "state", "process")
	for _, m := range st.Members {
		proc := "running"
		switch {
		case !m.Running:
			proc = "STOPPED (refuses connections)"
		case m.Paused:
			proc = "PAUSED (accepts, answers nothing)"
		}
		state := m.State
		if m.Rack != "" {
			state += " rack=" + m.Rack
		}
		fmt.Fprintf(w, "  %-10s %-22s %-22s %-16s %s\n", m.Name, m.Role, m.Addr, state, proc)
	}
	if st.Ensemble != "" {
		fmt.Fprintf(w, "\n  ensemble   %s\n", st.Ensemble)
	}
	name := "MEMBER"
	if len(st.Members) > 0 {
		name = st.Members[0].Name
	}
	fmt.Fprintf(w, "\nActions (each POST answers with the new state as JSON; GET %s/sim/state gives it too):\n\n", base)
	for _, a := range [][2]string{
		{"stop?member=" + name, "the member dies: its port refuses connections"},
		{"start?member=" + name, "it comes back on the same address"},
		{"pause?member=" + name, "it accepts connections and answers nothing, as under SIGSTOP"},
		{"resume?member=" + name, "it answers again"},
		{"role?member=" + name + "&state=STATE", "set its role state: " + states},
		{"set?member=" + name + "&version=V", "change a figure"},
	} {
		fmt.Fprintf(w, "  curl -X POST '%s/sim/%s'\n      %s\n", base, a[0], a[1])
	}
	fmt.Fprintln(w, "\n"+strings.TrimSpace(`
Each member's answers carry the header X-Heureka-Simulator: true.`))
}
