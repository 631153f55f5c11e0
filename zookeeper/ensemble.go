package zookeeper

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/fetch"
)

// Member is one voting member of an ensemble: its server id and its
// quorum address (server.N=HOST:QUORUMPORT:ELECTIONPORT's first two parts).
type Member struct {
	ID         int64
	QuorumAddr string // "host:port"
}

func (m Member) String() string { return strconv.FormatInt(m.ID, 10) + "=" + m.QuorumAddr }

// Ensemble is an ensemble's voting members, by id. A standalone server's
// is empty.
type Ensemble []Member

// ParseVotingView reads /commands/voting_view:
// {"current_config":{"1":{"server_addresses":["host:2888"],...},...}}.
func ParseVotingView(b []byte) (Ensemble, error) {
	var v struct {
		CurrentConfig map[string]struct {
			ServerAddresses []string `json:"server_addresses"`
		} `json:"current_config"`
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, heureka.Errorf(heureka.EINVALID, "%s: the answer is not the AdminServer's JSON (starts %s)", VotingViewPath, fetch.Excerpt(b))
	}
	if v.Error != nil && *v.Error != "" {
		return nil, heureka.Errorf(heureka.EINVALID, "%s: the command failed: %s", VotingViewPath, fetch.Excerpt([]byte(*v.Error)))
	}
	var e Ensemble
	for id, m := range v.CurrentConfig {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 || len(m.ServerAddresses) == 0 {
			return nil, heureka.Errorf(heureka.EINVALID, "%s: member %s has no server id or address", VotingViewPath, fetch.Excerpt([]byte(id)))
		}
		e = append(e, Member{ID: n, QuorumAddr: m.ServerAddresses[0]})
	}
	slices.SortFunc(e, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return e, nil
}

// ParseEnsemble reads "1=host:2888,2=host:2888,..." (ids and quorum
// addresses, as zoo.cfg's server.N lines give them).
func ParseEnsemble(s string) (Ensemble, error) {
	var e Ensemble
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, addr, ok := strings.Cut(part, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
		if !ok || err != nil || n < 0 || strings.Count(addr, ":") < 1 {
			return nil, heureka.Errorf(heureka.EINVALID, "ensemble member %q is not ID=HOST:QUORUMPORT", part)
		}
		// zoo.cfg's HOST:QUORUMPORT:ELECTIONPORT is accepted too.
		if i := strings.LastIndex(addr, ":"); strings.Count(addr, ":") == 2 {
			addr = addr[:i]
		}
		e = append(e, Member{ID: n, QuorumAddr: strings.TrimSpace(addr)})
	}
	slices.SortFunc(e, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return e, nil
}

func (e Ensemble) String() string {
	parts := make([]string, len(e))
	for i, m := range e {
		parts[i] = m.String()
	}
	return strings.Join(parts, ",")
}

// Matches reports whether e and want name the same members.
func (e Ensemble) Matches(want Ensemble) bool { return slices.Equal(e, want) }

// Read asks the AdminServer at baseURL (e.g. "http://zk1:8080") for mntr
// and, when want is not empty, for the voting view, which must match: a
// server of another ensemble is an ECONFLICT error, never a report. A
// server without quorum answers mntr with HTTP 500; Read then asks
// /commands/srvr, and when that says NotServing the result is a Mntr in
// StateNotServing.
func Read(ctx context.Context, c *http.Client, baseURL string, want Ensemble) (Mntr, error) {
	base := strings.TrimRight(baseURL, "/")
	b, err := fetch.Get(ctx, c, base+MntrPath, "", MaxAnswerBytes)
	if err != nil {
		if sb, serr := fetch.Get(ctx, c, base+SrvrPath, "", MaxAnswerBytes); serr == nil && strings.Contains(string(sb), NotServing) {
			return Mntr{State: StateNotServing}, nil
		}
		return Mntr{}, err
	}
	m, err := ParseAdminMntr(b)
	if err != nil {
		return Mntr{}, heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err)
	}
	if len(want) == 0 {
		return m, nil
	}
	b, err = fetch.Get(ctx, c, base+VotingViewPath, "", MaxAnswerBytes)
	if err != nil {
		return Mntr{}, err
	}
	if strings.Contains(string(b), NotServing) {
		// It lost its quorum between the two questions.
		return Mntr{State: StateNotServing}, nil
	}
	got, err := ParseVotingView(b)
	if err != nil {
		return Mntr{}, heureka.Errorf(heureka.ErrorCode(err), "%s: %v", base, err)
	}
	if !got.Matches(want) {
		return Mntr{}, heureka.Errorf(heureka.ECONFLICT, "%s: the server belongs to ensemble %s, not %s: not registering it", base, got, want)
	}
	return m, nil
}
