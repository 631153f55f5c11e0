package kafka

import "testing"

func FuzzParseApiVersions(f *testing.F) {
	f.Add(int16(3), readFile(f, "kfake/apiversions-v3.bin"))
	f.Add(int16(0), []byte{0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v int16, b []byte) {
		av, err := ParseApiVersions(v%5, b)
		if err == nil && av.Keys <= 0 {
			t.Fatalf("no keys yet no error: %+v", av)
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	f.Add(int16(12), readFile(f, "kfake/metadata-v12.bin"))
	f.Add(int16(1), []byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v int16, b []byte) {
		md, err := ParseMetadata(v%14, b)
		if err != nil {
			return
		}
		for _, br := range md.Brokers {
			if br.NodeID < 0 || br.Port <= 0 || br.Port > 65535 || br.Host == "" {
				t.Fatalf("bad broker %+v", br)
			}
		}
		if md.ControllerID < NoNode {
			t.Fatalf("controller %d", md.ControllerID)
		}
		r, err := NewReport(APIVersions{Keys: 1}, md, Self{NodeID: 0}, "")
		if err == nil {
			if ok, cause := r.Health(); !ok && cause == "" {
				t.Fatal("unhealthy without a cause")
			}
		}
	})
}
