package eureka

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/heureka-project/heureka"
)

// ReplicationItem is one entry of Eureka's peer batch
// (POST /peerreplication/batch): a write one peer accepted and forwards.
// InstanceInfo is present only for Register.
type ReplicationItem struct {
	AppName            string
	ID                 string
	LastDirtyTimestamp int64
	Status             heureka.Status
	OverriddenStatus   heureka.Status
	Instance           *heureka.Instance
	Action             string
}

// ReplicationResult is the answer to one item, matched by position.
type ReplicationResult struct {
	StatusCode int
	Instance   *heureka.Instance // the receiver's copy, with a 409 heartbeat
}

type wireItem struct {
	AppName            string          `json:"appName"`
	ID                 string          `json:"id"`
	LastDirtyTimestamp json.Number     `json:"lastDirtyTimestamp,omitempty"`
	Status             string          `json:"status,omitempty"`
	OverriddenStatus   string          `json:"overriddenStatus,omitempty"`
	InstanceInfo       json.RawMessage `json:"instanceInfo,omitempty"`
	Action             string          `json:"action"`
}

type wireResult struct {
	StatusCode     int             `json:"statusCode"`
	ResponseEntity json.RawMessage `json:"responseEntity,omitempty"`
}

// EncodeReplicationList renders a batch as Eureka's peers send it:
// {"replicationList":[…]}, instances as bare InstanceInfo objects.
func EncodeReplicationList(items []ReplicationItem) []byte {
	var b bytes.Buffer
	b.WriteString(`{"replicationList":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		w := wireItem{AppName: it.AppName, ID: it.ID, Status: string(it.Status),
			OverriddenStatus: string(it.OverriddenStatus), Action: it.Action}
		if it.LastDirtyTimestamp != 0 {
			w.LastDirtyTimestamp = json.Number(strconv.FormatInt(it.LastDirtyTimestamp, 10))
		}
		if it.Instance != nil {
			w.InstanceInfo = AppendInstance(nil, JSON, it.Instance)
		}
		data, _ := json.Marshal(w)
		b.Write(data)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// DecodeReplicationList reads a batch. A malformed envelope is an EINVALID
// error; a malformed instance inside one item is reported in that item's
// Err so the rest of the batch still applies.
func DecodeReplicationList(body []byte) ([]ReplicationItem, []error, error) {
	list, ok := scanReplicationList(body)
	if !ok {
		var env struct {
			List []wireItem `json:"replicationList"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&env); err != nil {
			return nil, nil, heureka.Errorf(heureka.EINVALID, "malformed replication batch: %v", err)
		}
		list = env.List
	}
	items := make([]ReplicationItem, len(list))
	errs := make([]error, len(list))
	for i, w := range list {
		items[i], errs[i] = w.item(i)
	}
	return items, errs, nil
}

// item reads the i'th item of a batch.
func (w wireItem) item(i int) (ReplicationItem, error) {
	var err error
	it := ReplicationItem{AppName: w.AppName, ID: w.ID, Action: w.Action,
		Status: heureka.LenientStatus(w.Status, ""), OverriddenStatus: heureka.LenientStatus(w.OverriddenStatus, "")}
	if w.LastDirtyTimestamp != "" {
		n, perr := strconv.ParseInt(string(w.LastDirtyTimestamp), 10, 64)
		if perr != nil {
			err = heureka.Errorf(heureka.EINVALID, "item %d: lastDirtyTimestamp %q is not an integer", i, w.LastDirtyTimestamp)
		}
		it.LastDirtyTimestamp = n
	}
	if len(w.InstanceInfo) > 0 && string(w.InstanceInfo) != "null" {
		// A peer's copy, lease timestamps and all: the receiving registry
		// sets its own, but compares the sender's registration time with
		// its recent cancels.
		in, ierr := DecodeServerInstance(w.InstanceInfo, JSON)
		if ierr != nil {
			err = ierr
		}
		it.Instance = in
	}
	return it, err
}

// EncodeReplicationResults renders the answers, one per item, in order.
func EncodeReplicationResults(results []ReplicationResult) []byte {
	var b bytes.Buffer
	b.WriteString(`{"responseList":[`)
	for i, r := range results {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"statusCode":`)
		b.WriteString(strconv.Itoa(r.StatusCode))
		if r.Instance != nil {
			b.WriteString(`,"responseEntity":`)
			b.Write(AppendInstance(nil, JSON, r.Instance))
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// DecodeReplicationResults reads a peer's answers to a batch.
func DecodeReplicationResults(body []byte) ([]ReplicationResult, error) {
	var env struct {
		List []wireResult `json:"responseList"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, heureka.Errorf(heureka.EINVALID, "malformed replication response: %v", err)
	}
	out := make([]ReplicationResult, len(env.List))
	for i, w := range env.List {
		out[i].StatusCode = w.StatusCode
		if len(w.ResponseEntity) > 0 && string(w.ResponseEntity) != "null" {
			in, err := DecodeInstance(w.ResponseEntity, JSON)
			if err != nil {
				return nil, err
			}
			out[i].Instance = in
		}
	}
	return out, nil
}
