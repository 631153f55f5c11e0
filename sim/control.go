package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/heureka-project/heureka/hdfs"
)

// Handler returns the control API, which Open serves on Config.ControlAddr:
//
//	GET  /sim/state                          the State, as JSON
//	POST /sim/stop                           the daemon stops answering (Stop)
//	POST /sim/start                          it comes back (Start)
//	POST /sim/ha?state=active|standby|...    a NameNode changes HA state
//	POST /sim/set?capacity=B&used=B&blocks=N&version=V&safemode=on|off
//	                                         change figures (any subset)
//
// Every POST answers with the new State. Bad parameters are 400.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sim/state", func(w http.ResponseWriter, r *http.Request) {
		s.writeState(w)
	})
	mux.HandleFunc("POST /sim/stop", func(w http.ResponseWriter, r *http.Request) {
		s.Stop()
		s.writeState(w)
	})
	mux.HandleFunc("POST /sim/start", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Start(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.writeState(w)
	})
	mux.HandleFunc("POST /sim/ha", func(w http.ResponseWriter, r *http.Request) {
		if err := s.SetHAState(hdfs.HAState(r.URL.Query().Get("state"))); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.writeState(w)
	})
	mux.HandleFunc("POST /sim/set", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		num := func(key string) (int64, error) {
			v := q.Get(key)
			if v == "" {
				return -1, nil
			}
			n, err := ParseBytes(v)
			if err != nil {
				return 0, fmt.Errorf("%s: %v", key, err)
			}
			return n, nil
		}
		var vals [3]int64
		for i, k := range []string{"capacity", "used", "blocks"} {
			n, err := num(k)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			vals[i] = n
		}
		var safemode *bool
		if v := q.Get("safemode"); v != "" {
			on, err := parseOnOff(v)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			safemode = &on
		}
		if err := s.Update(vals[0], vals[1], vals[2]); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if v := q.Get("version"); v != "" {
			s.SetVersion(v)
		}
		if safemode != nil {
			s.SetSafemode(*safemode)
		}
		s.writeState(w)
	})
	return mux
}

func (s *Sim) writeState(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Heureka-Simulator", "true")
	b, _ := json.MarshalIndent(s.State(), "", "  ")
	_, _ = w.Write(append(b, '\n'))
}

func parseOnOff(v string) (bool, error) {
	switch v {
	case "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("safemode: %q is not on or off", v)
}

// ParseBytes reads a size: a plain number of bytes (or blocks), or one
// with a binary suffix K, M, G, T or P (also KiB ... PiB), e.g. "4T".
func ParseBytes(s string) (int64, error) {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		m      int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"P", 1 << 50},
	} {
		if len(s) > len(u.suffix) && s[len(s)-len(u.suffix):] == u.suffix {
			num, mult = s[:len(s)-len(u.suffix)], u.m
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative size such as 1024, 500G or 4T", s)
	}
	if n > (1<<63-1)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
