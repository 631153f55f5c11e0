package client

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heureka-project/heureka"
)

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []sseEvent
		err  error
	}{
		{
			name: "change",
			in:   "id: 7\nevent: change\ndata: {\"seq\":7}\n\n",
			want: []sseEvent{{typ: "change", id: "7", data: []byte(`{"seq":7}`)}},
			err:  io.EOF,
		},
		{
			name: "CRLF, comments, no space after the colon, multi-line data",
			in:   ": keep-alive\r\n\r\nevent:resync\r\ndata:a\r\ndata: b\r\n\r\n",
			want: []sseEvent{{typ: "resync", data: []byte("a\nb")}},
			err:  io.EOF,
		},
		{
			name: "default type, id carried over, unknown fields ignored",
			in:   "id: 3\n\nretry: 100\nfoo: bar\ndata: x\n\n",
			want: []sseEvent{{typ: "message", id: "3", data: []byte("x")}},
			err:  io.EOF,
		},
		{
			name: "a field without a colon",
			in:   "data\n\n",
			want: []sseEvent{{typ: "message", data: []byte("")}},
			err:  io.EOF,
		},
		{
			name: "an event cut off by the end of the stream is dropped",
			in:   "event: change\ndata: {\"seq\":1}\n",
			err:  io.EOF,
		},
		{
			name: "a line cut off by the end of the stream",
			in:   "event: change\ndata: {\"se",
			err:  io.ErrUnexpectedEOF,
		},
		{
			name: "too large",
			in:   "data: " + strings.Repeat("x", 200) + "\n\n",
			err:  errEventTooLarge,
		},
		{
			name: "too large over several lines",
			in:   strings.Repeat("data: "+strings.Repeat("x", 60)+"\n", 4) + "\n",
			err:  errEventTooLarge,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := 0
			r := newSSEReader(strings.NewReader(tc.in), 128, func() { lines++ })
			var got []sseEvent
			var err error
			for {
				var ev sseEvent
				if ev, err = r.next(); err != nil {
					break
				}
				got = append(got, ev)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d events %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				if got[i].typ != tc.want[i].typ || got[i].id != tc.want[i].id || string(got[i].data) != string(tc.want[i].data) {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// FuzzSSEReader checks that no input makes the reader panic, loop or
// return more data than its bound.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("id: 1\nevent: change\ndata: {}\n\n"))
	f.Add([]byte(": x\r\n\r\ndata\ndata:\n\n"))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newSSEReader(strings.NewReader(string(in)), 256, nil)
		for range len(in) + 1 {
			ev, err := r.next()
			if err != nil {
				return
			}
			if len(ev.data) > 256 {
				t.Fatalf("event data of %d bytes passed a 256-byte bound", len(ev.data))
			}
		}
		t.Fatal("more events than input bytes")
	})
}

// TestSameInstanceCoversEveryField guards Diff against fields added to
// heureka.Instance later: each one must change the comparison, or be on the
// list of fields deliberately left out.
func TestSameInstanceCoversEveryField(t *testing.T) {
	ignored := map[string]bool{
		"Lease.RegistrationTimestamp": true, "Lease.LastRenewalTimestamp": true,
		"Lease.EvictionTimestamp": true, "Lease.ServiceUpTimestamp": true,
		"ActionType": true,
	}
	base := func() *heureka.Instance {
		return &heureka.Instance{Metadata: heureka.Metadata{}, DataCenter: heureka.DataCenterInfo{Metadata: heureka.Metadata{}}}
	}
	check := func(path string, mod func(*heureka.Instance)) {
		a, b := base(), base()
		mod(b)
		if got := sameInstance(a, b); got != ignored[path] {
			if ignored[path] {
				t.Errorf("%s is meant to be ignored but changes the comparison", path)
			} else {
				t.Errorf("a change to %s goes unnoticed by sameInstance (and so by Diff)", path)
			}
		}
	}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[heureka.Port]() && f.Type != reflect.TypeFor[heureka.Metadata]() {
				walk(f.Type, p)
				continue
			}
			idx := fieldPath(p)
			check(p, func(in *heureka.Instance) {
				fv := reflect.ValueOf(in).Elem().FieldByIndex(idx)
				switch fv.Kind() {
				case reflect.String:
					fv.SetString("x")
				case reflect.Int, reflect.Int64:
					fv.SetInt(7)
				case reflect.Bool:
					fv.SetBool(true)
				case reflect.Map:
					fv.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
				case reflect.Struct: // Port or Metadata
					if fv.Type() == reflect.TypeFor[heureka.Metadata]() {
						fv.Set(reflect.ValueOf(heureka.NewMetadata("k", "v")))
					} else {
						fv.Field(0).SetInt(7)
					}
				default:
					t.Errorf("%s: unhandled kind %s", p, fv.Kind())
				}
			})
		}
	}
	walk(reflect.TypeFor[heureka.Instance](), "")
}

func fieldPath(p string) []int {
	typ := reflect.TypeFor[heureka.Instance]()
	var idx []int
	for name := range strings.SplitSeq(p, ".") {
		f, _ := typ.FieldByName(name)
		idx = append(idx, f.Index...)
		typ = f.Type
	}
	return idx
}

func TestBackoff(t *testing.T) {
	for n := range 10 {
		d := backoff(n, 100*time.Millisecond, time.Second)
		full := min(100*time.Millisecond<<n, time.Second)
		if d < full/2 || d > full {
			t.Errorf("backoff(%d) = %v, want within [%v, %v]", n, d, full/2, full)
		}
	}
}

func TestServerMessage(t *testing.T) {
	for _, tc := range []struct{ ct, body, want string }{
		{"application/json", `{"error":"Missing ip address"}`, "Missing ip address"},
		{"application/json", `{"error":{"message":"nested"}}`, "nested"},
		{"application/xml", `<error><message>from xml</message></error>`, "from xml"},
		{"text/plain; charset=utf-8", "plain words\n", "plain words"},
		{"text/html", "<html>proxy page</html>", ""},
		{"application/json", strings.Repeat("é", 600), ""},
		{"text/plain", strings.Repeat("é", 600), strings.Repeat("é", 256) + "…"},
	} {
		if got := serverMessage(tc.ct, []byte(tc.body)); got != tc.want {
			t.Errorf("serverMessage(%q, %.20q) = %.30q, want %.30q", tc.ct, tc.body, got, tc.want)
		}
	}
}
